// The terminal's SQLite file: opened with the pragmas that make "the sale is finished" mean "the
// sale is on disk", checked whole before anything uses it (a damaged file is refused in words,
// naming the copy to restore: base/node/sqlite-check.ts), copied before a migration changes it
// (base/node/sqlite-backup.ts), and brought to the current schema with the shared migration
// runner, which says how long each migration of an upgrade takes.

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, migrationSetDir } from '../../migrations/migrate.ts';
import { backupNow, backupPlace, type BackupPlace } from '../../base/node/sqlite-backup.ts';
import { checkDatabase, damageOf, type CheckTarget } from '../../base/node/sqlite-check.ts';

export const POS_DB_FILE = 'pos.sqlite';
export const POS_BACKUP_PREFIX = 'pos';

/** Where copies of the terminal's database in `dataDir` go (BALCAO_BACKUP_DIR and friends). */
export const posBackupPlace = (dataDir: string, env: NodeJS.ProcessEnv = process.env): BackupPlace => backupPlace(dataDir, POS_BACKUP_PREFIX, env);

export function openPosDatabase(dataDir: string, env: NodeJS.ProcessEnv = process.env): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, POS_DB_FILE);
  const target: CheckTarget = { file, owner: 'do terminal', backups: posBackupPlace(dataDir, env), dataDir };
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
    checkDatabase(db, target);
    migrate(db, migrationSetDir('pos'), {
      beforeUpgrade: () => backupNow(db, target.backups, 'antes-da-atualizacao'),
    });
    return db;
  } catch (err) {
    db.close();
    throw damageOf(err, target) ?? err;
  }
}
