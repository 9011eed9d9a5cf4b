// The webhook delivery worker against a real SQLite store and real HTTP receivers on
// 127.0.0.1: signature, retries with the same event id, timeouts, redirects, leases that outlive
// a dead worker, giving up, shutdown. Delays are shortened through the worker's options (the
// service takes them from BALCAO_WEBHOOK_BACKOFF_MS). What is checked against time is a lower
// bound (a retry not before its backoff) or a comparison with a delay far longer than any wait
// here (a lease of a minute); never "within N ms", which a loaded machine breaks.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createCompany } from '../companies.ts';
import { serviceDbPath } from '../db.ts';
import { openService, type OpenedService } from '../open-service.ts';
import { WebhookSettings } from '../webhook-settings.ts';
import {
  backoffFromEnv,
  DEFAULT_BACKOFF_MS,
  GIVE_UP_AFTER_MS,
  parseBackoffMs,
  retryDelayMs,
  USER_AGENT,
  WebhookDelivery,
  type WebhookDeliveryOptions,
} from './delivery.ts';
import { ANY_DESTINATION, destinationPolicy, DESTINATIONS_ENV, refusal, type Lookup } from './destinations.ts';
import { signWebhookBody, verifyWebhookSignature } from './signature.ts';

type Received = { at: number; path: string; headers: IncomingMessage['headers']; raw: Buffer };
type Responder = (n: number, req: IncomingMessage, res: ServerResponse) => void;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP receiver on 127.0.0.1; `respond` decides each answer (n = 1 for the first request). */
async function receiver(respond: Responder = (_n, _req, res) => res.writeHead(204).end()) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ at: Date.now(), path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) });
      respond(received.length, req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

/** A fresh database with one company whose webhook points at `url`. */
async function setup(url: string) {
  const dir = mkdtempSync(join(tmpdir(), 'balcao-webhooks-'));
  const opened: OpenedService = await openService(dir, {});
  const { companyId } = await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja Webhook' });
  const settings = new WebhookSettings(opened.store, opened.secrets);
  const { segredo } = await settings.put(companyId, { url });
  const db = new Database(serviceDbPath(dir), { readonly: true });
  cleanups.push(async () => {
    db.close();
    await opened.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const row = (eventId: string) =>
    db.prepare('SELECT attempts, next_attempt_at, last_error, delivered_at, gave_up_at FROM webhook_deliveries WHERE event_id = ?').get(eventId) as {
      attempts: number;
      next_attempt_at: string;
      last_error: string | null;
      delivered_at: string | null;
      gave_up_at: string | null;
    };
  return { ...opened, companyId, segredo, settings, row };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Queues an `nfce.autorizada` event (non-ASCII inside, so the UTF-8 bytes are what is signed). */
async function enqueue(s: Setup, createdAt = new Date()) {
  const eventId = randomUUID();
  const payload = JSON.stringify({
    id: eventId,
    tipo: 'nfce.autorizada',
    criado_em: createdAt.toISOString(),
    dados: { id: randomUUID(), status: 'autorizada', emitente: 'Pão & Café Ação Ltda' },
  });
  expect(await s.store.enqueueWebhookEvent({ eventId, companyId: s.companyId, tipo: 'nfce.autorizada', payload, createdAt })).toBe(true);
  return { eventId, payload };
}

function worker(s: Setup, options: Partial<WebhookDeliveryOptions> = {}): WebhookDelivery {
  const w = new WebhookDelivery({ store: s.store, secrets: s.secrets, backoffMs: [50], pollIntervalMs: 20, timeoutMs: 10_000, ...options });
  cleanups.push(() => w.stop());
  w.start();
  return w;
}

async function until(what: string, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`esperando: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectSignedDelivery(r: Received, secret: string, payload: string, eventId: string) {
  expect(r.path).toBe('/hook');
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['user-agent']).toBe(USER_AGENT);
  expect(r.raw.toString('utf8')).toBe(payload);
  expect((JSON.parse(r.raw.toString('utf8')) as { id: string }).id).toBe(eventId);
  const header = r.headers['x-assinatura'] as string;
  expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  // Signed when sent: not before the event was created, not after it arrived.
  const t = Number(/^t=(\d+)/.exec(header)![1]);
  expect(t).toBeGreaterThanOrEqual(Math.floor(Date.parse((JSON.parse(payload) as { criado_em: string }).criado_em) / 1000));
  expect(t).toBeLessThanOrEqual(Math.ceil(r.at / 1000));
  expect(verifyWebhookSignature(secret, header, r.raw, { toleranceSeconds: 60 })).toBe(true);
}

describe('signature', () => {
  const secret = 'segredo-de-teste';
  const body = '{"id":"e1","tipo":"nfce.autorizada","dados":{"x":"ção"}}';
  const t = 1_790_000_000;

  it('is t=<seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>', async () => {
    const { createHmac } = await import('node:crypto');
    const hex = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');
    expect(signWebhookBody(secret, body, t)).toBe(`t=${t},v1=${hex}`);
    expect(signWebhookBody(secret, Buffer.from(body, 'utf8'), t)).toBe(`t=${t},v1=${hex}`);
    expect(() => signWebhookBody(secret, body, 1.5)).toThrow(RangeError);
  });

  it('verifies the exact body, secret and time window only', () => {
    const header = signWebhookBody(secret, body, t);
    const at = { now: t + 10, toleranceSeconds: 300 };
    expect(verifyWebhookSignature(secret, header, body, at)).toBe(true);
    expect(verifyWebhookSignature(secret, header, Buffer.from(body), at)).toBe(true);
    // Tampered body, one character; a re-serialized body (same JSON, other bytes); wrong secret.
    expect(verifyWebhookSignature(secret, header, body.replace('e1', 'e2'), at)).toBe(false);
    expect(verifyWebhookSignature(secret, header, JSON.stringify(JSON.parse(body), null, 1), at)).toBe(false);
    expect(verifyWebhookSignature('outro-segredo', header, body, at)).toBe(false);
    // Outside the window either way.
    expect(verifyWebhookSignature(secret, header, body, { now: t + 301, toleranceSeconds: 300 })).toBe(false);
    expect(verifyWebhookSignature(secret, header, body, { now: t - 301, toleranceSeconds: 300 })).toBe(false);
    // A forged t with the original v1 fails: t is signed.
    const v1 = header.split(',')[1]!;
    expect(verifyWebhookSignature(secret, `t=${t + 5},${v1}`, body, at)).toBe(false);
  });

  it('accepts any matching v1 among several and ignores unknown schemes', () => {
    const good = signWebhookBody(secret, body, t).split(',')[1]!;
    const bad = signWebhookBody('velho', body, t).split(',')[1]!;
    expect(verifyWebhookSignature(secret, `t=${t},${bad},${good},v2=abc`, body, { now: t })).toBe(true);
  });

  it('treats malformed headers as invalid without throwing', () => {
    const v1 = signWebhookBody(secret, body, t).split(',')[1]!;
    for (const header of [
      undefined,
      null,
      '',
      v1,
      `t=${t}`,
      `t=abc,${v1}`,
      `t=${t},t=${t},${v1}`,
      `t=${t},v1=zz`,
      `t=${t};${v1}`,
      `t=${t},v1=${'0'.repeat(64)}`,
    ]) {
      expect(verifyWebhookSignature(secret, header, body, { now: t })).toBe(false);
    }
  });
});

describe('backoff schedule', () => {
  it('is 10 s, 30 s, 1 min, 2 min, 5 min, 10 min, 30 min, then hourly, ±20 % jitter', () => {
    expect(DEFAULT_BACKOFF_MS).toEqual([10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000]);
    const mid = () => 0.5;
    expect([1, 2, 3, 7, 8, 9, 50].map((n) => retryDelayMs(n, DEFAULT_BACKOFF_MS, mid))).toEqual([
      10_000, 30_000, 60_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
    expect(retryDelayMs(1, DEFAULT_BACKOFF_MS, () => 0)).toBe(8_000);
    expect(retryDelayMs(1, DEFAULT_BACKOFF_MS, () => 0.999999)).toBe(12_000);
  });

  it('keeps retrying for more than 24 h before giving up at 48 h', () => {
    // Worst case for the count (every delay +20 %), and no time spent in the attempts.
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < GIVE_UP_AFTER_MS) {
      elapsed += retryDelayMs(attempts, DEFAULT_BACKOFF_MS, () => 1);
      attempts++;
    }
    expect(GIVE_UP_AFTER_MS).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(attempts).toBeGreaterThan(40);
  });

  it('is read from BALCAO_WEBHOOK_BACKOFF_MS', () => {
    expect(backoffFromEnv({})).toBe(DEFAULT_BACKOFF_MS);
    expect(backoffFromEnv({ BALCAO_WEBHOOK_BACKOFF_MS: ' 50, 100 ,200' })).toEqual([50, 100, 200]);
    for (const bad of ['0', '-5', '1.5', 'abc', '10,,20', '90000000']) {
      expect(() => parseBackoffMs(bad)).toThrow(/BALCAO_WEBHOOK_BACKOFF_MS inválido/);
    }
  });
});

describe('delivery', () => {
  it('POSTs the stored payload with a valid signature and marks it delivered', async () => {
    const rx = await receiver();
    const s = await setup(rx.url);
    const { eventId, payload } = await enqueue(s);
    worker(s);
    await until('entrega', () => rx.received.length === 1);
    expectSignedDelivery(rx.received[0]!, s.segredo, payload, eventId);
    await until('registro', () => s.row(eventId).delivered_at !== null);
    expect(s.row(eventId)).toMatchObject({ attempts: 1, last_error: null, gave_up_at: null });
  });

  it('retries a 500 with the same event id and a fresh valid signature, then stops once delivered', async () => {
    const rx = await receiver((n, _req, res) => res.writeHead(n === 1 ? 500 : 200).end('ok'));
    const s = await setup(rx.url);
    const { eventId, payload } = await enqueue(s);
    worker(s, { backoffMs: [100] });
    await until('segunda entrega', () => rx.received.length === 2);
    const [first, second] = rx.received as [Received, Received];
    expectSignedDelivery(first, s.segredo, payload, eventId);
    expectSignedDelivery(second, s.segredo, payload, eventId);
    // The backoff was honoured (100 ms - 20 % jitter).
    expect(second.at - first.at).toBeGreaterThanOrEqual(75);
    await until('registro', () => s.row(eventId).delivered_at !== null);
    await sleep(500); // several backoff periods: a third POST would have happened by now
    expect(rx.received).toHaveLength(2);
    expect(s.row(eventId)).toMatchObject({ attempts: 2, gave_up_at: null });
  });

  it('retries a receiver that does not answer within the timeout', async () => {
    // The receiver leaves the first request it gets unanswered and answers the others. An attempt
    // that cannot even reach it in time (a loaded machine) is cut the same way: every failure is
    // the timeout, and the event arrives in the end.
    const hanging: ServerResponse[] = [];
    const rx = await receiver((n, _req, res) => (n === 1 ? hanging.push(res) : res.writeHead(200).end()));
    const s = await setup(rx.url);
    const { eventId, payload } = await enqueue(s);
    const failures: string[] = [];
    const logger = { debug: () => undefined, error: () => undefined, warn: (entry: object) => void failures.push((entry as { error: string }).error) };
    worker(s, { timeoutMs: 1_000, backoffMs: [400], logger });
    await until('registro', () => s.row(eventId).delivered_at !== null);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(new Set(failures)).toEqual(new Set(['sem resposta em 1000 ms']));
    expect(s.row(eventId).attempts).toBe(failures.length + 1);
    // The unanswered request was sent again, after its timeout and the backoff (400 ms - 20 %).
    expect(rx.received.length).toBeGreaterThanOrEqual(2);
    const [first, second] = rx.received as [Received, Received];
    expect(second.at - first.at).toBeGreaterThanOrEqual(320);
    for (const r of rx.received) expectSignedDelivery(r, s.segredo, payload, eventId);
    for (const res of hanging) res.destroy();
  });

  it('does not follow redirects: a 3xx is a failed attempt, retried at the same URL', async () => {
    const rx = await receiver((n, _req, res) => (n === 1 ? res.writeHead(302, { location: '/outro' }).end() : res.writeHead(200).end()));
    const s = await setup(rx.url);
    const { eventId } = await enqueue(s);
    worker(s);
    await until('registro', () => s.row(eventId).delivered_at !== null);
    expect(rx.received.map((r) => r.path)).toEqual(['/hook', '/hook']);
  });

  it('retries after the lease of a worker that died mid-delivery (at least once)', async () => {
    const rx = await receiver();
    const s = await setup(rx.url);
    const { eventId, payload } = await enqueue(s);
    // A worker leased it for 800 ms and died before recording anything.
    const leasedAt = Date.now();
    const leased = await s.store.leaseDueWebhookDeliveries(new Date(leasedAt), 10, 800);
    expect(leased.map((d) => d.eventId)).toEqual([eventId]);
    worker(s);
    await until('entrega após a concessão', () => rx.received.length === 1);
    // Not while it was leased.
    expect(rx.received[0]!.at - leasedAt).toBeGreaterThanOrEqual(790);
    expectSignedDelivery(rx.received[0]!, s.segredo, payload, eventId);
    await until('registro', () => s.row(eventId).delivered_at !== null);
  });

  it('gives up once the event is older than the give-up age, and not before', async () => {
    const rx = await receiver((_n, _req, res) => res.writeHead(503).end());
    const s = await setup(rx.url);
    const createdAt = new Date();
    const { eventId } = await enqueue(s, createdAt);
    worker(s, { giveUpAfterMs: 1_000 });
    await until('abandono', () => s.row(eventId).gave_up_at !== null);
    const row = s.row(eventId);
    expect(row).toMatchObject({ last_error: 'HTTP 503', delivered_at: null });
    // Not before: the failures of the first second were retried (every 50 ms).
    expect(Date.parse(row.gave_up_at!) - createdAt.getTime()).toBeGreaterThanOrEqual(1_000);
    expect(rx.received).toHaveLength(row.attempts);
    expect(new Set(rx.received.map((r) => r.raw.toString()))).toHaveProperty('size', 1);
    await sleep(300);
    expect(rx.received).toHaveLength(row.attempts);
  });

  it('retries connection failures, and delivers to the URL configured at send time', async () => {
    const rx = await receiver();
    const s = await setup('http://127.0.0.1:9/hook'); // discard port: nothing listens
    const { eventId } = await enqueue(s);
    worker(s, { backoffMs: [100] });
    await until('falha registrada', () => s.row(eventId).attempts >= 1);
    expect(s.row(eventId).last_error).toMatch(/^falha de conexão: /);
    await s.settings.put(s.companyId, { url: rx.url, segredo: s.segredo });
    await until('entrega', () => rx.received.length === 1);
    await until('registro', () => s.row(eventId).delivered_at !== null);
  });

  it('gives up an event whose company removed its webhook', async () => {
    const s = await setup('http://127.0.0.1:9/hook');
    const { eventId } = await enqueue(s);
    await s.settings.remove(s.companyId);
    worker(s);
    await until('abandono', () => s.row(eventId).gave_up_at !== null);
    expect(s.row(eventId)).toMatchObject({ attempts: 1, last_error: 'webhook removido' });
  });

  it('on stop, aborts a POST in flight and releases it for the next start', async () => {
    let hang = true;
    const hanging: ServerResponse[] = [];
    const rx = await receiver((_n, _req, res) => (hang ? hanging.push(res) : res.writeHead(200).end()));
    const s = await setup(rx.url);
    const { eventId, payload } = await enqueue(s);
    // An attempt's timeout and lease far longer than any wait of this test (until: 60 s): an
    // attempt that ended or was taken again, it was by the stop.
    const long = { timeoutMs: 120_000, backoffMs: [120_000] };
    const first = worker(s, long);
    await until('primeira tentativa', () => rx.received.length === 1);
    await first.stop();
    const row = s.row(eventId);
    expect(row).toMatchObject({ attempts: 1, delivered_at: null, last_error: 'interrompida pelo encerramento do serviço' });
    expect(Date.parse(row.next_attempt_at)).toBeLessThanOrEqual(Date.now());
    hang = false;
    worker(s, long);
    await until('entrega após reinício', () => rx.received.length === 2);
    expectSignedDelivery(rx.received[1]!, s.segredo, payload, eventId);
    for (const res of hanging) res.destroy();
  });

  it('nudge() polls at once instead of waiting for the next tick', async () => {
    const rx = await receiver();
    const s = await setup(rx.url);
    // The next tick is ten minutes away, far beyond any wait here (until: 60 s).
    const w = worker(s, { pollIntervalMs: 600_000 });
    await sleep(100); // the first poll (at start) found nothing
    const { eventId } = await enqueue(s);
    w.nudge();
    await until('entrega', () => rx.received.length === 1);
    await until('registro', () => s.row(eventId).delivered_at !== null);
  });
});

describe('destinations (BALCAO_WEBHOOK_DESTINOS)', () => {
  const onlyPublic = destinationPolicy({}, { sharedDatabase: true, beyondLoopback: false });

  it('defaults to any address on a store’s own service, to public ones on a shared or exposed one; operators add networks', () => {
    expect(destinationPolicy({}, { sharedDatabase: false, beyondLoopback: false }).kind).toBe('any');
    expect(destinationPolicy({}, { sharedDatabase: false, beyondLoopback: true }).kind).toBe('public');
    expect(onlyPublic.kind).toBe('public');
    expect(destinationPolicy({ [DESTINATIONS_ENV]: 'qualquer' }, { sharedDatabase: true, beyondLoopback: true }).kind).toBe('any');
    expect(destinationPolicy({ [DESTINATIONS_ENV]: 'publicos' }, { sharedDatabase: false, beyondLoopback: false }).kind).toBe('public');
    const lan = destinationPolicy({ [DESTINATIONS_ENV]: '10.20.0.0/16, 192.168.0.50' }, { sharedDatabase: true, beyondLoopback: false });
    expect(refusal(lan, '10.20.3.4')).toBeUndefined();
    expect(refusal(lan, '192.168.0.50')).toBeUndefined();
    expect(refusal(lan, '192.168.0.51')).toMatch(/rede privada/);
    expect(refusal(lan, '8.8.8.8')).toBeUndefined();
    expect(() => destinationPolicy({ [DESTINATIONS_ENV]: '10.0.0.0/33' }, { sharedDatabase: true, beyondLoopback: false })).toThrow(
      /BALCAO_WEBHOOK_DESTINOS inválido/,
    );
  });

  it('refuses loopback, private, link-local (cloud metadata), CGNAT, IPv6 local and IPv4-in-IPv6 forms of them; allows public ones', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '169.254.169.254',
      '10.0.0.5',
      '172.16.8.1',
      '192.168.1.10',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::5',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
    ]) {
      expect(refusal(onlyPublic, address), address).toMatch(/não é público/);
    }
    for (const address of ['8.8.8.8', '200.160.2.3', '2606:4700::1111', '::ffff:8.8.8.8']) expect(refusal(onlyPublic, address), address).toBeUndefined();
    expect(refusal(ANY_DESTINATION, '127.0.0.1')).toBeUndefined();
  });

  /** A resolver that answers `address` for every name, changing when told (DNS rebinding). */
  function resolver(address: string) {
    const r = { address, asked: [] as string[] };
    const lookup: Lookup = (hostname, _options, callback) => {
      r.asked.push(hostname);
      callback(null, [{ address: r.address, family: r.address.includes(':') ? 6 : 4 }]);
    };
    return Object.assign(r, { lookup });
  }

  it('is checked at PUT on every address the name resolves to, and at delivery on the address connected to (DNS rebinding)', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const s = await setup(rx.url);
    const dns = resolver('200.160.2.3');
    const settings = new WebhookSettings(s.store, s.secrets, onlyPublic, dns.lookup);
    // At PUT: a public name is accepted; an address or a name that resolves to a private one is not.
    await settings.put(s.companyId, { url: `http://hooks.loja.example:${port}/hook`, segredo: s.segredo });
    for (const url of [`http://127.0.0.1:${port}/hook`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.5/hook', 'http://[::1]/hook']) {
      await expect(settings.put(s.companyId, { url }), url).rejects.toMatchObject({ code: 'validacao', options: { details: [{ field: 'url' }] } });
    }
    dns.address = '192.168.0.20';
    await expect(settings.put(s.companyId, { url: 'http://intranet.loja.example/hook' })).rejects.toMatchObject({
      code: 'validacao',
      options: { details: [{ field: 'url', message: expect.stringMatching(/intranet\.loja\.example aponta para 192\.168\.0\.20/) }] },
    });

    // At delivery the public name now resolves to this machine: refused before connecting.
    dns.address = '127.0.0.1';
    const { eventId } = await enqueue(s);
    const guarded = worker(s, { destinations: onlyPublic, lookup: dns.lookup, backoffMs: [60_000] });
    await until('tentativa recusada', () => s.row(eventId).attempts === 1);
    await guarded.stop();
    expect(s.row(eventId)).toMatchObject({
      delivered_at: null,
      last_error: expect.stringMatching(/^destino recusado: hooks\.loja\.example aponta para 127\.0\.0\.1/),
    });
    expect(rx.received).toHaveLength(0);
    expect(dns.asked).toContain('hooks.loja.example');

    // The address checked is the address connected to: allowed by the operator, it is delivered there.
    const loopbackAllowed = destinationPolicy({ [DESTINATIONS_ENV]: '127.0.0.1' }, { sharedDatabase: true, beyondLoopback: false });
    const second = await enqueue(s);
    worker(s, { destinations: loopbackAllowed, lookup: dns.lookup });
    await until('entrega ao endereço verificado', () => rx.received.length === 1);
    await until('registro', () => s.row(second.eventId).delivered_at !== null);
  });

  it('refuses at delivery an address written in the URL that the policy no longer allows', async () => {
    const rx = await receiver();
    const s = await setup(rx.url); // set while any address was allowed
    const { eventId } = await enqueue(s);
    worker(s, { destinations: onlyPublic, backoffMs: [60_000] });
    await until('tentativa recusada', () => s.row(eventId).attempts === 1);
    expect(s.row(eventId).last_error).toMatch(/^destino recusado: o endereço 127\.0\.0\.1 não é público \(esta máquina\)/);
    expect(rx.received).toHaveLength(0);
  });
});
