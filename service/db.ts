// The service's SQLite database: `<data>/service.sqlite`, migrated on open. A service process
// (which holds the folder: open-service.ts) checks it whole first and refuses a damaged one in
// words (base/node/sqlite-check.ts); an upgrade is copied before its first migration
// (base/node/sqlite-backup.ts) and says how long each migration takes.
//
// synchronous=FULL with WAL: every commit is fsynced before the statement returns, so a state
// change the API has acknowledged (a document accepted, a key claimed) survives a power cut.
// NORMAL would only risk the last transactions on power loss, but "acknowledged" must mean
// "durable" for an issuer that must never issue twice. Measured on the development VM (ext4 on
// a virtual disk, Node 20): an idempotency claim (one BEGIN IMMEDIATE transaction) costs
// ≈0.22–0.27 ms mean, p99 0.4–2 ms, with FULL, against ≈0.08 ms mean, p99 0.1 ms, with
// NORMAL: roughly 4,000 vs 12,000 commits/s on one connection. Over HTTP a one-commit sandbox
// route sustains ≈2,500 req/s (8 connections) against ≈4,800 req/s for a read-only route.
// A point of sale issues a handful of documents per second at peak; FULL is nowhere near a limit.

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, migrationSetDir } from '../migrations/migrate.ts';
import { backupNow, backupPlace, type BackupPlace } from '../base/node/sqlite-backup.ts';
import { checkDatabase, damageOf, type CheckTarget } from '../base/node/sqlite-check.ts';

export const SERVICE_DB_FILE = 'service.sqlite';
export const SERVICE_BACKUP_PREFIX = 'service';

/** Where copies of the service's database in `dataDir` go (BALCAO_BACKUP_DIR and friends). */
export const serviceBackupPlace = (dataDir: string, env: NodeJS.ProcessEnv = process.env): BackupPlace => backupPlace(dataDir, SERVICE_BACKUP_PREFIX, env);

/** How long a writer waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

export type OpenOptions = {
  /** Skip the migrations (tools that only read a database the service already migrated). */
  migrate?: boolean;
  /**
   * The process holds the folder (a service): the file is checked whole before use (a damaged
   * one is refused in words: base/node/sqlite-check.ts). The company commands, which share a
   * running service's file, do not check it.
   */
  check?: boolean;
};

export const serviceDbPath = (dataDir: string): string => join(dataDir, SERVICE_DB_FILE);

export function openServiceDatabase(dataDir: string, options: OpenOptions = {}): Database.Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const target: CheckTarget = { file: serviceDbPath(dataDir), owner: 'do serviço de emissão', backups: serviceBackupPlace(dataDir), dataDir };
  try {
    return openSqliteFile(target.file, (db) => {
      db.pragma('foreign_keys = ON');
      if (options.check) checkDatabase(db, target);
      if (options.migrate !== false) {
        migrate(db, migrationSetDir('service'), {
          beforeUpgrade: () => backupNow(db, target.backups, 'antes-da-atualizacao'),
        });
      }
    });
  } catch (err) {
    throw damageOf(err, target) ?? err;
  }
}

/**
 * A SQLite file of the service (its database, the sandbox authority's): created owner-only
 * before SQLite opens it (SQLite gives the -wal and -shm files the database file's
 * permissions, and all three hold what must stay private), WAL with synchronous=FULL, the busy
 * timeout, then `setUp` (schema, migrations); opened again while SQLite answers SQLITE_BUSY.
 */
export function openSqliteFile(file: string, setUp: (db: Database.Database) => void): Database.Database {
  if (file !== ':memory:' && file !== '') closeSync(openSync(file, 'a', 0o600));
  return retryWhileBusy(() => {
    const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      setUp(db);
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }, BUSY_TIMEOUT_MS);
}

/**
 * Runs `open` again while it fails with SQLITE_BUSY, for up to `budgetMs`. The busy timeout
 * covers a lock held by a writer, but not every way an opening can meet another process: a
 * last connection closing (checkpointing and removing the WAL) or a write that lands between a
 * statement's read and its write fail at once, whatever the timeout. Seen when several
 * `balcao company create` open a new folder together on a loaded machine. Opening is
 * idempotent (every migration is its own immediate transaction and skips what another process
 * applied), so trying again is safe.
 */
export function retryWhileBusy<T>(open: () => T, budgetMs: number, pauseMs = 50): T {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    try {
      return open();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() + pauseMs > deadline) throw err;
      // A synchronous pause: opening is synchronous, at start-up or in a command-line tool.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
    }
  }
}
