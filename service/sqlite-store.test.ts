import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationSetDir } from '../migrations/migrate.ts';
import { createCompany } from './companies.ts';
import { openServiceDatabase, serviceDbPath } from './db.ts';
import { openService, type OpenedService } from './open-service.ts';
import { secretContext } from './secrets.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { CompanyRecord, CompanySettings } from './store.ts';
import { hashToken } from './tokens.ts';

let dir: string;
let opened: OpenedService<SqliteStore>;
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

describe('replaced certificates', () => {
  const settingsOf = ({ id: _id, cnpj: _cnpj, createdAt: _createdAt, version: _version, updatedAt: _updatedAt, ...settings }: CompanyRecord): CompanySettings =>
    settings;
  /**
   * Settings with another certificate, sealed as the real thing would be (the store never looks
   * inside). Smaller than a registered one: rewritten in place, the old blob's tail would stay in
   * the page's free space unless the store zeroes it.
   */
  const withNewCertificate = (company: CompanyRecord, sha256: string): CompanySettings => ({
    ...settingsOf(company),
    certificate: {
      pfxSealed: opened.secrets.seal(randomBytes(900), secretContext.pfx(company.id)),
      passwordSealed: opened.secrets.seal('senha-nova', secretContext.pfxPassword(company.id)),
      sha256,
      notAfter: '2027-11-24T00:00:00.000Z',
    },
  });
  const factsOf = (company: CompanyRecord) => ({
    sha256: company.certificate.sha256,
    notBefore: '2025-11-20T00:00:00.000Z',
    notAfter: company.certificate.notAfter,
  });
  const register = async (nome: string) => (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome })).companyId;

  it('records the certificate on file, dated by the commit, when an update brings another; nothing for other changes', async () => {
    const id = await register('Loja Renovada');
    const first = (await store.getCompany(id))!;
    expect(await store.replacedCertificates(id)).toEqual([]);

    const second = (await store.updateCompanySettings(id, first.version, withNewCertificate(first, 'BB:02'), factsOf(first)))!;
    expect(second.certificate.sha256).toBe('BB:02');
    expect(await store.replacedCertificates(id)).toEqual([{ ...factsOf(first), replacedAt: second.updatedAt }]);

    const renamed = (await store.updateCompanySettings(id, second.version, { ...settingsOf(second), nome: 'Loja Renovada Nova' }))!;
    const third = (await store.updateCompanySettings(id, renamed.version, withNewCertificate(renamed, 'CC:03'), factsOf(renamed)))!;
    expect(await store.replacedCertificates(id)).toEqual([
      { ...factsOf(first), replacedAt: second.updatedAt },
      { ...factsOf(second), replacedAt: third.updatedAt },
    ]);
    expect(await store.replacedCertificates(a)).toEqual([]); // per company
  });

  it('refuses a certificate change without the replaced one, or naming another, and a replaced one without a change; writes nothing', async () => {
    const id = await register('Loja Distraida');
    const before = (await store.getCompany(id))!;
    const attempts: [string, CompanySettings, Parameters<SqliteStore['updateCompanySettings']>[3]][] = [
      ['change without replaced', withNewCertificate(before, 'DD:04'), undefined],
      ['replaced is not the one on file', withNewCertificate(before, 'DD:04'), { ...factsOf(before), sha256: 'EE:05' }],
      ['replaced without a change', settingsOf(before), factsOf(before)],
    ];
    for (const [name, settings, replaced] of attempts) {
      await expect(store.updateCompanySettings(id, before.version, settings, replaced), name).rejects.toThrow(/certificado substituído/);
    }
    expect(await store.getCompany(id)).toEqual(before);
    expect(await store.replacedCertificates(id)).toEqual([]);
  });

  it('a write over a stale version records no replacement', async () => {
    const id = await register('Loja Concorrida');
    const before = (await store.getCompany(id))!;
    const moved = (await store.updateCompanySettings(id, before.version, { ...settingsOf(before), nome: 'Loja Concorrida 2' }))!;
    expect(await store.updateCompanySettings(id, before.version, withNewCertificate(before, 'FF:06'), factsOf(before))).toBeUndefined();
    expect(await store.getCompany(id)).toEqual(moved);
    expect(await store.replacedCertificates(id)).toEqual([]);
  });

  it("leaves no byte of the replaced sealed .pfx and password in the database files, while the service's connection stays open", async () => {
    const id = await register('Loja Cuidadosa');
    // The running service: another connection to the same file, open before and after.
    const service = new SqliteStore(openServiceDatabase(dir));
    try {
      const before = (await service.getCompany(id))!;
      const files = () => {
        const file = serviceDbPath(dir);
        return Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
      };
      const middleOf = (b: Buffer) => b.subarray(Math.floor(b.length / 2) - 32, Math.floor(b.length / 2) + 32);
      // The search finds a sealed blob where one is: the certificate on file, before the renewal.
      expect(files().includes(middleOf(before.certificate.pfxSealed))).toBe(true);
      expect(files().includes(before.certificate.passwordSealed)).toBe(true);

      const settings = withNewCertificate(before, 'AB:07');
      expect(await store.updateCompanySettings(id, before.version, settings, factsOf(before))).toBeDefined();
      expect((await service.getCompany(id))!.certificate.sha256).toBe('AB:07');

      const after = files();
      expect(after.includes(middleOf(settings.certificate.pfxSealed))).toBe(true);
      expect(after.includes(middleOf(before.certificate.pfxSealed))).toBe(false);
      expect(after.includes(before.certificate.passwordSealed)).toBe(false);
    } finally {
      await service.close();
    }
  });
});

