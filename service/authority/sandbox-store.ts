// The sandbox authority's memory: its own SQLite file, because it plays "another system" whose
// state survives restarts of the service (a document it authorized stays authorized, and a
// caller killed mid-call finds the truth by consulting it). WAL with synchronous FULL: a decision
// is on disk when the transaction that records it returns, before the answer leaves.
//
// Statements are prepared once: an authorization runs a handful of them and must cost well
// under a millisecond here (the XML checks are the expensive part).

import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

// Bumped when the schema changes; a newer file is refused rather than misread.
const SCHEMA_VERSION = 1;

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

export type NfeRow = {
  access_key: string;
  company_id: string;
  cnpj: string;
  model: string;
  serie: number;
  number: number;
  tp_emis: number;
  c_stat: string;
  x_motivo: string;
  n_prot: string;
  received_at: string;
  authorized_at_ms: number;
  prot_nfe: string;
  cancelled_at: string | null;
  cancel_event: string | null;
  cancel_n_prot: string | null;
};

export type NewNfe = Omit<NfeRow, 'cancelled_at' | 'cancel_event' | 'cancel_n_prot'>;

export type MdfeState = 'autorizado' | 'encerrado' | 'cancelado';

export type MdfeRow = {
  access_key: string;
  company_id: string;
  cnpj: string;
  serie: number;
  number: number;
  plate: string;
  uf_ini: string;
  uf_fim: string;
  state: MdfeState;
  c_stat: string;
  x_motivo: string;
  n_prot: string;
  received_at: string;
  authorized_at_ms: number;
  prot_mdfe: string;
  closed_at: string | null;
  cancelled_at: string | null;
};

export type NewMdfe = Omit<MdfeRow, 'state' | 'closed_at' | 'cancelled_at'>;

export type EventRow = {
  access_key: string;
  tp_evento: string;
  n_seq: number;
  company_id: string;
  n_prot: string;
  registered_at: string;
  ret_evento: string;
};

export type VoidedRange = {
  company_id: string;
  cnpj: string;
  model: string;
  serie: number;
  first_number: number;
  last_number: number;
  n_prot: string;
  received_at: string;
  ret_inut: string;
};

