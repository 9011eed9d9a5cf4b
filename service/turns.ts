// One at a time per key, inside this process: a call waits for the previous call with the same key
// to settle (whatever its outcome), then runs. A document's state changes (an NFC-e's
// cancellation, an MDF-e's closing or cancellation) and a company's numbering of returns take
// their turn here first, then the store's turn for the same key, which makes them one at a time
// among every process sharing the store too (PostgreSQL: an advisory lock, pg-db.ts). Waiting
// here first means a process holds one database lock per key, however many of its requests wait.

export class Turns {
  readonly #last = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const turn = (this.#last.get(key) ?? Promise.resolve()).catch(() => undefined).then(work);
    this.#last.set(key, turn);
    try {
      return await turn;
    } finally {
      if (this.#last.get(key) === turn) this.#last.delete(key);
    }
  }
}
