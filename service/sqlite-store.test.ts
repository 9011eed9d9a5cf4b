import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from './companies.ts';
import { openService, type OpenedService } from './open-service.ts';
import type { SqliteStore } from './sqlite-store.ts';

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
