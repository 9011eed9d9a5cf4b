// The databases hold sales, fiscal documents, token hashes and sealed credentials: each is
// created readable and writable by its owner only (0600), and so are SQLite's -wal and -shm
// files, which take the database file's mode. Checked under the common umask 022, which would
// otherwise leave a new file readable by every user of the machine: the service's
// service.sqlite and sandbox-authority.sqlite (created by the real `balcao service` process),
// and the terminal's pos.sqlite.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPosDatabase, POS_DB_FILE } from '../electron/core/db.ts';
import { nfceBody, registerCompany, waitFor } from './helpers/nfce.ts';
import { startService, tempDataDir } from './helpers/service-process.ts';

let umask: number;

beforeAll(() => {
  umask = process.umask(0o022); // children started here inherit it
});

afterAll(() => {
  process.umask(umask);
});

/** The database and its -wal and -shm files (all three must exist), with their permission bits. */
function modesOf(dir: string, file: string): Record<string, string> {
  const modes: Record<string, string> = {};
  for (const name of [file, `${file}-wal`, `${file}-shm`]) {
    const path = join(dir, name);
    expect(existsSync(path), name).toBe(true);
    modes[name] = (statSync(path).mode & 0o777).toString(8);
  }
  return modes;
}

const ownerOnly = (file: string) => ({ [file]: '600', [`${file}-wal`]: '600', [`${file}-shm`]: '600' });

describe('data files are created 0600', () => {
  it('the service: service.sqlite and the sandbox authority database, with their -wal and -shm', async () => {
    const dataDir = tempDataDir();
    const service = await startService({ dataDir });
    try {
      // A receipt authorized by the sandbox authority: both databases written while open.
      const company = await registerCompany(service.url, dataDir);
      const accepted = await company.client.post('/api/v1/nfce', nfceBody(1));
      expect((await waitFor(company.client, accepted.body.id)).status).toBe('autorizado');
      expect(modesOf(dataDir, 'service.sqlite')).toEqual(ownerOnly('service.sqlite'));
      expect(modesOf(dataDir, 'sandbox-authority.sqlite')).toEqual(ownerOnly('sandbox-authority.sqlite'));
    } finally {
      await service.stop();
    }
  });

  it("the terminal's pos.sqlite, with its -wal and -shm", () => {
    const dir = join(tempDataDir(), 'terminal'); // a folder that does not exist yet, as on first start
    const db = openPosDatabase(dir);
    try {
      expect(modesOf(dir, POS_DB_FILE)).toEqual(ownerOnly(POS_DB_FILE));
    } finally {
      db.close();
    }
  });
});
