// A list or a view fetched from the core while the core's events keep coming. The answer travels
// on another channel than the events, so an event can arrive while the answer is on its way and
// be newer than it: applying the answer last would put the screen back in a state the core has
// already left (a receipt shown "Processando" after it was rejected), and no later event would
// come to fix it. So the events seen during a fetch are applied again, in order, on top of its
// answer. Events arrive in order on their one channel, and any change after the answer was read
// sends its own event: the screen ends where the core is.

export class EventsDuringFetch<E> {
  readonly #open = new Set<E[]>();

  /** Every event, as it arrives (before or after it is applied). */
  seen(event: E): void {
    for (const during of this.#open) during.push(event);
  }

  async fetch<T>(read: () => Promise<T>, apply: (answer: T) => void, reapply: (event: E) => void): Promise<void> {
    const during: E[] = [];
    this.#open.add(during);
    try {
      apply(await read());
      for (const event of during) reapply(event);
    } finally {
      this.#open.delete(during);
    }
  }
}
