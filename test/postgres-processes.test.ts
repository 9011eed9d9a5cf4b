// Three `balcao service` processes on one PostgreSQL database, behind a round-robin proxy
// (helpers/round-robin-proxy.ts), with the guarantees of one: the same key posted 50 times at
// once is one document; 600 receipts spread over the three are each authorized exactly once at
// the authority (its own count of what it received, nfe_recepcao); a process SIGKILLed mid-
// load leaves its leased documents to the others, who take them once its lease runs out (they
// consult the authority first), each finished once, no idempotency key left locked, and its row
// in service_processes cleaned; a document changed through two processes at once (an NFC-e
// cancelled twice, an MDF-e closed and cancelled) gets the answers one process gives, and the
// authority hears of it once.
//
// Then a process's life on its own database: a SIGTERM while it starts frees its lease at once;
// a webhook delivery cut by a kill comes back after BALCAO_LEASE_MS; the database away answers
// 503 with Retry-After, and the process carries on when it is back.

import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { cnpjOf, nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { until } from './helpers/nfce-recovery.ts';
import { roundRobinProxy, type RoundRobinProxy } from './helpers/round-robin-proxy.ts';
import { api, createCompany, spawnService, startService, type ServiceProcess } from './helpers/service-process.ts';
import { testStorage, type TestStorage } from './helpers/stores.ts';
import { tcpRelay } from './helpers/tcp-relay.ts';

/** Short, so the test sees a dead process's lease run out (the default is 30 s). */
const LEASE_MS = 3_000;

let storage: TestStorage;
let services: ServiceProcess[];
let proxy: RoundRobinProxy;

/** A service process's id in the database (its `processo` log field), as its leases name it. */
function processIdOf(service: ServiceProcess): string {
  for (const line of service.output) {
    try {
      const entry = JSON.parse(line) as { msg?: string; processo?: string };
      if (entry.msg === 'listening' && entry.processo) return entry.processo;
    } catch {
      // not a log line
    }
  }
  throw new Error('o processo não disse o seu id');
}

beforeAll(async () => {
  storage = await testStorage('postgres');
  const env = { BALCAO_LEASE_MS: String(LEASE_MS), BALCAO_LOG_LEVEL: 'warn' };
  // Started together: they migrate the new database at the same time (one does, under a lock).
  services = await Promise.all([0, 1, 2].map(() => startService({ dataDir: storage.dataDir, database: storage.database, env })));
  proxy = await roundRobinProxy(services.map((s) => s.url));
});

afterAll(async () => {
  await proxy?.close();
  await Promise.all((services ?? []).map((s) => s.stop().catch(() => undefined)));
  await storage?.close();
});

/** The company, registered through the CLI against the shared database, its client through the proxy. */
async function company(): Promise<TestCompany> {
  const c = await registerCompany(proxy.url, storage);
  return { ...c, client: api(proxy.url, c.token) };
}

const keysLocked = (c: TestCompany) =>
  storage.db.value<number>(`SELECT count(*) FROM idempotency_keys WHERE company_id = ? AND state = 'processing'`, c.companyId);
const processando = (c: TestCompany) =>
  storage.db.value<number>(`SELECT count(*) FROM nfce_documents WHERE company_id = ? AND status = 'processando'`, c.companyId);

/**
 * Posts `count` receipts (numbers from `first`), `concurrency` at a time, each with its own key.
 * An answer that leaves the outcome unknown (a cut connection, the balancer's 502, a request
 * timed out on a loaded machine) is asked again with the same key, as a checkout's outbox does,
 * until the service answers for the document: 202, or 409 / 200 when its first call had arrived.
 */
async function postMany(c: TestCompany, first: number, count: number, concurrency: number) {
  const answers = new Map<string, { status: number; id?: string }>();
  let next = 0;
  const post = async (nNF: number, key: string) => {
    const res = await c.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'idempotency-key': key } }).catch(() => ({ status: 0, body: {} }));
    return [200, 202, 409].includes(res.status) && { status: res.status, id: (res.body as { id?: string }).id };
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const nNF = first + next++;
        const key = `venda-${nNF}`;
        answers.set(key, await until(`chave ${key} respondida`, () => post(nNF, key)));
      }
    }),
  );
  return answers;
}

