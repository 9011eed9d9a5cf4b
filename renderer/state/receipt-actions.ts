// The actions whose answer is a receipt's view (cancel, void, correct and resend). The answer is
// taken when the core is done waiting, and the receipt's events can overtake it on their own
// channel: applying the answer last could put the receipt back in a state it has left
// ("Cancelando" after "Cancelada"). So the events seen meanwhile are applied again after it
// (events-during-fetch.ts), in the receipts list and in the finished-sale panel alike.

import type { ReceiptView } from '../../electron/api/terminal-api.ts';
import { applyReceipt, receiptEvents } from './receipts-store.ts';
import { receiptChanged } from './sale-store.ts';

const show = (receipt: ReceiptView): void => {
  applyReceipt(receipt);
  receiptChanged(receipt);
};

export async function receiptAction(call: () => Promise<ReceiptView>): Promise<void> {
  await receiptEvents.fetch(call, show, show);
}
