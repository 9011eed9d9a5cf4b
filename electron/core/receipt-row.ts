// The receipt a screen call names, or the cashier's "not found": the lookup every operation on
// a receipt starts with. Ids come from the screen, so their type is not trusted.

import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { ReceiptRow } from './store/receipts.ts';

export function existingReceipt(store: PosStore, receiptId: unknown): ReceiptRow {
  const r = typeof receiptId === 'string' ? store.receipts.receipt(receiptId) : undefined;
  if (!r) throw new TerminalError('nao_encontrado', 'NFC-e não encontrada');
  return r;
}
