// Backups of the terminal's and the service's SQLite databases: copies taken while the program
// runs, verified before they count, kept in a folder of their own, the oldest removed past a
// number. A copy is what a store puts back after a dead disk or a damaged file (`balcao
// restore`); the terminal then learns from the service the numbers issued since the copy
// (series-registry.ts), so a restore cannot make it reuse one.
//
// - Taken on a schedule with SQLite's online backup API (better-sqlite3 `db.backup`): page
//   batches copied between the program's own transactions, so selling goes on meanwhile.
// - Taken before a migration changes an existing database, with `VACUUM INTO` (one consistent
//   snapshot, synchronous: the program is starting, nothing else waits).
// - Taken by hand: `balcao backup` (bin/backup.ts), which also runs SQLite's full integrity_check.
// - Verified: the copy is opened, its journal set to DELETE (a copy stands alone, without -wal),
//   its schema read, and every page accounted for (sqlite-pages.ts). Only then is it renamed to
//   its final name, `<prefix>-<UTC time>[-<why>].sqlite`: a half-made or broken copy never looks
//   like a copy.
// - Where: `<data>/copias/` by default, or BALCAO_BACKUP_DIR, which must exist (a missing folder
//   is a disk not plugged in, not something to create on the wrong disk). How many:
//   BALCAO_BACKUP_KEEP (default 24). How often: BALCAO_BACKUP_INTERVAL_MIN (default 60; 0 = only
//   before migrations and by hand).
//
// The files the databases' secrets are sealed with (the service's master.key, the terminal's
// segredos.key) are not copied: a copy on a USB stick must not open its own secrets. README
// says to keep them apart.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { scanDatabaseFile, scanDatabaseFileAsync, type ScanResult } from './sqlite-pages.ts';

export const BACKUP_DIR_ENV = 'BALCAO_BACKUP_DIR';
export const BACKUP_KEEP_ENV = 'BALCAO_BACKUP_KEEP';
export const BACKUP_INTERVAL_ENV = 'BALCAO_BACKUP_INTERVAL_MIN';
/** The default folder of copies, inside the data folder. */
export const BACKUP_SUBDIR = 'copias';
const DEFAULT_KEEP = 24;
const DEFAULT_INTERVAL_MIN = 60;

/** Where one database's copies go and how many are kept. */
export type BackupPlace = {
  dir: string;
  /** `pos` or `service`: the database the copies are of (several can share a folder). */
  prefix: string;
  keep: number;
  /** Whether the folder is the default one (created when missing) or configured (must exist). */
  configured: boolean;
};

export type Backup = { file: string; at: Date; reason: string | null };

export class BackupError extends Error {
  override name = 'BackupError';
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) < min) throw new BackupError(`${name} inválido ("${text}"): informe um número inteiro a partir de ${min}`);
  return Number(text);
}

/** Where the copies of `<dataDir>`'s `prefix` database go (see the header). */
export function backupPlace(dataDir: string, prefix: string, env: NodeJS.ProcessEnv = process.env): BackupPlace {
  const configured = env[BACKUP_DIR_ENV]?.trim();
  return { dir: configured || join(dataDir, BACKUP_SUBDIR), prefix, keep: positive(env, BACKUP_KEEP_ENV, DEFAULT_KEEP, 1), configured: !!configured };
}

/** Milliseconds between scheduled copies; 0: none on a schedule. */
export function backupIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  return positive(env, BACKUP_INTERVAL_ENV, DEFAULT_INTERVAL_MIN, 0) * 60_000;
}

/** An instant as a file name takes it on every system: `2026-11-30T14-00-05Z` (UTC, no colons). */
export const fileStamp = (at: Date): string =>
  at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
const NAME = /^([a-z]+)-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z)(?:-([a-z0-9-]+))?\.sqlite$/;

export function backupFileName(prefix: string, at: Date, reason?: string): string {
  return `${prefix}-${fileStamp(at)}${reason ? `-${reason}` : ''}.sqlite`;
}

/** The copies of `place`, newest first. */
export function listBackups(place: Pick<BackupPlace, 'dir' | 'prefix'>): Backup[] {
  let names: string[];
  try {
    names = readdirSync(place.dir);
  } catch {
    return [];
  }
  const out: Backup[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m || m[1] !== place.prefix) continue;
    const at = new Date(m[2]!.replace(/T(\d{2})-(\d{2})-(\d{2})Z$/, 'T$1:$2:$3Z'));
    out.push({ file: join(place.dir, name), at, reason: m[3] ?? null });
  }
  return out.sort((a, b) => b.at.getTime() - a.at.getTime() || b.file.localeCompare(a.file));
}

