// Which dialog is open. One at a time: a manager action replaces the receipts list and goes
// back to it when done, so focus and Escape always have one obvious owner. The element that
// had the focus when the first dialog opened gets it back when the last one closes
// (components/Dialog.tsx); going back to the receipts list puts it on the receipt's row.

import { create } from 'zustand';

/** A receipt dialog opened from the receipts list: the kinds of the list's row actions. */
export type ReceiptDialogKind = 'cancel' | 'return' | 'correct' | 'void' | 'reprint' | 'preview';

export type DialogState =
  | { kind: 'none' }
  | { kind: 'payment' }
  | { kind: 'consumer' }
  | { kind: 'quantity'; itemId: number }
  | { kind: 'discard' }
  /** `returnTo`: the row action the list was left by, focused again on the way back. */
  | { kind: 'receipts'; returnTo?: { receiptId: string; from: ReceiptDialogKind } }
  | { kind: ReceiptDialogKind; receiptId: string }
  | { kind: 'settings' }
  | { kind: 'cash' };

type UiState = { dialog: DialogState };

export const useUi = create<UiState>(() => ({ dialog: { kind: 'none' } }));

let opener: HTMLElement | null = null;

export function openDialog(dialog: DialogState): void {
  if (useUi.getState().dialog.kind === 'none') opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  useUi.setState({ dialog });
}

export function closeDialog(): void {
  useUi.setState({ dialog: { kind: 'none' } });
}

/** Back from a receipt's dialog to the list, on that receipt's row. */
export function backToReceipts(receiptId: string, from: ReceiptDialogKind): void {
  openDialog({ kind: 'receipts', returnTo: { receiptId, from } });
}

/** The focus back where it was before the dialogs (false: that element is gone). */
export function returnFocusToOpener(): boolean {
  const el = opener;
  opener = null;
  if (!el?.isConnected) return false;
  el.focus();
  return true;
}
