// Which dialog is open. One at a time: a manager action replaces the receipts list and goes
// back to it when done, so focus and Escape always have one obvious owner.

import { create } from 'zustand';

export type DialogState =
  | { kind: 'none' }
  | { kind: 'payment' }
  | { kind: 'consumer' }
  | { kind: 'discard' }
  | { kind: 'receipts' }
  | { kind: 'cancel'; receiptId: string }
  | { kind: 'return'; receiptId: string }
  | { kind: 'correct'; receiptId: string }
  | { kind: 'void'; receiptId: string }
  | { kind: 'reprint'; receiptId: string }
  | { kind: 'preview'; receiptId: string }
  | { kind: 'settings' }
  | { kind: 'cash' };

type UiState = { dialog: DialogState };

export const useUi = create<UiState>(() => ({ dialog: { kind: 'none' } }));

export function openDialog(dialog: DialogState): void {
  useUi.setState({ dialog });
}

export function closeDialog(): void {
  useUi.setState({ dialog: { kind: 'none' } });
}
