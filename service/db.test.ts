import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openServiceDatabase, retryWhileBusy } from './db.ts';

const busy = (code = 'SQLITE_BUSY') => Object.assign(new Error('database is locked'), { code });

describe('retryWhileBusy', () => {
  it('opens again after SQLITE_BUSY and its variants, and returns what the opening returns', () => {
    const codes = ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY'];
    let calls = 0;
    const value = retryWhileBusy(
      () => {
        const code = codes[calls++];
        if (code) throw busy(code);
        return 'aberto';
      },
      5_000,
      1,
    );
    expect([value, calls]).toEqual(['aberto', 4]);
  });

  it('throws any other failure at once', () => {
    let calls = 0;
    const broken = Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
    expect(() =>
      retryWhileBusy(
        () => {
          calls++;
          throw broken;
        },
        5_000,
        1,
      ),
    ).toThrow(broken);
    expect(calls).toBe(1);
  });

  it('gives up with the last SQLITE_BUSY once its budget is spent', () => {
    let calls = 0;
    expect(() =>
      retryWhileBusy(
        () => {
          calls++;
          throw busy();
        },
        1_000,
        20,
      ),
    ).toThrow('database is locked');
    // Retried, pausing 20 ms between tries, no longer than its budget of a second.
    expect(calls).toBeGreaterThan(1);
    expect(calls).toBeLessThanOrEqual(1_000 / 20 + 1);
  });
});

describe('openServiceDatabase', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is opened and migrated by six processes at once on a new folder, each succeeding', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-db-'));
    dirs.push(dir);
    const script = `const { openServiceDatabase } = await import(${JSON.stringify(new URL('./db.ts', import.meta.url).href)}); openServiceDatabase(${JSON.stringify(dir)}).close();`;
    const codes = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<number | null>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
            child.on('exit', resolve);
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    const db = openServiceDatabase(dir);
    try {
      const applied = db.prepare('SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids FROM schema_migrations').get() as {
        n: number;
        distinct_ids: number;
      };
      expect(applied.n).toBe(applied.distinct_ids);
      expect(applied.n).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
