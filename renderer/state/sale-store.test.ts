import { describe, expect, it } from 'vitest';
import type { FinishedSale, ReceiptView, SaleView } from '../../electron/api/terminal-api.ts';
import type { ScreenTerminal } from '../api/connect.ts';
import { receiptUpdated } from './receipts-store.ts';
import { finishSale, receiptChanged, useSale } from './sale-store.ts';
import { setTerminal } from './terminal.ts';

describe('finishing a sale while its receipt moves on', () => {
  it('the receipt event that overtakes the answer of finishSale is what the panel shows', async () => {
    const receipt = (state: ReceiptView['state']) => ({ id: 'r1', state }) as unknown as ReceiptView;
    useSale.setState({ sale: { id: 's1', state: 'open' } as unknown as SaleView, finished: null });
    let answer!: (finished: FinishedSale) => void;
    setTerminal({ finishSale: () => new Promise<FinishedSale>((resolve) => (answer = resolve)) } as unknown as ScreenTerminal);

    const finishing = finishSale();
    // Authorized already; the event (as events.ts delivers it) gets here before the answer.
    receiptUpdated(receipt('authorized'));
    receiptChanged(receipt('authorized'));
    answer({ sale: { id: 's1' }, receipt: receipt('pending') } as unknown as FinishedSale);

    expect((await finishing) as FinishedSale).toMatchObject({ receipt: { state: 'authorized' } });
    expect(useSale.getState()).toMatchObject({ sale: null, finished: { receipt: { state: 'authorized' } } });
  });
});
