// Waiting for a queued document's verdict inside a request (docs/api.md, "Waiting for the
// verdict": `Prefer: wait=N`, RFC 7240). The queue of this process says when it has recorded a
// verdict (`settled`), so a waiting request answers at once; a document another process took
// (several processes on one database) is found by reading it again every POLL_MS. Bounded: a
// wait ends at its deadline, or when the service stops (`close`), with whatever state the
// document is in then.

const POLL_MS = 250;

export class VerdictWaiter<T> {
  readonly #waiting = new Map<string, Set<() => void>>();
  #closed = false;

  /**
   * `final` says whether a document has its verdict. `shared`: other processes may record it,
   * so the document is read again every POLL_MS.
   */
  constructor(
    private readonly final: (document: T) => boolean,
    private readonly shared: boolean,
  ) {}

  /** The queue of this process recorded the verdict of `id`. */
  settled(id: string): void {
    const wakes = this.#waiting.get(id);
    this.#waiting.delete(id);
    for (const wake of wakes ?? []) wake();
  }

  /**
   * The document `id` (as `read` gives it now) once it has its verdict, within `ms`; undefined
   * when it has none by then (or the service stops).
   */
  async wait(id: string, ms: number, read: () => Promise<T | undefined>): Promise<T | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      // Listening before reading: a verdict recorded in between still wakes this wait.
      const wakes = this.#waiting.get(id) ?? new Set<() => void>();
      this.#waiting.set(id, wakes);
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      wakes.add(wake);
      try {
        const document = await read();
        if (document !== undefined && this.final(document)) return document;
        const left = deadline - Date.now();
        if (left <= 0 || this.#closed) return undefined;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.shared ? Math.min(left, POLL_MS) : left)))]);
        clearTimeout(timer);
      } finally {
        wakes.delete(wake);
        if (wakes.size === 0 && this.#waiting.get(id) === wakes) this.#waiting.delete(id);
      }
    }
  }

  /** The service is stopping: every wait ends now. */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#waiting.keys()]) this.settled(id);
  }
}
