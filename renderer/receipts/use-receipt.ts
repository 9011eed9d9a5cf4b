// One receipt for a dialog: the store's copy (kept live by events), fetched if not there.

import { useEffect } from 'react';
import type { ReceiptView } from '../../electron/api/terminal-api.ts';
import { applyReceipt, receiptEvents, useReceipts } from '../state/receipts-store.ts';
import { terminal } from '../state/terminal.ts';

export function useReceipt(receiptId: string): ReceiptView | undefined {
  const receipt = useReceipts((s) => s.receipts.find((r) => r.id === receiptId));
  const missing = receipt === undefined;
  useEffect(() => {
    // A fetched view, not an event: the events that overtake it are applied again after it.
    if (missing) receiptEvents.fetch(() => terminal().getReceipt(receiptId), applyReceipt, applyReceipt).catch(() => {});
  }, [missing, receiptId]);
  return receipt;
}
