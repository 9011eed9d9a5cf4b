// Dynamic PIX (tPag 17, docs/pix.md "Dynamic PIX"): a charge at the store's PSP for the amount
// due. Its BR Code large on the screen and its state in words; the core follows the charge at the
// PSP and, once paid, puts the payment on the sale and finishes it (sale-store's pixChargeChanged
// brings the receipt to the screen). The actions (cancel, the demo's "Simular pagamento") are in
// the payment dialog's footer.

import type { PixChargeView } from '../../electron/api/terminal-api.ts';
import { formatDateTimeBR } from '../../base/common/brasilia.ts';
import { PixPanel } from './PixPanel.tsx';

export const STATE_WORDS: Record<PixChargeView['state'], string> = {
  creating: 'criando a cobrança',
  active: 'aguardando pagamento',
  paid: 'pago',
  finished: 'pago',
  cancelling: 'cancelando',
  cancelled: 'cancelada',
  expired: 'expirada',
  paid_late: 'paga depois de cancelada: fica com o gerente',
  refunding: 'devolvendo',
  refunded: 'devolvida',
};

/** Whether the cashier can still give up on the charge ("Cancelar cobrança"). */
export const cancellable = (c: PixChargeView): boolean => c.state === 'creating' || c.state === 'active';

/** Whether the charge is over without paying the sale: the payment form comes back. */
export const givenUp = (c: PixChargeView): boolean => c.state === 'cancelled' || c.state === 'expired' || c.state === 'paid_late';

export function DynamicPixPanel({ charge }: { charge: PixChargeView }) {
  return (
    <PixPanel
      title="PIX Dinâmico"
      amountCents={charge.amountCents}
      qr={
        charge.state === 'active' && charge.brCode
          ? { brCode: charge.brCode }
          : { waiting: charge.state === 'creating' ? 'Criando a cobrança no banco…' : `Cobrança ${STATE_WORDS[charge.state]}` }
      }
      facts={[
        ['Situação', <strong key="s">{STATE_WORDS[charge.state]}</strong>],
        ['Válida até', formatDateTimeBR(new Date(charge.expiresAt))],
        ['Identificador', charge.txid],
        ...(charge.lastError ? [['Banco', charge.lastError] as [string, string]] : []),
      ]}
    >
      <p className="pix-check">O banco confirma o pagamento: a venda é concluída e impressa sozinha.</p>
    </PixPanel>
  );
}
