// The sandbox authority's memory (sandbox-memory.ts) in the service's PostgreSQL database, schema
// sandbox_autoridade (migrations/service-postgres/): every service process sharing the database
// asks the same authority. A decision is one transaction that first takes transaction-level
// advisory locks: on its number (exclusive) and its emitter (shared) for an authorization, on
// its emitter (exclusive) for the others; so two decisions that could conflict (the same number
// from two processes, a voided range and a number in it, a cancellation and a re-send) never
// interleave, while different numbers, and different emitters, are judged in parallel.
//
// It has a small pool of its own, as the other system it plays would: its decisions, which may
// wait for one another's locks, never hold the connections the service's requests need.
//
// Round trips are what a decision costs here, so they are few: BEGIN and the lock go together, an
// authorization's facts are one query, and the writes of a decision are kept until it ends and
// then made in one statement (data-modifying CTEs) before the COMMIT. A decision never reads
// what it wrote (a read first sends what is pending).

import type pg from 'pg';
import type { Queryable } from '../pg-db.ts';
import { AuthorityUnavailableError } from './port.ts';
import type { DecisionScope, EventRow, MdfeRow, NfeRow, SandboxMemory, SandboxRecords } from './sandbox-memory.ts';

/** Classes of the advisory locks of sandbox decisions (the second key: a hash of the CNPJ, or of CNPJ and number). */
const EMITTER_LOCK_CLASS = 0x53424458; // "SBDX"
const NUMBER_LOCK_CLASS = 0x5342444e; // "SBDN"

const S = 'sandbox_autoridade';

/** A write kept for the decision's end: its SQL with $1.. parameters, and their values. */
type Write = { sql: string; params: unknown[] };

