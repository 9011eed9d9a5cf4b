// Crash recovery of the NFC-e queue over the real service process: SIGKILL while documents are
// queued and in flight, restart, and check that each one reaches a verdict exactly once (no key
// authorized twice, no number with two authorized keys, one webhook event per verdict) and that
// every idempotent retry answers the same. Also the case a crash can only rarely hit by chance:
// the authority decided and the answer was lost; the restart must find it by consultation. And
// the duplicate answer (204) of a key the authority already authorized.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxAuthority } from '../service/authority/sandbox.ts';
import { DEMO_CSC } from '../fiscal/samples.ts';
import { contingencyXml, nfceBody, readDb, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  service = await startService({ dataDir });
});

afterAll(async () => {
  await service?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`esperando: ${what}`);
    await sleep(20);
  }
}

type Row = { id: string; numero: number; chave: string; status: string; protocolo: string | null; attempts: number; signed: number };

const documentsOf = (c: TestCompany): Row[] =>
  readDb(dataDir, (db) =>
    db
      .prepare('SELECT id, numero, chave, status, protocolo, attempts, signed_xml IS NOT NULL AS signed FROM nfce_documents WHERE company_id = ?')
      .all(c.companyId),
  ) as Row[];

const authorityRows = (c: TestCompany) =>
  readDb(dataDir, (db) => db.prepare('SELECT access_key, number, n_prot FROM nfe WHERE cnpj = ?').all(c.cnpj), 'sandbox-authority.sqlite') as {
    access_key: string;
    number: number;
    n_prot: string;
  }[];

const eventsOf = (c: TestCompany) =>
  readDb(dataDir, (db) => db.prepare('SELECT tipo, payload FROM webhook_deliveries WHERE company_id = ?').all(c.companyId)) as {
    tipo: string;
    payload: string;
  }[];

/** The sandbox authority's own file, used directly: a decision the service never hears of. */
async function authorizeBehindTheServicesBack(c: TestCompany, signedXml: string) {
  const authority = new SandboxAuthority({
    file: join(dataDir, 'sandbox-authority.sqlite'),
    settings: () => ({ latencyMs: 0, available: true }),
    clock: () => new Date(),
  });
  try {
    return await authority.authorizeNfe(
      {
        id: c.companyId,
        cnpj: c.cnpj,
        uf: 'SP',
        environment: 'homologacao',
        csc: DEMO_CSC,
        credentials: { privateKeyPem: c.certificate.privateKeyPem, certificatePem: c.certificate.certificatePem },
      },
      signedXml,
    );
  } finally {
    authority.close();
  }
}

/** POSTs with the key until it replays an authorized document; returns that replay. */
async function settledReplay(c: TestCompany, key: string, nNF: number) {
  const end = Date.now() + 60_000;
  for (;;) {
    const res = await c.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'idempotency-key': key } });
    if (res.status === 200) return res;
    expect([202, 409], res.text).toContain(res.status);
    if (Date.now() > end) throw new Error(`a chave ${key} não se resolveu: ${res.text}`);
    await sleep(100);
  }
}