/** The folder, ready to receive a copy: created when it is the default one, refused when a configured one is missing. */
function readyDir(place: BackupPlace): void {
  if (existsSync(place.dir)) return;
  if (place.configured) {
    throw Object.assign(new BackupError(`A pasta das cópias de segurança (${BACKUP_DIR_ENV}) não existe: ${place.dir}`), { code: 'ENOENT', path: place.dir });
  }
  mkdirSync(place.dir, { recursive: true, mode: 0o700 });
}

/** Opens the copy, makes it stand alone (journal DELETE) and returns its tables' and indexes' roots. */
function standAlone(file: string): number[] {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE');
    return db.prepare('SELECT rootpage FROM sqlite_schema WHERE rootpage > 0').pluck().all() as number[];
  } finally {
    db.close();
  }
}

function verdict(file: string, result: ScanResult): void {
  if (result.ok === false) throw new BackupError(`A cópia ${file} não ficou íntegra (${result.problem}); ela foi descartada.`);
  if (result.ok === 'unsupported') {
    const db = new Database(file, { readonly: true });
    try {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`A cópia ${file} não ficou íntegra (${String(check)}); ela foi descartada.`);
    } finally {
      db.close();
    }
  }
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Renames the verified copy to its final name, durable, then removes the oldest beyond `keep`. */
function publish(place: BackupPlace, tmp: string, at: Date, reason: string | undefined): Backup {
  syncFile(tmp);
  const file = join(place.dir, backupFileName(place.prefix, at, reason));
  renameSync(tmp, file);
  try {
    syncFile(place.dir); // the rename itself (not possible on every system: Windows has no directory fsync)
  } catch {
    // the copy is whole; only its name may not survive a power cut right now
  }
  for (const old of listBackups(place).slice(place.keep)) rmSync(old.file, { force: true });
  return { file, at, reason: reason ?? null };
}

const tempName = (place: BackupPlace) => join(place.dir, `.${place.prefix}-${process.pid}-${Date.now()}.parcial`);

/**
 * A copy of `db` taken while the program goes on (SQLite's online backup API, a batch of pages
 * per turn of the event loop), verified without blocking it, then published.
 */
export async function backupOnline(db: Database.Database, place: BackupPlace, reason?: string): Promise<Backup> {
  readyDir(place);
  const tmp = tempName(place);
  const at = new Date();
  try {
    await db.backup(tmp);
    verdict(tmp, await scanDatabaseFileAsync(tmp, standAlone(tmp)));
    return publish(place, tmp, at, reason);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-journal`, { force: true });
  }
}

/** A copy of `db` now, synchronously (`VACUUM INTO`): before a migration, while the program starts. */
export function backupNow(db: Database.Database, place: BackupPlace, reason?: string): Backup {
  readyDir(place);
  const tmp = tempName(place);
  const at = new Date();
  try {
    db.prepare('VACUUM INTO ?').run(tmp);
    verdict(tmp, scanDatabaseFile(tmp, standAlone(tmp)));
    return publish(place, tmp, at, reason);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-journal`, { force: true });
  }
}

/** SQLite's full integrity_check of a copy (by hand: `balcao backup`, `balcao restore`): 'ok' or what it found. */
export function integrityOf(file: string): string {
  if (!existsSync(file) || statSync(file).size === 0) return 'arquivo ausente ou vazio';
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check(20)') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  } catch (err) {
    return (err as Error).message;
  } finally {
    db.close();
  }
}

/**
 * Copies on a schedule: every `intervalMs`, the first one due `intervalMs` after the newest copy
 * (soon after start when that is past). `onResult` hears each copy or failure (the terminal's
 * status bar, the service's log).
 */
export class BackupSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly take: () => Promise<Backup>,
    private readonly place: BackupPlace,
    private readonly intervalMs: number,
    private readonly onResult: (outcome: { ok: true; backup: Backup } | { ok: false; error: unknown }) => void,
    /** The first copy of a start is never taken sooner than this (the start has enough to do). */
    private readonly settleMs = 30_000,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    const newest = listBackups(this.place)[0];
    const due = newest ? newest.at.getTime() + this.intervalMs - Date.now() : 0;
    this.arm(Math.max(Math.min(this.settleMs, this.intervalMs), due));
  }

  private arm(inMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.take().then(
        (backup) => this.onResult({ ok: true, backup }),
        (error: unknown) => this.onResult({ ok: false, error }),
      );
      void this.running.finally(() => {
        this.running = undefined;
        this.arm(this.intervalMs);
      });
    }, inMs);
    this.timer.unref();
  }

  /** No more copies; a copy being taken is finished first (its database is still open). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
