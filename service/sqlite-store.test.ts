import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationSetDir } from '../migrations/migrate.ts';
import { createCompany } from './companies.ts';
import { openService, type OpenedService } from './open-service.ts';
import { SqliteStore } from './sqlite-store.ts';
import { hashToken } from './tokens.ts';

let dir: string;
let opened: OpenedService;
let store: SqliteStore;
let a: string;
let b: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-store-'));
  opened = await openService(dir, {});
  store = opened.store;
  a = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A' })).companyId;
  b = (await createCompany(opened, { cnpj: '11444777000161', uf: 'SP', nome: 'Loja B' })).companyId;
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox settings', () => {
  it('starts from the defaults and applies partial updates, per company', async () => {
    expect(await store.getSandboxAuthority(a)).toEqual({ latencyMs: 0, disponivel: true });
    expect(await store.updateSandboxAuthority(a, { latencyMs: 1500 })).toEqual({ latencyMs: 1500, disponivel: true });
    expect(await store.updateSandboxAuthority(a, { disponivel: false, latencyMs: undefined })).toEqual({ latencyMs: 1500, disponivel: false });
    expect(await store.getSandboxAuthority(a)).toEqual({ latencyMs: 1500, disponivel: false });
    expect(await store.getSandboxAuthority(b)).toEqual({ latencyMs: 0, disponivel: true });
  });

  it('refuses values outside the contract even if a caller skipped validation', async () => {
    await expect(store.updateSandboxAuthority(a, { latencyMs: 60_001 })).rejects.toThrow(/CHECK/);
    await expect(store.advanceClock(a, -5)).rejects.toThrow(RangeError);
  });
});

describe('webhook settings and outbox', () => {
  const event = (companyId: string, createdAt: Date) => ({
    eventId: randomUUID(),
    companyId,
    tipo: 'nfce.autorizada',
    payload: JSON.stringify({ ok: true }),
    createdAt,
  });

  it('stores one webhook per company, replaced by a new PUT', async () => {
    expect(await store.getWebhook(a)).toBeUndefined();
    await store.putWebhook(a, { url: 'http://127.0.0.1:1/a', secretSealed: randomBytes(40) });
    await store.putWebhook(a, { url: 'http://127.0.0.1:1/a2', secretSealed: randomBytes(40) });
    expect((await store.getWebhook(a))?.url).toBe('http://127.0.0.1:1/a2');
    expect(await store.getWebhook(b)).toBeUndefined();
    expect(await store.deleteWebhook(b)).toBe(false);
  });

  it('queues events only for a company with a webhook, then leases, retries and delivers them', async () => {
    const t0 = new Date('2026-11-22T12:00:00Z');
    const forA = event(a, t0);
    expect(await store.enqueueWebhookEvent(forA)).toBe(true);
    expect(await store.enqueueWebhookEvent(event(b, t0))).toBe(false);

    const [leased, ...rest] = await store.leaseDueWebhookDeliveries(t0, 10, 60_000);
    expect(rest).toEqual([]);
    expect(leased).toMatchObject({ eventId: forA.eventId, companyId: a, tipo: 'nfce.autorizada', payload: forA.payload, attempts: 0 });
    // Leased: a second worker does not get it before the lease ends.
    expect(await store.leaseDueWebhookDeliveries(new Date(t0.getTime() + 59_000), 10, 60_000)).toEqual([]);

    await store.recordWebhookAttempt(forA.eventId, { delivered: false, at: t0, error: 'HTTP 500', nextAttemptAt: new Date(t0.getTime() + 5_000) });
    const [retry] = await store.leaseDueWebhookDeliveries(new Date(t0.getTime() + 5_000), 10, 60_000);
    expect(retry).toMatchObject({ eventId: forA.eventId, attempts: 1, payload: forA.payload });

    await store.recordWebhookAttempt(forA.eventId, { delivered: true, at: new Date(t0.getTime() + 6_000) });
    expect(await store.leaseDueWebhookDeliveries(new Date(t0.getTime() + 3_600_000), 10, 60_000)).toEqual([]);
  });

  it('stops offering a delivery that was given up', async () => {
    const t0 = new Date('2026-11-23T12:00:00Z');
    const e = event(a, t0);
    await store.enqueueWebhookEvent(e);
    await store.recordWebhookAttempt(e.eventId, { delivered: false, at: t0, error: 'webhook removido', giveUp: true });
    expect(await store.leaseDueWebhookDeliveries(new Date(t0.getTime() + 86_400_000), 10, 1000)).toEqual([]);
  });
});