describe('SIGKILL with documents queued and in flight', () => {
  it('after the restart every document reaches its verdict exactly once, and every replay answers the same', async () => {
    const c = await registerCompany(service.url, dataDir);
    // A webhook that never answers: the outbox then records one event per verdict.
    await c.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 200 });

    const N = 30;
    const posts: Promise<unknown>[] = [];
    for (let i = 1; i <= N; i++) {
      posts.push(c.client.post('/api/v1/nfce', nfceBody(i), { headers: { 'idempotency-key': `crash-${i}` } }).catch((err: unknown) => err));
      await sleep(15);
      if (i === 10) {
        // Some authorized, some in flight at the authority (signed and counted), some queued.
        await until('autorizadas e em voo', () => {
          const docs = documentsOf(c);
          return docs.some((d) => d.status === 'autorizado') && docs.some((d) => d.status === 'processando' && d.attempts > 0);
        });
      }
    }
    await until('uma em voo na autoridade', () => documentsOf(c).some((d) => d.status === 'processando' && d.attempts > 0));
    await service.kill();
    await Promise.all(posts);
    const atCrash = documentsOf(c);
    expect(atCrash.some((d) => d.status === 'processando')).toBe(true);
    expect(atCrash.some((d) => d.status === 'autorizado')).toBe(true);

    await service.restart({ hard: true });
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });

    const replays = new Map<number, { id: string; protocolo: string }>();
    for (let i = 1; i <= N; i++) {
      const res = await settledReplay(c, `crash-${i}`, i);
      expect(res.body).toMatchObject({ numero: i, status: 'autorizado', idempotent_replay: true });
      replays.set(i, { id: res.body.id, protocolo: res.body.protocolo });
    }
    // Asked again, each key answers the very same document.
    for (let i = 1; i <= N; i++) {
      const res = await c.client.post('/api/v1/nfce', nfceBody(i), { headers: { 'idempotency-key': `crash-${i}` } });
      expect(res.status).toBe(200);
      expect({ id: res.body.id, protocolo: res.body.protocolo }).toEqual(replays.get(i));
    }

    // Ours: one document per number, all authorized, none left processando.
    const docs = documentsOf(c);
    expect(docs).toHaveLength(N);
    expect(docs.every((d) => d.status === 'autorizado')).toBe(true);
    expect(new Set(docs.map((d) => d.numero)).size).toBe(N);
    // The authority's: one authorization per number and per key, the very ones we recorded.
    const authority = authorityRows(c);
    expect(authority).toHaveLength(N);
    expect(new Set(authority.map((r) => r.number)).size).toBe(N);
    const byKey = new Map(authority.map((r) => [r.access_key, r.n_prot]));
    for (const d of docs) expect(byKey.get(d.chave)).toBe(d.protocolo);
    // One verdict each: exactly one nfce.autorizada event per document.
    const events = eventsOf(c);
    expect(events.every((e) => e.tipo === 'nfce.autorizada')).toBe(true);
    const perDocument = new Map<string, number>();
    for (const e of events) {
      const id = (JSON.parse(e.payload) as { dados: { id: string } }).dados.id;
      perDocument.set(id, (perDocument.get(id) ?? 0) + 1);
    }
    expect(perDocument.size).toBe(N);
    expect([...perDocument.values()].every((n) => n === 1)).toBe(true);
    // And every key settled as authorized.
    const keys = readDb(dataDir, (db) =>
      db.prepare(`SELECT state, count(*) AS n FROM idempotency_keys WHERE company_id = ? AND doc_type = 'nfce' GROUP BY state`).all(c.companyId),
    );
    expect(keys).toEqual([{ state: 'authorized', n: N }]);
  });
});

describe('the authority decided, the answer was lost', () => {
  it('on restart the document is consulted, its authorization recorded, and it is never sent again', async () => {
    const c = await registerCompany(service.url, dataDir);
    await c.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 5_000 });
    const posted = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'resposta-perdida' } });
    expect(posted.status).toBe(202);
    // Signed, committed and on its way: the authority is "thinking" (latency) when we crash.
    const sent = await until('enviada', () => documentsOf(c).find((d) => d.id === posted.body.id && d.attempts > 0 && d.signed));
    expect(sent.status).toBe('processando');
    await service.kill();

    // Meanwhile the authority authorizes what it received; the service never heard the answer.
    const signedXml = readDb(dataDir, (db) => db.prepare('SELECT signed_xml FROM nfce_documents WHERE id = ?').pluck().get(posted.body.id) as string);
    const verdict = await authorizeBehindTheServicesBack(c, signedXml);
    expect(verdict.cStat).toBe('100');

    await service.restart({ hard: true });
    await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
    const doc = await waitFor(c.client, posted.body.id);
    expect(doc).toMatchObject({ status: 'autorizado', protocolo: verdict.nProt, chave: sent.chave });
    expect(authorityRows(c)).toEqual([{ access_key: sent.chave, number: 1, n_prot: verdict.nProt }]);
    expect(eventsOf(c).map((e) => e.tipo)).toEqual(['nfce.autorizada']);
    const replay = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'resposta-perdida' } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: posted.body.id, protocolo: verdict.nProt });
  });
});

describe('a receipt the authority already authorized', () => {
  it('a contingency NFC-e the terminal already transmitted: the authority answers 204, the service consults and records that authorization', async () => {
    const c = await registerCompany(service.url, dataDir);
    const offline = contingencyXml(c, 1);
    const earlier = await authorizeBehindTheServicesBack(c, offline.xml);
    expect(earlier.cStat).toBe('100');

    const posted = await c.client.post('/api/v1/nfce', { xml: offline.xml });
    expect(posted.status).toBe(202);
    const doc = await waitFor(c.client, posted.body.id);
    expect(doc).toMatchObject({ status: 'autorizado', chave: offline.key, protocolo: earlier.nProt, codigo_status: '100' });
    expect(authorityRows(c)).toEqual([{ access_key: offline.key, number: 1, n_prot: earlier.nProt }]);
  });
});
