// Never a silent start on a damaged database. Before the terminal or the service use their
// SQLite file, it is checked whole, cheaply (sqlite-pages.ts: one sequential read, every page
// accounted for), and any suspicion is confirmed by SQLite's own `quick_check` before the file is
// refused: a refusal is always SQLite's verdict, never this code's guess. A file SQLite cannot
// even open as a database (garbage in the header, truncated) is refused the same way.
//
// The refusal says, in Portuguese, which file, what is wrong with it, that nothing was changed,
// and what to do: restore the newest copy (naming it, with the command), or call support when
// there is none. The English of SQLite goes with it as the technical detail.

import type Database from 'better-sqlite3';
import { formatDateTimeBR } from '../common/brasilia.ts';
import { listBackups, type BackupPlace } from './sqlite-backup.ts';
import { headerProblem, scanDatabaseFile } from './sqlite-pages.ts';

export class DatabaseDamagedError extends Error {
  override name = 'DatabaseDamagedError';
  constructor(
    message: string,
    readonly file: string,
    /** SQLite's own words, for the log. */
    readonly detail: string,
  ) {
    super(message);
  }
}

/** What is checked and how the refusal names it. */
export type CheckTarget = {
  file: string;
  /** "do terminal", "do serviço de emissão". */
  owner: string;
  /** Where its copies are (the refusal names the newest). */
  backups: BackupPlace;
  /** The data folder `balcao restore --data` takes. */
  dataDir: string;
};

const DAMAGE_CODES = /^SQLITE_(CORRUPT|NOTADB)/;

/** `err` as the refusal of `target` when it is SQLite saying the file is damaged or not a database; else undefined. */
export function damageOf(err: unknown, target: CheckTarget): DatabaseDamagedError | undefined {
  if (err instanceof DatabaseDamagedError) return err;
  if (!DAMAGE_CODES.test(String((err as { code?: unknown }).code ?? ''))) return undefined;
  let what: string | undefined;
  try {
    what = headerProblem(target.file);
  } catch {
    // unreadable: SQLite's words will do
  }
  return damagedError(target, what ?? 'o SQLite não consegue lê-lo como um banco de dados', (err as Error).message);
}

export function damagedError(target: CheckTarget, what: string, detail: string): DatabaseDamagedError {
  const newest = listBackups(target.backups)[0];
  const todo = newest
    ? `Restaure a cópia de segurança mais recente, ${newest.file} (de ${formatDateTimeBR(newest.at)}), com o Balcão fechado: ` +
      `balcao restore --data ${target.dataDir} --copia ${newest.file} — o arquivo danificado é guardado ao lado, não apagado.`
    : `Não há cópia de segurança em ${target.backups.dir}: não apague o arquivo e chame o suporte.`;
  return new DatabaseDamagedError(
    `O banco de dados ${target.owner} (${target.file}) está danificado: ${what}. O Balcão não vai usá-lo assim, para não perder vendas ` +
      `nem repetir números; nada foi alterado nele. ${todo}`,
    target.file,
    detail,
  );
}

/**
 * Checks the open database `db` of `target` (the program holds its folder, so nobody writes
 * meanwhile). Throws DatabaseDamagedError; returns how long it took and which check decided.
 */
export function checkDatabase(db: Database.Database, target: CheckTarget): { ms: number; confirmedBySqlite: boolean } {
  const started = performance.now();
  try {
    // Everything into the file itself, so the scan sees the whole database.
    db.pragma('wal_checkpoint(TRUNCATE)');
    const roots = db.prepare('SELECT rootpage FROM sqlite_schema WHERE rootpage > 0').pluck().all() as number[];
    const scan = scanDatabaseFile(target.file, roots);
    if (scan.ok === true) return { ms: performance.now() - started, confirmedBySqlite: false };
    const found = (db.pragma('quick_check(10)') as { quick_check: string }[]).map((r) => r.quick_check);
    if (found.length === 1 && found[0] === 'ok') {
      // The scan misread a sound file: SQLite decides, and the scan's mistake is worth a report.
      process.stderr.write(
        `Aviso: a verificação rápida de ${target.file} apontou "${scan.ok === false ? scan.problem : scan.reason}", mas o SQLite o considera íntegro.\n`,
      );
      return { ms: performance.now() - started, confirmedBySqlite: true };
    }
    const what = scan.ok === false ? scan.problem : 'o SQLite encontrou páginas inconsistentes';
    throw damagedError(target, what, found.join('; '));
  } catch (err) {
    throw damageOf(err, target) ?? err;
  }
}
