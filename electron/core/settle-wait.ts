// Waiting for the worker's news of one record: a cancellation, a void or a return the manager
// just asked for. The screen's call returns with the outcome when the service answers quickly,
// or with the record as it is once the wait is over; the screen then follows it by its events.

import type { Clock } from '../../base/common/clock.ts';

/** The record is read again at least this often, news or not (news can slip past a read). */
const RECHECK_MS = 200;

export type SettleWait<T> = {
  /** The record as it is now (throws when it does not exist). */
  read: () => T;
  done: (value: T) => boolean;
  /** Measured on `clock`, the terminal's injected one. */
  timeoutMs: number;
  clock: Clock;
  /** Subscribes `news` to changes that may concern the record; returns the unsubscribe. */
  onNews: (news: () => void) => () => void;
  /** True once the terminal is closing: the wait ends with the record as it is. */
  stopped: () => boolean;
};

/** Resolves with the record once `done` holds, once `timeoutMs` have passed, or when stopped. */
export async function settle<T>(wait: SettleWait<T>): Promise<T> {
  const deadline = wait.clock() + wait.timeoutMs;
  for (;;) {
    const current = wait.read();
    const left = deadline - wait.clock();
    if (wait.done(current) || left <= 0 || wait.stopped()) return current;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, Math.min(RECHECK_MS, left));
      const off = wait.onNews(finish);
      function finish() {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  }
}
