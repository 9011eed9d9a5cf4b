// The service's PostgreSQL database (`--database postgres://...` or BALCAO_DATABASE_URL): the
// connection pool (its settings: pg-settings.ts), the migrations (migrations/service-postgres/),
// transactions, and this process's lease, which is what lets several service processes share
// the database.
//
// Leases. Every process that works the queues registers itself in `service_processes` and renews
// its heartbeat there. What it holds (an NFC-e or NF-e being authorized, a manifest being issued,
// a claimed idempotency key) names it (leased_by, issued_by, claimed_by): one heartbeat renews
// every lease the process holds. When the heartbeat is older than the lease's length the
// process is gone (killed, frozen, cut off from the database) and another takes what it held,
// and the living processes' heartbeats remove its row (a process that was only frozen registers
// again at its next heartbeat); a graceful stop deletes the row, freeing everything at once. The
// comparison is made with the database's clock, the one clock all processes share.

import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { MigrationError, migrationSetDir } from '../migrations/migrate.ts';
import { migratePostgres, pendingPostgresMigrations } from '../migrations/migrate-postgres.ts';
import type { ClaimRequest, ClaimResult, KeyAttempt, KeyOutcome } from './idempotency-rules.ts';
import { redactUrl, type PostgresSettings } from './pg-settings.ts';
import { POSTGRES_ROWS } from './row-driver.ts';
import type { WebhookEvent } from './webhooks/store.ts';

export const POSTGRES_MIGRATIONS = migrationSetDir('service-postgres');

// int8 (count(*), sums, identities) as JavaScript numbers: every such value here stays far below
// 2^53 (row counts, sequence numbers), except item quantities, which the NF-e part reads as text.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

/**
 * A connection that prepares every parameterized statement it runs, once (named after its text):
 * the server then parses and plans each of the store's few dozen statements once per connection
 * instead of at every call, which on a busy 2-core machine is CPU the service gets back.
 * Statements without parameters (BEGIN, COMMIT, several in one string) run as they are.
 */
class PreparingClient extends pg.Client {
  static readonly #names = new Map<string, string>();

