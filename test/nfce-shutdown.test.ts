// Graceful stop of the real service process with NFC-e documents queued and in flight: on SIGTERM
// the listener closes at once (a new connection is refused while the process still finishes what
// it has at the authority), the documents in flight get their verdict recorded, the queued ones
// are left untouched for the next start, and the process exits 0 without draining the queue.
// After the restart every acknowledged document reaches its verdict exactly once and its key
// replays it.

import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEachSettledOnce, inFlight, queueRows, unsent, until, type Acknowledged, type Posted } from './helpers/nfce-recovery.ts';
import { nfceBody, registerCompany } from './helpers/nfce.ts';
import { startService, type Exit, type ServiceProcess } from './helpers/service-process.ts';
import { testStorage, type TestStorage } from './helpers/stores.ts';

// Two documents at the authority at a time: once both slots are taken, nothing else is taken
// until one is answered, so the queue holds still while the test looks and signals.
const CONCURRENCY = 2;
// Long enough for the test to signal and probe while the two are still waiting for their answer.
const LATENCY_MS = 2_000;

let service: ServiceProcess;
let storage: TestStorage;

beforeAll(async () => {
  storage = await testStorage('sqlite');
  service = await startService({ dataDir: storage.dataDir, env: { BALCAO_NFCE_CONCURRENCY: String(CONCURRENCY) } });
});

afterAll(async () => {
  await service?.stop();
});

/** Resolves once a TCP connection to the port is refused: the listener is closed. */
async function listenerClosed(port: number): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return;
    if (Date.now() > end) throw new Error('a porta continuou aceitando conexões após o SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A POST on a connection of its own (no pooled keep-alive socket): its status, or the connection error code. */
function postOnNewConnection(url: string, token: string, body: unknown, key: string): Promise<number | string> {
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = httpRequest(new URL('/api/v1/nfce', url), {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'idempotency-key': key },
    });
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(text);
  });
}

describe('SIGTERM with documents queued and in flight', () => {
  it('refuses new connections, finishes what is at the authority, exits 0 leaving the queue for the restart, which settles each document exactly once', async () => {
    const c = await registerCompany(service.url, storage);
    await c.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: LATENCY_MS });

    const posted: Posted[] = Array.from({ length: 8 }, (_, i) => ({ key: `sigterm-${i + 1}`, nNF: i + 1 }));
    const acknowledged = new Map<string, Acknowledged>();
    for (const { key, nNF } of posted) {
      const res = await c.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'idempotency-key': key } });
      expect(res.status).toBe(202);
      acknowledged.set(key, { id: res.body.id, chave: res.body.chave });
    }
    const atSignal = await until('as duas vagas em voo', async () => {
      const rows = await queueRows(storage, c);
      return inFlight(rows).length === CONCURRENCY && rows;
    });
    const sentBefore = inFlight(atSignal).map((d) => d.id);
    const queuedBefore = unsent(atSignal).map((d) => d.id);
    expect(queuedBefore).toHaveLength(posted.length - CONCURRENCY);

    let exit: Exit | undefined;
    const exited = service.stop(30_000).then((e) => (exit = e));
    await listenerClosed(service.port);
    // Work offered now is refused at the door, while the process is still finishing its own.
    const late = await postOnNewConnection(service.url, c.token, nfceBody(99), 'depois-do-sigterm');
    expect(late).toBe('ECONNREFUSED');
    expect(exit, 'ainda encerrando').toBeUndefined();

    expect(await exited).toEqual({ code: 0, signal: null });
    expect(service.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    const atExit = await queueRows(storage, c);
    // What was at the authority was answered and recorded before the exit...
    for (const id of sentBefore) expect(atExit.find((d) => d.id === id)?.status, id).toBe('autorizado');
    // ...and nothing was taken from the queue after the signal: it was not drained, only stopped.
    expect(
      unsent(atExit)
        .map((d) => d.id)
        .sort(),
    ).toEqual([...queuedBefore].sort());
    expect(atExit).toHaveLength(posted.length);

    console.log('LOG', service.output.filter((l) => /"level":(40|50|60)/.test(l) || /stopp/.test(l)).join('\n'));
    await service.restart();
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
    await expectEachSettledOnce(storage, c, posted, acknowledged);
    // The refused POST left nothing behind.
    expect((await queueRows(storage, c)).some((d) => d.numero === 99)).toBe(false);
  });
});