/**
 * A database migrated up to just before `migration`, holding a company registered then (id c1,
 * certificate AA), then migrated to the end: what `check` sees is an old database upgraded.
 */
async function upgradedWithOldCompany(migration: string, check: (store: SqliteStore) => Promise<void>): Promise<void> {
  const migrationsDir = mkdtempSync(join(tmpdir(), 'balcao-migrations-'));
  const dbDir = mkdtempSync(join(tmpdir(), 'balcao-migrated-'));
  const db = new Database(join(dbDir, 'service.sqlite'));
  try {
    const all = readdirSync(migrationSetDir('service'))
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const target = all.indexOf(`${migration}.sql`);
    expect(target).toBeGreaterThan(0);
    for (const file of all.slice(0, target)) copyFileSync(join(migrationSetDir('service'), file), join(migrationsDir, file));
    migrate(db, migrationsDir);
    db.prepare(
      `INSERT INTO companies (id, cnpj, ie, nome, logradouro, numero, bairro, codigo_municipio, municipio, uf, cep, crt,
         qrcode_versao, ambiente, certificado_pfx_enc, certificado_senha_enc, certificado_sha256, certificado_validade, created_at)
       VALUES ('c1', '11222333000181', 'ISENTO', 'Loja Antiga', 'Rua', 'S/N', 'Centro', '3550308', 'São Paulo', 'SP', '01000000', 1,
         2, 'homologacao', x'01', x'01', 'AA', '2027-01-01T00:00:00.000Z', '2026-11-22T10:00:00.000Z')`,
    ).run();
    migrate(db, migrationSetDir('service'));
    await check(new SqliteStore(db));
  } finally {
    db.close();
    rmSync(migrationsDir, { recursive: true, force: true });
    rmSync(dbDir, { recursive: true, force: true });
  }
}

describe('migration 20261124T1000_company_updates', () => {
  it('gives the companies registered before it version 1 and their creation as last update', async () => {
    await upgradedWithOldCompany('20261124T1000_company_updates', async (store) => {
      const company = await store.getCompany('c1');
      expect(company).toMatchObject({ version: 1, updatedAt: '2026-11-22T10:00:00.000Z', createdAt: '2026-11-22T10:00:00.000Z' });
    });
  });
});

describe('migration 20261124T1100_replaced_certificates', () => {
  it('applies over companies registered before it: none has a replaced certificate, and a renewal records one', async () => {
    await upgradedWithOldCompany('20261124T1100_replaced_certificates', async (migrated) => {
      expect(await migrated.replacedCertificates('c1')).toEqual([]);
      const { id: _id, cnpj: _cnpj, createdAt: _createdAt, version, updatedAt: _updatedAt, ...settings } = (await migrated.getCompany('c1'))!;
      const renewed = await migrated.updateCompanySettings(
        'c1',
        version,
        { ...settings, certificate: { ...settings.certificate, sha256: 'BB', notAfter: '2028-01-01T00:00:00.000Z' } },
        { sha256: 'AA', notBefore: '2026-01-01T00:00:00.000Z', notAfter: '2027-01-01T00:00:00.000Z' },
      );
      expect(await migrated.replacedCertificates('c1')).toEqual([
        { sha256: 'AA', notBefore: '2026-01-01T00:00:00.000Z', notAfter: '2027-01-01T00:00:00.000Z', replacedAt: renewed!.updatedAt },
      ]);
    });
  });
});
