// The sandbox authority's memory (sandbox-memory.ts) in its own SQLite file, because it plays
// "another system" whose state survives restarts of the service (a document it authorized stays
// authorized, and a caller killed mid-call finds the truth by consulting it). WAL with
// synchronous FULL: a decision is on disk when the transaction that records it returns, before
// the answer leaves. Several processes may open the file: BEGIN IMMEDIATE serializes their
// decisions; within this process one connection serves every call, so decisions (and reads,
// which must not see a decision half made) take turns on it.
//
// Statements are prepared once: an authorization runs a handful of them and must cost well
// under a millisecond here (the XML checks are the expensive part).

import type Database from 'better-sqlite3';
import { openSqliteFile } from '../db.ts';
import { AuthorityUnavailableError } from './port.ts';
import type { DecisionScope, EventRow, MdfeRow, NewMdfe, NewNfe, NfeRow, Reception, SandboxMemory, SandboxRecords, VoidedRange } from './sandbox-memory.ts';

// Bumped when the schema changes; a newer file is refused rather than misread. 2: nfe_recepcao.
const SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS counter (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);

-- NF-e / NFC-e authorized here (100 or 150). Rejections leave no trace: they do not consume the
-- number, and a consultation of a rejected key answers 217 as SEFAZ does.
CREATE TABLE IF NOT EXISTS nfe (
  access_key TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  model TEXT NOT NULL,
  serie INTEGER NOT NULL,
  number INTEGER NOT NULL,
  tp_emis INTEGER NOT NULL,
  c_stat TEXT NOT NULL,
  x_motivo TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  authorized_at_ms INTEGER NOT NULL,
  prot_nfe TEXT NOT NULL,
  cancelled_at TEXT,
  cancel_event TEXT,
  cancel_n_prot TEXT
);
-- One authorized document per number: a cancelled one keeps its number for ever.
CREATE UNIQUE INDEX IF NOT EXISTS nfe_number ON nfe (cnpj, model, serie, number);

