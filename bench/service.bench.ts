// The issuance service as a client sees it: the real `balcao service` process (fresh data
// directory, sandbox authority answering at once) driven over loopback with autocannon.
//
// - NFC-e POST throughput and latency (p50, p99): every request a different number, so every one
//   is a new receipt (validated, key computed, claimed and stored in one commit). The queue
//   works at the same time in the same process, as it would in a store.
// - POST-to-autorizado throughput: N receipts posted at once, timed until the last is authorized
//   (built, signed, committed, checked and authorized by the sandbox authority, verdict committed).
// - The same POST-to-autorizado with the sandbox over the wire (`--sandbox-wire`): each receipt
//   goes through the SEFAZ connector (enviNFe validated, SOAP, HTTPS with mutual TLS) to the SEFAZ
//   simulator (envelope, schema, the same rule book) and back; and its ratio to in-process.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sampleNfceRequest } from '../fiscal/samples.ts';
import { api, createCompany, startService, tempDataDir, type Transport } from '../test/helpers/service-process.ts';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Post = (serie: number, options: { amount?: number; duration?: number; connections: number }) => Promise<Result>;

/** A fresh service (sandbox, in-process or over the wire) with one company, and how to drive it. */
async function benchService(transport: Transport) {
  const dataDir = tempDataDir('balcao-bench-');
  const service = await startService({ dataDir, transport, env: { BALCAO_LOG_LEVEL: 'warn' } });
  const { token, companyId } = await createCompany(dataDir, { 'csc-id': '000001', csc: 'CSC-DE-TESTE-123456' });
  await api(service.url, token).post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
  const db = new Database(join(dataDir, 'service.sqlite'), { readonly: true });
  const count = db.prepare('SELECT count(*) FROM nfce_documents WHERE company_id = ? AND serie = ? AND status = ?').pluck();
  const pending = db.prepare(`SELECT count(*) FROM nfce_documents WHERE status = 'processando'`).pluck();
  // Polls an indexed count (the queue's own partial index), cheap next to the work measured.
  const drain = async () => {
    while ((pending.get() as number) > 0) await sleep(10);
  };
  // Each series has its own numbering: warm-up 3, pipeline 2, throughput 1.
  const post: Post = (serie, options) => {
    let nNF = 0;
    return autocannon({
      url: service.url,
      ...options,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/nfce',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: JSON.stringify(sampleNfceRequest({ nNF: ++nNF, serie })) }),
        },
      ],
    });
  };
  /** Warm-up, then PIPELINE_DOCS posted at once and timed until the last is authorized: docs/s. */
  const pipelineRate = async (): Promise<number> => {
    // Warm-up: JIT, prepared statements, the issuer cache, the authority's schemas (and, over
    // the wire, the simulator, the TLS sessions and the connection pool).
    await post(3, { amount: 300, connections: 8 });
    await drain();
    const t0 = performance.now();
    const pipeline = await post(2, { amount: PIPELINE_DOCS, connections: 8 });
    await drain();
    const seconds = (performance.now() - t0) / 1000;
    const authorized = count.get(companyId, 2, 'autorizado') as number;
    if (pipeline.non2xx || authorized !== PIPELINE_DOCS) throw new Error(`bench (${transport}): ${authorized} de ${PIPELINE_DOCS} NFC-e autorizadas`);
    return PIPELINE_DOCS / seconds;
  };
  const stop = async () => {
    db.close();
    await service.stop(60_000);
  };
  return { post, drain, pipelineRate, stop };
}

export const suite: BenchSuite = {
  name: 'service',
  async run(): Promise<BenchFigure[]> {
    const local = await benchService('in-process');
    let inProcess: number;
    let accepted: number;
    let burst: Result;
    let backlogSeconds: number;
    try {
      inProcess = await local.pipelineRate();
      burst = await local.post(1, { duration: POST_SECONDS, connections: CONNECTIONS });
      if (burst.non2xx || burst.errors || burst.timeouts) {
        throw new Error(`POST falhou no bench: ${burst.non2xx} não-2xx, ${burst.errors} erros, ${burst.timeouts} timeouts`);
      }
      accepted = burst.requests.total;
      const backlogStart = performance.now();
      await local.drain();
      backlogSeconds = (performance.now() - backlogStart) / 1000;
    } finally {
      await local.stop();
    }

    const wire = await benchService('wire');
    let overTheWire: number;
    try {
      overTheWire = await wire.pipelineRate();
    } finally {
      await wire.stop();
    }

    return [
      { name: `NFC-e POST throughput (${CONNECTIONS} connections)`, value: accepted / burst.duration, unit: 'req/s', target: { kind: 'min', value: 1000 } },
      { name: 'NFC-e POST latency p50', value: burst.latency.p50, unit: 'ms' },
      { name: 'NFC-e POST latency p99', value: burst.latency.p99, unit: 'ms', target: { kind: 'max', value: 50 } },
      { name: `NFC-e POST to autorizado, ${PIPELINE_DOCS} docs`, value: inProcess, unit: 'docs/s', target: { kind: 'min', value: 200 } },
      { name: `NFC-e queue drain after the POST burst (${accepted} docs)`, value: accepted / (burst.duration + backlogSeconds), unit: 'docs/s' },
      { name: `NFC-e POST to autorizado over the wire, ${PIPELINE_DOCS} docs`, value: overTheWire, unit: 'docs/s' },
      { name: 'NFC-e POST to autorizado, over the wire / in-process', value: overTheWire / inProcess, unit: 'ratio', target: { kind: 'min', value: 0.5 } },
    ];
  },
};