function prepareStatements(db: Database.Database) {
  return {
    nextValue: db.prepare<[string], { value: number }>(
      'INSERT INTO counter (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value',
    ),
    nfeByKey: db.prepare<[string], NfeRow>('SELECT * FROM nfe WHERE access_key = ?'),
    nfeByNumber: db.prepare<[string, string, number, number], NfeRow>(
      'SELECT * FROM nfe WHERE cnpj = ? AND model = ? AND serie = ? AND number = ?',
    ),
    nfeInRange: db.prepare<[string, string, number, number, number], { access_key: string; number: number }>(
      'SELECT access_key, number FROM nfe WHERE cnpj = ? AND model = ? AND serie = ? AND number BETWEEN ? AND ? ORDER BY number LIMIT 1',
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
    nfeEvent: db.prepare<[string, string, number], EventRow>(
      'SELECT * FROM nfe_event WHERE access_key = ? AND tp_evento = ? AND n_seq = ?',
    ),
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
    closeMdfe: db.prepare<[string, string]>(
      "UPDATE mdfe SET state = 'encerrado', closed_at = ? WHERE access_key = ? AND state = 'autorizado'",
    ),
    cancelMdfe: db.prepare<[string, string]>(
      "UPDATE mdfe SET state = 'cancelado', cancelled_at = ? WHERE access_key = ? AND state = 'autorizado'",
    ),
    insertMdfeEvent: db.prepare<[EventRow]>(
      `INSERT INTO mdfe_event (access_key, tp_evento, n_seq, company_id, n_prot, registered_at, ret_evento)
       VALUES (@access_key, @tp_evento, @n_seq, @company_id, @n_prot, @registered_at, @ret_evento)`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class SandboxStore {
  private readonly db: Database.Database;
  private readonly stmt: Statements;

  constructor(file: string) {
    // Created owner-only before SQLite opens it, like service.sqlite (service/db.ts): the -wal
    // and -shm files take its permissions, and all three hold the documents it authorized.
    if (file !== ':memory:' && file !== '') closeSync(openSync(file, 'a', 0o600));
    this.db = new Database(file);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('busy_timeout = 5000');
      const version = this.db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(
          `O banco da autoridade simulada ${file} foi criado por uma versão mais nova do Balcão (esquema ${version}); atualize o Balcão.`,
        );
      }
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.exec(SCHEMA);
        this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
        this.db.exec('COMMIT');
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      }
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.stmt = prepareStatements(this.db);
  }

  get open(): boolean {
    return this.db.open;
  }

  /**
   * Runs `decide` in one write transaction (BEGIN IMMEDIATE: the lock is taken before the first
   * read, so two decisions about the same number cannot interleave, even from two processes).
   */
  transaction<T>(decide: () => T): T {
    return this.db.transaction(decide).immediate();
  }

  /** The next value of a named sequence (protocol numbers). Call inside `transaction`. */
  next(name: string): number {
    return this.stmt.nextValue.get(name)!.value;
  }

  nfe(key: string): NfeRow | undefined {
    return this.stmt.nfeByKey.get(key);
  }

  nfeByNumber(cnpj: string, model: string, serie: number, number: number): NfeRow | undefined {
    return this.stmt.nfeByNumber.get(cnpj, model, serie, number);
  }

  /** The first authorized number of the series inside [first, last], if any. */
  authorizedInRange(cnpj: string, model: string, serie: number, first: number, last: number): number | undefined {
    return this.stmt.nfeInRange.get(cnpj, model, serie, first, last)?.number;
  }

  insertNfe(row: NewNfe): void {
    this.stmt.insertNfe.run(row);
  }

  cancelNfe(key: string, at: string, tpEvento: string, nProt: string): void {
    this.stmt.cancelNfe.run(at, tpEvento, nProt, key);
  }

  nfeEvent(key: string, tpEvento: string, nSeq: number): EventRow | undefined {
    return this.stmt.nfeEvent.get(key, tpEvento, nSeq);
  }

  insertNfeEvent(row: EventRow): void {
    this.stmt.insertNfeEvent.run(row);
  }

  /** A voided range of the series that overlaps [first, last], if any. */
  voidedOverlap(cnpj: string, model: string, serie: number, first: number, last: number): { first: number; last: number } | undefined {
    const r = this.stmt.voidedOverlap.get(cnpj, model, serie, last, first);
    return r && { first: r.first_number, last: r.last_number };
  }

  insertVoided(row: VoidedRange): void {
    this.stmt.insertVoided.run(row);
  }

  mdfe(key: string): MdfeRow | undefined {
    return this.stmt.mdfeByKey.get(key);
  }

  mdfeByNumber(cnpj: string, serie: number, number: number): MdfeRow | undefined {
    return this.stmt.mdfeByNumber.get(cnpj, serie, number);
  }

  /** An authorized (neither closed nor cancelled) manifest of the plate, other than this number. */
  openMdfeOfPlate(cnpj: string, plate: string): MdfeRow | undefined {
    return this.stmt.openMdfeOfPlate.get(cnpj, plate);
  }

  /** The CNPJ's authorized manifests, neither closed nor cancelled, oldest first. */
  openMdfes(cnpj: string): { access_key: string; n_prot: string }[] {
    return this.stmt.openMdfes.all(cnpj);
  }

  insertMdfe(row: NewMdfe): void {
    this.stmt.insertMdfe.run(row);
  }

  closeMdfe(key: string, at: string): void {
    this.stmt.closeMdfe.run(at, key);
  }

  cancelMdfe(key: string, at: string): void {
    this.stmt.cancelMdfe.run(at, key);
  }

  insertMdfeEvent(row: EventRow): void {
    this.stmt.insertMdfeEvent.run(row);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
