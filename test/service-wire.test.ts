// What reaches the service that no well-behaved client sends, over bare sockets against the real
// `balcao service` process: requests Node's HTTP parser refuses itself (a control character in
// a header, headers too large, an unknown method, a body that is not valid chunked encoding),
// requests the router refuses (broken percent-encoding, a path segment too long), a request
// line of 20 KB, an HTTP/1.1 request without Host, an expectation other than 100-continue.
// Every 4xx and 5xx carries the error body of docs/api.md, "Errors", with a code whose status
// is the one sent, and an X-Request-Id like every other answer.
//
// And clients too slow to send their request: a body or headers that trickle in, a connection
// that sends nothing. A service with a short request timeout (BALCAO_REQUEST_TIMEOUT_MS) cuts
// them, so their number stays bounded; a slow answer (the authority taking its time) is not cut.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../service/http/errors.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { answerOf, openSocket, rawRequest, type RawAnswer } from './helpers/raw-http.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let token: string;

beforeAll(async () => {
  const dataDir = tempDataDir();
  ({ token } = await createCompany(dataDir));
  service = await startService({ dataDir });
});

afterAll(async () => {
  await service?.stop();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `status` with the contract's body: `{ error: { code, message } }`, the code being `status`'s own. */
function expectContractError(answer: RawAnswer, status: number, code: keyof typeof ERROR_STATUS) {
  const what = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.text}`;
  expect(answer.status, what).toBe(status);
  expect(ERROR_STATUS[code], what).toBe(status);
  expect(answer.headers['content-type'], what).toMatch(/^application\/json; charset=utf-8$/);
  expect(Object.keys(answer.body ?? {}), what).toEqual(['error']);
  expect(answer.body.error, what).toMatchObject({ code, message: expect.any(String) });
  expect(
    Object.keys(answer.body.error).every((k) => ['code', 'message', 'details'].includes(k)),
    what,
  ).toBe(true);
  expect(answer.body.error.message.length, what).toBeGreaterThan(10);
  expect(answer.headers['x-request-id'], what).toMatch(UUID);
}

/** A request with Host and `Connection: close`, `extra` being more header lines (with their CRLFs). */
const request = (requestLine: string, extra = '') => `${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;

describe('requests the HTTP parser refuses', () => {
  it('a control character in a header value → 400 requisicao_invalida', async () => {
    expectContractError(await rawRequest(service.url, request('GET /healthz HTTP/1.1', 'X-Teste: a\x01b\r\n')), 400, 'requisicao_invalida');
  });

  it('headers over 16 KiB → 431 cabecalhos_muito_grandes', async () => {
    expectContractError(await rawRequest(service.url, request('GET /healthz HTTP/1.1', `X-Teste: ${'a'.repeat(20_000)}\r\n`)), 431, 'cabecalhos_muito_grandes');
  });

  it('a request line of 20 KB (the path counts toward the same limit) → 431 cabecalhos_muito_grandes', async () => {
    expectContractError(await rawRequest(service.url, request(`GET /api/v1/${'a'.repeat(20_000)} HTTP/1.1`)), 431, 'cabecalhos_muito_grandes');
  });

  it('an unknown method → 400 requisicao_invalida', async () => {
    expectContractError(await rawRequest(service.url, request('FOO /healthz HTTP/1.1')), 400, 'requisicao_invalida');
  });

  it('a body that is not valid chunked encoding → 400 requisicao_invalida', async () => {
    const answer = await rawRequest(
      service.url,
      request('POST /api/v1/nfce HTTP/1.1', `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n`) +
        'zz\r\n{}\r\n0\r\n\r\n',
    );
    expectContractError(answer, 400, 'requisicao_invalida');
  });
});

describe('requests the router refuses', () => {
  it('broken percent-encoding in the path → 400 requisicao_invalida', async () => {
    for (const path of ['/api/v1/nfce/%E0%A4%A', '/api/v1/%ZZ', '/api/v1/mdfe/%C3%28']) {
      expectContractError(await rawRequest(service.url, request(`GET ${path} HTTP/1.1`, `Authorization: Bearer ${token}\r\n`)), 400, 'requisicao_invalida');
    }
  });

  it('a path segment over 100 characters → 414 uri_muito_longa', async () => {
    const answer = await rawRequest(service.url, request(`GET /api/v1/nfce/${'a'.repeat(300)} HTTP/1.1`, `Authorization: Bearer ${token}\r\n`));
    expectContractError(answer, 414, 'uri_muito_longa');
  });
});

describe('requests Node would answer itself', () => {
  it('HTTP/1.1 without Host → 400 requisicao_invalida naming the header; HTTP/1.0 needs none', async () => {
    const answer = await rawRequest(service.url, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectContractError(answer, 400, 'requisicao_invalida');
    expect(answer.body.error.details).toEqual([{ field: 'Host', message: expect.any(String) }]);
    const old = await rawRequest(service.url, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(old.body).toEqual({ status: 'ok' });
  });

  it('an expectation other than 100-continue is ignored: the request is answered as without it', async () => {
    const body = '{}';
    const answer = await rawRequest(
      service.url,
      request(
        'POST /api/v1/sandbox/autoridade HTTP/1.1',
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: sem-cabecalho\r\n`,
      ) + body,
    );
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ latencia_ms: 0, disponivel: true });
    // Without a token the same request is the contract's 401.
    const anonymous = await rawRequest(
      service.url,
      request('POST /api/v1/sandbox/autoridade HTTP/1.1', `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: sem-cabecalho\r\n`) +
        body,
    );
    expectContractError(anonymous, 401, 'nao_autorizado');
  });
});

describe('slow clients', () => {
  const TIMEOUT_MS = 1_500;
  let slow: ServiceProcess;
  let slowToken: string;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    ({ token: slowToken } = await createCompany(dataDir));
    slow = await startService({ dataDir, env: { BALCAO_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
  });

  afterAll(async () => {
    await slow?.stop();
  });

  /** Writes `first`, then `drip` every 100 ms until the server closes; the answer, read for up to 60 s. */
  async function trickle(first: string, drip: string): Promise<RawAnswer> {
    const socket = await openSocket(slow.url);
    const answer = answerOf(socket, 60_000);
    socket.write(first);
    const timer = setInterval(() => socket.writable && socket.write(drip), 100);
    try {
      return await answer;
    } finally {
      clearInterval(timer);
    }
  }

  it('a body that trickles in is cut after the request timeout: 408 tempo_esgotado, connection closed', async () => {
    const head =
      'POST /api/v1/sandbox/autoridade HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Authorization: Bearer ${slowToken}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"latencia_ms":`;
    const answer = await trickle(head, ' ');
    expectContractError(answer, 408, 'tempo_esgotado');
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  });

  it('headers that trickle in are cut too', async () => {
    const answer = await trickle('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Gota: a\r\n');
    expectContractError(answer, 408, 'tempo_esgotado');
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  });

  it('a connection that sends nothing is closed', async () => {
    const socket = await openSocket(slow.url);
    const answer = await answerOf(socket, 60_000);
    // By the server, after its timeout; not by this test giving up.
    expect(answer.givenUp).toBeUndefined();
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  });

  it('an idle keep-alive connection between two requests is not a slow request: it serves the second one', async () => {
    const socket = await openSocket(slow.url);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    let closed = false;
    socket.once('close', () => (closed = true));
    const get = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    socket.write(get);
    await expect.poll(() => Buffer.concat(received).toString('latin1')).toMatch(/\{"status":"ok"\}$/);
    await new Promise((r) => setTimeout(r, TIMEOUT_MS + 1_000));
    expect(closed).toBe(false);
    expect(
      Buffer.concat(received)
        .toString('latin1')
        .match(/HTTP\/1\.1 /g),
    ).toHaveLength(1);
    socket.write(get);
    await expect
      .poll(
        () =>
          Buffer.concat(received)
            .toString('latin1')
            .match(/HTTP\/1\.1 200 /g)?.length,
      )
      .toBe(2);
    socket.destroy();
  });

  it('a slow answer is not a slow request: an MDF-e whose authority takes longer than the timeout is issued', async () => {
    const client = api(slow.url, slowToken);
    await client.post('/api/v1/sandbox/autoridade', { latencia_ms: TIMEOUT_MS + 1_000 });
    const res = await client.post('/api/v1/mdfe/emitir', sampleMdfeRequest({ nMDF: 1 }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.autorizado).toBe(true);
  });
});
