import { describe, expect, it } from 'vitest';
import type { FinishedSale, ReceiptView } from '../../electron/api/terminal-api.ts';
import { receiptAction } from './receipt-actions.ts';
import { receiptUpdated, useReceipts } from './receipts-store.ts';
import { useSale } from './sale-store.ts';

describe('an action answered with a receipt view', () => {
  it('does not undo the event that overtook its answer, in the list and in the finished-sale panel', async () => {
    const receipt = (state: ReceiptView['state']) => ({ id: 'r1', state, cancellation: { secondsLeft: null } }) as unknown as ReceiptView;
    useReceipts.setState({ receipts: [receipt('authorized')], fetchedAt: {} });
    useSale.setState({ sale: null, finished: { receipt: receipt('authorized') } as unknown as FinishedSale });
    let answer!: (view: ReceiptView) => void;
    const cancelling = receiptAction(() => new Promise<ReceiptView>((resolve) => (answer = resolve)));
    // The authority confirmed the cancellation; its event arrives before the action's answer.
    receiptUpdated(receipt('cancelled'));
    answer(receipt('cancelling'));
    await cancelling;
    expect(useReceipts.getState().receipts.map((r) => r.state)).toEqual(['cancelled']);
    expect(useSale.getState().finished?.receipt.state).toBe('cancelled');
  });
});
