// The migration runner for PostgreSQL: the rules of migrate.ts (files applied in name order,
// each in its own transaction with its row in `schema_migrations`; a database recording a
// migration this code does not ship is refused; a published migration's statements never
// change), over a node-postgres connection.
//
// Several service processes may start at once against one database: the whole run holds a
// session advisory lock, so one process applies and the others wait, then find nothing to do.

import type { ClientBase } from 'pg';
import { loadMigrations, MigrationError, shippedMigrations, type Migration } from './migrate.ts';

/** Arbitrary constant: the advisory lock every Balcão migration run takes ("balcaomi"). */
const MIGRATION_LOCK = 0x62616c63616f6d69n;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  id TEXT PRIMARY KEY,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

type AppliedRow = { id: string; checksum: string };

async function appliedRows(client: ClientBase): Promise<AppliedRow[]> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (exists.rows[0]?.t === null) return [];
  return (await client.query<AppliedRow>('SELECT id, checksum FROM schema_migrations ORDER BY id')).rows;
}

function checkKnown(migrations: Migration[], rows: AppliedRow[], database: string): void {
  const known = new Map(migrations.map((m) => [m.id, m]));
  const unknown = rows.filter((r) => !known.has(r.id));
  if (unknown.length) {
    throw new MigrationError(
      `O banco de dados ${database} tem migrações que esta versão do Balcão não conhece ` +
        `(${unknown.map((r) => r.id).join(', ')}): ele foi atualizado por uma versão mais nova. ` +
        'Atualize o Balcão em vez de usar esta versão com este banco.',
    );
  }
  for (const row of rows) {
    if (known.get(row.id)!.checksum !== row.checksum) {
      throw new MigrationError(
        `A migração ${row.id} já aplicada neste banco foi alterada depois de aplicada. ` +
          'Migrações publicadas não se editam: crie uma nova migração com a mudança.',
      );
    }
  }
}

/**
 * Applies the pending migrations of `dir` through `client` (a connection of its own: the lock is
 * the session's). Returns the ids applied now, empty when the database was already current.
 */
export async function migratePostgres(client: ClientBase, dir: string, database = 'PostgreSQL'): Promise<string[]> {
  const migrations = loadMigrations(dir);
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
  try {
    await client.query(CREATE_TABLE);
    checkKnown(migrations, await appliedRows(client), database);
    const applied: string[] = [];
    for (const migration of migrations) {
      await client.query('BEGIN');
      try {
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE id = $1', [migration.id]);
        if (done.rowCount) {
          await client.query('ROLLBACK');
          continue;
        }
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (id, checksum, applied_at) VALUES ($1, $2, $3)', [
          migration.id,
          migration.checksum,
          new Date().toISOString(),
        ]);
        await client.query('COMMIT');
        applied.push(migration.id);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (err instanceof MigrationError) throw err;
        throw new MigrationError(`Falha ao aplicar a migração ${migration.id}: ${(err as Error).message}`);
      }
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => undefined);
  }
}

/**
 * The shipped migrations `dir` has that the database has not applied (empty: current). For a
 * readiness check: a process must not take traffic against a schema older than its code.
 * Throws MigrationError for a database newer than the code or with an edited migration.
 */
export async function pendingPostgresMigrations(client: ClientBase, dir: string, database = 'PostgreSQL'): Promise<string[]> {
  const migrations = shippedMigrations(dir);
  const rows = await appliedRows(client);
  checkKnown(migrations, rows, database);
  const applied = new Set(rows.map((r) => r.id));
  return migrations.filter((m) => !applied.has(m.id)).map((m) => m.id);
}
