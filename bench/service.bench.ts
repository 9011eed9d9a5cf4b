// The issuance service as a client sees it: real `balcao service` processes (fresh data, sandbox
// authority answering at once) driven over loopback with autocannon.
//
// - NFC-e POST throughput and latency (p50, p99): every request a different number, so every one
//   is a new receipt (validated, key computed, claimed and stored in one commit). The queue
//   works at the same time in the same process, as it would in a store.
// - POST-to-autorizado throughput: N receipts posted at once, timed until the last is authorized
//   (built, signed, committed, checked and authorized by the sandbox authority, verdict committed).
// - The same POST-to-autorizado with the sandbox over the wire (`--sandbox-wire`): each receipt
//   goes through the SEFAZ connector (enviNFe validated, SOAP, HTTPS with mutual TLS) to the SEFAZ
//   simulator (envelope, schema, the same rule book) and back; and its ratio to in-process.
// - Both figures on PostgreSQL (a throwaway cluster with durable commits, fsync and
//   synchronous_commit on, as SQLite's synchronous=FULL) with 1, 2 and 3 service processes on
//   the one database, each driven by its own autocannon (an even spread, as a balancer gives,
//   without a proxy in the way); against SQLite, and 3 processes against 1.
// - POST-to-autorizado on PostgreSQL with 1 and 3 processes when the authority takes
//   AUTHORITY_LATENCY_MS to answer, as SEFAZ does: a process keeps BALCAO_NFCE_CONCURRENCY
//   documents in flight, so there the processes add up until the machine's CPU is the limit.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sampleNfceRequest } from '../fiscal/samples.ts';
import { createDatabase, startPostgres, type PostgresServer } from '../test/helpers/postgres.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess, type Transport } from '../test/helpers/service-process.ts';
import type { BenchFigure, BenchSuite } from './types.ts';

type Histogram = { p50: number; p99: number; average: number; max: number };
type Result = { requests: Histogram & { total: number }; latency: Histogram; duration: number; non2xx: number; errors: number; timeouts: number };
type Request = { method: string; path: string; headers: Record<string, string>; setupRequest: (req: { body?: string }) => object };
type Options = { url: string; connections: number; duration?: number; amount?: number; requests: Request[] };
// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Options) => Promise<Result>;

const POST_SECONDS = 10;
const CONNECTIONS = 16;
const PIPELINE_DOCS = 1000;
/** How long the authority takes in the figures of a slow authority (SEFAZ answers in tenths of a second). */
const AUTHORITY_LATENCY_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Store = 'sqlite' | 'postgres';
type Deployment = {
  store: Store;
  processes: number;
  transport: Transport;
  /** The sandbox authority's answer time (0: at once). */
  latencyMs?: number;
  /** Also the POST burst (default); without, POST-to-autorizado only. */
  burst?: boolean;
};

/** How the bench reads the service's database: counts only, cheap next to the work measured. */
type Counter = { processando(): Promise<number>; authorized(companyId: string, serie: number): Promise<number>; close(): Promise<void> };

function sqliteCounter(dataDir: string): Counter {
  const db = new Database(join(dataDir, 'service.sqlite'), { readonly: true });
  const count = db.prepare('SELECT count(*) FROM nfce_documents WHERE company_id = ? AND serie = ? AND status = ?').pluck();
  // The queue's own partial index.
  const pending = db.prepare(`SELECT count(*) FROM nfce_documents WHERE status = 'processando'`).pluck();
  return {
    processando: async () => pending.get() as number,
    authorized: async (companyId, serie) => count.get(companyId, serie, 'autorizado') as number,
    close: async () => void db.close(),
  };
}

function postgresCounter(url: string): Counter {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const value = async (sql: string, params: unknown[] = []) =>
    Number((await pool.query<unknown[]>({ text: sql, values: params, rowMode: 'array' })).rows[0]![0]);
  return {
    processando: () => value(`SELECT count(*) FROM nfce_documents WHERE status = 'processando'`),
    authorized: (companyId, serie) =>
      value(`SELECT count(*) FROM nfce_documents WHERE company_id = $1 AND serie = $2 AND status = 'autorizado'`, [companyId, serie]),
    close: () => pool.end(),
  };
}

