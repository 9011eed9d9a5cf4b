import { describe, expect, it } from 'vitest';
import type { ReceiptView } from '../../electron/api/terminal-api.ts';
import { mmss, secondsLeftNow } from './receipts-store.ts';

const receipt = (secondsLeft: number | null) => ({ cancellation: { allowed: secondsLeft !== null && secondsLeft > 0, deadline: null, secondsLeft, remedy: null } }) as unknown as ReceiptView;

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
