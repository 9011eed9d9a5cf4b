// Opens what every service process needs (the service itself, the company CLI): the migrated
// database behind its store, and the master key, checked against the database.

import { openServiceDatabase } from './db.ts';
import { loadMasterKey, serviceSecretBox, verifyMasterKey, type SecretSealer } from './secrets.ts';
import { SqliteStore } from './sqlite-store.ts';

export type OpenedService = { store: SqliteStore; secrets: SecretSealer };

export async function openService(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<OpenedService> {
  const secrets = serviceSecretBox(loadMasterKey(dataDir, env));
  const store = new SqliteStore(openServiceDatabase(dataDir));
  try {
    await verifyMasterKey(secrets, store);
  } catch (err) {
    await store.close();
    throw err;
  }
  return { store, secrets };
}