type Measured = { burst?: Result; postRate: number; pipelineRate: number; drainRate: number };

/**
 * A fresh deployment (its processes on one data folder or one database) with one company; warm-up,
 * then PIPELINE_DOCS posted at once and timed until the last is authorized, then a POST burst of
 * POST_SECONDS and the time its backlog takes to drain.
 */
async function measure({ store, processes, transport, latencyMs = 0, burst = true }: Deployment, postgres: PostgresServer | undefined): Promise<Measured> {
  const dataDir = tempDataDir('balcao-bench-');
  const database = store === 'postgres' ? await createDatabase(postgres!.url, 'balcao_bench') : undefined;
  const data = { dataDir, database };
  const env = { BALCAO_LOG_LEVEL: 'warn' };
  const label = `${store}, ${processes} processo(s), ${transport}`;
  // The first process creates (and migrates) the database; the others join it.
  const services: ServiceProcess[] = [await startService({ ...data, transport, env })];
  services.push(...(await Promise.all(Array.from({ length: processes - 1 }, () => startService({ ...data, transport, env })))));
  const { token, companyId } = await createCompany(data, { 'csc-id': '000001', csc: 'CSC-DE-TESTE-123456' });
  await api(services[0]!.url, token).post('/api/v1/sandbox/autoridade', { latencia_ms: latencyMs });
  const counter = store === 'sqlite' ? sqliteCounter(dataDir) : postgresCounter(database!);
  const drain = async () => {
    while ((await counter.processando()) > 0) await sleep(10);
  };
  // Each process gets its share of the connections and requests, and its own series (numbers
  // are per series): series = base + process index.
  const share = (total: number, i: number) => Math.floor(total / processes) + (i < total % processes ? 1 : 0);
  const post = async (serieBase: number, options: { amount?: number; duration?: number; connections: number }) => {
    const results = await Promise.all(
      services.map((service, i) => {
        let nNF = 0;
        return autocannon({
          url: service.url,
          connections: Math.max(1, share(options.connections, i)),
          ...(options.amount !== undefined && { amount: share(options.amount, i) }),
          ...(options.duration !== undefined && { duration: options.duration }),
          requests: [
            {
              method: 'POST',
              path: '/api/v1/nfce',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              setupRequest: (req) => ({ ...req, body: JSON.stringify(sampleNfceRequest({ nNF: ++nNF, serie: serieBase + i })) }),
            },
          ],
        });
      }),
    );
    const failed = results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
    if (failed) throw new Error(`bench (${label}): ${failed} POST falharam`);
    return results;
  };
  try {
    // Warm-up: JIT, prepared statements, the issuer cache, the authority's schemas (and, over
    // the wire, the simulator, the TLS sessions and the connection pool).
    await post(300, { amount: 300, connections: 8 });
    await drain();
    const t0 = performance.now();
    await post(200, { amount: PIPELINE_DOCS, connections: 8 });
    await drain();
    const pipelineRate = PIPELINE_DOCS / ((performance.now() - t0) / 1000);
    let authorized = 0;
    for (let i = 0; i < processes; i++) authorized += await counter.authorized(companyId, 200 + i);
    if (authorized !== PIPELINE_DOCS) throw new Error(`bench (${label}): ${authorized} de ${PIPELINE_DOCS} NFC-e autorizadas`);
    if (!burst) return { postRate: NaN, pipelineRate, drainRate: NaN };

    const bursts = await post(100, { duration: POST_SECONDS, connections: CONNECTIONS });
    const accepted = bursts.reduce((n, r) => n + r.requests.total, 0);
    const seconds = Math.max(...bursts.map((r) => r.duration));
    const backlogStart = performance.now();
    await drain();
    const backlogSeconds = (performance.now() - backlogStart) / 1000;
    return { burst: bursts[0], postRate: accepted / seconds, pipelineRate, drainRate: accepted / (seconds + backlogSeconds) };
  } finally {
    await counter.close();
    await Promise.all(services.map((s) => s.stop(60_000)));
  }
}

