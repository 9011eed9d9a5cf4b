// Recent receipts, as the core lists them, kept up to date by receipt events. `fetchedAt` lets
// the cancellation countdown tick on the screen between fetches without asking the core each
// second.

import { create } from 'zustand';
import type { ReceiptView, ReturnView } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { EventsDuringFetch } from './events-during-fetch.ts';
import { terminal } from './terminal.ts';

type ReceiptsState = {
  receipts: ReceiptView[];
  /** performance.now() when each receipt's view was taken (for the countdown). */
  fetchedAt: Record<string, number>;
  returns: ReturnView[];
  error: TerminalFailure | null;
  loading: boolean;
};

export const useReceipts = create<ReceiptsState>(() => ({ receipts: [], fetchedAt: {}, returns: [], error: null, loading: false }));

/** Receipt views that arrive while the list is being fetched (events-during-fetch.ts). */
export const receiptEvents = new EventsDuringFetch<ReceiptView>();

export async function refreshReceipts(limit = 30): Promise<void> {
  useReceipts.setState({ loading: true });
  try {
    await receiptEvents.fetch(
      () => terminal().recentReceipts(limit),
      (receipts) => {
        const now = performance.now();
        useReceipts.setState({ receipts, fetchedAt: Object.fromEntries(receipts.map((r) => [r.id, now])), error: null });
      },
      applyReceipt,
    );
  } catch (err) {
    useReceipts.setState({ error: asFailure(err) });
  } finally {
    useReceipts.setState({ loading: false });
  }
}

/** One receipt's fresh view (an event, or an action's answer). */
export function receiptUpdated(receipt: ReceiptView): void {
  receiptEvents.seen(receipt);
  applyReceipt(receipt);
}

/** Shows a receipt's view without noting it as an event (receipt-actions.ts applies answers with it). */
export function applyReceipt(receipt: ReceiptView): void {
  const { receipts, fetchedAt } = useReceipts.getState();
  const at = receipts.findIndex((r) => r.id === receipt.id);
  const next = at < 0 ? [receipt, ...receipts] : receipts.map((r) => (r.id === receipt.id ? receipt : r));
  useReceipts.setState({ receipts: next, fetchedAt: { ...fetchedAt, [receipt.id]: performance.now() } });
}

/** Return views that arrive while a return is being requested (events-during-fetch.ts). */
const returnEvents = new EventsDuringFetch<ReturnView>();

/** A return's fresh view (an event). */
export function returnUpdated(devolucao: ReturnView): void {
  returnEvents.seen(devolucao);
  applyReturn(devolucao);
}

/** Asks for a return; its answer does not undo the return's events that overtook it. */
export async function requestReturn(call: () => Promise<ReturnView>): Promise<ReturnView> {
  let answer!: ReturnView;
  await returnEvents.fetch(
    call,
    (r) => {
      answer = r;
      applyReturn(r);
    },
    applyReturn,
  );
  return answer;
}

function applyReturn(devolucao: ReturnView): void {
  const { returns } = useReceipts.getState();
  const next = returns.some((r) => r.id === devolucao.id) ? returns.map((r) => (r.id === devolucao.id ? devolucao : r)) : [devolucao, ...returns];
  useReceipts.setState({ returns: next });
}

/** Seconds left to cancel now, from the core's figure and the time since it was taken. */
export function secondsLeftNow(receipt: ReceiptView, fetchedAt: number | undefined, now: number): number | null {
  const left = receipt.cancellation.secondsLeft;
  if (left === null) return null;
  const elapsed = fetchedAt === undefined ? 0 : Math.floor((now - fetchedAt) / 1000);
  return Math.max(0, left - elapsed);
}

/** 754 → "12:34". */
export function mmss(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}
