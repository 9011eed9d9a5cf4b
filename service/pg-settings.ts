// How to reach the service's PostgreSQL database, read from the command line and the
// environment without loading the driver (pg-db.ts), which a service on SQLite never needs.
//
// Settings (environment): BALCAO_DATABASE_POOL (connections per process, default 10),
// BALCAO_DATABASE_STATEMENT_TIMEOUT_MS (a statement running longer is cancelled by the server,
// default 10 000), BALCAO_LEASE_MS (how long a process's lease lasts without renewal, default
// 30 000; it is renewed every fifth of that).

export const DATABASE_URL_ENV = 'BALCAO_DATABASE_URL';
export const POOL_ENV = 'BALCAO_DATABASE_POOL';
export const STATEMENT_TIMEOUT_ENV = 'BALCAO_DATABASE_STATEMENT_TIMEOUT_MS';
export const LEASE_ENV = 'BALCAO_LEASE_MS';

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
export const DEFAULT_LEASE_MS = 30_000;

export type PostgresSettings = {
  url: string;
  poolSize: number;
  statementTimeoutMs: number;
  leaseMs: number;
};

function integerEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, unit: string): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < min || n > max) throw new RangeError(`${name} inválido ("${text}"): informe ${unit} de ${min} a ${max}`);
  return n;
}

/** The pool and lease settings from the environment (the URL comes from the caller). */
export function postgresSettings(url: string, env: NodeJS.ProcessEnv = process.env): PostgresSettings {
  return {
    url,
    poolSize: integerEnv(env, POOL_ENV, DEFAULT_POOL_SIZE, 1, 500, 'um número de conexões'),
    statementTimeoutMs: integerEnv(env, STATEMENT_TIMEOUT_ENV, DEFAULT_STATEMENT_TIMEOUT_MS, 100, 3_600_000, 'milissegundos'),
    leaseMs: integerEnv(env, LEASE_ENV, DEFAULT_LEASE_MS, 1_000, 3_600_000, 'milissegundos'),
  };
}

/** Whether a `--database` value names PostgreSQL. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
