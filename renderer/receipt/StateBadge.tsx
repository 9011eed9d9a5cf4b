import type { ReceiptState, ReturnState } from '../../electron/api/terminal-api.ts';
import { RECEIPT_STATE, RETURN_STATE, stateTone } from './receipt-labels.ts';

export function StateBadge(props: { state: ReceiptState; kind?: 'receipt' } | { state: ReturnState; kind: 'return' }) {
  const label = props.kind === 'return' ? RETURN_STATE[props.state] : RECEIPT_STATE[props.state as ReceiptState];
  return <span className={`badge ${stateTone(props.state)}`}>{label}</span>;
}
