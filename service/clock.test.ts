import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brasiliaDay, brasiliaDayRange, CompanyClock, formatBrasilia, offsetMinutesAt } from './clock.ts';
import { createCompany } from './companies.ts';
import { openService } from './open-service.ts';
import type { SqliteStore } from './sqlite-store.ts';

describe('formatBrasilia', () => {
  it('shows the instant in Brasília with its offset, to the second', () => {
    expect(formatBrasilia(new Date('2026-11-22T17:03:05.999Z'))).toBe('2026-11-22T14:03:05-03:00');
    // Late evening in Brasília is already the next day in UTC.
    expect(formatBrasilia(new Date('2026-11-23T02:59:59Z'))).toBe('2026-11-22T23:59:59-03:00');
    expect(formatBrasilia(new Date('2026-01-01T03:00:00Z'))).toBe('2026-01-01T00:00:00-03:00');
  });

  it('takes the offset from the time-zone database: summer time before 2019 was -02:00', () => {
    expect(formatBrasilia(new Date('2018-12-01T12:00:00Z'))).toBe('2018-12-01T10:00:00-02:00');
    expect(offsetMinutesAt(new Date('2018-12-01T12:00:00Z'))).toBe(-120);
    expect(offsetMinutesAt(new Date('2026-12-01T12:00:00Z'))).toBe(-180);
  });

  it('parses back to the same second', () => {
    const d = new Date('2026-07-04T08:09:10Z');
    expect(new Date(formatBrasilia(d)).getTime()).toBe(d.getTime());
  });

  it('refuses an invalid date', () => {
    expect(() => formatBrasilia(new Date('nope'))).toThrow(RangeError);
  });
});

describe('Brasília days', () => {
  it('names the day in Brasília', () => {
    expect(brasiliaDay(new Date('2026-11-23T02:59:59Z'))).toBe('2026-11-22');
    expect(brasiliaDay(new Date('2026-11-23T03:00:00Z'))).toBe('2026-11-23');
  });

  it('gives the [start, end) instants of a day', () => {
    expect(brasiliaDayRange('2026-11-22')).toEqual({
      start: new Date('2026-11-22T03:00:00Z'),
      end: new Date('2026-11-23T03:00:00Z'),
    });
  });

  it('refuses malformed and impossible days', () => {
    expect(brasiliaDayRange('2026-02-30')).toBeUndefined();
    expect(brasiliaDayRange('22/11/2026')).toBeUndefined();
    expect(brasiliaDayRange('2026-11-2')).toBeUndefined();
  });
});

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
