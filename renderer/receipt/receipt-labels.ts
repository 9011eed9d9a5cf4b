// How receipt and return states read on the screen.

import type { ReceiptState, ReturnState, SupersededAttempt } from '../../electron/api/terminal-api.ts';

export const RECEIPT_STATE: Record<ReceiptState, string> = {
  pending: 'Pendente',
  processing: 'Processando',
  authorized: 'Autorizada',
  rejected: 'Rejeitada',
  needs_attention: 'Requer atenção',
  cancelling: 'Cancelando',
  cancelled: 'Cancelada',
  voiding: 'Inutilizando',
  voided: 'Inutilizada',
};

/** What became of an online attempt a contingency receipt superseded. */
export const SUPERSEDED_STATE: Record<SupersededAttempt['state'], string> = {
  checking: 'Verificando no serviço',
  cancelling: 'Cancelando por substituição',
  voiding: 'Inutilizando o número',
  blocked: 'Requer atenção (Gerente → Contingência)',
  cancelled_by_substitution: 'Cancelada por substituição',
  cancelled: 'Cancelada',
  voided: 'Número inutilizado',
};

export const RETURN_STATE: Record<ReturnState, string> = {
  pending: 'Pendente',
  processing: 'Processando',
  authorized: 'Autorizada',
  rejected: 'Rejeitada',
  needs_attention: 'Requer atenção',
};

/** A tone for the state badge's colour. */
export function stateTone(state: ReceiptState | ReturnState): 'ok' | 'wait' | 'bad' | 'off' {
  switch (state) {
    case 'authorized':
      return 'ok';
    case 'pending':
    case 'processing':
    case 'cancelling':
    case 'voiding':
      return 'wait';
    case 'rejected':
    case 'needs_attention':
      return 'bad';
    default:
      return 'off';
  }
}

const timeFormat = new Intl.DateTimeFormat('pt-BR', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat('pt-BR', { day: '2-digit', month: '2-digit', hour: '2-digit', minute: '2-digit' });

export const formatTime = (iso: string): string => timeFormat.format(new Date(iso));
export const formatDateTime = (iso: string): string => dateTimeFormat.format(new Date(iso));

export const WINDOW_OVER = 'Prazo de cancelamento (30 minutos) encerrado';

export const COPY_LABEL: Record<string, string> = {
  consumidor: 'via do consumidor',
  estabelecimento: 'via do estabelecimento',
  unica: 'impressa',
  reimpressao: 'reimpressão',
};
