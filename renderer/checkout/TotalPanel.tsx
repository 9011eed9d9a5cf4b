// The running total, big enough to read from the other side of the counter. Not a live region:
// a screen reader hears the total with the item that changed it (a11y/announcements.ts).

import type { SaleView } from '../../electron/api/terminal-api.ts';
import { formatDocument } from '../documents/consumer-document.ts';
import { formatCents } from '../money/money.ts';

export function TotalPanel(props: { sale: SaleView | null }) {
  const { sale } = props;
  const items = sale?.items.filter((i) => !i.removed).length ?? 0;
  return (
    <section className="total-panel" aria-label="Total da venda">
      <div className="total-label">Total</div>
      <div className="total-value">{formatCents(sale?.totalCents ?? 0)}</div>
      <div className="total-meta">
        {items} {items === 1 ? 'item' : 'itens'}
        {sale && sale.paidCents > 0 && (
          <>
            {' · '}pago {formatCents(sale.paidCents)} · falta {formatCents(sale.remainingCents)}
          </>
        )}
      </div>
      {sale?.consumer && (
        <div className="total-meta">
          Consumidor: {sale.consumer.kind.toUpperCase()} {formatDocument(sale.consumer.document)}
        </div>
      )}
    </section>
  );
}
