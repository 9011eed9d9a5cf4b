import { describe, expect, it } from 'vitest';
import { settle } from './settle-wait.ts';

/** A record whose changes are announced to subscribers, as the terminal's events do. */
function record(initial: string) {
  let value = initial;
  const listeners = new Set<() => void>();
  return {
    read: () => value,
    set(next: string) {
      value = next;
      for (const l of listeners) l();
    },
    onNews(news: () => void) {
      listeners.add(news);
      return () => listeners.delete(news);
    },
    get listeners() {
      return listeners.size;
    },
  };
}

describe('settle', () => {
  it('returns as soon as the news makes the record done, and leaves no subscription behind', async () => {
    const r = record('cancelling');
    // The terminal's clock stands still: the deadline never comes, only the news ends the wait.
    const waiting = settle({ ...r, done: (v) => v !== 'cancelling', timeoutMs: 60_000, clock: () => 0, stopped: () => false });
    setTimeout(() => r.set('cancelled'), 20);
    expect(await waiting).toBe('cancelled');
    expect(r.listeners).toBe(0);
  });

  it("ends on the injected clock's deadline with the record as it is", async () => {
    const r = record('voiding');
    let now = 1_000_000;
    const waiting = settle({ ...r, done: (v) => v !== 'voiding', timeoutMs: 5 * 60_000, clock: () => now, stopped: () => false });
    now += 5 * 60_000; // five minutes on the terminal's clock, a moment on the wall's
    expect(await waiting).toBe('voiding');
  });

  it('keeps waiting while the injected clock has not reached the deadline, even without news', async () => {
    const r = record('pending');
    let now = 0;
    let settled = false;
    const waiting = settle({ ...r, done: (v) => v === 'authorized', timeoutMs: 1_000, clock: () => now, stopped: () => false }).then((v) => {
      settled = true;
      return v;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // real time past the timeout
    expect(settled).toBe(false);
    now = 1_000;
    expect(await waiting).toBe('pending');
  });

  it('ends at once when the terminal is closing', async () => {
    const r = record('cancelling');
    let closing = false;
    const waiting = settle({ ...r, done: () => false, timeoutMs: 60_000, clock: Date.now, stopped: () => closing });
    closing = true;
    expect(await waiting).toBe('cancelling');
  });
});
