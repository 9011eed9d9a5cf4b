// The decision table of docs/api.md, "Idempotency", as a pure function, so every store
// implementation (SQLite today, PostgreSQL later) applies exactly the same rules inside its own
// atomic claim, and the rules can be tested without a database.

/** Document types that take an idempotency key. The key space is per (company, type). */
export type DocumentType = 'nfce' | 'mdfe' | 'nfe';

/**
 * processing: the first call is running or its outcome is unknown (locked);
 * authorized: replays, also after a later cancellation or closing;
 * rejected: freed, the next claim is a real new attempt.
 */
export type KeyState = 'processing' | 'authorized' | 'rejected';

/** The final outcomes a document reports; `rejected` also covers "never reached the authority". */
export type KeyOutcome = 'authorized' | 'rejected';

export type ClaimRequest = {
  companyId: string;
  docType: DocumentType;
  key: string;
  /** SHA-256 (hex) of the canonical request body, see idempotency.ts. */
  fingerprint: string;
  /** The id the caller will give the document if the claim is `new`; bound to the key now. */
  documentId: string;
};

export type ClaimResult =
  { kind: 'new' } | { kind: 'in_progress'; documentId: string } | { kind: 'replay'; documentId: string } | { kind: 'mismatch'; documentId: string };

/** Identifies one attempt under a key: settling checks it is still the key's current attempt. */
export type KeyAttempt = { companyId: string; docType: DocumentType; key: string; documentId: string };

export type StoredKey = { state: KeyState; fingerprint: string; documentId: string };

export type ClaimDecision =
  | { action: 'insert' } // no record: create it, processing
  | { action: 'retake' } // the previous attempt was rejected: this is a new attempt
  | { action: 'refuse'; result: Exclude<ClaimResult, { kind: 'new' }> };

export function decideClaim(existing: StoredKey | undefined, fingerprint: string): ClaimDecision {
  if (!existing) return { action: 'insert' };
  if (existing.state === 'rejected') return { action: 'retake' };
  if (existing.fingerprint !== fingerprint) return { action: 'refuse', result: { kind: 'mismatch', documentId: existing.documentId } };
  return existing.state === 'processing'
    ? { action: 'refuse', result: { kind: 'in_progress', documentId: existing.documentId } }
    : { action: 'refuse', result: { kind: 'replay', documentId: existing.documentId } };
}

/**
 * Which transitions settling may make. From processing to either outcome; repeating the same
 * outcome is harmless (a retried worker); an authorization is final and is never undone.
 */
export function canSettle(current: KeyState, outcome: KeyOutcome): boolean {
  if (current === 'processing') return true;
  return current === outcome;
}
