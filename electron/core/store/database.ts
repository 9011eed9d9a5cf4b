// The terminal's one database handle, shared by every part of its store (pos-store.ts composes
// them): the statement cache, the transaction helpers and the WAL checkpoint. Statements are
// prepared once, lazily: finishing a sale runs a handful of them and must stay well under 10 ms
// including the fsync.

import type Database from 'better-sqlite3';

export class PosDatabase {
  readonly db: Database.Database;
  readonly #cache = new Map<string, Database.Statement>();
  #changesAtCheckpoint = 0;

  constructor(db: Database.Database) {
    this.db = db;
  }

  statement(sql: string): Database.Statement {
    let s = this.#cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.#cache.set(sql, s);
    }
    return s;
  }

  /** Runs `fn` in one IMMEDIATE transaction (the write lock is taken first: no upgrade deadlock). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * A transaction committed without its own fsync (synchronous=NORMAL for this commit only), for
   * what the outbox worker learns from the service: a power cut may lose the last of these, and
   * the worker then asks again with the same key and learns the same thing. WAL is written in
   * order, so the next FULL commit (the next finished sale) makes these durable too. Sales,
   * corrections, cancellation requests and every screen action use `transaction`.
   */
  relaxedTransaction<T>(fn: () => T): T {
    this.statement('PRAGMA synchronous = NORMAL').run();
    try {
      return this.transaction(fn);
    } finally {
      this.statement('PRAGMA synchronous = FULL').run();
    }
  }

  /**
   * Copies the WAL into the database (PASSIVE: never waits for readers) once `minChanges` rows
   * changed since the last time. Called from a timer between sales, never from a sale's path:
   * the commit of a finished sale then only appends to the WAL and fsyncs it.
   */
  checkpointIfDue(minChanges = 500): boolean {
    const total = this.statement('SELECT total_changes()').pluck().get() as number;
    if (total - this.#changesAtCheckpoint < minChanges) return false;
    this.statement('PRAGMA wal_checkpoint(PASSIVE)').all();
    this.#changesAtCheckpoint = total;
    return true;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** What every part of the store shares: the database, its statements, the generic update. */
export abstract class StorePart {
  constructor(protected readonly database: PosDatabase) {}

  protected st(sql: string): Database.Statement {
    return this.database.statement(sql);
  }

  /**
   * `UPDATE table SET <the patch's defined columns>, updated_at WHERE key = id`. The column names
   * are interpolated into SQL, so only those in `updatable` can ever reach it.
   */
  protected updateColumns(table: string, key: string, id: string | number, patch: object, updatable: ReadonlySet<string>, updatedAt: string): string[] {
    const cols = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    for (const c of cols) if (!updatable.has(c)) throw new Error(`coluna não atualizável: ${c}`);
    const sql = `UPDATE ${table} SET ${[...cols.map((c) => `${c} = @${c}`), 'updated_at = @updated_at'].join(', ')} WHERE ${key} = @${key}`;
    this.st(sql).run({ ...patch, updated_at: updatedAt, [key]: id });
    return cols;
  }
}
