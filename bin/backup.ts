// `balcao backup` and `balcao restore`: the copies of the terminal's and the service's SQLite
// databases by hand (base/node/sqlite-backup.ts takes them on a schedule and before migrations).
//
//   balcao backup --data DIR [--pasta DIR]
//       Copies now every database of DIR: the terminal's (pos.sqlite), the service's
//       (service.sqlite), or both in a `balcao start` folder (terminal/, service/). The store may
//       be running: the copy is SQLite's online backup, then SQLite's full integrity_check.
//   balcao restore --data DIR
//       Lists the copies of DIR's databases, newest first.
//   balcao restore --data DIR --copia ARQUIVO
//       Puts ARQUIVO back as the database it is a copy of, with the store closed (refused while
//       a program holds the folder, naming it). The copy is checked first; the database it
//       replaces is kept beside it (`pos.sqlite.substituido-<time>`), never deleted.
//
// After a restore of the terminal's database, its next start asks the service for each series'
// highest number issued and carries on above it (electron/core/series-registry.ts).

import { copyFileSync, existsSync, renameSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { formatDateTimeBR } from '../base/common/brasilia.ts';
import { FolderInUseError, lockFolder } from '../base/node/folder-lock.ts';
import { backupOnline, fileStamp, integrityOf, listBackups, type Backup, type BackupPlace } from '../base/node/sqlite-backup.ts';
import { faultWords } from '../base/node/system-faults.ts';
import { POS_DB_FILE, posBackupPlace } from '../electron/core/db.ts';
import { loadMigrations, migrationSetDir } from '../migrations/migrate.ts';
import { SERVICE_DB_FILE, serviceBackupPlace } from '../service/db.ts';
import { parseCommand, parseOptions, UsageError } from '../service/cli-args.ts';

const BACKUP_USAGE = `Uso: balcao backup --data DIR [--pasta DIR]

Faz agora uma cópia de segurança de cada banco da pasta de dados (o do terminal, pos.sqlite, e o
do serviço, service.sqlite; numa pasta do balcao start, os dois), verificada com o integrity_check
do SQLite. Pode ser feita com a loja funcionando.
  --data DIR    pasta de dados
  --pasta DIR   onde guardar as cópias (padrão: BALCAO_BACKUP_DIR, ou DIR/copias)
`;

const RESTORE_USAGE = `Uso: balcao restore --data DIR [--copia ARQUIVO]

Sem --copia, lista as cópias de segurança dos bancos da pasta, da mais recente à mais antiga.
Com --copia, põe a cópia de volta no lugar do banco de que ela é cópia, com a loja fechada; o banco
substituído é guardado ao lado (….substituido-<data>), nunca apagado.
  --data DIR        pasta de dados
  --copia ARQUIVO   a cópia a restaurar
`;

type Kind = 'terminal' | 'servico';
type Database_ = { kind: Kind; file: string; place: BackupPlace };

const NAMES: Record<Kind, string> = { terminal: 'do terminal', servico: 'do serviço de emissão' };

/** The databases of `dir` (existing or not): the folder's own, or a `balcao start` folder's two. */
function databasesOf(dir: string, pasta?: string): Database_[] {
  const env = pasta ? { ...process.env, BALCAO_BACKUP_DIR: pasta } : process.env;
  const at = (folder: string): Database_[] => [
    { kind: 'terminal', file: join(folder, POS_DB_FILE), place: posBackupPlace(folder, env) },
    { kind: 'servico', file: join(folder, SERVICE_DB_FILE), place: serviceBackupPlace(folder, env) },
  ];
  const own = at(dir).filter((d) => existsSync(d.file));
  if (own.length) return own;
  if (existsSync(join(dir, 'terminal')) || existsSync(join(dir, 'service'))) {
    return [at(join(dir, 'terminal'))[0]!, at(join(dir, 'service'))[1]!];
  }
  return [];
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The options both commands take: `--data DIR` (required) and one more path, `--<extra>`; both resolved. */
function dataAnd(args: string[], usage: string, extra: 'pasta' | 'copia'): { args: { dir: string; extra: string | undefined } } | { exit: number } {
  return parseCommand(args, usage, (a) => {
    const { values } = parseOptions(a, { data: { type: 'string' }, [extra]: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const);
    const v = values as { data?: string; help?: boolean } & Record<string, string | boolean | undefined>;
    if (v.help) return 'help';
    if (!v.data) throw new UsageError('--data: obrigatório');
    const other = v[extra];
    return { dir: resolve(v.data), extra: typeof other === 'string' ? resolve(other) : undefined };
  });
}

export async function runBackup(args: string[]): Promise<number> {
  const command = dataAnd(args, BACKUP_USAGE, 'pasta');
  if ('exit' in command) return command.exit;
  const { dir, extra: pasta } = command.args;
  const found = databasesOf(dir, pasta).filter((d) => existsSync(d.file));
  if (!found.length) {
    process.stderr.write(
      `Nenhum banco do Balcão em ${dir} (nem ${POS_DB_FILE}, nem ${SERVICE_DB_FILE}, nem as pastas terminal/ e service/ do balcao start).\n`,
    );
    return 1;
  }
  let failed = false;
  for (const d of found) {
    try {
      const db = new Database(d.file, { readonly: true, fileMustExist: true });
      let copy: Backup;
      try {
        copy = await backupOnline(db, d.place);
      } finally {
        db.close();
      }
      const integrity = integrityOf(copy.file);
      if (integrity !== 'ok') throw new Error(`a cópia ${copy.file} não passou no integrity_check do SQLite: ${integrity}`);
      say(`Cópia do banco ${NAMES[d.kind]}: ${copy.file} (verificada).`);
    } catch (err) {
      failed = true;
      process.stderr.write(`Não foi possível copiar o banco ${NAMES[d.kind]} (${d.file}): ${faultWords(err, { path: d.place.dir })}\n`);
    }
  }
  return failed ? 1 : 0;
}

/** The kind of database `file` is a copy of, from the migrations it records. */
function kindOfCopy(file: string): Kind | undefined {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const first = db.prepare('SELECT id FROM schema_migrations ORDER BY id LIMIT 1').pluck().get() as string | undefined;
    if (first && loadMigrations(migrationSetDir('pos')).some((m) => m.id === first)) return 'terminal';
    if (first && loadMigrations(migrationSetDir('service')).some((m) => m.id === first)) return 'servico';
    return undefined;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

export async function runRestore(args: string[]): Promise<number> {
  const command = dataAnd(args, RESTORE_USAGE, 'copia');
  if ('exit' in command) return command.exit;
  const { dir, extra: copia } = command.args;
  const databases = databasesOf(dir);
  if (!copia) {
    for (const d of databases) {
      say(`Cópias do banco ${NAMES[d.kind]} (${d.file}), em ${d.place.dir}:`);
      const copies = listBackups(d.place);
      if (!copies.length) say('  nenhuma');
      for (const c of copies) say(`  ${c.file}  (${formatDateTimeBR(c.at)}${c.reason ? `, ${c.reason.replace(/-/g, ' ')}` : ''})`);
    }
    if (!databases.length) say(`Nenhum banco do Balcão em ${dir}.`);
    return 0;
  }
  if (!existsSync(copia)) {
    process.stderr.write(`A cópia ${copia} não existe.\n`);
    return 1;
  }
  const kind = kindOfCopy(copia);
  // A folder with no database yet (a new computer, a replaced disk) takes the copy as its own.
  const target = databases.find((d) => d.kind === kind) ?? (kind && { kind, file: join(dir, kind === 'terminal' ? POS_DB_FILE : SERVICE_DB_FILE) });
  if (!kind || !target) {
    process.stderr.write(`${copia} não é uma cópia de um banco do Balcão (nem do terminal, nem do serviço).\n`);
    return 1;
  }
  const integrity = integrityOf(copia);
  if (integrity !== 'ok') {
    process.stderr.write(`A cópia ${copia} está danificada (${integrity}): escolha outra (balcao restore --data ${dir} lista as cópias).\n`);
    return 1;
  }
  const folder = dirname(target.file);
  let lock;
  try {
    lock = lockFolder(folder, 'balcao restore');
  } catch (err) {
    if (err instanceof FolderInUseError) {
      process.stderr.write(`${err.message} A cópia só pode ser restaurada com a loja fechada.\n`);
      return 1;
    }
    throw err;
  }
  try {
    const aside = `.substituido-${fileStamp(new Date())}`;
    const kept: string[] = [];
    for (const part of ['', '-wal', '-shm']) {
      const file = `${target.file}${part}`;
      if (!existsSync(file)) continue;
      renameSync(file, `${target.file}${aside}${part}`);
      kept.push(basename(`${target.file}${aside}${part}`));
    }
    copyFileSync(copia, `${target.file}.restaurando`);
    renameSync(`${target.file}.restaurando`, target.file);
    say(`Banco ${NAMES[kind]} restaurado de ${copia}: ${target.file}.`);
    if (kept.length) say(`O banco substituído foi guardado em ${folder}: ${kept.join(', ')}.`);
    if (kind === 'terminal') {
      say(
        'Na próxima partida, o terminal pergunta ao serviço de emissão o último número usado em cada série e continua depois dele. ' +
          'Vendas finalizadas depois desta cópia e que nunca chegaram ao serviço não estão mais no terminal: confira com o relatório do serviço (exportação para o contador).',
      );
    }
    return 0;
  } catch (err) {
    process.stderr.write(`Não foi possível restaurar a cópia: ${faultWords(err, { path: folder })}\n`);
    return 1;
  } finally {
    lock.release();
  }
}
