// A background loop of rounds: a round does what is due and says how long to sleep; the loop
// sleeps that long (a minute at most) or until woken, because new work came in. A wake during a
// round starts the next round at once, so nothing written meanwhile waits for the timer. The
// outbox worker and the contingency reconciler each run one.

export type Round = (loop: { readonly running: boolean }) => Promise<number> | number;

export class WakeableLoop {
  readonly #round: Round;
  readonly #maxSleepMs: number;
  #running = false;
  #done: Promise<void> | undefined;
  #woken = false;
  #wakeUp: (() => void) | undefined;

  /** `round` returns the milliseconds to sleep; it should not throw (a throw ends the loop). */
  constructor(round: Round, maxSleepMs = 60_000) {
    this.#round = round;
    this.#maxSleepMs = maxSleepMs;
  }

  get running(): boolean {
    return this.#running;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#done = this.#loop();
  }

  /** Takes no new round and waits for the one under way. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#done;
  }

  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      this.#woken = false;
      const sleepMs = await this.#round(this);
      if (!this.#running) break;
      if (this.#woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, Math.min(sleepMs, this.#maxSleepMs)));
        this.#wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeUp = undefined;
    }
  }
}
