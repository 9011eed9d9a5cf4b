import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, MigrationError, migrationSetDir, tablesWritten } from './migrate.ts';

let dir: string;
let migrations: string;
let dbFile: string;
const open: Database.Database[] = [];

function connect(): Database.Database {
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  open.push(db);
  return db;
}

const write = (name: string, sql: string) => writeFileSync(join(migrations, name), sql);
const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[]).filter((t) => !t.startsWith('sqlite_'));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-migrate-'));
  migrations = join(dir, 'set');
  mkdirSync(migrations);
  dbFile = join(dir, 'test.sqlite');
});

afterEach(() => {
  for (const db of open.splice(0)) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrate', () => {
  it('applies the files in file-name order, records them, and does nothing the second time', () => {
    // Written out of order on purpose: the second depends on the first.
    write('20261122T0400_add_b.sql', 'CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a (id));');
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    write('README.md', 'not a migration');
    const db = connect();

    expect(migrate(db, migrations)).toEqual(['20261122T0300_init', '20261122T0400_add_b']);
    expect(tables(db)).toEqual(['a', 'b', 'schema_migrations']);
    const rows = db.prepare('SELECT id, checksum, applied_at FROM schema_migrations ORDER BY id').all() as {
      id: string;
      checksum: string;
      applied_at: string;
    }[];
    expect(rows.map((r) => r.id)).toEqual(['20261122T0300_init', '20261122T0400_add_b']);
    expect(rows[0]!.checksum).toMatch(/^[0-9a-f]{64}$/);

    expect(migrate(db, migrations)).toEqual([]);
    // A restart is a new connection on the same file.
    expect(migrate(connect(), migrations)).toEqual([]);
  });

  it('applies only the new migrations after an upgrade', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    expect(migrate(connect(), migrations)).toEqual(['20261122T0300_init']);
    write('20261201T0900_more.sql', 'ALTER TABLE a ADD COLUMN name TEXT;');
    expect(migrate(connect(), migrations)).toEqual(['20261201T0900_more']);
  });

  it('runs each migration in a transaction: a failing one leaves nothing half-applied', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    write('20261122T0400_broken.sql', 'CREATE TABLE c (id INTEGER PRIMARY KEY); INSERT INTO nowhere VALUES (1);');
    const db = connect();

    expect(() => migrate(db, migrations)).toThrow(/20261122T0400_broken/);
    expect(tables(db)).toEqual(['a', 'schema_migrations']);
    expect(db.prepare('SELECT id FROM schema_migrations').pluck().all()).toEqual(['20261122T0300_init']);

    write('20261122T0400_broken.sql', 'CREATE TABLE c (id INTEGER PRIMARY KEY);');
    expect(migrate(db, migrations)).toEqual(['20261122T0400_broken']);
  });

  it('refuses a database that has a migration this code does not know', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    write('20270101T0000_future.sql', 'CREATE TABLE f (id INTEGER PRIMARY KEY);');
    migrate(connect(), migrations);
    rmSync(join(migrations, '20270101T0000_future.sql'));

    const db = connect();
    expect(() => migrate(db, migrations)).toThrow(MigrationError);
    expect(() => migrate(db, migrations)).toThrow(/20270101T0000_future.*versão mais nova/s);
  });

  it('refuses a migration edited after it was applied', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    migrate(connect(), migrations);
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY, extra TEXT);');
    expect(() => migrate(connect(), migrations)).toThrow(/20261122T0300_init.*alterada/s);
  });

  it('accepts a published migration whose comments were corrected, but not its statements', () => {
    write('20261122T0300_init.sql', "-- see the old notes\nCREATE TABLE a (id INTEGER PRIMARY KEY, t TEXT DEFAULT '--x'); /* block */\n");
    migrate(connect(), migrations);
    write('20261122T0300_init.sql', "-- see docs/fiscal.md\n-- a second line\nCREATE TABLE a (id INTEGER PRIMARY KEY,\n  t TEXT DEFAULT '--x');\n");
    expect(migrate(connect(), migrations)).toEqual([]);
    write('20261122T0300_init.sql', "-- see docs/fiscal.md\nCREATE TABLE a (id INTEGER PRIMARY KEY, t TEXT DEFAULT '--y');\n");
    expect(() => migrate(connect(), migrations)).toThrow(/20261122T0300_init.*alterada/s);
  });

  it('accepts a database that recorded the checksum of the whole file, and records the new one', () => {
    const sql = '-- old comment\nCREATE TABLE a (id INTEGER PRIMARY KEY);\n';
    write('20261122T0300_init.sql', sql);
    const db = connect();
    migrate(db, migrations);
    const [migration] = loadMigrations(migrations);
    // As an older Balcão recorded it.
    db.prepare('UPDATE schema_migrations SET checksum = ?').run(migration!.legacyChecksum);
    expect(migrate(db, migrations)).toEqual([]);
    expect(db.prepare('SELECT checksum FROM schema_migrations').pluck().get()).toBe(migration!.checksum);
    // Recorded that way, a later edit of a comment is accepted too.
    write('20261122T0300_init.sql', '-- docs/fiscal.md\nCREATE TABLE a (id INTEGER PRIMARY KEY);\n');
    expect(migrate(connect(), migrations)).toEqual([]);
  });

  it('treats CRLF and LF copies of a migration as the same migration', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);\n');
    migrate(connect(), migrations);
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);\r\n');
    expect(migrate(connect(), migrations)).toEqual([]);
  });

  it('refuses a file name out of the timestamped pattern', () => {
    write('init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY);');
    expect(() => loadMigrations(migrations)).toThrow(/init\.sql.*AAAAMMDDTHHMM/s);
  });

  it('refuses a migration that leaves broken foreign keys, and restores the foreign_keys setting', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY); CREATE TABLE b (a_id INTEGER REFERENCES a (id)); INSERT INTO b VALUES (7);');
    const db = connect();
    expect(() => migrate(db, migrations)).toThrow(/chave\(s\) estrangeira\(s\)/);
    expect(tables(db)).toEqual(['schema_migrations']);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });

  it('checks the foreign keys of the tables a migration writes and of those referring to one it changed, not the whole database', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE a (id INTEGER PRIMARY KEY); CREATE TABLE b (a_id INTEGER REFERENCES a (id)); INSERT INTO a VALUES (1);');
    const db = connect();
    migrate(db, migrations);
    // Damage from elsewhere in an unrelated table (written with the checks off): not this migration's to judge.
    db.exec('CREATE TABLE legacy (a_id INTEGER REFERENCES a (id))');
    db.pragma('foreign_keys = OFF');
    db.exec('INSERT INTO legacy VALUES (404)');
    db.pragma('foreign_keys = ON');

    write('20261122T0400_more_b.sql', 'CREATE TABLE c (id INTEGER PRIMARY KEY); INSERT INTO b VALUES (1);');
    expect(migrate(db, migrations)).toEqual(['20261122T0400_more_b']);
    // Its own table with a dangling key: refused.
    write('20261122T0500_bad_b.sql', 'INSERT INTO b VALUES (2);');
    expect(() => migrate(db, migrations)).toThrow(/20261122T0500_bad_b.*1 chave/s);
    rmSync(join(migrations, '20261122T0500_bad_b.sql'));
    // A parent's rows removed: the tables referring to it are checked (b's row now dangles; so does legacy's).
    write('20261122T0600_drop_a.sql', 'DELETE FROM a;');
    expect(() => migrate(db, migrations)).toThrow(/20261122T0600_drop_a.*2 chave/s);
    expect(db.prepare('SELECT count(*) FROM a').pluck().get()).toBe(1);
  });

  it('reads which tables a migration writes, rebuilds included', () => {
    const { rows, keys } = tablesWritten(`
      -- INSERT INTO commented (x) is not a statement
      CREATE TABLE outbox_new (seq INTEGER PRIMARY KEY);
      INSERT INTO outbox_new SELECT * FROM outbox WHERE balcao_progress('outbox');
      DROP TABLE outbox;
      ALTER TABLE outbox_new RENAME TO outbox;
      UPDATE OR IGNORE "Sales" SET state = 'x';
      INSERT OR REPLACE INTO settings VALUES ('a', '{}', 'b');
      ALTER TABLE receipts ADD COLUMN note TEXT;
      CREATE INDEX receipts_x ON receipts (created_at);`);
    expect([...rows].sort()).toEqual(['outbox', 'outbox_new', 'receipts', 'sales', 'settings']);
    expect([...keys].sort()).toEqual(['outbox', 'outbox_new', 'sales']);
  });

  it('says how far a large copy is, and announces each migration on a large database', () => {
    write('20261122T0300_init.sql', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);');
    const db = connect();
    migrate(db, migrations);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 5000; i++) insert.run(`linha ${i}`);
    })();
    write('20261122T0400_copy.sql', "CREATE TABLE t2 (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t2 SELECT * FROM t WHERE balcao_progress('t');");
    const said: string[] = [];
    expect(migrate(db, migrations, { progress: (m) => said.push(m), progressEveryMs: 0, announceBytes: 0 })).toEqual(['20261122T0400_copy']);
    expect(said[0]).toMatch(/^Aplicando a migração 20261122T0400_copy ao banco .* \(\d+ MB\)…$/);
    expect(said.slice(1, -1)).toEqual(
      [1024, 2048, 3072, 4096].map((n) => `Migração 20261122T0400_copy: tabela t, ${n} de 5000 linhas (${Math.floor((n / 5000) * 100)}%)`),
    );
    expect(said.at(-1)).toMatch(/^Migração 20261122T0400_copy aplicada em \d+\.\d s \(.*\)\.$/);
    expect(db.prepare('SELECT count(*) FROM t2').pluck().get()).toBe(5000);
  });

  it('applies the service migrations to a fresh database', () => {
    const db = connect();
    const applied = migrate(db, migrationSetDir('service'));
    expect(applied[0]).toBe('20261122T0300_init');
    expect(tables(db)).toEqual(
      expect.arrayContaining(['api_tokens', 'companies', 'company_clock', 'idempotency_keys', 'sandbox_authority', 'webhook_deliveries', 'webhooks']),
    );
    expect(migrate(db, migrationSetDir('service'))).toEqual([]);
  });
});
