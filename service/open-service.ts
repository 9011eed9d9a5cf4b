// Opens what every service process needs (the service itself, the company CLI): the migrated
// database behind its store, and the master key, checked against the database. A data folder
// (SQLite) or a PostgreSQL database several processes share (storage.ts). A service process on a
// data folder holds it (base/node/folder-lock.ts): a second service, or a `balcao start`, on the
// same folder is refused naming the first; the company commands, which change settings between
// the service's requests, share it.

import { mkdirSync } from 'node:fs';
import { lockFolder } from '../base/node/folder-lock.ts';
import { FieldError } from '../fiscal/errors.ts';
import { EXIT_USAGE } from './cli-args.ts';
import { openServiceDatabase } from './db.ts';
import type { PgStoreOptions } from './pg-store.ts';
import { serviceSecretBox, verifyMasterKey, type SecretSealer } from './secrets.ts';
import { SqliteStore } from './sqlite-store.ts';
import { describeStorage, masterKeyOf, type Storage } from './storage.ts';
import type { ServiceStore } from './store.ts';

export type OpenedService<S extends ServiceStore = ServiceStore> = { store: S; secrets: SecretSealer };

/**
 * How a process holds the database: a service process (`holdsWork`) holds a data folder for
 * itself, and on PostgreSQL registers and renews its lease.
 */
export type OpenOptions = PgStoreOptions;

/** The folder's SQLite store; held for this process when it is a service's (see the header). */
function openSqliteStore(dataDir: string, holdsWork: boolean): SqliteStore {
  if (!holdsWork) return new SqliteStore(openServiceDatabase(dataDir));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = lockFolder(dataDir);
  try {
    return new SqliteStore(openServiceDatabase(dataDir, { check: true }), () => lock.release());
  } catch (err) {
    lock.release();
    throw err;
  }
}

export async function openService(dataDir: string, env?: NodeJS.ProcessEnv): Promise<OpenedService<SqliteStore>>;
export async function openService(storage: Storage, env?: NodeJS.ProcessEnv, options?: OpenOptions): Promise<OpenedService>;
export async function openService(where: string | Storage, env: NodeJS.ProcessEnv = process.env, options: OpenOptions = {}): Promise<OpenedService> {
  const storage: Storage = typeof where === 'string' ? { kind: 'sqlite', dataDir: where } : where;
  const secrets = serviceSecretBox(masterKeyOf(storage, env));
  // The PostgreSQL store (and its driver) is loaded only by a service that uses it.
  const store: ServiceStore =
    storage.kind === 'sqlite'
      ? openSqliteStore(storage.dataDir, options.holdsWork === true)
      : await (await import('./pg-store.ts')).PgStore.open(storage.settings, options);
  try {
    await verifyMasterKey(secrets, store);
  } catch (err) {
    await store.close();
    throw err;
  }
  return { store, secrets };
}

/** For a command: the service's data opened, or undefined once why not was written to stderr. */
export async function openServiceForCommand(storage: Storage): Promise<OpenedService | undefined> {
  try {
    return await openService(storage);
  } catch (err) {
    process.stderr.write(`Não foi possível abrir os dados do serviço em ${describeStorage(storage)}: ${(err as Error).message}\n`);
    return undefined;
  }
}

/**
 * A CLI command's work on the service's data: `perform`'s answer printed as one JSON line (exit
 * 0); a FieldError printed one line per issue, each naming the command-line option `optionOf`
 * gives for its field (exit 2); any other error `otherError` maps to an exit code after
 * printing, or rethrown. The store is closed in every case.
 */
export async function runOnService(
  storage: Storage,
  perform: (opened: OpenedService) => Promise<unknown>,
  optionOf: (field: string) => string,
  otherError: (err: unknown) => number | undefined = () => undefined,
): Promise<number> {
  const opened = await openServiceForCommand(storage);
  if (!opened) return 1;
  try {
    process.stdout.write(JSON.stringify(await perform(opened)) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof FieldError) {
      process.stderr.write(err.issues.map((i) => `--${optionOf(i.field)}: ${i.message}`).join('\n') + '\n');
      return EXIT_USAGE;
    }
    const code = otherError(err);
    if (code === undefined) throw err;
    return code;
  } finally {
    await opened.store.close();
  }
}
