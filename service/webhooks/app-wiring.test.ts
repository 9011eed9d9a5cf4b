// The delivery worker runs with the HTTP app (buildApp): started when the app is ready, its
// delays taken from BALCAO_WEBHOOK_BACKOFF_MS. Kept apart from
// delivery.test.ts, which does not need the whole app.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.ts';
import { createCompany } from '../companies.ts';
import { serviceDbPath } from '../db.ts';
import { openService, type OpenedService } from '../open-service.ts';
import { BACKOFF_ENV } from './delivery.ts';
import { verifyWebhookSignature } from './signature.ts';

let dir: string;
let opened: OpenedService;
let companyId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-webhooks-app-'));
  opened = await openService(dir, {});
  ({ companyId } = await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja App' }));
});

afterAll(async () => {
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function withEnv<T>(value: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env[BACKOFF_ENV];
  process.env[BACKOFF_ENV] = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env[BACKOFF_ENV];
    else process.env[BACKOFF_ENV] = before;
  }
}

describe('the app runs the delivery worker', () => {
  it('delivers once the app is ready, with the env backoff', async () => {
    const bodies: { at: number; raw: Buffer; signature: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ at: Date.now(), raw: Buffer.concat(chunks), signature: String(req.headers['x-assinatura']) });
        res.writeHead(500).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    // An hour: nothing like the default first delay (10 s), whatever the machine's load.
    const app = await withEnv('3600000', async () => buildApp({ ...opened, mode: 'sandbox', routes: [] }));
    const db = new Database(serviceDbPath(dir), { readonly: true });
    try {
      const { segredo } = await app.deps.webhooks.put(companyId, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
      const eventId = randomUUID();
      const payload = JSON.stringify({ id: eventId, tipo: 'nfce.cancelada', criado_em: new Date().toISOString(), dados: {} });
      await opened.store.enqueueWebhookEvent({ eventId, companyId, tipo: 'nfce.cancelada', payload, createdAt: new Date() });
      await new Promise((r) => setTimeout(r, 400));
      expect(bodies).toHaveLength(0); // not ready yet: nothing runs before the app does

      await app.ready();
      const attempt = () =>
        db.prepare('SELECT attempts, next_attempt_at FROM webhook_deliveries WHERE event_id = ?').get(eventId) as { attempts: number; next_attempt_at: string };
      await expect.poll(() => attempt().attempts).toBe(1);
      const readAt = Date.now();
      expect(bodies.map((b) => b.raw.toString())).toEqual([payload]);
      expect(verifyWebhookSignature(segredo, bodies[0]!.signature, bodies[0]!.raw)).toBe(true);
      // The failure was retried an hour (± 20 %) after it happened.
      const next = Date.parse(attempt().next_attempt_at);
      expect(next).toBeGreaterThanOrEqual(bodies[0]!.at + 0.8 * 3_600_000);
      expect(next).toBeLessThanOrEqual(readAt + 1.2 * 3_600_000);
    } finally {
      db.close();
      await app.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses to build with a malformed BALCAO_WEBHOOK_BACKOFF_MS', async () => {
    await withEnv('10s,30s', async () => {
      expect(() => buildApp({ ...opened, mode: 'sandbox', routes: [] })).toThrow(/BALCAO_WEBHOOK_BACKOFF_MS inválido/);
    });
  });
});
