// The browser-mode host over real HTTP and WebSocket, with a real terminal core (its own SQLite
// file; the issuance service unreachable, so receipts stay pending): only a caller holding the
// per-start secret, using one of our host names and our origin, reaches the core; everyone else
// gets a refusal and nothing runs.

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOWNLOADS_PATH, EVENTS_PATH, RPC_PATH } from '../electron/api/bridge-protocol.ts';
import type { TerminalApi, TerminalEvent } from '../electron/api/terminal-api.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { startBrowserHost, type BrowserHost } from '../electron/host/server.ts';

// `ws` (fastify's WebSocket library) ships no types here: the little the test uses.
type WsClient = {
  on(event: 'open' | 'close', listener: () => void): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
  close(): void;
};
const { WebSocket } = createRequire(import.meta.url)('ws') as { WebSocket: new (url: string, options?: { origin?: string }) => WsClient };

let dir: string;
let terminal: Terminal;
let host: BrowserHost;
let downloads: string;
/** Subscriptions currently open on the core, counted through the API the host uses. */
let liveSubscriptions = 0;
const logLines: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-host-'));
  const staticDir = join(dir, 'tela');
  mkdirSync(staticDir);
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Caixa</title><p>tela de teste</p>');
  terminal = await createTerminal({ dataDir: join(dir, 'terminal'), serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 1, startWorker: false });
  terminal.seedDemoCatalog();
  await terminal.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
  const counted = new Proxy(terminal, {
    get(target, prop, receiver) {
      // A bug inside the core, as the host sees it: a plain Error with internals in its message.
      if (prop === 'recentPrints') return () => Promise.reject(new Error('falha interna em /var/lib/segredo.sqlite'));
      if (prop !== 'subscribe') return Reflect.get(target, prop, receiver);
      return (listener: (e: TerminalEvent) => void) => {
        const off = target.subscribe(listener);
        liveSubscriptions++;
        return () => {
          liveSubscriptions--;
          off();
        };
      };
    },
  }) as TerminalApi;
  // An export the terminal made, and a file beside its folder that must never be served.
  downloads = join(dir, 'terminal', 'exportacoes');
  mkdirSync(downloads, { recursive: true });
  writeFileSync(join(downloads, 'nfce-11222333000181-2026-11-01-a-2026-11-30.zip'), 'PK-teste');
  writeFileSync(join(dir, 'terminal', 'segredo.zip'), 'segredo');
  host = await startBrowserHost({
    terminal: counted,
    staticDir,
    downloadsDir: downloads,
    logger: pino({ level: 'error' }, { write: (line: string) => void logLines.push(line) }),
  });
});

