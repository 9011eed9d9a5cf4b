// The tax-authority port is the seam where a real SEFAZ client plugs in: a production-mode
// service handed a TaxAuthority issues through it, and nothing else changes. The sandbox class
// stands in for SEFAZ here (it implements the same port, answering as SEFAZ's homologation
// environment would); the service does not know it is the sandbox: its /sandbox controls stay
// absent, as in every production deployment.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleNfceRequest } from '../fiscal/samples.ts';
import { buildApp, type ServiceApp } from './app.ts';
import type { TaxAuthority } from './authority/port.ts';
import { SandboxAuthority } from './authority/sandbox.ts';
import { createCompany } from './companies.ts';
import { openService, type OpenedService } from './open-service.ts';

let dir: string;
let opened: OpenedService;
let sefaz: SandboxAuthority;
let app: ServiceApp;
let url: string;
let token: string;
const calls: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-production-authority-'));
  opened = await openService(dir, {});
  ({ token } = await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A', cscId: '1', csc: 'CSC-SECRETO-123', ambiente: 'homologacao' }));
  sefaz = new SandboxAuthority({ file: join(dir, 'sefaz.sqlite'), settings: () => ({ latencyMs: 0, available: true }), clock: () => new Date() });
  // Every call through the port is seen, so the test knows the service really went through it.
  const authority = new Proxy(sefaz, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (...args: unknown[]) => (calls.push(String(prop)), value.apply(target, args)) : value;
    },
  }) as TaxAuthority;
  app = buildApp({ ...opened, mode: 'production', authority });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  sefaz?.close();
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown) =>
  fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'seam-1' },
    body: JSON.stringify(body),
  });

describe('production mode with a tax authority plugged into the port', () => {
  it('issues an NFC-e through it, and has no sandbox controls', async () => {
    const accepted = await post('/api/v1/nfce', sampleNfceRequest({ nNF: 1, serie: 1 }));
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    let doc: { status: string; codigo_status: string; protocolo: string | null } = { status: 'processando', codigo_status: '', protocolo: null };
    await expect
      .poll(async () => {
        doc = (await (await fetch(`${url}/api/v1/nfce/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as typeof doc;
        return doc.status;
      })
      .toBe('autorizado');
    expect(doc).toMatchObject({ codigo_status: '100', protocolo: expect.stringMatching(/^[0-9]{15}$/) });
    expect(calls).toContain('authorizeNfe');
    expect((await post('/api/v1/sandbox/relogio', { avancar_minutos: 1 })).status).toBe(404);
  });
});