-- Every NF-e/NFC-e received and judged past the stateless checks, with its answer (100, 204,
-- 539, ...): what an authority counts, and what tests count to prove a document was sent once.
CREATE TABLE IF NOT EXISTS nfe_recepcao (
  id INTEGER PRIMARY KEY,
  access_key TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  c_stat TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nfe_recepcao_key ON nfe_recepcao (access_key);

CREATE TABLE IF NOT EXISTS nfe_event (
  access_key TEXT NOT NULL,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  company_id TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  ret_evento TEXT NOT NULL,
  PRIMARY KEY (access_key, tp_evento, n_seq)
);

CREATE TABLE IF NOT EXISTS voided_range (
  id INTEGER PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  model TEXT NOT NULL,
  serie INTEGER NOT NULL,
  first_number INTEGER NOT NULL,
  last_number INTEGER NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  ret_inut TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS voided_range_series ON voided_range (cnpj, model, serie, first_number);

CREATE TABLE IF NOT EXISTS mdfe (
  access_key TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  serie INTEGER NOT NULL,
  number INTEGER NOT NULL,
  plate TEXT NOT NULL,
  uf_ini TEXT NOT NULL,
  uf_fim TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('autorizado', 'encerrado', 'cancelado')),
  c_stat TEXT NOT NULL,
  x_motivo TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  authorized_at_ms INTEGER NOT NULL,
  prot_mdfe TEXT NOT NULL,
  closed_at TEXT,
  cancelled_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS mdfe_number ON mdfe (cnpj, serie, number);
CREATE INDEX IF NOT EXISTS mdfe_open_plate ON mdfe (cnpj, plate, state);

CREATE TABLE IF NOT EXISTS mdfe_event (
  access_key TEXT NOT NULL,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  company_id TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  ret_evento TEXT NOT NULL,
  PRIMARY KEY (access_key, tp_evento, n_seq)
);
`;

function prepareStatements(db: Database.Database) {
  return {
    nextValue: db.prepare<[string], { value: number }>(
      'INSERT INTO counter (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value',
    ),
    nfeByKey: db.prepare<[string], NfeRow>('SELECT * FROM nfe WHERE access_key = ?'),
    nfeByNumber: db.prepare<[string, string, number, number], NfeRow>('SELECT * FROM nfe WHERE cnpj = ? AND model = ? AND serie = ? AND number = ?'),
    nfeInRange: db.prepare<[string, string, number, number, number], { access_key: string; number: number }>(
      'SELECT access_key, number FROM nfe WHERE cnpj = ? AND model = ? AND serie = ? AND number BETWEEN ? AND ? ORDER BY number LIMIT 1',
    ),
    insertReception: db.prepare<[Reception]>(
      'INSERT INTO nfe_recepcao (access_key, cnpj, c_stat, received_at) VALUES (@access_key, @cnpj, @c_stat, @received_at)',
    ),
    insertNfe: db.prepare<[NewNfe]>(
      `INSERT INTO nfe (access_key, company_id, cnpj, model, serie, number, tp_emis, c_stat, x_motivo, n_prot, received_at,
         authorized_at_ms, prot_nfe)
       VALUES (@access_key, @company_id, @cnpj, @model, @serie, @number, @tp_emis, @c_stat, @x_motivo, @n_prot, @received_at,
         @authorized_at_ms, @prot_nfe)`,
    ),
    cancelNfe: db.prepare<[string, string, string, string]>(
      'UPDATE nfe SET cancelled_at = ?, cancel_event = ?, cancel_n_prot = ? WHERE access_key = ? AND cancelled_at IS NULL',
    ),
    nfeEvent: db.prepare<[string, string, number], EventRow>('SELECT * FROM nfe_event WHERE access_key = ? AND tp_evento = ? AND n_seq = ?'),
    insertNfeEvent: db.prepare<[EventRow]>(
      `INSERT INTO nfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento)
       VALUES (@access_key, @tp_evento, @n_seq, @company_id, @n_prot, @registered_at, @ret_evento)`,
    ),
    voidedOverlap: db.prepare<[string, string, number, number, number], { first_number: number; last_number: number }>(
      `SELECT first_number, last_number FROM voided_range
       WHERE cnpj = ? AND model = ? AND serie = ? AND first_number <= ? AND last_number >= ?
       ORDER BY first_number LIMIT 1`,
    ),
    insertVoided: db.prepare<[VoidedRange]>(
      `INSERT INTO voided_range (company_id, cnpj, model, serie, first_number, last_number, n_prot, received_at, ret_inut)
       VALUES (@company_id, @cnpj, @model, @serie, @first_number, @last_number, @n_prot, @received_at, @ret_inut)`,
    ),
    mdfeByKey: db.prepare<[string], MdfeRow>('SELECT * FROM mdfe WHERE access_key = ?'),
    mdfeByNumber: db.prepare<[string, number, number], MdfeRow>('SELECT * FROM mdfe WHERE cnpj = ? AND serie = ? AND number = ?'),
    openMdfeOfPlate: db.prepare<[string, string], MdfeRow>(
      `SELECT * FROM mdfe WHERE cnpj = ? AND plate = ? AND state = 'autorizado' ORDER BY authorized_at_ms LIMIT 1`,
    ),
    openMdfes: db.prepare<[string], { access_key: string; n_prot: string }>(
      "SELECT access_key, n_prot FROM mdfe WHERE cnpj = ? AND state = 'autorizado' ORDER BY authorized_at_ms",
    ),
    insertMdfe: db.prepare<[NewMdfe]>(
      `INSERT INTO mdfe (access_key, company_id, cnpj, serie, number, plate, uf_ini, uf_fim, state, c_stat, x_motivo, n_prot,
         received_at, authorized_at_ms, prot_mdfe)
       VALUES (@access_key, @company_id, @cnpj, @serie, @number, @plate, @uf_ini, @uf_fim, 'autorizado', @c_stat, @x_motivo, @n_prot,
         @received_at, @authorized_at_ms, @prot_mdfe)`,
    ),
    closeMdfe: db.prepare<[string, string]>("UPDATE mdfe SET state = 'encerrado', closed_at = ? WHERE access_key = ? AND state = 'autorizado'"),
    cancelMdfe: db.prepare<[string, string]>("UPDATE mdfe SET state = 'cancelado', cancelled_at = ? WHERE access_key = ? AND state = 'autorizado'"),
    mdfeEvent: db.prepare<[string, string, number], EventRow>('SELECT * FROM mdfe_event WHERE access_key = ? AND tp_evento = ? AND n_seq = ?'),
    insertMdfeEvent: db.prepare<[EventRow]>(
      `INSERT INTO mdfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento)
       VALUES (@access_key, @tp_evento, @n_seq, @company_id, @n_prot, @registered_at, @ret_evento)`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

const CLOSED_MESSAGE = 'Autoridade fiscal simulada encerrada';

export class SqliteSandboxMemory implements SandboxMemory {
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  /** The end of the latest turn on the connection (see the header). */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(file: string) {
    // Owner-only like service.sqlite: it holds the documents it authorized.
    this.db = openSqliteFile(file, (db) => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(`O banco da autoridade simulada ${file} foi criado por uma versão mais nova do Balcão (esquema ${version}); atualize o Balcão.`);
      }
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
    });
    this.stmt = prepareStatements(this.db);
  }

  get open(): boolean {
    return this.db.open;
  }

  /** Runs `work` when the connection's previous turn has ended. */
  private turn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#turn.then(() => {
      if (!this.db.open) throw new AuthorityUnavailableError(CLOSED_MESSAGE);
      return work();
    });
    this.#turn = run.catch(() => undefined);
    return run;
  }

  decide<T>(_scope: DecisionScope, decision: (records: SandboxRecords) => Promise<T>): Promise<T> {
    return this.turn(async () => {
      try {
        // IMMEDIATE: the write lock before the first read, so two decisions about the same
        // number cannot interleave, even from two processes.
        this.db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        throw busy(err);
      }
      try {
        const result = await decision(this.records);
        this.db.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw busy(err);
      }
    });
  }

  nfe(key: string): Promise<NfeRow | undefined> {
    return this.turn(async () => this.stmt.nfeByKey.get(key));
  }

  mdfe(key: string): Promise<MdfeRow | undefined> {
    return this.turn(async () => this.stmt.mdfeByKey.get(key));
  }

  openMdfes(cnpj: string): Promise<{ access_key: string; n_prot: string }[]> {
    return this.turn(async () => this.stmt.openMdfes.all(cnpj));
  }

  async close(): Promise<void> {
    await this.#turn;
    if (this.db.open) this.db.close();
  }

  private readonly records: SandboxRecords = {
    nextProtocol: async () => this.stmt.nextValue.get('protocolo')!.value,
    nfe: async (key) => this.stmt.nfeByKey.get(key),
    nfeAuthorizationFacts: async (key, cnpj, model, serie, number) => ({
      same: this.stmt.nfeByKey.get(key),
      other: this.stmt.nfeByNumber.get(cnpj, model, serie, number),
      voided: this.stmt.voidedOverlap.get(cnpj, model, serie, number, number) !== undefined,
    }),
    authorizedInRange: async (cnpj, model, serie, first, last) => this.stmt.nfeInRange.get(cnpj, model, serie, first, last)?.number,
    insertNfe: async (row) => void this.stmt.insertNfe.run(row),
    recordReception: async (reception) => void this.stmt.insertReception.run(reception),
    cancelNfe: async (key, at, tpEvento, nProt) => void this.stmt.cancelNfe.run(at, tpEvento, nProt, key),
    nfeEvent: async (key, tpEvento, nSeq) => this.stmt.nfeEvent.get(key, tpEvento, nSeq),
    insertNfeEvent: async (row) => void this.stmt.insertNfeEvent.run(row),
    voidedOverlap: async (cnpj, model, serie, first, last) => {
      const r = this.stmt.voidedOverlap.get(cnpj, model, serie, last, first);
      return r && { first: r.first_number, last: r.last_number };
    },
    insertVoided: async (row) => void this.stmt.insertVoided.run(row),
    mdfe: async (key) => this.stmt.mdfeByKey.get(key),
    mdfeByNumber: async (cnpj, serie, number) => this.stmt.mdfeByNumber.get(cnpj, serie, number),
    openMdfeOfPlate: async (cnpj, plate) => this.stmt.openMdfeOfPlate.get(cnpj, plate),
    insertMdfe: async (row) => void this.stmt.insertMdfe.run(row),
    closeMdfe: async (key, at) => void this.stmt.closeMdfe.run(at, key),
    cancelMdfe: async (key, at) => void this.stmt.cancelMdfe.run(at, key),
    mdfeEvent: async (key, tpEvento, nSeq) => this.stmt.mdfeEvent.get(key, tpEvento, nSeq),
    insertMdfeEvent: async (row) => void this.stmt.insertMdfeEvent.run(row),
  };
}

/** A lock held too long by another process means nothing was decided: an unknown outcome. */
function busy(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
    return new AuthorityUnavailableError(`Autoridade fiscal simulada ocupada (${code})`);
  }
  return err;
}
