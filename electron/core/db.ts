// The terminal's SQLite file: opened with the pragmas that make "the sale is finished" mean "the
// sale is on disk", and brought to the current schema with the shared migration runner.

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, migrationSetDir } from '../../migrations/migrate.ts';

export const POS_DB_FILE = 'pos.sqlite';

export function openPosDatabase(dataDir: string): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, POS_DB_FILE);
  // Created owner-only before SQLite opens it: SQLite gives the -wal and -shm files the
  // database file's permissions, and all three hold the store's sales and fiscal documents.
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  try {
    // WAL: the screen reads while the worker writes. synchronous=FULL: every commit is fsynced
    // to the WAL before it returns, so a finished sale survives a power cut, not only a crash.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`o banco do terminal não aceitou o modo WAL (ficou em ${String(mode)})`);
    db.pragma('synchronous = FULL');
    // Checkpoints are run by the terminal between sales (PosStore.checkpointIfDue, on a timer),
    // so that finishing a sale never pays for copying the WAL into the database. SQLite's own
    // automatic checkpoint stays as a safety net, far above what the timer lets accumulate.
    db.pragma('wal_autocheckpoint = 16384');
    db.pragma('foreign_keys = ON');
    // Another process on the same file (a second window, a maintenance command) waits for the
    // write lock instead of failing at once.
    db.pragma('busy_timeout = 5000');
    migrate(db, migrationSetDir('pos'));
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
