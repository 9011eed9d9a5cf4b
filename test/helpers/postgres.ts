// A real PostgreSQL server for the tests and the benches: Debian's PostgreSQL started as a
// throwaway cluster in a temporary folder, on a free 127.0.0.1 port, as an unprivileged user
// (PostgreSQL refuses to run as root: when the tests run as root, initdb and pg_ctl run as the
// `postgres` user the Debian package creates). BALCAO_TEST_DATABASE_URL points at an existing
// server instead (its user must be allowed to CREATE DATABASE); nothing is started then.
//
// The test run starts one cluster (test/global-setup.ts) and every suite that runs a service on
// PostgreSQL creates a database of its own in it (`createDatabase`), so suites never see each
// other's companies, documents or authority.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './service-process.ts';

export const TEST_DATABASE_URL_ENV = 'BALCAO_TEST_DATABASE_URL';

export type PostgresServer = {
  /** A URL of the server's maintenance database, as a user that may create databases. */
  readonly url: string;
  stop(): Promise<void>;
};

/** initdb, pg_ctl: on the PATH, else the newest /usr/lib/postgresql/<version>/bin. */
function binDir(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'pg_ctl'))) return join(root, v, 'bin');
  throw new Error(`PostgreSQL não encontrado (pg_ctl): instale o pacote postgresql (apt-get install postgresql) ou informe ${TEST_DATABASE_URL_ENV}`);
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL program as an unprivileged user: `postgres` when we are root. */
function runAs(program: string, args: string[]): void {
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
}

export type StartOptions = {
  /**
   * Durable commits (fsync, synchronous_commit on), as a production server: what the benches
   * compare with SQLite's synchronous=FULL. The tests turn them off: they test what the
   * service does, and a power cut is not among the things a test can cause.
   */
  durable?: boolean;
};

/** Starts a throwaway cluster, or uses BALCAO_TEST_DATABASE_URL. */
export async function startPostgres(options: StartOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<PostgresServer> {
  const existing = env[TEST_DATABASE_URL_ENV]?.trim();
  if (existing) return { url: existing, stop: async () => undefined };

  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'balcao-pg-'));
  const data = join(dir, 'data');
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const port = await closedPort();
  const settings = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c max_connections=300',
    '-c shared_buffers=128MB',
    ...(options.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ].join(' ');
  try {
    runAs(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'balcao', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    runAs(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', settings, 'start']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as Error & { stderr?: Buffer };
    throw new Error(`não foi possível iniciar o PostgreSQL de teste: ${e.message}\n${e.stderr?.toString() ?? ''}`);
  }
  let stopped = false;
  return {
    url: `postgres://balcao@127.0.0.1:${port}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        runAs(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A new, empty database on the server of `serverUrl`; its URL. */
export async function createDatabase(serverUrl: string, prefix = 'balcao_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database `createDatabase` made (its connections are cut first). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
