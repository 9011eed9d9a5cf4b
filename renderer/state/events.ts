// Wires the terminal's events into the stores. The core is the source of truth: after the link
// comes back, everything shown is fetched again, since events may have been missed meanwhile.

import type { TerminalEvent } from '../../electron/api/terminal-api.ts';
import type { ScreenTerminal } from '../api/connect.ts';
import { receiptEvents, refreshReceipts, receiptUpdated, returnUpdated } from './receipts-store.ts';
import { pixChargeChanged, receiptChanged } from './sale-store.ts';
import { contingencyChanged, linkChanged, printerChanged, queueChanged, queueMoved, refreshPrinter, refreshPrints, refreshQueue } from './status-store.ts';
import { useSale } from './sale-store.ts';
import { terminal } from './terminal.ts';

function onEvent(event: TerminalEvent): void {
  switch (event.type) {
    case 'receipt':
      receiptUpdated(event.receipt);
      receiptChanged(event.receipt);
      queueMoved();
      // Printing follows authorization (and a cancellation may print nothing): look again.
      if (event.receipt.state === 'authorized') setTimeout(() => void refreshPrints(), 300);
      break;
    case 'queue':
      queueChanged(event.status);
      break;
    case 'printer':
      printerChanged(event.status);
      void refreshPrints();
      break;
    case 'contingency':
      contingencyChanged(event.status);
      queueMoved();
      break;
    case 'return':
      returnUpdated(event.devolucao);
      queueMoved();
      break;
    case 'pix':
      pixChargeChanged(event.charge);
      break;
  }
}

async function refetchAll(): Promise<void> {
  const { finished } = useSale.getState();
  await Promise.all([
    refreshQueue(),
    refreshPrinter(),
    refreshPrints(),
    refreshReceipts(),
    finished ? receiptEvents.fetch(() => terminal().getReceipt(finished.receipt.id), receiptChanged, receiptChanged).catch(() => {}) : Promise.resolve(),
  ]);
}

/** Subscribes the stores; returns the unsubscribe. */
export function wireEvents(api: ScreenTerminal): () => void {
  const offEvents = api.subscribe(onEvent);
  let wasDown = false;
  const offLink = api.onLink((state) => {
    linkChanged(state);
    if (state === 'up' && wasDown) void refetchAll();
    if (state === 'down') wasDown = true;
  });
  void refetchAll();
  // Ages and countdowns tick on the screen; this catches what no event announces (a printer
  // unplugged between jobs) without leaning on it for anything the events do carry.
  const poll = setInterval(() => {
    void refreshQueue();
    void refreshPrinter();
  }, 10_000);
  return () => {
    clearInterval(poll);
    offEvents();
    offLink();
  };
}
