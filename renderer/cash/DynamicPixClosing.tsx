// The closing's dynamic PIX apart (docs/pix.md, "At the till's closing"): what the store's PSP
// confirmed for the session's charges (received minus refunded) next to the tPag 17 the receipts
// carry, and the difference in the core's words.

import type { CashClosingView } from '../../electron/api/terminal-api.ts';
import { formatCents } from '../money/money.ts';

export function DynamicPixClosing({ pix }: { pix: NonNullable<CashClosingView['dynamicPix']> }) {
  return (
    <section aria-label="PIX dinâmico pelo banco">
      <dl className="summary wrap">
        <div>
          <dt>PIX dinâmico confirmado pelo banco</dt>
          <dd>{formatCents(pix.confirmedCents)}</dd>
        </div>
        <div>
          <dt>Devolvido pelo banco</dt>
          <dd>{formatCents(-pix.refundedCents)}</dd>
        </div>
        <div>
          <dt>Líquido no banco</dt>
          <dd>{formatCents(pix.netCents)}</dd>
        </div>
        <div>
          <dt>PIX dinâmico nas NFC-e</dt>
          <dd>{formatCents(pix.receiptsCents)}</dd>
        </div>
      </dl>
      <p className={pix.differenceCents === 0 ? 'muted' : 'due'} role={pix.differenceCents === 0 ? undefined : 'alert'}>
        {pix.words}
      </p>
    </section>
  );
}