afterAll(async () => {
  await host?.close();
  await terminal?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** A request with headers fetch would not let us forge (Host, Origin). */
function raw(options: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: host.port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const rpc = (method: string, args: unknown[], headers: Record<string, string> = {}) =>
  raw({
    method: 'POST',
    path: `${RPC_PATH}/${method}`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${host.secret}`, ...headers },
    body: JSON.stringify({ args }),
  });

/** A WebSocket handshake by hand: did the host upgrade (101), or answer with what status? */
function handshake(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: host.port,
      path,
      // A fresh connection each time: a refused upgrade leaves its connection unusable.
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

const eventsPath = (secret = host.secret) => `${EVENTS_PATH}?chave=${encodeURIComponent(secret)}`;

describe('browser-mode host', () => {
  it('listens on loopback only and prints a URL carrying the secret in the fragment', () => {
    expect(host.url).toBe(`http://127.0.0.1:${host.port}/#chave=${host.secret}`);
    expect(host.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('serves the screen with a strict CSP, no-sniff and no-referrer', async () => {
    const res = await raw({ path: '/', headers: { host: `127.0.0.1:${host.port}` } });
    expect(res.status).toBe(200);
    expect(res.body).toContain('tela de teste');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${host.port}`);
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('serves nothing outside the screen folder, and no page in place of a missing asset', async () => {
    for (const path of ['/../terminal/pos.sqlite', '/..%2fterminal%2fpos.sqlite', '/%2e%2e/%2e%2e/etc/passwd', '/assets/nao-existe.js']) {
      const res = await raw({ path, headers: { accept: '*/*' } });
      expect([403, 404], `${path} → ${res.status}`).toContain(res.status);
      expect(res.body).not.toContain('SQLite');
      expect(res.body).not.toContain('tela de teste');
    }
    // A reload on a client-side route is a navigation: it gets the screen.
    expect((await raw({ path: '/vendas', headers: { accept: 'text/html' } })).body).toContain('tela de teste');
  });

  it('runs a real call for the holder of the secret', async () => {
    const found = await rpc('findProducts', ['café']);
    expect(found.status).toBe(200);
    expect(JSON.parse(found.body)).toEqual({ result: [expect.objectContaining({ code: '1001' })] });
    const opened = await rpc('openSale', []);
    expect(opened.status).toBe(200);
    const sale = JSON.parse(opened.body) as { result: { id: string; state: string } };
    expect(sale.result.state).toBe('open');
    const bad = await rpc('addItem', [sale.result.id, { code: '1001', quantity: '-1' }]);
    expect(bad.status).toBe(422);
    expect(JSON.parse(bad.body)).toMatchObject({ error: { code: 'quantidade_invalida' } });
    await terminal.discardSale(sale.result.id);
  });

  it('answers an unexpected failure with a generic 500 and keeps the details in the log', async () => {
    const res = await rpc('recentPrints', []);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ error: { code: 'erro_servico', message: 'Erro interno do terminal' } });
    expect(res.body).not.toContain('segredo');
    expect(logLines.join('\n')).toContain('falha interna em /var/lib/segredo.sqlite');
  });

  it('answers 401 without the secret or with a wrong one, and runs nothing', async () => {
    const before = (await terminal.openSales()).length;
    for (const headers of [
      { authorization: '' },
      { authorization: `Bearer ${'A'.repeat(43)}` },
      { authorization: `Bearer ${host.secret}x` },
      { authorization: host.secret },
    ]) {
      const res = await rpc('openSale', [], headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ error: { message: expect.stringContaining('Chave de acesso') } });
    }
    // Unknown or not, a method name tells a caller without the secret nothing.
    expect((await rpc('naoExiste', [], { authorization: 'Bearer x' })).status).toBe(401);
    expect((await terminal.openSales()).length).toBe(before);
  });

  it('answers 404 to a method outside the allow-list', async () => {
    for (const method of ['naoExiste', 'subscribe', 'close', 'createManager', 'constructor']) {
      const res = await rpc(method, []);
      expect(res.status, method).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'nao_encontrado' } });
    }
  });

  it('hands an export over only to the page with the secret, only by the names the terminal gives, only from its folder', async () => {
    const path = `${DOWNLOADS_PATH}/nfce-11222333000181-2026-11-01-a-2026-11-30.zip`;
    expect((await raw({ path })).status).toBe(401);
    expect((await raw({ path, headers: { authorization: 'Bearer errada' } })).status).toBe(401);
    expect((await raw({ path, headers: { authorization: `Bearer ${host.secret}`, origin: 'http://evil.example' } })).status).toBe(403);
    const ok = await raw({ path, headers: { authorization: `Bearer ${host.secret}` } });
    expect(ok).toMatchObject({ status: 200, body: 'PK-teste' });
    expect(ok.headers['content-disposition']).toBe('attachment; filename="nfce-11222333000181-2026-11-01-a-2026-11-30.zip"');
    for (const name of ['..%2Fsegredo.zip', 'segredo.zip', '%2E%2E%2Fsegredo.zip', 'nfce-..%2F..%2Fsegredo.zip']) {
      expect((await raw({ path: `${DOWNLOADS_PATH}/${name}`, headers: { authorization: `Bearer ${host.secret}` } })).status, name).toBe(404);
    }
  });

  it('refuses a Host that is not ours (DNS rebinding), even with the secret', async () => {
    const before = (await terminal.openSales()).length;
    for (const name of [`evil.example:${host.port}`, `127.0.0.1.nip.io:${host.port}`, `127.0.0.1:${host.port + 1}`]) {
      expect((await rpc('openSale', [], { host: name })).status, name).toBe(421);
      expect((await raw({ path: '/', headers: { host: name } })).status).toBe(421);
    }
    expect((await terminal.openSales()).length).toBe(before);
    expect((await rpc('queueStatus', [], { host: `localhost:${host.port}` })).status).toBe(200);
  });

  it('refuses a call from another origin, and grants no CORS preflight', async () => {
    const before = (await terminal.openSales()).length;
    const res = await rpc('openSale', [], { origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await terminal.openSales()).length).toBe(before);

    const preflight = await raw({
      method: 'OPTIONS',
      path: `${RPC_PATH}/openSale`,
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    for (const h of ['access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-credentials']) {
      expect(preflight.headers[h], h).toBeUndefined();
    }
  });

  it('accepts only a JSON body (a text/plain post needs no preflight, so it is refused)', async () => {
    const res = await raw({
      method: 'POST',
      path: `${RPC_PATH}/openSale`,
      headers: { authorization: `Bearer ${host.secret}`, 'content-type': 'text/plain' },
      body: '{"args":[]}',
    });
    expect(res.status).toBe(415);
  });

  it('opens the events socket only for our origin with the secret', async () => {
    expect(await handshake(eventsPath(), { origin: 'http://evil.example' })).toBe(403);
    expect(await handshake(eventsPath(), { origin: `http://127.0.0.1:${host.port + 1}` })).toBe(403);
    expect(await handshake(eventsPath(), {})).toBe(403);
    expect(await handshake(eventsPath('errada'), { origin: host.origin })).toBe(401);
    expect(await handshake(EVENTS_PATH, { origin: host.origin })).toBe(401);
    expect(await handshake(eventsPath(), { origin: host.origin, host: `evil.example:${host.port}` })).toBe(421);
    expect(liveSubscriptions).toBe(0);
    expect(await handshake(eventsPath(), { origin: host.origin })).toBe(101);
  });

  it("forwards the core's events over the socket and unsubscribes when it closes", async () => {
    await waitFor(() => liveSubscriptions === 0, 'handshake socket closed');
    const ws = new WebSocket(`ws://127.0.0.1:${host.port}${eventsPath()}`, { origin: host.origin });
    const events: TerminalEvent[] = [];
    ws.on('message', (data) => events.push(JSON.parse(data.toString()) as TerminalEvent));
    await new Promise<void>((resolve, reject) => {
      ws.on('open', resolve);
      ws.on('error', reject);
    });
    expect(liveSubscriptions).toBe(1);

    let sale = await terminal.openSale();
    sale = await terminal.addItem(sale.id, { code: '1001' });
    await terminal.addPayment(sale.id, { tPag: '01', amountCents: sale.totalCents });
    const { receipt } = await terminal.finishSale(sale.id);
    await waitFor(() => events.some((e) => e.type === 'receipt' && e.receipt.id === receipt.id), 'receipt event');
    expect(events.find((e) => e.type === 'receipt')).toMatchObject({ receipt: { id: receipt.id, state: 'pending', nNF: receipt.nNF } });

    const closed = new Promise<void>((resolve) => ws.on('close', resolve));
    ws.close();
    await closed;
    await waitFor(() => liveSubscriptions === 0, 'unsubscribed after close');
  });
});

async function waitFor(probe: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`tempo esgotado esperando: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
