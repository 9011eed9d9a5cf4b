// The outbox: each command for the service (emit, cancel, void, return) keyed by its idempotency
// key, with its attempts and next due time (outbox-worker.ts, outbox-lanes.ts).

import { StorePart } from './database.ts';

export type OutboxKind = 'emit' | 'cancel' | 'void' | 'return';
export type OutboxState = 'pending' | 'sent' | 'done' | 'blocked' | 'failed';

export type OutboxRow = {
  seq: number;
  kind: OutboxKind;
  receipt_id: string;
  idempotency_key: string;
  payload: string;
  state: OutboxState;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
};

export type OutboxPatch = Partial<Pick<OutboxRow, 'state' | 'payload' | 'attempts' | 'next_attempt_at' | 'last_error' | 'completed_at'>>;

export type OutboxStats = { live: number; oldestCreatedAt: string | null };

const OUTBOX_COLUMNS = new Set<string>(['state', 'payload', 'attempts', 'next_attempt_at', 'last_error', 'completed_at']);

export class OutboxStore extends StorePart {
  insertOutbox(e: Omit<OutboxRow, 'seq' | 'attempts' | 'last_error' | 'completed_at' | 'updated_at'>): number {
    const r = this.st(
      `INSERT INTO outbox (kind, receipt_id, idempotency_key, payload, state, next_attempt_at, created_at, updated_at)
       VALUES (@kind, @receipt_id, @idempotency_key, @payload, @state, @next_attempt_at, @created_at, @created_at)`,
    ).run(e);
    return Number(r.lastInsertRowid);
  }

  outboxEntry(seq: number): OutboxRow | undefined {
    return this.st('SELECT * FROM outbox WHERE seq = ?').get(seq) as OutboxRow | undefined;
  }

  /** The live (pending, sent or blocked) command of a kind for a receipt. */
  liveOutbox(receiptId: string, kind: OutboxKind): OutboxRow | undefined {
    return this.st("SELECT * FROM outbox WHERE receipt_id = ? AND kind = ? AND state IN ('pending', 'sent', 'blocked')").get(receiptId, kind) as
      OutboxRow | undefined;
  }

  outboxOf(receiptId: string): OutboxRow[] {
    return this.st('SELECT * FROM outbox WHERE receipt_id = ? ORDER BY seq').all(receiptId) as OutboxRow[];
  }

  allOutbox(): OutboxRow[] {
    return this.st('SELECT * FROM outbox ORDER BY seq').all() as OutboxRow[];
  }

  /** Commands in `state` due at `now`, oldest first. */
  dueOutbox(state: 'pending' | 'sent', now: number, limit: number): OutboxRow[] {
    // Sends: walking (state, seq) and stopping at `limit` beats sorting every due row while a
    // long queue drains (they are all due). Polls: few are due at a time among many waiting.
    const sql =
      state === 'pending'
        ? "SELECT * FROM outbox INDEXED BY outbox_state_seq WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY seq LIMIT ?"
        : "SELECT * FROM outbox INDEXED BY outbox_state_due WHERE state = 'sent' AND next_attempt_at <= ? ORDER BY seq LIMIT ?";
    return this.st(sql).all(now, limit) as OutboxRow[];
  }

  /** The oldest `limit` commands in `state`, due or not. */
  oldestOutbox(state: 'pending' | 'sent', limit: number): OutboxRow[] {
    return this.st('SELECT * FROM outbox INDEXED BY outbox_state_seq WHERE state = ? ORDER BY seq LIMIT ?').all(state, limit) as OutboxRow[];
  }

  /** When the next command in `state` falls due, or undefined when there is none. */
  nextDueAt(state: 'pending' | 'sent'): number | undefined {
    return (this.st('SELECT min(next_attempt_at) FROM outbox WHERE state = ?').pluck().get(state) as number | null) ?? undefined;
  }

  outboxStats(): OutboxStats {
    const row = this.st("SELECT count(*) AS live, min(created_at) AS oldest FROM outbox WHERE state IN ('pending', 'sent')").get() as {
      live: number;
      oldest: string | null;
    };
    return { live: row.live, oldestCreatedAt: row.oldest };
  }

  updateOutbox(seq: number, patch: OutboxPatch, updatedAt: string): void {
    this.updateColumns('outbox', 'seq', seq, patch, OUTBOX_COLUMNS, updatedAt);
  }
}
