// The migration runner shared by the service and the terminal. A migration set is a folder of
// `<YYYYMMDDTHHMM>_<name>.sql` files applied in file-name order; each file runs in its own
// transaction together with its row in `schema_migrations`, so a crash leaves it either fully
// applied or not at all, and a restart picks up where it stopped.
//
// A database that records a migration this code does not ship was written by a newer version:
// running older code against it could silently misread the data, so it is refused. A published
// migration's statements never change (its checksum says if they did); its comments may, since
// they are documentation: the checksum covers the statements without comments or layout.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

export type Migration = {
  id: string;
  sql: string;
  /** SHA-256 of the statements without comments and with whitespace collapsed. */
  checksum: string;
  /** SHA-256 of the whole file, as databases recorded before comments were left out. */
  legacyChecksum: string;
};

export class MigrationError extends Error {
  override name = 'MigrationError';
}

// Timestamped names keep the order obvious and make two engineers' migrations rarely collide.
const FILE_NAME = /^(\d{8}T\d{4}_[a-z0-9_]+)\.sql$/;

const migrationsRoot = dirname(fileURLToPath(import.meta.url));

/** Folder of a migration set shipped with the code (`service`, `pos`). */
export const migrationSetDir = (set: string): string => join(migrationsRoot, set);

const shipped = new Map<string, Migration[]>();

/**
 * The migrations of `dir` as this process found them the first time it asked: what a running
 * program ships does not change under it, and readiness probes ask every few seconds.
 */
export function shippedMigrations(dir: string): Migration[] {
  let migrations = shipped.get(dir);
  if (!migrations) shipped.set(dir, (migrations = loadMigrations(dir)));
  return migrations;
}

export function loadMigrations(dir: string): Migration[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new MigrationError(`Pasta de migrações não encontrada: ${dir} (${(err as Error).message})`);
  }
  const migrations: Migration[] = [];
  for (const name of names.sort()) {
    if (!name.endsWith('.sql')) continue;
    const m = FILE_NAME.exec(name);
    if (!m) {
      throw new MigrationError(`Nome de migração inválido: ${name} (esperado AAAAMMDDTHHMM_descricao.sql, ex.: 20261122T0300_init.sql)`);
    }
    const sql = readFileSync(join(dir, name), 'utf8');
    const checksum = sha256(`statements:${statementsOf(sql)}`);
    // Line endings normalised: a Windows checkout (autocrlf) must not look like an edited migration.
    const legacyChecksum = sha256(sql.replace(/\r\n/g, '\n'));
    migrations.push({ id: m[1]!, sql, checksum, legacyChecksum });
  }
  return migrations;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The SQL without `--` and `/* *\/` comments, whitespace runs collapsed to one space: what a
 * migration does, whatever its comments say. Quoted text ('…', "…") is kept as written.
 */
export function statementsOf(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      // A quote inside is written twice ('it''s'), which this loop reads as two strings in a row.
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end;
      out += ' ';
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
      out += ' ';
    } else {
      out += /\s/.test(c) ? ' ' : c;
      i++;
    }
  }
  return out.replace(/ {2,}/g, ' ').trim();
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  id TEXT PRIMARY KEY,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

type AppliedRow = { id: string; checksum: string };

export type MigrateOptions = {
  /**
   * Called once before the first migration is applied to a database that already had some (an
   * upgrade, not a new database), with the ids about to run: the caller's backup.
   */
  beforeUpgrade?: (pending: string[]) => void;
  /** Hears, during an upgrade, each migration as it starts and as it ends with its time: for people waiting on a large database. */
  report?: (line: string) => void;
};

/**
 * Applies the pending migrations of `dir` to `db`. Returns the ids applied now (empty when the
 * database was already current). Safe to call from several processes at once: each migration
 * takes the write lock and re-checks before applying.
 */
export function migrate(db: Database.Database, dir: string, options: MigrateOptions = {}): string[] {
  const migrations = loadMigrations(dir);
  // Immediate: a deferred statement that found no table and then wrote could meet another
  // process's migration in between and fail at once (SQLITE_BUSY), whatever the busy timeout.
  db.transaction(() => db.exec(CREATE_TABLE)).immediate();
  const known = new Map(migrations.map((m) => [m.id, m]));
  const appliedRows = () => db.prepare('SELECT id, checksum FROM schema_migrations ORDER BY id').all() as AppliedRow[];

  const unknown = appliedRows().filter((r) => !known.has(r.id));
  if (unknown.length) {
    throw new MigrationError(
      `O banco de dados ${db.name} tem migrações que esta versão do Balcão não conhece ` +
        `(${unknown.map((r) => r.id).join(', ')}): ele foi atualizado por uma versão mais nova. ` +
        'Atualize o Balcão em vez de usar esta versão com este banco.',
    );
  }
  const upgradeChecksum = db.prepare('UPDATE schema_migrations SET checksum = ? WHERE id = ? AND checksum = ?');
  for (const row of appliedRows()) {
    const migration = known.get(row.id)!;
    if (migration.checksum === row.checksum) continue;
    if (migration.legacyChecksum === row.checksum) {
      upgradeChecksum.run(migration.checksum, row.id, row.checksum);
      continue;
    }
    throw new MigrationError(
      `A migração ${row.id} já aplicada neste banco foi alterada depois de aplicada. ` +
        'Migrações publicadas não se editam: crie uma nova migração com a mudança.',
    );
  }

  const applied0 = new Set(appliedRows().map((r) => r.id));
  const pending = migrations.filter((m) => !applied0.has(m.id)).map((m) => m.id);
  const upgrade = pending.length > 0 && applied0.size > 0;
  if (upgrade) options.beforeUpgrade?.(pending);
  const report = upgrade ? options.report : undefined;

  // Table rebuilds (the SQLite way to alter a column) need foreign keys off, and the pragma is a
  // no-op inside a transaction; integrity is checked with foreign_key_check before each commit.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE id = ?').pluck();
  const record = db.prepare('INSERT INTO schema_migrations (id, checksum, applied_at) VALUES (?, ?, ?)');
  const applied: string[] = [];
  try {
    for (const migration of migrations) {
      const apply = db.transaction(() => {
        if (isApplied.get(migration.id)) return false; // another process got here first
        db.exec(migration.sql);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length) {
          throw new MigrationError(`A migração ${migration.id} deixaria ${broken.length} chave(s) estrangeira(s) quebrada(s).`);
        }
        record.run(migration.id, migration.checksum, new Date().toISOString());
        return true;
      });
      let done: boolean;
      const started = performance.now();
      if (pending.includes(migration.id)) report?.(`${db.name}: aplicando a migração ${migration.id}…`);
      try {
        // IMMEDIATE: take the write lock before reading, so two processes never both apply it.
        done = apply.immediate();
      } catch (err) {
        if (err instanceof MigrationError) throw err;
        throw new MigrationError(`Falha ao aplicar a migração ${migration.id}: ${(err as Error).message}`, { cause: err });
      }
      if (done) {
        applied.push(migration.id);
        report?.(`${db.name}: migração ${migration.id} aplicada em ${Math.round(performance.now() - started)} ms`);
      }
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
  return applied;
}
