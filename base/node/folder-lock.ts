// One store per data folder. Two programs on the same folder (a second `balcao start`, a
// terminal opened twice, two services on one SQLite file) would each number sales from the same
// sequence and sell the same number twice, should their transactions interleave the wrong way.
// SQLite's own locks keep each transaction whole, not two programs apart: so the program that
// works on a folder holds it, and a second one is refused, naming the first.
//
// The hold is an operating-system lock, not a file's existence: SQLite's exclusive lock (POSIX
// advisory locks on Unix, LockFileEx on Windows) on a small database of its own in the folder,
// `balcao-em-uso.lock`, taken with `locking_mode = EXCLUSIVE` and kept until the holder closes
// it. The system releases it when the process ends however it ends (a crash, a kill, a power
// cut), so there is never a stale lock to clean by hand. Within one process, SQLite refuses a
// second connection the same way, so a second terminal in the same process is refused too.
//
// Who holds it is written beside it, in `balcao-em-uso.json` (process id, machine, command, since
// when), for the refusal's words: the lock itself cannot be read while it is held. Folders on a
// network share: the lock is the share's; SMB and NFSv4 honour it, older NFS may not.

import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { formatDateTimeBR } from '../common/brasilia.ts';

export const LOCK_FILE = 'balcao-em-uso.lock';
export const HOLDER_FILE = 'balcao-em-uso.json';

export type Holder = { pid: number; maquina: string; programa: string; desde: string };

export class FolderInUseError extends Error {
  override name = 'FolderInUseError';
  constructor(
    readonly dir: string,
    readonly holder: Holder | undefined,
  ) {
    super(inUseMessage(dir, holder));
  }
}

function inUseMessage(dir: string, holder: Holder | undefined): string {
  const who = holder
    ? `${holder.programa} (processo ${holder.pid}${holder.maquina === hostname() ? ', nesta máquina' : `, na máquina ${holder.maquina}`}, desde ${formatDateTimeBR(Date.parse(holder.desde))})`
    : 'outro programa do Balcão';
  return (
    `A pasta de dados ${dir} já está em uso por ${who}. Dois programas na mesma pasta poderiam dar o mesmo número a duas vendas: ` +
    'feche o outro antes de abrir este, ou use outra pasta de dados.'
  );
}

/** What this process is, for the holder's file: the command and subcommand it runs. */
export function describeProcess(argv: readonly string[] = process.argv): string {
  const script = argv[1] ? basename(argv[1]) : '';
  if (script === 'balcao.js' || script === 'cli.js' || script === 'balcao') {
    const words = argv.slice(2).filter((a) => !a.startsWith('-'));
    return ['balcao', ...words.slice(0, words[0] === 'terminal' ? 2 : 1)].join(' ');
  }
  return basename(argv[0] ?? 'node');
}

export type FolderLock = {
  readonly dir: string;
  /** Lets the folder go (idempotent). */
  release(): void;
};

function readHolder(dir: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(join(dir, HOLDER_FILE), 'utf8')) as Partial<Holder>;
    if (typeof h.pid === 'number' && typeof h.programa === 'string' && typeof h.maquina === 'string' && typeof h.desde === 'string') return h as Holder;
  } catch {
    // not written yet by a holder starting right now, or unreadable: the words say "another program"
  }
  return undefined;
}

const isBusy = (err: unknown): boolean => typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');

/**
 * Holds `dir` for this process, or throws FolderInUseError naming the holder. `programa` names
 * this process in the holder's file (default: describeProcess()).
 */
export function lockFolder(dir: string, programa: string = describeProcess()): FolderLock {
  const db = new Database(join(dir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock, which EXCLUSIVE mode then keeps until close.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (since TEXT); DELETE FROM held; INSERT INTO held VALUES (CURRENT_TIMESTAMP); COMMIT');
  } catch (err) {
    db.close();
    if (isBusy(err)) throw new FolderInUseError(dir, readHolder(dir));
    throw err;
  }
  const holder: Holder = { pid: process.pid, maquina: hostname(), programa, desde: new Date().toISOString() };
  const tmp = join(dir, `${HOLDER_FILE}.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(holder, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, join(dir, HOLDER_FILE));
  let held = true;
  return {
    dir,
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
