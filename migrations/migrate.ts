// The migration runner shared by the service and the terminal. A migration set is a folder of
// `<YYYYMMDDTHHMM>_<name>.sql` files applied in file-name order; each file runs in its own
// transaction together with its row in `schema_migrations`, so a crash leaves it either fully
// applied or not at all, and a restart picks up where it stopped.
//
// After each migration the foreign keys are checked, but only in the tables it wrote and in
// those that refer to a table it rebuilt, changed or emptied (tablesWritten): a new migration
// costs what its own tables cost, not what the whole database holds. A migration that copies a
// large table says how far it is: its copy reads `WHERE balcao_progress('table')`, and the
// runner reports the rows copied of that table's total every few seconds (`progress`), and
// announces each migration it applies to a database beyond PROGRESS_DATABASE_BYTES.
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

/** How a migration says what it is doing; by default, lines on the standard error. */
export type MigrationProgress = (message: string) => void;

export type MigrateOptions = {
  progress?: MigrationProgress;
  /**
   * Called once before the first migration is applied to a database that already had some (an
   * upgrade, not a new database), with the ids about to run: the caller's backup.
   */
  beforeUpgrade?: (pending: string[]) => void;
  /** From which database size each migration applied is announced (default PROGRESS_DATABASE_BYTES). */
  announceBytes?: number;
  /** How often balcao_progress reports, at most (default 2 s). */
  progressEveryMs?: number;
};

/** A database at least this large (or any being upgraded) hears which migration is being applied, and how long it took. */
export const PROGRESS_DATABASE_BYTES = 64 * 1024 * 1024;

const stderrProgress: MigrationProgress = (message) => process.stderr.write(`${message}\n`);

const NAME = String.raw`(?:"([^"]+)"|\x60([^\x60]+)\x60|\[([^\]]+)\]|([A-Za-z_][A-Za-z0-9_$]*))`;
const WRITES = new RegExp(
  String.raw`\b(CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE|(?:INSERT|REPLACE)(?:\s+OR\s+\w+)?\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM|DROP\s+TABLE(?:\s+IF\s+EXISTS)?)\s+(?:main\.)?${NAME}`,
  'gi',
);
const RENAMED = new RegExp(String.raw`\bRENAME\s+TO\s+${NAME}`, 'gi');

/**
 * The tables a migration writes, read from its statements: `rows` those whose rows it adds or
 * creates (their own foreign keys are checked), `keys` those whose existing rows it may change or
 * remove (the tables referring to them are checked too). Over-inclusive at worst (a trigger's body
 * is read as statements): a table too many is checked, never one too few.
 */
export function tablesWritten(sql: string): { rows: Set<string>; keys: Set<string> } {
  const rows = new Set<string>();
  const keys = new Set<string>();
  const statements = statementsOf(sql);
  for (const m of statements.matchAll(WRITES)) {
    const table = (m[2] ?? m[3] ?? m[4] ?? m[5]!).toLowerCase();
    rows.add(table);
    // Adding rows, a table or a column removes no key another table refers to.
    const adds = /^(CREATE|INSERT|REPLACE)/i.test(m[1]!) || (/^ALTER/i.test(m[1]!) && /^\s+ADD\b/i.test(statements.slice(m.index + m[0].length)));
    if (!adds) keys.add(table);
  }
  for (const m of statements.matchAll(RENAMED)) rows.add((m[1] ?? m[2] ?? m[3] ?? m[4]!).toLowerCase());
  return { rows, keys };
}

