// Copies of a live database: taken while writes go on (the online API) or at once (VACUUM INTO),
// verified before they get their name, the oldest removed past the number kept; a configured
// folder that is missing is refused (a disk not plugged in), never created.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { systemFault } from './system-faults.ts';
import { BackupSchedule, backupNow, backupOnline, backupPlace, integrityOf, listBackups, BACKUP_DIR_ENV, BACKUP_KEEP_ENV } from './sqlite-backup.ts';

const root = mkdtempSync(join(tmpdir(), 'balcao-backup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function liveDatabase(name: string): Database.Database {
  const db = new Database(join(root, `${name}.sqlite`));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE sales (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO sales (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 3000; i++) insert.run('v'.repeat(500 + (i % 5000)));
  })();
  return db;
}

const count = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM sales').pluck().get() as number;
  } finally {
    db.close();
  }
};

describe('backups', () => {
  it('an online copy while sales go on: verified, standing alone, named by its time; the oldest go past the number kept', async () => {
    const db = liveDatabase('online');
    const place = backupPlace(join(root, 'dados'), 'pos', { [BACKUP_KEEP_ENV]: '2' });
    const insert = db.prepare('INSERT INTO sales (body) VALUES (?)');
    const writes = setInterval(() => insert.run('during'), 1);
    const first = await backupOnline(db, place);
    clearInterval(writes);
    expect(first.file).toMatch(/dados\/copias\/pos-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.sqlite$/);
    expect(integrityOf(first.file)).toBe('ok');
    expect(count(first.file)).toBeGreaterThanOrEqual(3000);
    expect(existsSync(`${first.file}-wal`)).toBe(false);
    await new Promise((r) => setTimeout(r, 1100)); // names have whole seconds
    await backupOnline(db, place);
    await new Promise((r) => setTimeout(r, 1100));
    const third = backupNow(db, place, 'antes-da-atualizacao');
    expect(third.reason).toBe('antes-da-atualizacao');
    expect(listBackups(place).map((b) => b.file)).toEqual([third.file, expect.any(String)]);
    expect(readdirSync(place.dir).filter((f) => f.endsWith('.parcial'))).toEqual([]);
    db.close();
  });

  it('a configured folder that does not exist is refused in words, not created', async () => {
    const db = liveDatabase('missing');
    const missing = join(root, 'pendrive', 'copias');
    const place = backupPlace(join(root, 'dados2'), 'service', { [BACKUP_DIR_ENV]: missing });
    const err = await backupOnline(db, place).catch((e: unknown) => e);
    expect(systemFault(err)?.message).toMatch(/A pasta não existe.*pendrive\/copias.*conecte-o/);
    expect(existsSync(missing)).toBe(false);
    db.close();
  });

  it('on a schedule: a copy each interval, each outcome told; stop waits for the copy being taken', async () => {
    const db = liveDatabase('schedule');
    const place = backupPlace(join(root, 'dados3'), 'pos', {});
    const outcomes: boolean[] = [];
    const schedule = new BackupSchedule(
      () => backupOnline(db, place),
      place,
      1_100,
      (o) => outcomes.push(o.ok),
      0,
    );
    schedule.start();
    await expect.poll(() => outcomes.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    await schedule.stop();
    expect(outcomes.every(Boolean)).toBe(true);
    expect(listBackups(place).length).toBe(outcomes.length);
    db.close();
  });
});
