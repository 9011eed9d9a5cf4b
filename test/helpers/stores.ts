// The two stores the service runs on, for suites that run against both (describe.each(STORES),
// as describe.each(TRANSPORTS) runs them over both ways to the authority): a data folder with its
// SQLite files, or a database of its own on the test run's PostgreSQL server
// (test/global-setup.ts) with the master key in a file of the folder.
//
// Tests that look inside the service's database or the sandbox authority's (to prove a document
// is stored once, a key settled, a document sent once) do it through `db` and `authority`, in
// SQL both engines read alike: `?` parameters, no rowid (order by a column). Store-level tests
// also write through it (to age a process's heartbeat, say).

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { inject } from 'vitest';
import type { SandboxMemory } from '../../service/authority/sandbox-memory.ts';
import { PgSandboxMemory } from '../../service/authority/sandbox-pg-memory.ts';
import { SqliteSandboxMemory } from '../../service/authority/sandbox-store.ts';
import { openService, type OpenedService } from '../../service/open-service.ts';
import { postgresSettings } from '../../service/pg-settings.ts';
import type { NewNfceDocument } from '../../service/nfce/store.ts';
import type { Storage } from '../../service/storage.ts';
import { createDatabase, dropDatabase } from './postgres.ts';
import { tempDataDir, type ServiceData, type Transport } from './service-process.ts';

export type StoreKind = 'sqlite' | 'postgres';
export const STORES: readonly StoreKind[] = ['sqlite', 'postgres'];

// As the service reads them (service/pg-db.ts): counts and identities as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

/** Read-only queries, the same on both engines. */
export type Sql = {
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first column of the first row (undefined when none). */
  value<T = unknown>(sql: string, ...params: unknown[]): Promise<T>;
};

export type TestStorage = ServiceData & {
  kind: StoreKind;
  /** The service's database. */
  db: Sql;
  /** The sandbox authority's memory (sandbox-authority.sqlite, or the schema sandbox_autoridade). */
  authority: Sql;
  /** That memory itself, for a SandboxAuthority of the test's own: a decision the service never hears of. */
  openAuthorityMemory(): SandboxMemory;
  /** Drops the PostgreSQL database (the folder goes with the test process). */
  close(): Promise<void>;
};

const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

function sqliteSql(file: string): Sql {
  const read = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    rows: async <T>(sql: string, ...params: unknown[]) => read((db) => db.prepare(sql).all(...params) as T[]),
    value: async <T>(sql: string, ...params: unknown[]) =>
      read(
        (db) =>
          db
            .prepare(sql)
            .pluck()
            .get(...params) as T,
      ),
  };
}

function postgresSql(pool: pg.Pool): Sql {
  return {
    rows: async <T>(sql: string, ...params: unknown[]) => (await pool.query(numbered(sql), params)).rows as T[],
    value: async <T>(sql: string, ...params: unknown[]) => {
      const r = await pool.query({ text: numbered(sql), values: params, rowMode: 'array' });
      return (r.rows[0] as unknown[] | undefined)?.[0] as T;
    },
  };
}

/** A fresh place for a service's data, of `kind`. */
export async function testStorage(kind: StoreKind): Promise<TestStorage> {
  const dataDir = tempDataDir();
  if (kind === 'sqlite') {
    return {
      kind,
      dataDir,
      db: sqliteSql(join(dataDir, 'service.sqlite')),
      authority: sqliteSql(join(dataDir, 'sandbox-authority.sqlite')),
      openAuthorityMemory: () => new SqliteSandboxMemory(join(dataDir, 'sandbox-authority.sqlite')),
      close: async () => undefined,
    };
  }
  const server = inject('postgresUrl');
  if (!server) throw new Error(`O PostgreSQL de teste não iniciou: ${inject('postgresError')}`);
  const database = await createDatabase(server);
  const pool = new pg.Pool({ connectionString: database, max: 2 });
  const authorityPool = new pg.Pool({ connectionString: database, max: 2, options: '-c search_path=sandbox_autoridade' });
  return {
    kind,
    dataDir,
    database,
    db: postgresSql(pool),
    authority: postgresSql(authorityPool),
    openAuthorityMemory: () => new PgSandboxMemory(pool),
    async close() {
      await Promise.all([pool.end(), authorityPool.end()]);
      await dropDatabase(database);
    },
  };
}

/**
 * What the API suites run over: both stores, and on SQLite both ways to the sandbox authority
 * (TRANSPORTS). On PostgreSQL the authority is reached in-process: the wire (the SEFAZ connector
 * and simulator) is the same code whatever the store, and is proved on SQLite.
 */
export type Setup = { store: StoreKind; transport: Transport };
export const SETUPS: readonly Setup[] = [
  { store: 'sqlite', transport: 'in-process' },
  { store: 'sqlite', transport: 'wire' },
  { store: 'postgres', transport: 'in-process' },
];

/**
 * The service's store and secrets opened on `storage` in this process, as `balcao service` opens
 * them (for store-level tests): on PostgreSQL as a process that holds work (its lease registered).
 */
export async function openTestService(storage: TestStorage): Promise<OpenedService> {
  if (storage.kind === 'sqlite') return openService(storage.dataDir, {});
  const where: Storage = { kind: 'postgres', settings: postgresSettings(storage.database!, {}), masterKeyFile: join(storage.dataDir, 'master.key') };
  return openService(where, {}, { holdsWork: true });
}

/** An NFC-e as the store takes it, numbered `numero` of series 1 (its key and cNF follow), for store-level tests. */
export function storedNfce(companyId: string, numero: number, over: Partial<NewNfceDocument> = {}): NewNfceDocument {
  const chave = `3526111122233300018165001${String(numero).padStart(9, '0')}1${String(numero).padStart(8, '0')}0`;
  return {
    id: randomUUID(),
    companyId,
    idempotencyKey: null,
    serie: 1,
    numero,
    chave,
    cNF: chave.slice(35, 43),
    dhEmi: '2026-11-22T10:00:00-03:00',
    tpEmis: 1,
    contingencia: false,
    ambiente: 'homologacao',
    qrcode: null,
    urlConsulta: 'https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica',
    valorTotal: '10.00',
    requestJson: '{}',
    createdAt: new Date(),
    ...over,
  };
}
