// Reads a request (or a batch of the queue) makes of what changes rarely (a company's sandbox
// clock offset, its settings version) are made once in that scope, not at every use: on
// PostgreSQL each is a round trip, and an NFC-e POST used to read the clock twice (the handler,
// then the Date header) and the settings version once, besides the token. The token lookup
// seeds the request's scope with both, so a POST costs two statements: the token, the insert.
//
// Within one scope the values are those of its start (or of its own writes: advancing the clock
// updates the scope); a new request, or the queue's next batch, reads again. So a change made
// through /sandbox/relogio or `balcao company update` applies from the next request on, as it
// always did.

import { AsyncLocalStorage } from 'node:async_hooks';

export type ReadScope = Map<string, Promise<unknown>>;

const scopes = new AsyncLocalStorage<ReadScope>();

/** The keys of what is read once per scope. */
export const scopeKeys = {
  clockOffset: (companyId: string) => `clock-offset:${companyId}`,
  settingsVersion: (companyId: string) => `settings-version:${companyId}`,
} as const;

/** Runs `fn` in `scope` (a new one by default): its reads and its continuations share it. */
export function inReadScope<T>(fn: () => T, scope: ReadScope = new Map()): T {
  return scopes.run(scope, fn);
}

/** `read()`, once per scope under `key` (outside any scope, every time). */
export function readOnce<T>(key: string, read: () => Promise<T>, scope: ReadScope | undefined = scopes.getStore()): Promise<T> {
  if (!scope) return read();
  let value = scope.get(key) as Promise<T> | undefined;
  if (!value) {
    value = read();
    scope.set(key, value);
    // A failed read is not kept: the next use tries again.
    value.catch(() => {
      if (scope.get(key) === value) scope.delete(key);
    });
  }
  return value;
}

/** What the scope holds for `key` from now on (a value just read or written by its owner). */
export function remember<T>(key: string, value: T, scope: ReadScope | undefined = scopes.getStore()): void {
  scope?.set(key, Promise.resolve(value));
}
