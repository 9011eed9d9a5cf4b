import { describe, expect, it } from 'vitest';
import type { ReceiptView, ReturnView } from '../../electron/api/terminal-api.ts';
import type { ScreenTerminal } from '../api/connect.ts';
import { mmss, receiptUpdated, refreshReceipts, requestReturn, returnUpdated, secondsLeftNow, useReceipts } from './receipts-store.ts';
import { setTerminal } from './terminal.ts';

const receipt = (secondsLeft: number | null) =>
  ({ cancellation: { allowed: secondsLeft !== null && secondsLeft > 0, deadline: null, secondsLeft, remedy: null } }) as unknown as ReceiptView;

describe('cancellation countdown', () => {
  it('ticks down from the core figure by the whole seconds elapsed since it was fetched', () => {
    expect(secondsLeftNow(receipt(600), 1_000, 1_000)).toBe(600);
    expect(secondsLeftNow(receipt(600), 1_000, 2_999)).toBe(599);
    expect(secondsLeftNow(receipt(600), 1_000, 61_000)).toBe(540);
  });

  it('stops at zero and stays null for receipts that have no window', () => {
    expect(secondsLeftNow(receipt(5), 0, 60_000)).toBe(0);
    expect(secondsLeftNow(receipt(null), 0, 60_000)).toBeNull();
  });

  it('reads as mm:ss', () => {
    expect(mmss(1740)).toBe('29:00');
    expect(mmss(754)).toBe('12:34');
    expect(mmss(9)).toBe('00:09');
  });
});

describe('the list and the events that arrive while it is fetched', () => {
  const view = (id: string, state: ReceiptView['state']) => ({ id, state, cancellation: { secondsLeft: null } }) as unknown as ReceiptView;

  it('an event newer than the list it races with is not undone by the list', async () => {
    let answer!: (receipts: ReceiptView[]) => void;
    setTerminal({ recentReceipts: () => new Promise<ReceiptView[]>((resolve) => (answer = resolve)) } as unknown as ScreenTerminal);
    const refreshed = refreshReceipts();
    // The core rejects receipt 3 after it read the list for this answer; the event gets here first.
    receiptUpdated(view('r3', 'rejected'));
    answer([view('r3', 'processing'), view('r2', 'authorized')]);
    await refreshed;
    expect(useReceipts.getState().receipts.map((r) => [r.id, r.state])).toEqual([
      ['r3', 'rejected'],
      ['r2', 'authorized'],
    ]);

    // Events after the fetch are applied as they come, and a later list is taken as it is.
    setTerminal({ recentReceipts: async () => [view('r3', 'authorized'), view('r2', 'authorized')] } as unknown as ScreenTerminal);
    await refreshReceipts();
    expect(useReceipts.getState().receipts.map((r) => r.state)).toEqual(['authorized', 'authorized']);
  });
});

describe('a return and its events', () => {
  it('the event that overtakes the answer of the return request is not undone by it', async () => {
    const view = (state: ReturnView['state']) => ({ id: 'd1', state }) as unknown as ReturnView;
    useReceipts.setState({ returns: [] });
    let answer!: (r: ReturnView) => void;
    const requested = requestReturn(() => new Promise<ReturnView>((resolve) => (answer = resolve)));
    returnUpdated(view('authorized'));
    answer(view('processing'));
    expect((await requested).id).toBe('d1');
    expect(useReceipts.getState().returns.map((r) => r.state)).toEqual(['authorized']);
  });
});