  static nameOf(text: string): string {
    let name = PreparingClient.#names.get(text);
    if (name === undefined) {
      name = `balcao_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      PreparingClient.#names.set(text, name);
    }
    return name;
  }

  // The driver's overloads (text and values, a config, a callback) are kept: only a config or a
  // text that comes with values is given a name.
  override query(...args: unknown[]): never {
    const [first, second] = args;
    if (typeof first === 'string' && Array.isArray(second)) {
      args = [{ name: PreparingClient.nameOf(first), text: first, values: second }, ...args.slice(2)];
    } else if (first !== null && typeof first === 'object' && 'text' in first && !('name' in first) && Array.isArray((first as { values?: unknown }).values)) {
      const config = first as { text: string };
      args = [{ ...config, name: PreparingClient.nameOf(config.text) }, ...args.slice(1)];
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/** A pool on the database of `settings`, with its timeouts, of at most `size` connections. */
export function newPool(settings: PostgresSettings, size = settings.poolSize, name = 'balcao-service'): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: size,
    statement_timeout: settings.statementTimeoutMs,
    // A transaction left open by a bug must not hold its locks (and a queue's rows) for ever.
    idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs * 3, 60_000),
    application_name: name,
    connectionTimeoutMillis: 10_000,
    Client: PreparingClient,
  });
  // An idle connection the server closes (a restart, a network cut) emits here; without a
  // listener it would crash the process. The next query opens a new one.
  pool.on('error', () => undefined);
  // One the server closes while it is lent out (a transaction between statements, a turn's lock
  // held while its work runs) emits on its client, where nothing listens between queries: the
  // same crash. Its next query fails instead, and the pool drops it when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Opens the pool and brings the schema up to date (several processes may start at once). */
export async function openPostgres(settings: PostgresSettings): Promise<pg.Pool> {
  const pool = newPool(settings);
  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client, POSTGRES_MIGRATIONS, redactUrl(settings.url));
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof MigrationError) throw err;
    throw new Error(`Não foi possível abrir o banco PostgreSQL ${redactUrl(settings.url)}: ${(err as Error).message}`, { cause: err });
  }
  return pool;
}

/** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackErr) {
      broken = rollbackErr as Error; // the connection is unusable: do not give it back
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The migrations shipped that the database lacks (readiness). */
export async function pendingMigrations(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    return await pendingPostgresMigrations(client, POSTGRES_MIGRATIONS);
  } finally {
    client.release();
  }
}

/**
 * An idempotency key as stored (its UTF-8 bytes: migrations/service-postgres/, header) and back.
 * Both take and give null for "no key".
 */
export function keyBytes(key: string): Buffer;
export function keyBytes(key: string | null): Buffer | null;
export function keyBytes(key: string | null): Buffer | null {
  return key === null ? null : Buffer.from(key, 'utf8');
}
export const keyText = POSTGRES_ROWS.key;

/** PostgreSQL's unique_violation, on the named constraint or index if given. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * SQL: the process named by `column` no longer holds its lease (gone, or never registered).
 * `$lease` is the parameter holding the lease's length in milliseconds.
 */
export const holderGone = (column: string, lease: string): string =>
  `NOT EXISTS (SELECT 1 FROM service_processes p WHERE p.id = ${column} AND p.heartbeat_at > now() - ${lease} * interval '1 millisecond')`;

type LeaseLogger = { warn(obj: object, msg: string): void };

/** This process's row in `service_processes` and its heartbeat (see the header). */
export class ProcessLease {
  readonly id = randomUUID();
  #timer: NodeJS.Timeout | undefined;
  #registered = false;
  #log: LeaseLogger | undefined;

  constructor(
    private readonly pool: pg.Pool,
    readonly leaseMs: number,
  ) {}

  /** Registers the process and starts renewing. */
  async start(log?: LeaseLogger): Promise<void> {
    this.#log = log;
    await this.pool.query('INSERT INTO service_processes (id, pid, host) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [this.id, process.pid, hostname()]);
    this.#registered = true;
    await this.renew();
    this.#timer = setInterval(() => void this.renew(), Math.max(200, Math.floor(this.leaseMs / 5)));
    this.#timer.unref();
  }

  /**
   * Renews the heartbeat and, in the same statement, removes the rows of processes whose lease
   * ran out (what they held is free either way: holderGone). This process's own row found
   * missing (removed while it was frozen) is registered again.
   */
  async renew(): Promise<void> {
    try {
      const renewed = await this.pool.query(
        `WITH gone AS (DELETE FROM service_processes WHERE id <> $1 AND heartbeat_at < now() - $2 * interval '1 millisecond')
         UPDATE service_processes SET heartbeat_at = now() WHERE id = $1`,
        [this.id, this.leaseMs],
      );
      if (renewed.rowCount === 0 && this.#registered) {
        await this.pool.query('INSERT INTO service_processes (id, pid, host) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
          this.id,
          process.pid,
          hostname(),
        ]);
      }
    } catch (err) {
      // Others take what this process holds once the lease runs out; it goes on trying.
      this.#log?.warn({ err, processo: this.id }, 'não foi possível renovar a concessão deste processo no banco');
    }
  }

  /** Graceful stop: everything this process held is free at once. */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#registered) return;
    this.#registered = false;
    await this.pool.query('DELETE FROM service_processes WHERE id = $1', [this.id]);
  }
}

/**
 * What a turn makes one at a time among processes (the class of its advisory lock; the lock's
 * second key is the hash of the document's or company's id): a document's state changes (an
 * NFC-e cancelled, an MDF-e closed or cancelled) and a company's numbering of returns.
 */
export const TURN = { nfce: 0x4e464345, mdfe: 0x4d444645, nfeNumbering: 0x4e464e55 } as const; // "NFCE", "MDFE", "NFNU"
export type TurnOf = keyof typeof TURN;

/**
 * How long a call waits for another process's turn on the same key before it is answered 503
 * (servico_indisponivel, retry): the turn it waits for includes a call to the tax authority,
 * which may take its whole timeout (30 s by default).
 */
export const TURN_WAIT_MS = 120_000;

/**
 * Runs `work` holding the advisory lock of `what` and `key`: a session lock on a connection of
 * `locks` (a pool of its own, so a turn never waits for a connection the work it guards needs),
 * held for the turn, released by the unlock or, should the process die, by the server when the
 * connection ends. The wait for the lock is bounded by that pool's statement timeout.
 */
export async function lockedTurn<T>(locks: pg.Pool, what: TurnOf, key: string, work: () => Promise<T>): Promise<T> {
  const client = await locks.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [TURN[what], key]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [TURN[what], key]).catch((err: Error) => {
        broken = err; // the connection is closed instead, which releases the lock
      });
    }
  } finally {
    client.release(broken);
  }
}

/** A connection in a transaction, or the pool for a statement alone. */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** What PgStore lends its document parts: its pool, transactions, lease and the shared steps. */
export type PgBlocks = {
  readonly pool: pg.Pool;
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** This process's lease: its id and length. */
  readonly lease: { readonly id: string; readonly leaseMs: number };
  claimKeyInTx(client: pg.PoolClient, request: ClaimRequest): Promise<ClaimResult>;
  /** Also alone, on the pool (one statement). */
  settleKeyInTx(db: Queryable, attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean>;
  enqueueWebhookInTx(db: Queryable, event: WebhookEvent): Promise<boolean>;
  /** Runs `work` as the only turn of `what` and `key` among the processes (lockedTurn). */
  turn<T>(what: TurnOf, key: string, work: () => Promise<T>): Promise<T>;
};
