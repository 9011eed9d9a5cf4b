// Lost answers: a TCP proxy between the terminal and the real service forwards a request, lets
// the service answer it in full, and then cuts both connections instead of passing the answer
// on. The terminal must learn the outcome under the same idempotency key and never cause a
// second receipt (nor a second cancellation or inutilização).
//
// It also fails requests before they reach the service: a gateway answering 503, no answer at
// all until the terminal's timeout, or another program answering in the service's place (an
// HTML page with 200). The terminal retries under the same key, one receipt.
//
// The proxy reads the HTTP/1.1 messages going through (undici sends one request at a time per
// connection, so the answer that follows a request is its answer) and keeps a log: method,
// path, Idempotency-Key, status and body of every answer, including the ones it swallowed.

import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Terminal } from '../electron/core/terminal.ts';
import { api, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { storeCompany, testTerminal } from './terminal-fixtures.ts';

// =============================================================================================
// The proxy

type Exchange = { method: string; path: string; key: string | null; status?: number; body?: string; dropped: boolean; failed?: Failure };

/**
 * How the proxy fails a request without passing it on: `gateway` answers 503 itself (a gateway
 * in front of a service that is down), `silence` never answers (the terminal's timeout ends it),
 * `foreign` answers 200 with an HTML page (another program at the service's address).
 */
type Failure = 'gateway' | 'silence' | 'foreign';

const FOREIGN_PAGE = '<!doctype html><html><body><h1>Roteador</h1><p>Bem-vindo!</p></body></html>';

/** Splits a byte stream into HTTP/1.1 messages (Content-Length or chunked bodies). */
class MessageSplitter {
  private buf = Buffer.alloc(0);
  /** `raw` is the whole message as it came, head and body. */
  constructor(private readonly onMessage: (head: string, body: Buffer, raw: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      const start = end + 4;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let body: Buffer;
      let next: number;
      if (length) {
        next = start + Number(length[1]);
        if (this.buf.length < next) return;
        body = this.buf.subarray(start, next);
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const parts: Buffer[] = [];
        let at = start;
        for (;;) {
          const line = this.buf.indexOf('\r\n', at);
          if (line < 0) return;
          const size = parseInt(this.buf.subarray(at, line).toString('latin1'), 16);
          if (size === 0) {
            if (this.buf.length < line + 4) return;
            next = line + 4;
            break;
          }
          if (this.buf.length < line + 2 + size + 2) return;
          parts.push(this.buf.subarray(line + 2, line + 2 + size));
          at = line + 2 + size + 2;
        }
        body = Buffer.concat(parts);
      } else {
        body = Buffer.alloc(0);
        next = start;
      }
      const raw = this.buf.subarray(0, next);
      this.buf = this.buf.subarray(next);
      this.onMessage(head, body, raw);
    }
  }
}

class LossyProxy {
  readonly log: Exchange[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private drop: ((e: Exchange) => boolean) | undefined;
  private failing: { match: (e: Exchange) => boolean; how: Failure; times: number } | undefined;
  url = '';

  constructor(private readonly target: { host: string; port: number }) {}

  /** The answer to the next request matching `match` reaches the proxy and goes no further. */
  dropNextAnswer(match: (e: Exchange) => boolean): void {
    this.drop = match;
  }

  /** Requests go through again. */
  stopFailing(): void {
    this.failing = undefined;
  }

  /** The next `times` requests matching `match` never reach the service; see Failure. */
  failNext(match: (e: Exchange) => boolean, how: Failure, times = 1): void {
    this.failing = { match, how, times };
  }

  get armed(): boolean {
    return this.drop !== undefined || this.failing !== undefined;
  }

  async start(): Promise<void> {
    this.server = createServer((client) => this.connection(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private connection(client: Socket): void {
    const upstream = connect(this.target);
    this.sockets.add(client).add(upstream);
    const inFlight: Exchange[] = [];
    let swallowing: Exchange | undefined;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    // Whole requests only are passed on, so a failed one never reaches the service, not even
    // its head.
    const requests = new MessageSplitter((head, _body, raw) => {
      const [method = '', path = ''] = head.split('\r\n')[0]!.split(' ');
      const key = /\r\nidempotency-key:\s*([^\r\n]+)/i.exec(head)?.[1] ?? null;
      const exchange: Exchange = { method, path, key, dropped: false };
      this.log.push(exchange);
      const failing = this.failing;
      if (failing?.match(exchange)) {
        if (--failing.times === 0) this.failing = undefined;
        exchange.failed = failing.how;
        if (failing.how === 'gateway') {
          exchange.status = 503;
          client.end('HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 19\r\nconnection: close\r\n\r\nService Unavailable');
        }
        if (failing.how === 'foreign') {
          exchange.status = 200;
          client.end(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${FOREIGN_PAGE.length}\r\nconnection: close\r\n\r\n${FOREIGN_PAGE}`);
        }
        return; // silence: the connection stays open and unanswered until the client gives up
      }
      inFlight.push(exchange);
      if (this.drop?.(exchange)) {
        this.drop = undefined;
        exchange.dropped = true;
        swallowing = exchange;
      }
      upstream.write(raw);
    });
    const answers = new MessageSplitter((head, body) => {
      const exchange = inFlight.shift();
      if (!exchange) return;
      exchange.status = Number(head.split(' ')[1]);
      exchange.body = body.toString('utf8');
      // The service has answered in full: the request certainly reached it. Lose the answer.
      if (exchange === swallowing) cut();
    });
    client.on('data', (chunk: Buffer) => requests.push(chunk));
    upstream.on('data', (chunk: Buffer) => {
      const wasSwallowing = swallowing !== undefined;
      answers.push(chunk);
      if (!wasSwallowing) client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => cut());
      s.on('close', () => {
        this.sockets.delete(s);
        cut();
      });
    }
  }
}

// =============================================================================================

let service: ServiceProcess;
let serviceDir: string;
let proxy: LossyProxy;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-terminal-network-');
  service = await startService({ dataDir: serviceDir });
  const target = new URL(service.url);
  proxy = new LossyProxy({ host: target.hostname, port: Number(target.port) });
  await proxy.start();
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await proxy?.stop();
  await service?.stop();
});

async function setup(latencyMs = 0, requestTimeoutMs?: number) {
  const company = await storeCompany(serviceDir);
  const http = api(service.url, company.token);
  expect((await http.post('/api/v1/sandbox/autoridade', { latencia_ms: latencyMs })).status).toBe(200);
  const terminal = await testTerminal({ serviceUrl: proxy.url, token: company.token, series: 1, ...(requestTimeoutMs && { requestTimeoutMs }) });
  terminals.push(terminal);
  const manager = await terminal.createManager({ name: 'Gerente', pin: '1357' });
  return { terminal, company, http, manager };
}

async function sell(terminal: Terminal, payment: { tPag: string; amountCents: number } = { tPag: '01', amountCents: 2000 }) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001' });
  await terminal.addPayment(sale.id, payment);
  return (await terminal.finishSale(sale.id)).receipt;
}

const settled = (t: Terminal, id: string) =>
  t.waitForReceipt(id, (r) => ['authorized', 'rejected', 'needs_attention', 'cancelled', 'voided'].includes(r.state), 30_000);

/** The sandbox authority's own record (its file, its schema): authorized NFC-e per number. */
function authorizedAtAuthority(cnpj: string, serie: number): { number: number; n: number }[] {
  const db = new Database(join(serviceDir, 'sandbox-authority.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare("SELECT number, count(*) AS n FROM nfe WHERE cnpj = ? AND model = '65' AND serie = ? GROUP BY number ORDER BY number")
      .all(cnpj, serie) as { number: number; n: number }[];
  } finally {
    db.close();
  }
}

const postsOf = (key: string) => proxy.log.filter((e) => e.method === 'POST' && e.path === '/api/v1/nfce' && e.key === key);

describe('an answer lost after the request reached the service', () => {
  it('POST /nfce answered 202 and lost: the retry with the same key learns the outcome; one receipt', async () => {
    const { terminal, company } = await setup(0);
    proxy.dropNextAnswer((e) => e.method === 'POST' && e.path === '/api/v1/nfce');
    const receipt = await sell(terminal);
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized', nNF: 1 });
    expect(proxy.armed).toBe(false);

    const row = terminal.store.receipts.receipt(receipt.id)!;
    const posts = postsOf(row.idempotency_key);
    expect(proxy.log.filter((e) => e.method === 'POST' && e.path === '/api/v1/nfce').length).toBe(posts.length); // never another key
    expect(posts.length).toBeGreaterThanOrEqual(2);
    expect(posts[0]).toMatchObject({ dropped: true, status: 202 });
    const first = JSON.parse(posts[0]!.body!) as { id: string };
    for (const retry of posts.slice(1)) {
      expect([200, 409]).toContain(retry.status); // the replay, or "still processing": never a new document
      expect(JSON.parse(retry.body!).id).toBe(first.id);
    }
    expect(row.service_id).toBe(first.id);
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });

  it('the same while the authority is slow: the retry gets 409 naming the document, follows it to autorizado', async () => {
    const { terminal, company, http } = await setup(1500);
    proxy.dropNextAnswer((e) => e.method === 'POST' && e.path === '/api/v1/nfce');
    const receipt = await sell(terminal);
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized', nNF: 1 });
    const row = terminal.store.receipts.receipt(receipt.id)!;
    const posts = postsOf(row.idempotency_key);
    expect(posts[0]).toMatchObject({ dropped: true, status: 202 });
    const first = JSON.parse(posts[0]!.body!).id as string;
    expect(posts.slice(1).map((p) => p.status)).toContain(409);
    for (const retry of posts.slice(1)) expect(JSON.parse(retry.body!).id).toBe(first);
    expect(row.service_id).toBe(first);
    expect((await http.get(`/api/v1/nfce/${first}`)).body).toMatchObject({ status: 'autorizado', numero: 1, referencia_externa: row.idempotency_key });
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });

  it('a poll answered and lost: polled again, nothing sent twice', async () => {
    const { terminal, company } = await setup(600);
    proxy.dropNextAnswer((e) => e.method === 'GET' && e.path.startsWith('/api/v1/nfce/'));
    const receipt = await sell(terminal);
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized' });
    const row = terminal.store.receipts.receipt(receipt.id)!;
    expect(proxy.log.some((e) => e.dropped && e.method === 'GET' && e.path === `/api/v1/nfce/${row.service_id}`)).toBe(true);
    expect(postsOf(row.idempotency_key).map((p) => p.status)).toEqual([202]);
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });

  it('a cancellation answered and lost: retried with its own key, the service reports it cancelled once', async () => {
    const { terminal, manager, http } = await setup(0);
    const receipt = await sell(terminal);
    await settled(terminal, receipt.id);
    const row = terminal.store.receipts.receipt(receipt.id)!;
    proxy.dropNextAnswer((e) => e.method === 'POST' && e.path === `/api/v1/nfce/${row.service_id}/cancelar`);
    const cancelled = await terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '1357', justification: 'Cliente desistiu da compra no caixa' });
    const final = cancelled.state === 'cancelled' ? cancelled : await terminal.waitForReceipt(receipt.id, (r) => r.state !== 'cancelling', 30_000);
    expect(final.state).toBe('cancelled');
    const command = terminal.store.outbox.outboxOf(receipt.id).find((e) => e.kind === 'cancel')!;
    const calls = proxy.log.filter((e) => e.path === `/api/v1/nfce/${row.service_id}/cancelar`);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]).toMatchObject({ dropped: true, status: 200 });
    expect(new Set(calls.map((c) => c.key))).toEqual(new Set([command.idempotency_key]));
    // The retry finds the receipt no longer authorized (422 estado_invalido, as for any second
    // cancellation), and the terminal reads its state before calling that a refusal.
    const retry = calls.at(-1)!;
    expect(retry).toMatchObject({ dropped: false, status: 422 });
    expect(JSON.parse(retry.body!).error.code).toBe('estado_invalido');
    const after = proxy.log.slice(proxy.log.indexOf(retry) + 1);
    expect(after.find((e) => e.method === 'GET' && e.path === `/api/v1/nfce/${row.service_id}`)).toMatchObject({ status: 200 });
    expect(command).toMatchObject({ state: 'done' });
    expect((await http.get(`/api/v1/nfce/${row.service_id}`)).body).toMatchObject({ status: 'cancelado' });
    expect(terminal.auditLog(receipt.id).map((a) => a.action)).toEqual(['cancelamento_solicitado', 'cancelamento_confirmado']);
  });

  it('an inutilização answered and lost: retried, the number is voided once', async () => {
    const { terminal, manager } = await setup(0);
    const receipt = await sell(terminal, { tPag: '03', amountCents: 1890 }); // no card group: 391
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'rejected', codigoStatus: '391' });
    proxy.dropNextAnswer((e) => e.method === 'POST' && e.path === '/api/v1/nfce/inutilizar');
    const voided = await terminal.voidReceipt(receipt.id, { managerId: manager.id, pin: '1357', justification: 'Venda abandonada pelo cliente no caixa' });
    const final = voided.state === 'voided' ? voided : await terminal.waitForReceipt(receipt.id, (r) => r.state !== 'voiding', 30_000);
    expect(final).toMatchObject({ state: 'voided', codigoStatus: '102' });
    const calls = proxy.log.filter((e) => e.path === '/api/v1/nfce/inutilizar');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]).toMatchObject({ dropped: true, status: 200 });
    expect(JSON.parse(calls.at(-1)!.body!)).toEqual(JSON.parse(calls[0]!.body!)); // the stored answer, not a second voiding
  });
});

describe('a request that never reached the service', () => {
  const emissions = (e: Exchange) => e.method === 'POST' && e.path === '/api/v1/nfce';

  it('a gateway answering 503 twice: retried with backoff under the same key, one receipt', async () => {
    const { terminal, company } = await setup(0);
    const from = proxy.log.length;
    proxy.failNext(emissions, 'gateway', 2);
    const receipt = await sell(terminal);
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized', nNF: 1, attention: null });
    const row = terminal.store.receipts.receipt(receipt.id)!;
    const posts = postsOf(row.idempotency_key);
    expect(posts.map((p) => p.status)).toEqual([503, 503, 202]);
    expect(proxy.log.slice(from).filter(emissions).length).toBe(posts.length); // never another key
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });

  it('no answer at all: the request times out and is sent again under the same key, one receipt', async () => {
    const { terminal, company } = await setup(0, 800);
    const from = proxy.log.length;
    proxy.failNext(emissions, 'silence');
    const receipt = await sell(terminal);
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized', nNF: 1 });
    const row = terminal.store.receipts.receipt(receipt.id)!;
    const posts = postsOf(row.idempotency_key);
    expect(posts[0]).toMatchObject({ failed: 'silence' });
    expect(posts[0]!.status).toBeUndefined();
    expect(posts.at(-1)!.status).toBe(202);
    expect(proxy.log.slice(from).filter(emissions).length).toBe(posts.length);
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });

  it('another program answering in its place (an HTML page, 200): the service is taken as unreachable, never as refusing the sale; one receipt once it is back', async () => {
    const { terminal, company } = await setup(0);
    const from = proxy.log.length;
    // The emissions meet the other program until it goes away.
    proxy.failNext(emissions, 'foreign', 1_000);
    const receipt = await sell(terminal);
    await expect.poll(() => proxy.log.slice(from).filter((e) => e.failed === 'foreign').length).toBeGreaterThanOrEqual(3);
    const meanwhile = await terminal.getReceipt(receipt.id);
    expect(meanwhile.state).toBe('pending');
    expect(meanwhile.attention).toBeNull();
    expect((await terminal.queueStatus()).needsAttention).toBe(0);
    expect(terminal.store.outbox.outboxOf(receipt.id)[0]!.last_error).toMatch(/respondeu outro programa, não o serviço do Balcão/);
    // The service is back at its address: the same receipt goes through, under the same key, once.
    proxy.stopFailing();
    expect(await settled(terminal, receipt.id)).toMatchObject({ state: 'authorized', nNF: 1, attention: null });
    const row = terminal.store.receipts.receipt(receipt.id)!;
    expect(postsOf(row.idempotency_key).at(-1)!.status).toBe(202);
    expect(
      proxy.log
        .slice(from)
        .filter(emissions)
        .every((e) => e.key === row.idempotency_key),
    ).toBe(true);
    expect(authorizedAtAuthority(company.cnpj, 1)).toEqual([{ number: 1, n: 1 }]);
  });
});
