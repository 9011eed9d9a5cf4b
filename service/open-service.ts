// Opens what every service process needs (the service itself, the company CLI): the migrated
// database behind its store, and the master key, checked against the database. A data folder
// (SQLite) or a PostgreSQL database several processes share (storage.ts).

import { openServiceDatabase } from './db.ts';
import type { PgStoreOptions } from './pg-store.ts';
import { serviceSecretBox, verifyMasterKey, type SecretSealer } from './secrets.ts';
import { SqliteStore } from './sqlite-store.ts';
import { masterKeyOf, type Storage } from './storage.ts';
import type { ServiceStore } from './store.ts';

export type OpenedService<S extends ServiceStore = ServiceStore> = { store: S; secrets: SecretSealer };

/** How a process holds the database: on PostgreSQL a service process registers and renews its lease. */
export type OpenOptions = PgStoreOptions;

export async function openService(dataDir: string, env?: NodeJS.ProcessEnv): Promise<OpenedService<SqliteStore>>;
export async function openService(storage: Storage, env?: NodeJS.ProcessEnv, options?: OpenOptions): Promise<OpenedService>;
export async function openService(where: string | Storage, env: NodeJS.ProcessEnv = process.env, options: OpenOptions = {}): Promise<OpenedService> {
  const storage: Storage = typeof where === 'string' ? { kind: 'sqlite', dataDir: where } : where;
  const secrets = serviceSecretBox(masterKeyOf(storage, env));
  // The PostgreSQL store (and its driver) is loaded only by a service that uses it.
  const store: ServiceStore =
    storage.kind === 'sqlite'
      ? new SqliteStore(openServiceDatabase(storage.dataDir))
      : await (await import('./pg-store.ts')).PgStore.open(storage.settings, options);
  try {
    await verifyMasterKey(secrets, store);
  } catch (err) {
    await store.close();
    throw err;
  }
  return { store, secrets };
}
