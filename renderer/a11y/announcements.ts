// What a screen reader user is told when the sale, the receipt or the terminal's situation
// changes: pure functions from the state before and after to the messages, so each rule reads
// (and is tested) in one place. use-announcements.ts feeds them the stores' changes.

import type { QueueStatus, ReceiptView, SaleItemView, SaleView } from '../../electron/api/terminal-api.ts';
import { formatCents, formatQuantity } from '../money/money.ts';
import { RECEIPT_STATE } from '../receipt/receipt-labels.ts';
import type { Announcement } from './announcer.ts';

const polite = (text: string): Announcement => ({ text, politeness: 'polite' });
const assertive = (text: string): Announcement => ({ text, politeness: 'assertive' });

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** "Café torrado 500g, 2 UN a R$ 18,90, R$ 37,80" */
export function describeItem(item: SaleItemView): string {
  return `${item.description}, ${formatQuantity(item.quantity)} ${item.unit} a ${formatCents(item.unitPriceCents)}, ${formatCents(item.totalCents)}`;
}

function total(sale: SaleView): string {
  const items = sale.items.filter((i) => !i.removed).length;
  return `Total ${formatCents(sale.totalCents)}, ${count(items, 'item', 'itens')}.`;
}

export type SaleSnapshot = { sale: SaleView | null; selectedItemId: number | null };

/** Items added, removed or changed (with the new total), the line selected, the payment's Falta and Troco. */
export function saleNews(before: SaleSnapshot, after: SaleSnapshot): Announcement[] {
  const prev = before.sale;
  const next = after.sale;
  // A sale appearing (opened empty, or picked up after a restart) is no news of its own.
  if (!prev || !next || prev.id !== next.id || next.state !== 'open') return [];
  const known = new Map(prev.items.map((i) => [i.id, i]));
  const added = next.items.filter((i) => !known.has(i.id));
  const removed = next.items.filter((i) => i.removed && known.get(i.id)?.removed === false);
  const news: Announcement[] = [];

  if (added.length === 1 && removed.length === 1 && added[0]!.code === removed[0]!.code) {
    news.push(polite(`Quantidade alterada: ${describeItem(added[0]!)}. ${total(next)}`));
  } else if (added.length || removed.length) {
    const lines = [
      ...removed.map((i) => `Item removido: ${i.description}, ${formatCents(i.totalCents)}.`),
      ...added.map((i) => `Item adicionado: ${describeItem(i)}.`),
    ];
    news.push(polite(`${lines.join(' ')} ${total(next)}`));
  } else if (after.selectedItemId !== null && after.selectedItemId !== before.selectedItemId) {
    const live = next.items.filter((i) => !i.removed);
    const at = live.findIndex((i) => i.id === after.selectedItemId);
    if (at >= 0) news.push(polite(`Item ${at + 1} de ${live.length} selecionado: ${describeItem(live[at]!)}.`));
  }

  const paymentsChanged = prev.payments.length !== next.payments.length || prev.paidCents !== next.paidCents;
  if (paymentsChanged) {
    const last = next.payments.at(-1);
    const what =
      next.payments.length > prev.payments.length && last ? `Pagamento lançado: ${last.description} ${formatCents(last.amountCents)}.` : 'Pagamento removido.';
    const due = next.remainingCents > 0 ? `Falta ${formatCents(next.remainingCents)}.` : `Pago. Troco ${formatCents(next.changeCents)}.`;
    news.push(polite(`${what} ${due}`));
  }
  return news;
}

/**
 * The receipt just finished (its number, state and the change), and what must interrupt: issued
 * in offline contingency, rejected, waiting for a person. Its later states are said by the
 * receipt panel's own status line.
 */
export function receiptNews(
  before: { receipt: ReceiptView; changeCents: number } | null,
  after: { receipt: ReceiptView; changeCents: number } | null,
): Announcement[] {
  if (!after) return [];
  const r = after.receipt;
  const prev = before?.receipt.id === r.id ? before.receipt : null;
  const news: Announcement[] = [];
  if (!prev) news.push(polite(`Venda concluída: NFC-e nº ${r.nNF}, ${RECEIPT_STATE[r.state]}. Troco ${formatCents(after.changeCents)}.`));
  if (r.contingency && !prev?.contingency) news.push(assertive(`NFC-e nº ${r.nNF} emitida em contingência offline: será transmitida quando o serviço voltar.`));
  const bad = r.state === 'rejected' || r.state === 'needs_attention';
  if (bad && prev?.state !== r.state) {
    const why = r.attention ?? (r.motivo ? `${r.codigoStatus} ${r.motivo}` : '');
    news.push(assertive(`NFC-e nº ${r.nNF} ${RECEIPT_STATE[r.state].toLowerCase()}${why ? `: ${why}` : ''}.`));
  }
  return news;
}

/**
 * The status bar's changes: the service lost (assertive) or back, the offline contingency on
 * (assertive) or over, receipts waiting for a person, and the queue's count while it matters
 * (the service away or the contingency on: otherwise every sale would say "1 pendente" and
 * "nada pendente"). Nothing is said of the state found when the screen starts.
 */
export function statusNews(prev: QueueStatus | null, next: QueueStatus | null): Announcement[] {
  if (!prev || !next) return [];
  const news: Announcement[] = [];
  if (next.online !== prev.online && next.online !== null) {
    news.push(next.online ? polite('Serviço de emissão online.') : assertive(`Serviço de emissão offline${next.lastError ? `: ${next.lastError}` : ''}.`));
  }
  const c = next.contingency;
  if (c.active !== prev.contingency.active) {
    news.push(
      c.active ? assertive('Contingência offline ativa: as NFC-e são emitidas neste caixa e transmitidas depois.') : polite('Contingência offline encerrada.'),
    );
  }
  if (next.needsAttention > prev.needsAttention) news.push(assertive(`${next.needsAttention} NFC-e aguardando ação (F9).`));
  const matters = next.online === false || c.active;
  if (matters && next.pending !== prev.pending)
    news.push(polite(`Fila: ${next.pending === 0 ? 'nada pendente' : count(next.pending, 'pendente', 'pendentes')}.`));
  return news;
}
