import type { ReceiptView } from '../../electron/api/terminal-api.ts';
import { formatCents } from '../money/money.ts';
import { formatDateTime } from '../receipt/receipt-labels.ts';
import { StateBadge } from '../receipt/StateBadge.tsx';

export function ReceiptHeading(props: { receipt: ReceiptView }) {
  const { receipt: r } = props;
  return (
    <p className="receipt-heading">
      NFC-e nº {r.nNF} · série {r.serie} · {formatDateTime(r.createdAt)} · {formatCents(r.totalCents)} · <StateBadge state={r.state} />
    </p>
  );
}