/** The writes as one statement: each a CTE, its parameters renumbered. */
async function flush(db: Queryable, writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length === 1) {
    await db.query(writes[0]!.sql, writes[0]!.params);
  } else {
    const params: unknown[] = [];
    const ctes = writes.map((w, i) => {
      const offset = params.length;
      params.push(...w.params);
      return `w${i} AS (${w.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
    });
    await db.query(`WITH ${ctes.join(', ')} SELECT 1`, params);
  }
  writes.length = 0;
}

const nfeRow = (r: NfeRow | undefined): NfeRow | undefined => r && { ...r, authorized_at_ms: Number(r.authorized_at_ms) };
const mdfeRow = (r: MdfeRow | undefined): MdfeRow | undefined => r && { ...r, authorized_at_ms: Number(r.authorized_at_ms) };

async function one<T>(db: Queryable, sql: string, params: unknown[]): Promise<T | undefined> {
  return (await db.query(sql, params)).rows[0] as T | undefined;
}

/**
 * The records on `db`. With `pending`, writes are kept there (see the header) and sent before
 * the next read; without, each write is made at once.
 */
function records(db: Queryable, pending?: Write[]): SandboxRecords {
  const write = async (sql: string, params: unknown[]) => {
    if (pending) pending.push({ sql, params });
    else await db.query(sql, params);
  };
  const read = async <T>(sql: string, params: unknown[]): Promise<T | undefined> => {
    if (pending?.length) await flush(db, pending);
    return one<T>(db, sql, params);
  };
  return {
    nextProtocol: async () => Number((await read<{ n: string }>(`SELECT nextval('${S}.protocolo') AS n`, []))!.n),
    ...nfeRecords(read, write),
    ...mdfeRecords(read, write),
  };
}

type Read = <T>(sql: string, params: unknown[]) => Promise<T | undefined>;
type WriteStatement = (sql: string, params: unknown[]) => Promise<void>;
type MdfeRecords = Pick<
  SandboxRecords,
  'mdfe' | 'mdfeByNumber' | 'openMdfeOfPlate' | 'insertMdfe' | 'closeMdfe' | 'cancelMdfe' | 'mdfeEvent' | 'insertMdfeEvent'
>;
type NfeRecords = Omit<SandboxRecords, keyof MdfeRecords | 'nextProtocol'>;

/** The NF-e (NFC-e and devolução) the sandbox judged, their events and the voided ranges. */
function nfeRecords(read: Read, write: WriteStatement): NfeRecords {
  return {
    nfe: async (key) => nfeRow(await read(`SELECT * FROM ${S}.nfe WHERE access_key = $1`, [key])),
    nfeAuthorizationFacts: async (key, cnpj, model, serie, number) => {
      const r = (await read<{ same: NfeRow | null; other: NfeRow | null; voided: boolean }>(
        `SELECT (SELECT row_to_json(n) FROM ${S}.nfe n WHERE access_key = $1) AS same,
                (SELECT row_to_json(n) FROM ${S}.nfe n WHERE cnpj = $2 AND model = $3 AND serie = $4 AND number = $5) AS other,
                EXISTS (SELECT 1 FROM ${S}.voided_range WHERE cnpj = $2 AND model = $3 AND serie = $4 AND first_number <= $5 AND last_number >= $5) AS voided`,
        [key, cnpj, model, serie, number],
      ))!;
      return { same: nfeRow(r.same ?? undefined), other: nfeRow(r.other ?? undefined), voided: r.voided };
    },
    authorizedInRange: async (cnpj, model, serie, first, last) =>
      (
        await read<{ number: number }>(
          `SELECT number FROM ${S}.nfe WHERE cnpj = $1 AND model = $2 AND serie = $3 AND number BETWEEN $4 AND $5 ORDER BY number LIMIT 1`,
          [cnpj, model, serie, first, last],
        )
      )?.number,
    insertNfe: async (r) => {
      await write(
        `INSERT INTO ${S}.nfe (access_key, company_id, cnpj, model, serie, number, tp_emis, c_stat, x_motivo, n_prot, received_at,
           authorized_at_ms, prot_nfe)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [
          r.access_key,
          r.company_id,
          r.cnpj,
          r.model,
          r.serie,
          r.number,
          r.tp_emis,
          r.c_stat,
          r.x_motivo,
          r.n_prot,
          r.received_at,
          r.authorized_at_ms,
          r.prot_nfe,
        ],
      );
    },
    recordReception: async (r) => {
      await write(`INSERT INTO ${S}.nfe_recepcao (access_key, cnpj, c_stat, received_at) VALUES ($1, $2, $3, $4)`, [
        r.access_key,
        r.cnpj,
        r.c_stat,
        r.received_at,
      ]);
    },
    cancelNfe: async (key, at, tpEvento, nProt) => {
      await write(`UPDATE ${S}.nfe SET cancelled_at = $1, cancel_event = $2, cancel_n_prot = $3 WHERE access_key = $4 AND cancelled_at IS NULL`, [
        at,
        tpEvento,
        nProt,
        key,
      ]);
    },
    nfeEvent: async (key, tpEvento, nSeq) =>
      read<EventRow>(`SELECT * FROM ${S}.nfe_event WHERE access_key = $1 AND tp_evento = $2 AND n_seq = $3`, [key, tpEvento, nSeq]),
    insertNfeEvent: async (r) => {
      await write(
        `INSERT INTO ${S}.nfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [r.access_key, r.tp_evento, r.n_seq, r.company_id, r.n_prot, r.registered_at, r.ret_evento],
      );
    },
    voidedOverlap: async (cnpj, model, serie, first, last) => {
      const r = await read<{ first_number: number; last_number: number }>(
        `SELECT first_number, last_number FROM ${S}.voided_range
          WHERE cnpj = $1 AND model = $2 AND serie = $3 AND first_number <= $4 AND last_number >= $5
          ORDER BY first_number LIMIT 1`,
        [cnpj, model, serie, last, first],
      );
      return r && { first: r.first_number, last: r.last_number };
    },
    insertVoided: async (r) => {
      await write(
        `INSERT INTO ${S}.voided_range (company_id, cnpj, model, serie, first_number, last_number, n_prot, received_at, ret_inut)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [r.company_id, r.cnpj, r.model, r.serie, r.first_number, r.last_number, r.n_prot, r.received_at, r.ret_inut],
      );
    },
  };
}

