// The status bar's facts: the queue (online, pending, contingency), the printer, the link to
// the terminal, and the printer's recent jobs. Pushed by events, re-fetched after a reconnect.

import { create } from 'zustand';
import type { ContingencyStatus, PrintedReceipt, PrinterStatusView, QueueStatus } from '../../electron/api/terminal-api.ts';
import type { LinkState } from '../api/carrier.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { terminal } from './terminal.ts';

type StatusState = {
  link: LinkState;
  queue: QueueStatus | null;
  /** performance.now() when `queue` arrived (the oldest pending age ticks from it). */
  queueAt: number;
  printer: PrinterStatusView | null;
  printerError: TerminalFailure | null;
  prints: PrintedReceipt[];
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

export function queueChanged(queue: QueueStatus): void {
  useStatus.setState({ queue, queueAt: performance.now() });
}

export function contingencyChanged(contingency: ContingencyStatus): void {
  const { queue } = useStatus.getState();
  if (queue) useStatus.setState({ queue: { ...queue, contingency } });
}

export function printerChanged(printer: PrinterStatusView): void {
  useStatus.setState({ printer, printerError: null });
}

export async function refreshQueue(): Promise<void> {
  try {
    queueChanged(await terminal().queueStatus());
  } catch {
    // the link state already says the terminal is unreachable
  }
}

export async function refreshPrinter(): Promise<void> {
  try {
    printerChanged(await terminal().printerStatus());
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
