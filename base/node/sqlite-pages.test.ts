// The page scan against real SQLite files: every shape a valid database takes passes (rows that
// overflow their page, indexes, WITHOUT ROWID tables, free pages after deletes, small and large
// pages), and the damage a disk or a copy does is found (garbage or zeros over pages, a byte
// flipped in a page header, a truncated file, a header that is not SQLite's). SQLite's own
// quick_check agrees in every case.

import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { scanDatabaseFile, scanDatabaseFileAsync } from './sqlite-pages.ts';

const dir = mkdtempSync(join(tmpdir(), 'balcao-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A database of receipts-like rows (some much bigger than a page), checkpointed: what the start check reads. */
function database(options: { pageSize?: number; rows?: number; deleteEvery?: number } = {}): { file: string; roots: number[] } {
  const file = join(dir, `db-${++n}.sqlite`);
  const db = new Database(file);
  if (options.pageSize) db.pragma(`page_size = ${options.pageSize}`);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE receipts (id TEXT PRIMARY KEY, nnf INTEGER NOT NULL, request_json TEXT NOT NULL, xml TEXT);
    CREATE INDEX receipts_nnf ON receipts (nnf);
    CREATE TABLE series (serie INTEGER PRIMARY KEY, next_nnf INTEGER) ;
    CREATE TABLE terminal_series (company TEXT, serie INTEGER, PRIMARY KEY (company, serie)) WITHOUT ROWID;
    CREATE VIEW recent AS SELECT * FROM receipts ORDER BY nnf DESC LIMIT 10;`);
  const insert = db.prepare('INSERT INTO receipts VALUES (?, ?, ?, ?)');
  const rows = options.rows ?? 600;
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      insert.run(
        `id-${i}-${'x'.repeat(i % 50)}`,
        i,
        JSON.stringify({ nNF: i, det: 'y'.repeat(300 + (i % 7) * 200) }),
        i % 3 ? 'z'.repeat(2000 + i * 37) : null,
      );
      db.prepare('INSERT INTO terminal_series VALUES (?, ?)').run(`empresa-${i % 17}`, i);
    }
  })();
  if (options.deleteEvery) db.prepare('DELETE FROM receipts WHERE nnf % ? = 0').run(options.deleteEvery);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const roots = db.prepare('SELECT rootpage FROM sqlite_schema WHERE rootpage > 0').pluck().all() as number[];
  db.close();
  return { file, roots };
}

function damage(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

function sqliteSays(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return String(db.pragma('quick_check', { simple: true }));
  } catch (err) {
    return (err as Error).message;
  } finally {
    db.close();
  }
}

describe('scanDatabaseFile', () => {
  it.each<[string, { pageSize?: number; rows?: number; deleteEvery?: number }]>([
    ['4 KiB pages, overflowing rows, an index, a WITHOUT ROWID table', {}],
    ['1 KiB pages (long overflow chains)', { pageSize: 1024 }],
    ['64 KiB pages', { pageSize: 65536 }],
    ['free pages after deletes', { deleteEvery: 3 }],
    ['an empty table', { rows: 0 }],
  ])('passes a valid database: %s', async (_what, options) => {
    const { file, roots } = database(options);
    expect(sqliteSays(file)).toBe('ok');
    const result = scanDatabaseFile(file, roots);
    expect(result).toMatchObject({ ok: true, pages: statSync(file).size / (options.pageSize ?? 4096) });
    expect(await scanDatabaseFileAsync(file, roots)).toEqual(result);
  });

  it('passes an empty file (a database being created)', () => {
    const file = join(dir, 'empty.sqlite');
    closeSync(openSync(file, 'w'));
    expect(scanDatabaseFile(file, [])).toEqual({ ok: true, pages: 0 });
  });

  it.each([0.2, 0.5, 0.8])('finds 16 KiB of garbage at %s of the file', (where) => {
    const { file, roots } = database();
    damage(file, Math.floor((statSync(file).size * where) / 4096) * 4096 + 100, randomBytes(16384));
    expect(sqliteSays(file)).not.toBe('ok');
    expect(scanDatabaseFile(file, roots)).toMatchObject({ ok: false, problem: expect.stringMatching(/página \d+/) });
  });

  it('finds pages zeroed (what a crash of the disk cache leaves)', () => {
    const { file, roots } = database();
    damage(file, Math.floor(statSync(file).size / 2 / 4096) * 4096, Buffer.alloc(8192));
    expect(sqliteSays(file)).not.toBe('ok');
    expect(scanDatabaseFile(file, roots).ok).toBe(false);
  });

  it('finds a truncated file and a file that is not a database', () => {
    const truncated = database();
    truncateSync(truncated.file, statSync(truncated.file).size - 4096 * 3);
    expect(scanDatabaseFile(truncated.file, truncated.roots)).toMatchObject({ ok: false, problem: expect.stringContaining('truncado') });
    const garbage = database();
    damage(garbage.file, 0, randomBytes(100));
    expect(scanDatabaseFile(garbage.file, garbage.roots)).toMatchObject({ ok: false, problem: expect.stringContaining('cabeçalho') });
  });
});
