// The delivery worker runs with the HTTP app (buildApp): started when the app is ready, stopped
// when it closes, its delays taken from BALCAO_WEBHOOK_BACKOFF_MS. Kept apart from
// delivery.test.ts, which does not need the whole app.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.ts';
import { createCompany } from '../companies.ts';
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
  it('delivers while the app is up, with the env backoff, and stops with it', async () => {
    const bodies: { raw: Buffer; signature: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ raw: Buffer.concat(chunks), signature: String(req.headers['x-assinatura']) });
        res.writeHead(bodies.length === 1 ? 500 : 200).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const app = await withEnv('100', async () => buildApp({ ...opened, mode: 'sandbox', routes: [] }));
    try {
      const { segredo } = await app.deps.webhooks.put(companyId, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
      const eventId = randomUUID();
      const payload = JSON.stringify({ id: eventId, tipo: 'nfce.cancelada', criado_em: new Date().toISOString(), dados: {} });
      await opened.store.enqueueWebhookEvent({ eventId, companyId, tipo: 'nfce.cancelada', payload, createdAt: new Date() });
      await new Promise((r) => setTimeout(r, 400));
      expect(bodies).toHaveLength(0); // not ready yet: nothing runs before the app does

      await app.ready();
      const deadline = Date.now() + 3_000; // the default first delay (10 s) would not fit
      while (bodies.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(bodies.map((b) => b.raw.toString())).toEqual([payload, payload]);
      for (const b of bodies) expect(verifyWebhookSignature(segredo, b.signature, b.raw)).toBe(true);
    } finally {
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
