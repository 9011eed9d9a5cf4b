// The sandbox authority's memory (sandbox-memory.ts) in the service's PostgreSQL database, schema
// sandbox_autoridade (migrations/service-postgres/): every service process sharing the database
// asks the same authority. A decision is one transaction that first takes a transaction-level
// advisory lock on the emitter's CNPJ, so two decisions about one emitter (the same number
// from two processes, a cancellation and a re-send) never interleave, while different emitters
// are judged in parallel. The pool is the service store's; closing this memory does not close it.

import type pg from 'pg';
import { AuthorityUnavailableError } from './port.ts';
import type { EventRow, MdfeRow, NfeRow, SandboxMemory, SandboxRecords } from './sandbox-memory.ts';

/** Class of the advisory locks of sandbox decisions (the second key is the CNPJ's hash). */
const DECISION_LOCK_CLASS = 0x53424458; // "SBDX"

const S = 'sandbox_autoridade';

type Queryable = Pick<pg.ClientBase, 'query'>;

const nfeRow = (r: NfeRow | undefined): NfeRow | undefined => r && { ...r, authorized_at_ms: Number(r.authorized_at_ms) };
const mdfeRow = (r: MdfeRow | undefined): MdfeRow | undefined => r && { ...r, authorized_at_ms: Number(r.authorized_at_ms) };

async function one<T>(db: Queryable, sql: string, params: unknown[]): Promise<T | undefined> {
  return (await db.query(sql, params)).rows[0] as T | undefined;
}

function records(db: Queryable): SandboxRecords {
  return {
    nextProtocol: async () => Number((await one<{ n: string }>(db, `SELECT nextval('${S}.protocolo') AS n`, []))!.n),
    nfe: async (key) => nfeRow(await one(db, `SELECT * FROM ${S}.nfe WHERE access_key = $1`, [key])),
    nfeByNumber: async (cnpj, model, serie, number) =>
      nfeRow(await one(db, `SELECT * FROM ${S}.nfe WHERE cnpj = $1 AND model = $2 AND serie = $3 AND number = $4`, [cnpj, model, serie, number])),
    authorizedInRange: async (cnpj, model, serie, first, last) =>
      (
        await one<{ number: number }>(
          db,
          `SELECT number FROM ${S}.nfe WHERE cnpj = $1 AND model = $2 AND serie = $3 AND number BETWEEN $4 AND $5 ORDER BY number LIMIT 1`,
          [cnpj, model, serie, first, last],
        )
      )?.number,
    insertNfe: async (r) => {
      await db.query(
        `INSERT INTO ${S}.nfe (access_key, company_id, cnpj, model, serie, number, tp_emis, c_stat, x_motivo, n_prot, received_at,
           authorized_at_ms, prot_nfe)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [r.access_key, r.company_id, r.cnpj, r.model, r.serie, r.number, r.tp_emis, r.c_stat, r.x_motivo, r.n_prot, r.received_at, r.authorized_at_ms, r.prot_nfe],
      );
    },
    recordReception: async (r) => {
      await db.query(`INSERT INTO ${S}.nfe_recepcao (access_key, cnpj, c_stat, received_at) VALUES ($1, $2, $3, $4)`, [
        r.access_key,
        r.cnpj,
        r.c_stat,
        r.received_at,
      ]);
    },
    cancelNfe: async (key, at, tpEvento, nProt) => {
      await db.query(`UPDATE ${S}.nfe SET cancelled_at = $1, cancel_event = $2, cancel_n_prot = $3 WHERE access_key = $4 AND cancelled_at IS NULL`, [
        at,
        tpEvento,
        nProt,
        key,
      ]);
    },
    nfeEvent: async (key, tpEvento, nSeq) =>
      one<EventRow>(db, `SELECT * FROM ${S}.nfe_event WHERE access_key = $1 AND tp_evento = $2 AND n_seq = $3`, [key, tpEvento, nSeq]),
    insertNfeEvent: async (r) => {
      await db.query(
        `INSERT INTO ${S}.nfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [r.access_key, r.tp_evento, r.n_seq, r.company_id, r.n_prot, r.registered_at, r.ret_evento],
      );
    },
    voidedOverlap: async (cnpj, model, serie, first, last) => {
      const r = await one<{ first_number: number; last_number: number }>(
        db,
        `SELECT first_number, last_number FROM ${S}.voided_range
          WHERE cnpj = $1 AND model = $2 AND serie = $3 AND first_number <= $4 AND last_number >= $5
          ORDER BY first_number LIMIT 1`,
        [cnpj, model, serie, last, first],
      );
      return r && { first: r.first_number, last: r.last_number };
    },
    insertVoided: async (r) => {
      await db.query(
        `INSERT INTO ${S}.voided_range (company_id, cnpj, model, serie, first_number, last_number, n_prot, received_at, ret_inut)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [r.company_id, r.cnpj, r.model, r.serie, r.first_number, r.last_number, r.n_prot, r.received_at, r.ret_inut],
      );
    },
    mdfe: async (key) => mdfeRow(await one(db, `SELECT * FROM ${S}.mdfe WHERE access_key = $1`, [key])),
    mdfeByNumber: async (cnpj, serie, number) =>
      mdfeRow(await one(db, `SELECT * FROM ${S}.mdfe WHERE cnpj = $1 AND serie = $2 AND number = $3`, [cnpj, serie, number])),
    openMdfeOfPlate: async (cnpj, plate) =>
      mdfeRow(await one(db, `SELECT * FROM ${S}.mdfe WHERE cnpj = $1 AND plate = $2 AND state = 'autorizado' ORDER BY authorized_at_ms LIMIT 1`, [cnpj, plate])),
    insertMdfe: async (r) => {
      await db.query(
        `INSERT INTO ${S}.mdfe (access_key, company_id, cnpj, serie, number, plate, uf_ini, uf_fim, state, c_stat, x_motivo, n_prot,
           received_at, authorized_at_ms, prot_mdfe)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'autorizado', $9, $10, $11, $12, $13, $14)`,
        [r.access_key, r.company_id, r.cnpj, r.serie, r.number, r.plate, r.uf_ini, r.uf_fim, r.c_stat, r.x_motivo, r.n_prot, r.received_at, r.authorized_at_ms, r.prot_mdfe],
      );
    },
    closeMdfe: async (key, at) => {
      await db.query(`UPDATE ${S}.mdfe SET state = 'encerrado', closed_at = $1 WHERE access_key = $2 AND state = 'autorizado'`, [at, key]);
    },
    cancelMdfe: async (key, at) => {
      await db.query(`UPDATE ${S}.mdfe SET state = 'cancelado', cancelled_at = $1 WHERE access_key = $2 AND state = 'autorizado'`, [at, key]);
    },
    insertMdfeEvent: async (r) => {
      await db.query(
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

  constructor(private readonly pool: pg.Pool) {}

  get open(): boolean {
    return this.#open;
  }

  private check(): void {
    if (!this.#open) throw new AuthorityUnavailableError('Autoridade fiscal simulada encerrada');
  }

  async decide<T>(cnpj: string, decision: (records: SandboxRecords) => Promise<T>): Promise<T> {
    this.check();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unreachable(err);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DECISION_LOCK_CLASS, cnpj]);
      const result = await decision(records(client));
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
        (await db.query(`SELECT access_key, n_prot FROM ${S}.mdfe WHERE cnpj = $1 AND state = 'autorizado' ORDER BY authorized_at_ms`, [cnpj]))
          .rows as { access_key: string; n_prot: string }[],
    );
  }

  async close(): Promise<void> {
    this.#open = false;
  }
}