/** The manifests the sandbox authorized and their events. */
function mdfeRecords(read: Read, write: WriteStatement): MdfeRecords {
  return {
    mdfe: async (key) => mdfeRow(await read(`SELECT * FROM ${S}.mdfe WHERE access_key = $1`, [key])),
    mdfeByNumber: async (cnpj, serie, number) =>
      mdfeRow(await read(`SELECT * FROM ${S}.mdfe WHERE cnpj = $1 AND serie = $2 AND number = $3`, [cnpj, serie, number])),
    openMdfeOfPlate: async (cnpj, plate) =>
      mdfeRow(await read(`SELECT * FROM ${S}.mdfe WHERE cnpj = $1 AND plate = $2 AND state = 'autorizado' ORDER BY authorized_at_ms LIMIT 1`, [cnpj, plate])),
    insertMdfe: async (r) => {
      await write(
        `INSERT INTO ${S}.mdfe (access_key, company_id, cnpj, serie, number, plate, uf_ini, uf_fim, state, c_stat, x_motivo, n_prot,
           received_at, authorized_at_ms, prot_mdfe)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'autorizado', $9, $10, $11, $12, $13, $14)`,
        [
          r.access_key,
          r.company_id,
          r.cnpj,
          r.serie,
          r.number,
          r.plate,
          r.uf_ini,
          r.uf_fim,
          r.c_stat,
          r.x_motivo,
          r.n_prot,
          r.received_at,
          r.authorized_at_ms,
          r.prot_mdfe,
        ],
      );
    },
    closeMdfe: async (key, at) => {
      await write(`UPDATE ${S}.mdfe SET state = 'encerrado', closed_at = $1 WHERE access_key = $2 AND state = 'autorizado'`, [at, key]);
    },
    cancelMdfe: async (key, at) => {
      await write(`UPDATE ${S}.mdfe SET state = 'cancelado', cancelled_at = $1 WHERE access_key = $2 AND state = 'autorizado'`, [at, key]);
    },
    mdfeEvent: async (key, tpEvento, nSeq) =>
      read<EventRow>(`SELECT * FROM ${S}.mdfe_event WHERE access_key = $1 AND tp_evento = $2 AND n_seq = $3`, [key, tpEvento, nSeq]),
    insertMdfeEvent: async (r) => {
      await write(
        `INSERT INTO ${S}.mdfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [r.access_key, r.tp_evento, r.n_seq, r.company_id, r.n_prot, r.registered_at, r.ret_evento],
      );
    },
  };
}

/** Errors of the way to the database (refused, cut, timed out): nothing known to be decided. */
function unreachable(err: unknown): unknown {
  const e = err as { code?: unknown; message?: string };
  // Class 08 (connection), 57 (operator intervention: statement timeout, shutdown), 40 (deadlock,
  // serialization), 53 (insufficient resources), and the driver's own socket errors.
  const sql = typeof e?.code === 'string' && /^(08|57|40|53)/.test(e.code);
  const socket = typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code);
  const driver = !e?.code && /Connection terminated|timeout exceeded when trying to connect/i.test(e?.message ?? '');
  if (sql || socket || driver) return new AuthorityUnavailableError(`Autoridade fiscal simulada sem acesso ao seu banco (${e.message ?? e.code})`);
  return err;
}

export class PgSandboxMemory implements SandboxMemory {
  #open = true;

  constructor(
    private readonly pool: pg.Pool,
    /** Ended when this memory is closed (a pool of its own; not one lent by its caller). */
    private readonly ownsPool = false,
  ) {}

  get open(): boolean {
    return this.#open;
  }

  private check(): void {
    if (!this.#open) throw new AuthorityUnavailableError('Autoridade fiscal simulada encerrada');
  }

  async decide<T>({ cnpj, number }: DecisionScope, decision: (records: SandboxRecords) => Promise<T>): Promise<T> {
    this.check();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unreachable(err);
    }
    let broken: Error | undefined;
    try {
      // No parameters: one round trip for the BEGIN and the locks (the texts quoted by the driver).
      const emitter = `hashtext(${client.escapeLiteral(cnpj)})`;
      const locks =
        number === undefined
          ? `pg_advisory_xact_lock(${EMITTER_LOCK_CLASS}, ${emitter})`
          : `pg_advisory_xact_lock_shared(${EMITTER_LOCK_CLASS}, ${emitter}), pg_advisory_xact_lock(${NUMBER_LOCK_CLASS}, hashtext(${client.escapeLiteral(`${cnpj}/${number}`)}))`;
      await client.query(`BEGIN; SELECT ${locks}`);
      const pending: Write[] = [];
      const result = await decision(records(client, pending));
      await flush(client, pending);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error;
      }
      throw unreachable(err);
    } finally {
      client.release(broken);
    }
  }

  private async read<T>(fn: (db: Queryable) => Promise<T>): Promise<T> {
    this.check();
    try {
      return await fn(this.pool);
    } catch (err) {
      throw unreachable(err);
    }
  }

  nfe(key: string): Promise<NfeRow | undefined> {
    return this.read((db) => records(db).nfe(key));
  }

  mdfe(key: string): Promise<MdfeRow | undefined> {
    return this.read((db) => records(db).mdfe(key));
  }

  openMdfes(cnpj: string): Promise<{ access_key: string; n_prot: string }[]> {
    return this.read(
      async (db) =>
        (await db.query(`SELECT access_key, n_prot FROM ${S}.mdfe WHERE cnpj = $1 AND state = 'autorizado' ORDER BY authorized_at_ms`, [cnpj])).rows as {
          access_key: string;
          n_prot: string;
        }[],
    );
  }

  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    if (this.ownsPool) await this.pool.end();
  }
}
