// The status bar's facts: the queue (online, pending, contingency), the printer, the link to
// the terminal, and the printer's recent jobs. Pushed by events, re-fetched after a reconnect
// and now and then.

import { create } from 'zustand';
import type { ContingencyStatus, PrintedJob, PrinterStatusView, QueueStatus } from '../../electron/api/terminal-api.ts';
import type { LinkState } from '../api/carrier.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { EventsDuringFetch } from './events-during-fetch.ts';
import { terminal } from './terminal.ts';

type StatusState = {
  link: LinkState;
  queue: QueueStatus | null;
  /** performance.now() when `queue` arrived (the oldest pending age ticks from it). */
  queueAt: number;
  printer: PrinterStatusView | null;
  printerError: TerminalFailure | null;
  prints: PrintedJob[];
  printsError: TerminalFailure | null;
};

export const useStatus = create<StatusState>(() => ({
  link: 'connecting',
  queue: null,
  queueAt: 0,
  printer: null,
  printerError: null,
  prints: [],
  printsError: null,
}));

export function linkChanged(link: LinkState): void {
  useStatus.setState({ link });
}

// What arrives while the queue or the printer is being fetched (events-during-fetch.ts).
type QueueNews = { queue: QueueStatus } | { contingency: ContingencyStatus };
const queueEvents = new EventsDuringFetch<QueueNews>();
const printerEvents = new EventsDuringFetch<PrinterStatusView>();

const applyQueueNews = (news: QueueNews): void => ('queue' in news ? applyQueue(news.queue) : applyContingency(news.contingency));

function applyQueue(queue: QueueStatus): void {
  useStatus.setState({ queue, queueAt: performance.now() });
}

function applyContingency(contingency: ContingencyStatus): void {
  const { queue } = useStatus.getState();
  if (queue) useStatus.setState({ queue: { ...queue, contingency } });
}

function applyPrinter(printer: PrinterStatusView): void {
  useStatus.setState({ printer, printerError: null });
}

export function queueChanged(queue: QueueStatus): void {
  queueEvents.seen({ queue });
  applyQueue(queue);
}

export function contingencyChanged(contingency: ContingencyStatus): void {
  queueEvents.seen({ contingency });
  applyContingency(contingency);
}

export function printerChanged(printer: PrinterStatusView): void {
  printerEvents.seen(printer);
  applyPrinter(printer);
}

/** A manager's contingency command; its answer does not undo the status events that overtook it. */
export async function contingencyAction(call: () => Promise<ContingencyStatus>): Promise<void> {
  await queueEvents.fetch(call, applyContingency, applyQueueNews);
}

export async function refreshQueue(): Promise<void> {
  try {
    await queueEvents.fetch(() => terminal().queueStatus(), applyQueue, applyQueueNews);
  } catch {
    // the link state already says the terminal is unreachable
  }
}

let queueRefresh: ReturnType<typeof setTimeout> | undefined;

/**
 * A receipt, a return or the contingency changed: the queue's counts moved with it, but the
 * core announces the queue only when the link to the service changes, so look again (once for
 * a burst of such events, as a catch-up brings hundreds).
 */
export function queueMoved(delayMs = 200): void {
  if (queueRefresh !== undefined) return;
  queueRefresh = setTimeout(() => {
    queueRefresh = undefined;
    void refreshQueue();
  }, delayMs);
}

export async function refreshPrinter(): Promise<void> {
  try {
    await printerEvents.fetch(() => terminal().printerStatus(), applyPrinter, applyPrinter);
  } catch (err) {
    useStatus.setState({ printer: null, printerError: asFailure(err) });
  }
}

export async function refreshPrints(limit = 8): Promise<void> {
  try {
    useStatus.setState({ prints: await terminal().recentPrints(limit), printsError: null });
  } catch (err) {
    useStatus.setState({ printsError: asFailure(err) });
  }
}
