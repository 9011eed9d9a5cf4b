// A return as the API shows it (GET, replays, webhook `dados`), instants in Brasília time with
// their offset, quantities and values as decimal strings.

import { randomUUID } from 'node:crypto';
import { formatDecimal } from '../../fiscal/money.ts';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import type { WebhookEvent } from '../webhooks/store.ts';
import type { NfeSummaryView, NfeView } from './schemas.ts';
import type { NfeEventOf, NfeRecord, NfeSummary } from './store.ts';

/** "2", "0.35": ten-thousandths as the decimal a person writes. */
export function quantityText(units: bigint): string {
  return formatDecimal(units, 4).replace(/\.?0+$/, '');
}

export function nfeView(d: NfeRecord): NfeView {
  const { referencia_externa, criado_em, ...summary } = nfeSummaryView(d);
  return {
    ...summary,
    itens: d.itens.map((i) => ({
      numero_item: i.numeroItem,
      codigo: i.codigo,
      descricao: i.descricao,
      unidade: i.unidade,
      quantidade: quantityText(i.quantidadeUnits),
      valor: i.valor,
    })),
    referencia_externa,
    criado_em,
  };
}

/** A return as lists show it: the view without its items. */
export function nfeSummaryView(d: NfeSummary): NfeSummaryView {
  return {
    id: d.id,
    tipo: d.tipo,
    situacao: d.status,
    status: d.codigoStatus,
    motivo: d.motivo,
    serie: d.serie,
    numero: d.numero,
    chave: d.chave,
    chave_nfce: d.chaveNfce,
    nfce_id: d.nfceId,
    protocolo: d.protocolo,
    autorizado_em: d.autorizadoEm === null ? null : formatBrasilia(new Date(d.autorizadoEm)),
    emitido_em: formatBrasilia(new Date(d.dhEmi)),
    valor_total: d.valorTotal,
    justificativa: d.justificativa,
    ambiente: d.ambiente,
    referencia_externa: d.idempotencyKey,
    criado_em: formatBrasilia(new Date(d.createdAt)),
  };
}

export type NfeEventType = 'nfe.autorizada' | 'nfe.rejeitada';

/** The webhook event of a verdict, built inside its transaction from the document in its new state. */
export function nfeWebhookEvent(tipo: NfeEventType): NfeEventOf {
  return (document: NfeRecord): WebhookEvent => {
    const eventId = randomUUID();
    const createdAt = new Date();
    const payload = JSON.stringify({ id: eventId, tipo, criado_em: formatBrasilia(createdAt), dados: nfeView(document) });
    return { eventId, companyId: document.companyId, tipo, payload, createdAt };
  };
}