describe('company settings and tokens', () => {
  it('writes settings only over the version they were validated against, bumping it', async () => {
    const before = (await store.getCompany(a))!;
    expect(await store.getCompanyVersion(a)).toBe(before.version);
    const { id: _id, cnpj: _cnpj, createdAt: _createdAt, version: _version, updatedAt: _updatedAt, ...settings } = before;
    const updated = await store.updateCompanySettings(a, before.version, { ...settings, nome: 'Loja A Nova' });
    expect(updated).toMatchObject({ nome: 'Loja A Nova', version: before.version + 1 });
    // The version moved on: a write merged from the old one is refused and changes nothing.
    expect(await store.updateCompanySettings(a, before.version, { ...settings, nome: 'Loja A Velha' })).toBeUndefined();
    expect(await store.getCompany(a)).toEqual(updated);
    expect(await store.updateCompanySettings('00000000-0000-0000-0000-000000000000', 1, settings)).toBeUndefined();
    expect(await store.getCompanyVersion('00000000-0000-0000-0000-000000000000')).toBeUndefined();
  });

  it('never writes the CNPJ or the UF', async () => {
    const before = (await store.getCompany(b))!;
    const { id: _id, cnpj: _cnpj, createdAt: _createdAt, version: _version, updatedAt: _updatedAt, ...settings } = before;
    const updated = await store.updateCompanySettings(b, before.version, { ...settings, address: { ...settings.address, uf: 'RJ' } });
    expect(updated).toMatchObject({ cnpj: before.cnpj, address: { uf: 'SP' } });
  });

  it('replaces every token of one company in one step; an unknown company gets none', async () => {
    const tokenOf = (n: number) => hashToken(`blc_${String(n).padStart(43, 'x')}`);
    expect(await store.replaceApiTokens(a, tokenOf(1))).toBe(true);
    expect(await store.replaceApiTokens(a, tokenOf(2))).toBe(true);
    expect(await store.findTokenOwner(tokenOf(1))).toBeUndefined();
    expect((await store.findTokenOwner(tokenOf(2)))?.company.id).toBe(a);
    expect(await store.replaceApiTokens('00000000-0000-0000-0000-000000000000', tokenOf(3))).toBe(false);
    expect(await store.findTokenOwner(tokenOf(3))).toBeUndefined();
  });
});

describe('migration 20261124T1000_company_updates', () => {
  it('gives the companies registered before it version 1 and their creation as last update', async () => {
    const migrationsDir = mkdtempSync(join(tmpdir(), 'balcao-migrations-'));
    const dbDir = mkdtempSync(join(tmpdir(), 'balcao-migrated-'));
    try {
      const all = readdirSync(migrationSetDir('service')).filter((f) => f.endsWith('.sql')).sort();
      const target = all.indexOf('20261124T1000_company_updates.sql');
      expect(target).toBeGreaterThan(0);
      for (const file of all.slice(0, target)) copyFileSync(join(migrationSetDir('service'), file), join(migrationsDir, file));
      const db = new Database(join(dbDir, 'service.sqlite'));
      migrate(db, migrationsDir);
      db.prepare(
        `INSERT INTO companies (id, cnpj, ie, nome, logradouro, numero, bairro, codigo_municipio, municipio, uf, cep, crt,
           qrcode_versao, ambiente, certificado_pfx_enc, certificado_senha_enc, certificado_sha256, certificado_validade, created_at)
         VALUES ('c1', '11222333000181', 'ISENTO', 'Loja Antiga', 'Rua', 'S/N', 'Centro', '3550308', 'São Paulo', 'SP', '01000000', 1,
           2, 'homologacao', x'01', x'01', 'AA', '2027-01-01T00:00:00.000Z', '2026-11-22T10:00:00.000Z')`,
      ).run();
      migrate(db, migrationSetDir('service'));
      const company = await new SqliteStore(db).getCompany('c1');
      expect(company).toMatchObject({ version: 1, updatedAt: '2026-11-22T10:00:00.000Z', createdAt: '2026-11-22T10:00:00.000Z' });
      db.close();
    } finally {
      rmSync(migrationsDir, { recursive: true, force: true });
      rmSync(dbDir, { recursive: true, force: true });
    }
  });
});
