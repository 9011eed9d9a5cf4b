import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompanyClock } from './clock.ts';
import { createCompany } from './companies.ts';
import { openService } from './open-service.ts';
import type { SqliteStore } from './sqlite-store.ts';

describe('CompanyClock', () => {
  let dir: string;
  let store: SqliteStore;
  let a: string;
  let b: string;
  const real = Date.parse('2026-11-22T17:00:00Z');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-clock-'));
    const opened = await openService(dir, {});
    store = opened.store;
    a = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A' })).companyId;
    b = (await createCompany(opened, { cnpj: '11444777000161', uf: 'SP', nome: 'Loja B' })).companyId;
  });

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('in sandbox mode, moves one company forward and leaves the others on real time', async () => {
    const clock = new CompanyClock(store, 'sandbox', () => real);
    expect((await clock.now(a)).getTime()).toBe(real);
    const moved = await clock.advance(a, 31);
    expect(moved.offsetMinutes).toBe(31);
    expect(moved.now.getTime()).toBe(real + 31 * 60_000);
    expect((await clock.advance(a, 24 * 60)).offsetMinutes).toBe(31 + 24 * 60);
    expect((await clock.now(a)).getTime()).toBe(real + (31 + 24 * 60) * 60_000);
    expect((await clock.now(b)).getTime()).toBe(real);
  });

  it('in production mode, ignores any stored offset and refuses to move', async () => {
    const clock = new CompanyClock(store, 'production', () => real);
    expect((await clock.now(a)).getTime()).toBe(real);
    await expect(clock.advance(a, 1)).rejects.toThrow(/sandbox/);
  });
});