export const suite: BenchSuite = {
  name: 'service',
  async run(): Promise<BenchFigure[]> {
    const sqlite = await measure({ store: 'sqlite', processes: 1, transport: 'in-process' }, undefined);
    const wire = await measure({ store: 'sqlite', processes: 1, transport: 'wire' }, undefined);
    const postgres = await startPostgres({ durable: true });
    const onPostgres: Measured[] = [];
    const slowAuthority: Measured[] = [];
    try {
      for (const processes of [1, 2, 3]) onPostgres.push(await measure({ store: 'postgres', processes, transport: 'in-process' }, postgres));
      for (const processes of [1, 3]) {
        slowAuthority.push(await measure({ store: 'postgres', processes, transport: 'in-process', latencyMs: AUTHORITY_LATENCY_MS, burst: false }, postgres));
      }
    } finally {
      await postgres.stop();
    }
    const [pg1, , pg3] = onPostgres as [Measured, Measured, Measured];
    const [slow1, slow3] = slowAuthority as [Measured, Measured];

    return [
      { name: `NFC-e POST throughput (${CONNECTIONS} connections)`, value: sqlite.postRate, unit: 'req/s', target: { kind: 'min', value: 1000 } },
      { name: 'NFC-e POST latency p50', value: sqlite.burst!.latency.p50, unit: 'ms' },
      { name: 'NFC-e POST latency p99', value: sqlite.burst!.latency.p99, unit: 'ms', target: { kind: 'max', value: 50 } },
      { name: `NFC-e POST to autorizado, ${PIPELINE_DOCS} docs`, value: sqlite.pipelineRate, unit: 'docs/s', target: { kind: 'min', value: 200 } },
      { name: 'NFC-e queue drain after the POST burst', value: sqlite.drainRate, unit: 'docs/s' },
      { name: `NFC-e POST to autorizado over the wire, ${PIPELINE_DOCS} docs`, value: wire.pipelineRate, unit: 'docs/s' },
      {
        name: 'NFC-e POST to autorizado, over the wire / in-process',
        value: wire.pipelineRate / sqlite.pipelineRate,
        unit: 'ratio',
        target: { kind: 'min', value: 0.5 },
      },
      ...onPostgres.flatMap((m, i) => [
        { name: `PostgreSQL, ${i + 1} process(es): NFC-e POST throughput`, value: m.postRate, unit: 'req/s' },
        { name: `PostgreSQL, ${i + 1} process(es): NFC-e POST latency p99`, value: m.burst!.latency.p99, unit: 'ms' },
        { name: `PostgreSQL, ${i + 1} process(es): NFC-e POST to autorizado`, value: m.pipelineRate, unit: 'docs/s' },
        { name: `PostgreSQL, ${i + 1} process(es): queue drain after the POST burst`, value: m.drainRate, unit: 'docs/s' },
      ]),
      {
        name: 'PostgreSQL 1 process / SQLite: NFC-e POST throughput',
        value: pg1.postRate / sqlite.postRate,
        unit: 'ratio',
        target: { kind: 'min', value: 0.7 },
      },
      {
        name: 'PostgreSQL 1 process / SQLite: NFC-e POST to autorizado',
        value: pg1.pipelineRate / sqlite.pipelineRate,
        unit: 'ratio',
        target: { kind: 'min', value: 0.7 },
      },
      { name: 'PostgreSQL 3 processes / 1: NFC-e POST throughput', value: pg3.postRate / pg1.postRate, unit: 'ratio', target: { kind: 'min', value: 1.0 } },
      {
        name: 'PostgreSQL 3 processes / 1: NFC-e POST to autorizado',
        value: pg3.pipelineRate / pg1.pipelineRate,
        unit: 'ratio',
        target: { kind: 'min', value: 1.0 },
      },
      { name: `PostgreSQL, 1 process, authority at ${AUTHORITY_LATENCY_MS} ms: POST to autorizado`, value: slow1.pipelineRate, unit: 'docs/s' },
      { name: `PostgreSQL, 3 processes, authority at ${AUTHORITY_LATENCY_MS} ms: POST to autorizado`, value: slow3.pipelineRate, unit: 'docs/s' },
      {
        name: `PostgreSQL 3 processes / 1, authority at ${AUTHORITY_LATENCY_MS} ms: POST to autorizado`,
        value: slow3.pipelineRate / slow1.pipelineRate,
        unit: 'ratio',
      },
    ];
  },
};