/** The foreign keys the migration could have broken, in the tables it wrote and those referring to the ones it changed. */
function brokenForeignKeys(db: Database.Database, sql: string): number {
  const { rows, keys } = tablesWritten(sql);
  const existing = new Set(db.prepare(`SELECT lower(name) FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]);
  const check = new Set([...rows].filter((t) => existing.has(t)));
  if (keys.size) {
    const referring = db
      .prepare(
        `SELECT DISTINCT lower(m.name) FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND lower(f."table") IN (SELECT value FROM json_each(?))`,
      )
      .pluck()
      .all(JSON.stringify([...keys])) as string[];
    for (const t of referring) check.add(t);
  }
  let broken = 0;
  for (const table of check) broken += (db.pragma(`foreign_key_check("${table.replace(/"/g, '""')}")`) as unknown[]).length;
  return broken;
}

/**
 * balcao_progress('table'), for a migration's copy of a large table: true for every row, and a
 * line every `everyMs` (and 1,024 rows) with the rows read of the table's total (counted before the
 * migration runs: a function called by a statement cannot ask the database anything).
 */
function progressFunction(db: Database.Database, migration: Migration, report: MigrationProgress, everyMs: number): void {
  const totals = new Map<string, number>();
  for (const m of statementsOf(migration.sql).matchAll(/balcao_progress\s*\(\s*'([^']+)'\s*\)/gi)) {
    const table = m[1]!;
    if (totals.has(table)) continue;
    const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table);
    totals.set(
      table,
      exists
        ? (db
            .prepare(`SELECT count(*) FROM "${table.replace(/"/g, '""')}"`)
            .pluck()
            .get() as number)
        : 0,
    );
  }
  const seen = new Map<string, number>();
  let last = performance.now();
  db.function('balcao_progress', { deterministic: false, directOnly: true }, (table: unknown) => {
    const name = String(table);
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    if ((n & 1023) === 0 && performance.now() - last >= everyMs) {
      last = performance.now();
      const total = totals.get(name) ?? 0;
      report(`Migração ${migration.id}: tabela ${name}, ${n} de ${total} linhas (${total ? Math.floor((n / total) * 100) : 0}%)`);
    }
    return 1;
  });
}

/**
 * Applies the pending migrations of `dir` to `db`. Returns the ids applied now (empty when the
 * database was already current). Safe to call from several processes at once: each migration
 * takes the write lock and re-checks before applying.
 */
export function migrate(db: Database.Database, dir: string, options: MigrateOptions = {}): string[] {
  const report = options.progress ?? stderrProgress;
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

  // Table rebuilds (the SQLite way to alter a column) need foreign keys off, and the pragma is a
  // no-op inside a transaction; integrity is checked with foreign_key_check before each commit,
  // in the tables the migration wrote.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE id = ?').pluck();
  const record = db.prepare('INSERT INTO schema_migrations (id, checksum, applied_at) VALUES (?, ?, ?)');
  const applied: string[] = [];
  try {
    for (const migration of migrations) {
      const apply = db.transaction(() => {
        if (isApplied.get(migration.id)) return false; // another process got here first
        const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
        const announce = upgrade || bytes >= (options.announceBytes ?? PROGRESS_DATABASE_BYTES);
        if (announce) report(`Aplicando a migração ${migration.id} ao banco ${db.name} (${Math.round(bytes / 1048576)} MB)…`);
        const started = performance.now();
        progressFunction(db, migration, report, options.progressEveryMs ?? 2000);
        db.exec(migration.sql);
        const broken = brokenForeignKeys(db, migration.sql);
        if (broken) {
          throw new MigrationError(`A migração ${migration.id} deixaria ${broken} chave(s) estrangeira(s) quebrada(s).`);
        }
        if (announce) report(`Migração ${migration.id} aplicada em ${((performance.now() - started) / 1000).toFixed(1)} s (${db.name}).`);
        record.run(migration.id, migration.checksum, new Date().toISOString());
        return true;
      });
      let done: boolean;
      try {
        // IMMEDIATE: take the write lock before reading, so two processes never both apply it.
        done = apply.immediate();
      } catch (err) {
        if (err instanceof MigrationError) throw err;
        throw new MigrationError(`Falha ao aplicar a migração ${migration.id}: ${(err as Error).message}`, { cause: err });
      }
      if (done) applied.push(migration.id);
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
  return applied;
}