/** What the authority knows of the company: each access key authorized, and how many times it received each. */
async function atTheAuthority(c: TestCompany) {
  const authorized = await storage.authority.rows<{ access_key: string; c_stat: string }>('SELECT access_key, c_stat FROM nfe WHERE cnpj = ?', c.cnpj);
  const received = await storage.authority.rows<{ access_key: string; n: number; answers: string }>(
    `SELECT access_key, count(*) AS n, string_agg(c_stat, ',') AS answers FROM nfe_recepcao WHERE cnpj = ? GROUP BY access_key`,
    c.cnpj,
  );
  return { authorized, received };
}

/** Calls of `operation` the processes made to the authority and got an answer to (their /metrics, summed). */
async function authorityCalls(operation: string): Promise<number> {
  const line = new RegExp(`^balcao_authority_request_duration_seconds_count\\{operation="${operation}",outcome="answered"\\} (\\d+)`, 'm');
  const counts = await Promise.all(services.map(async (s) => Number(line.exec((await api(s.url).get('/metrics')).text)?.[1] ?? 0)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Runs `calls` while the authority answers slowly, so calls sent at once are in the service together. */
async function withSlowAuthority<T>(client: TestCompany['client'], calls: () => Promise<T>): Promise<T> {
  await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 500 });
  try {
    return await calls();
  } finally {
    await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
  }
}

describe('three service processes on one PostgreSQL behind a round-robin proxy', () => {
  it('50 identical concurrent POSTs → one document, one authorization', async () => {
    const c = await company();
    const body = nfceBody(1);
    const before = new Map(proxy.served);
    const answers = await Promise.all(Array.from({ length: 50 }, () => c.client.post('/api/v1/nfce', body, { headers: { 'idempotency-key': 'mesma-venda' } })));
    // Each process answered some of them: the claim raced across processes.
    for (const s of services) expect(proxy.served.get(s.url)! - before.get(s.url)!, s.url).toBeGreaterThan(0);
    // 202 for the one that claimed, 409 while it is processed, 200 replays once it is authorized.
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    for (const r of answers) expect([200, 202, 409], r.text).toContain(r.status);
    const ids = new Set(answers.map((r) => r.body.id as string));
    expect(ids.size).toBe(1);
    const [id] = [...ids];

    await until('autorizada', async () => (await processando(c)) === 0);
    const documents = await storage.db.rows<{ id: string; status: string }>('SELECT id, status FROM nfce_documents WHERE company_id = ?', c.companyId);
    expect(documents).toEqual([{ id, status: 'autorizado' }]);
    const { authorized, received } = await atTheAuthority(c);
    expect(authorized).toHaveLength(1);
    expect(received).toEqual([{ access_key: authorized[0]!.access_key, n: 1, answers: '100' }]);
    expect(await keysLocked(c)).toBe(0);
  });

  // The two heavy ones (hundreds of receipts signed and authorized on a machine that may be busy
  // with much else) are given ten minutes.
  it('600 distinct NFC-e spread over the three → each authorized exactly once at the authority', { timeout: 600_000 }, async () => {
    const c = await company();
    const before = new Map(proxy.served);
    const answers = await postMany(c, 1, 600, 24);
    expect([...answers.values()].filter((a) => a.id === undefined)).toEqual([]);
    for (const s of services) expect(proxy.served.get(s.url)! - before.get(s.url)!, s.url).toBeGreaterThanOrEqual(150);

    await until('todas com veredito', async () => (await processando(c)) === 0, 300_000);
    const statuses = await storage.db.rows<{ status: string; n: number }>(
      'SELECT status, count(*) AS n FROM nfce_documents WHERE company_id = ? GROUP BY status',
      c.companyId,
    );
    expect(statuses).toEqual([{ status: 'autorizado', n: 600 }]);
    const { authorized, received } = await atTheAuthority(c);
    expect(authorized).toHaveLength(600);
    // Each access key received once: no process sent one another had sent (a second send would be a 204 here).
    expect(received).toHaveLength(600);
    expect(received.filter((r) => r.n !== 1 || r.answers !== '100')).toEqual([]);
    const documents = await storage.db.rows<{ chave: string }>('SELECT chave FROM nfce_documents WHERE company_id = ?', c.companyId);
    expect(new Set(authorized.map((a) => a.access_key))).toEqual(new Set(documents.map((d) => d.chave)));
    // Each process did part of the authorizing (its own count, in its /metrics).
    for (const s of services) {
      const metrics = (await api(s.url).get('/metrics')).text;
      const count = Number(/^balcao_authorizations_total\{document="nfce",cstat="100"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
      expect(count, s.url).toBeGreaterThan(0);
    }
    expect(await keysLocked(c)).toBe(0);
  });

  it('the same NFC-e cancelled at once through two processes: one 200, one 422 estado_invalido, one cancellation sent to the authority', async () => {
    const c = await company();
    const posted = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'venda-a-cancelar' } });
    expect(posted.status, posted.text).toBe(202);
    const { id, chave } = await waitFor(c.client, posted.body.id);
    const sentBefore = await authorityCalls('registerNfeEvent');

    const cancel = (s: ServiceProcess) => api(s.url, c.token).post(`/api/v1/nfce/${id}/cancelar`, { justificativa: 'Cliente desistiu da compra no caixa' });
    const answers = await withSlowAuthority(c.client, () => Promise.all([cancel(services[0]!), cancel(services[1]!)]));

    expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join('\n')).toEqual([200, 422]);
    expect(answers.find((a) => a.status === 200)!.body.status).toBe('cancelado');
    expect(answers.find((a) => a.status === 422)!.body.error.code).toBe('estado_invalido');
    expect(await authorityCalls('registerNfeEvent')).toBe(sentBefore + 1);
    expect(await storage.authority.rows('SELECT tp_evento FROM nfe_event WHERE access_key = ?', chave)).toEqual([{ tp_evento: '110111' }]);
  });

  it('an MDF-e closed through one process while another cancels it: one 200, one 422 estado_invalido, one event sent to the authority', async () => {
    const { token } = await createCompany(storage, { cnpj: cnpjOf('765432100001'), uf: 'SP', nome: 'Transportadora Concorrente' });
    const client = api(proxy.url, token);
    const issued = await client.post('/api/v1/mdfe/emitir', sampleMdfeRequest({ nMDF: 1, placa: 'PRC0001' }));
    expect(issued.status, issued.text).toBe(201);
    expect(issued.body.situacao).toBe('autorizado');
    const id = issued.body.mdfe_id as string;
    const sentBefore = await authorityCalls('registerMdfeEvent');

    const [closed, cancelled] = await withSlowAuthority(client, () =>
      Promise.all([
        api(services[0]!.url, token).post(`/api/v1/mdfe/${id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' }),
        api(services[1]!.url, token).post(`/api/v1/mdfe/${id}/cancelar`, { justificativa: 'Viagem desistida pelo contratante' }),
      ]),
    );

    expect([closed.status, cancelled.status].sort(), `${closed.text}\n${cancelled.text}`).toEqual([200, 422]);
    const [won, lost] = closed.status === 200 ? [closed, cancelled] : [cancelled, closed];
    expect(lost.body.error.code).toBe('estado_invalido');
    expect((await client.get(`/api/v1/mdfe/${id}`)).body.situacao).toBe(won.body.situacao);
    expect(await authorityCalls('registerMdfeEvent')).toBe(sentBefore + 1);
    expect(await storage.authority.rows('SELECT tp_evento FROM mdfe_event WHERE access_key = ?', issued.body.chave)).toHaveLength(1);
  });

  it(
    'a process SIGKILLed mid-load: its leased documents are finished by the others after its lease runs out, each once, no key left locked',
    { timeout: 600_000 },
    async () => {
      const c = await company();
      // The authority takes its time: documents stay leased, in flight, when the process dies.
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 400 });
      const victim = services[2]!;
      const victimId = processIdOf(victim);
      const load = postMany(c, 1, 300, 12);

      await until('o processo com documentos em mãos', async () => {
        const n = await storage.db.value<number>(
          `SELECT count(*) FROM nfce_documents WHERE company_id = ? AND status = 'processando' AND leased_by = ?`,
          c.companyId,
          victimId,
        );
        return n >= 4;
      });
      // The three stand still while the victim dies and what it held is read: nothing is taken
      // meanwhile, however long the reading takes.
      const survivors = services.filter((s) => s !== victim);
      for (const s of services) process.kill(s.pid, 'SIGSTOP');
      await victim.kill();
      proxy.remove(victim.url);
      const [dead] = await storage.db.rows<{ held: string; heartbeat_ms: number }>(
        `SELECT (SELECT string_agg(id, ',') FROM nfce_documents WHERE status = 'processando' AND leased_by = p.id) AS held,
              (extract(epoch FROM p.heartbeat_at) * 1000)::float8 AS heartbeat_ms
         FROM service_processes p WHERE p.id = ?`,
        victimId,
      );
      // The survivors' leases as fresh as when they were stopped, however long that was: neither
      // takes what the other has in hand when they go on.
      await storage.db.rows(
        `UPDATE service_processes SET heartbeat_at = now() WHERE id = ANY(string_to_array(?, ',')) RETURNING id`,
        survivors.map(processIdOf).join(','),
      );
      for (const s of survivors) process.kill(s.pid, 'SIGCONT');
      const held = dead!.held.split(',');
      expect(held.length).toBeGreaterThan(0);

      // Requests the dead process was answering were unknown to their client (502, a cut
      // connection): asked again with the same key, they found their document or made it.
      const answers = await load;
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });

      await until('todas com veredito', async () => (await processando(c)) === 0, 300_000);
      // What it held was finished by the survivors, once its lease had run out.
      const finished = await storage.db.rows<{ id: string; status: string; leased_by: string | null; updated_at: string }>(
        `SELECT id, status, leased_by, updated_at FROM nfce_documents WHERE id = ANY(string_to_array(?, ','))`,
        held.join(','),
      );
      expect(finished.map((d) => d.status)).toEqual(held.map(() => 'autorizado'));
      expect(finished.every((d) => d.leased_by === null)).toBe(true);
      for (const d of finished) expect(Date.parse(d.updated_at), d.id).toBeGreaterThanOrEqual(Math.floor(dead!.heartbeat_ms) + LEASE_MS);

      // One document per key, each authorized once, each received once by the authority.
      const documents = await storage.db.rows<{ id: string; chave: string; status: string }>(
        'SELECT id, chave, status FROM nfce_documents WHERE company_id = ?',
        c.companyId,
      );
      expect(documents).toHaveLength(300);
      expect(documents.every((d) => d.status === 'autorizado')).toBe(true);
      for (const [key, answer] of answers)
        expect(
          documents.some((d) => d.id === answer.id),
          key,
        ).toBe(true);
      const { authorized, received } = await atTheAuthority(c);
      expect(authorized).toHaveLength(300);
      expect(received.filter((r) => r.n !== 1)).toEqual([]);
      expect(received).toHaveLength(300);
      expect(await keysLocked(c)).toBe(0);
      const keys = await storage.db.value<number>(`SELECT count(*) FROM idempotency_keys WHERE company_id = ? AND state = 'authorized'`, c.companyId);
      expect(keys).toBe(300);
      // The dead process's row is cleaned by the living ones once its lease has run out.
      await until(
        'a linha do processo morto removida',
        async () => (await storage.db.value<number>('SELECT count(*) FROM service_processes WHERE id = ?', victimId)) === 0,
      );
    },
  );
});

describe("a service process's life on PostgreSQL: its start, a kill, its database away", () => {
  let own: TestStorage;
  const env = { BALCAO_LEASE_MS: String(LEASE_MS), BALCAO_LOG_LEVEL: 'warn', BALCAO_WEBHOOK_BACKOFF_MS: '200' };
  // Before the first process has migrated the new database there is no table yet: no rows.
  const processRows = () => own.db.rows<{ id: string; pid: number }>('SELECT id, pid FROM service_processes').catch(() => []);

  beforeAll(async () => {
    own = await testStorage('postgres');
  });
  afterAll(async () => {
    await own?.close();
  });

  it('SIGTERM while it starts: it lets go of its lease at once and exits cleanly', async () => {
    const starting = spawnService({ dataDir: own.dataDir, database: own.database, env });
    // Its row appears once it has registered, before it listens: the signal comes then.
    const row = await until('o processo registrado', async () => (await processRows()).find((r) => r.pid === starting.pid), 60_000);
    starting.signal('SIGTERM');
    expect(await starting.exited, starting.output.join('\n')).toEqual({ code: 0, signal: null });
    expect(await own.db.value<number>('SELECT count(*) FROM service_processes WHERE id = ?', row.id)).toBe(0);
  });

  it('a webhook delivery cut by a kill is retried by another process once BALCAO_LEASE_MS has run out, not a fixed minute later', async () => {
    const hanging: ServerResponse[] = [];
    const arrivals: number[] = [];
    let hang = true;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push(Date.now());
        if (hang) hanging.push(res);
        else res.writeHead(204).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    // Two processes; the second stands still until the first has died, so the delivery is the first's.
    const [victim, survivor] = await Promise.all([0, 1].map(() => startService({ dataDir: own.dataDir, database: own.database, env })));
    process.kill(survivor!.pid, 'SIGSTOP');
    try {
      const c = await registerCompany(victim!.url, own);
      expect((await c.client.put('/api/v1/webhook', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/eventos` })).status).toBe(200);
      const posted = await c.client.post('/api/v1/nfce', nfceBody(1));
      expect(posted.status, posted.text).toBe(202);
      // The event's delivery is under way: the receiver holds it. The first process's last
      // heartbeat, read while it stands still too, then its death.
      await until('a entrega em curso', () => arrivals.length === 1);
      process.kill(victim!.pid, 'SIGSTOP');
      const lastHeartbeat = await own.db.value<number>(
        `SELECT (extract(epoch FROM heartbeat_at) * 1000)::float8 FROM service_processes WHERE pid = ?`,
        victim!.pid,
      );
      hang = false;
      await victim!.kill();
      process.kill(survivor!.pid, 'SIGCONT');
      // Well before the minute a delivery used to stay leased.
      await until('a entrega retomada', () => arrivals.length === 2, 40_000);
      // Not before the dead process's lease ran out.
      expect(arrivals[1]!).toBeGreaterThanOrEqual(Math.floor(lastHeartbeat) + LEASE_MS);
      await until(
        'entregue',
        async () => (await own.db.value<string | null>('SELECT delivered_at FROM webhook_deliveries WHERE company_id = ?', c.companyId)) !== null,
      );
    } finally {
      for (const res of hanging) res.destroy();
      receiver.close();
      process.kill(survivor!.pid, 'SIGCONT'); // still stopped if the test failed before
      await Promise.all([survivor!.stop(), victim!.kill()]);
    }
  });

  it('the database away: 503 servico_indisponivel with Retry-After, and the same process serves again once it is back', async () => {
    const target = new URL(own.database!);
    const relay = await tcpRelay({ host: target.hostname, port: Number(target.port) });
    const throughRelay = Object.assign(new URL(target), { port: String(relay.port) }).toString();
    const service = await startService({ dataDir: own.dataDir, database: throughRelay, env });
    try {
      const c = await registerCompany(service.url, own);
      expect((await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'antes' } })).status).toBe(202);

      await relay.cut();
      for (const request of [
        () => c.client.post('/api/v1/nfce', nfceBody(2), { headers: { 'idempotency-key': 'durante' } }),
        () => c.client.get('/api/v1/mdfe'),
      ]) {
        const res = await request();
        expect(res.status, res.text).toBe(503);
        expect(res.body.error.code).toBe('servico_indisponivel');
        expect(res.body.error.message).toMatch(/banco de dados/);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }

      await relay.restore();
      const retried = await until('o serviço de volta', async () => {
        const res = await c.client.post('/api/v1/nfce', nfceBody(2), { headers: { 'idempotency-key': 'durante' } });
        return res.status !== 503 && res;
      });
      expect(retried.status, retried.text).toBe(202);
      await waitFor(c.client, retried.body.id);
    } finally {
      await service.stop();
      await relay.close();
    }
  });
});
