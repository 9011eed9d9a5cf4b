// Terminal core: how long "finish sale" takes to be on disk (the cashier waits for it), and how
// fast a queue of receipts built up while the service was away drains once it is back.
//
// - finish-sale-to-commit: the finish transaction alone (number, request JSON, receipt, outbox
//   entry, fsync of the WAL with synchronous=FULL), for sales of 1–5 items, on the real disk
//   under the system's temporary folder. Target p99 < 10 ms.
// - drain: 1,000 receipts queued with the worker stopped (the service "away"), then the worker
//   started against the real `balcao service` process (sandbox authority latency 0); time until
//   the last receipt is authorized. Target ≥ 100 receipts/s. Printed beside it: the service's
//   own pace for the same work (serviceCeiling), since the service does most of the work.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IssuanceClient } from '../electron/core/api-client.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { sampleNfceRequest } from '../fiscal/samples.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { api, createCompany, startService, tempDataDir } from '../test/helpers/service-process.ts';
import { percentile, type BenchFigure, type BenchSuite } from './types.ts';

const FINISHES = 1000;
const DRAIN = 1000;
const PRODUCTS = ['1001', '1002', '1003', '1004', '1005', '1006', '1007', '1008', '1009', '1010'];

async function prepareSale(terminal: Terminal, n: number): Promise<string> {
  let sale = await terminal.openSale();
  for (let i = 0; i < 1 + (n % 5); i++) {
    sale = await terminal.addItem(sale.id, { code: PRODUCTS[(n + i * 3) % PRODUCTS.length]!, quantity: String(1 + (i % 2)) });
  }
  await terminal.addPayment(sale.id, { tPag: '01', amountCents: Math.ceil(sale.totalCents / 1000) * 1000 });
  return sale.id;
}

async function finishLatency(): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-terminal-'));
  const terminal = await createTerminal({ dataDir: dir, token: 'bench', series: 1, startWorker: false });
  await terminal.openCashSession({ floatCents: 0, operator: 'bench' }); // no sale finishes without an open till
  try {
    terminal.seedDemoCatalog();
    for (let i = 0; i < 50; i++) terminal.finishSaleNow(await prepareSale(terminal, i)); // warm-up
    const times: number[] = [];
    for (let i = 0; i < FINISHES; i++) {
      const id = await prepareSale(terminal, i);
      const t0 = process.hrtime.bigint();
      terminal.finishSaleNow(id);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return times.sort((a, b) => a - b);
  } finally {
    await terminal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The service's own pace for similar work, measured just before on the same service: a bare
 * client posting 1,000 receipts two at a time, then following them in order (one poll every
 * 50 ms on the oldest not yet settled). No database, no bookkeeping: roughly what the service
 * alone allows. On a shared machine both figures move with the load; compare them run by run.
 */
async function serviceCeiling(serviceUrl: string, token: string): Promise<number> {
  const client = new IssuanceClient({ baseUrl: serviceUrl, token });
  const ids: string[] = [];
  const t0 = performance.now();
  let next = 1;
  await Promise.all(
    [0, 1].map(async () => {
      while (next <= DRAIN) {
        const n = next++;
        ids.push((await client.createNfce(sampleNfceRequest({ nNF: n, serie: 2, items: 3 }), randomUUID())).body.id);
      }
    }),
  );
  for (const id of ids) {
    while ((await client.getNfce(id)).status === 'processando') await new Promise((r) => setTimeout(r, 50));
  }
  return DRAIN / ((performance.now() - t0) / 1000);
}

async function drainRate(): Promise<{ rate: number; seconds: number; ceiling: number }> {
  const serviceDir = tempDataDir('balcao-bench-service-');
  const { token } = await createCompany(serviceDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
  const service = await startService({ dataDir: serviceDir });
  const ceiling = await serviceCeiling(service.url, token);
  const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-drain-'));
  // Each authorized receipt is still fetched and printed (ESC/POS), as with a store's real
  // printer; the virtual printer's PNG picture, a demo aid, is left out of the figure.
  const terminal = await createTerminal({ dataDir: dir, serviceUrl: service.url, token, series: 1, startWorker: false, printerTransport: new MemoryPrinter() });
  await terminal.openCashSession({ floatCents: 0, operator: 'bench' }); // no sale finishes without an open till
  try {
    const control = await api(service.url, token).post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
    if (control.status !== 200) throw new Error(`sandbox/autoridade: HTTP ${control.status}`);
    terminal.seedDemoCatalog();
    for (let i = 0; i < DRAIN; i++) terminal.finishSaleNow(await prepareSale(terminal, i));
    const t0 = performance.now();
    terminal.worker.start();
    for (;;) {
      const settled = terminal.store.receipts.countReceiptsIn(['authorized', 'rejected', 'needs_attention']);
      if (settled >= DRAIN) break;
      if (performance.now() - t0 > 300_000) throw new Error(`drain parado: ${settled}/${DRAIN} em 300 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - t0) / 1000;
    const authorized = terminal.store.receipts.countReceiptsIn(['authorized']);
    if (authorized !== DRAIN) throw new Error(`${DRAIN - authorized} NFC-e não autorizadas no drain`);
    return { rate: DRAIN / seconds, seconds, ceiling };
  } finally {
    await terminal.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const suite: BenchSuite = {
  name: 'terminal',
  async run(): Promise<BenchFigure[]> {
    const finish = await finishLatency();
    const figures: BenchFigure[] = [
      { name: 'finish-sale-to-commit p50', value: percentile(finish, 50), unit: 'ms' },
      { name: 'finish-sale-to-commit p99', value: percentile(finish, 99), unit: 'ms', target: { kind: 'max', value: 10 } },
    ];
    const drain = await drainRate();
    figures.push(
      { name: `drain of ${DRAIN} queued receipts (authority latency 0)`, value: drain.rate, unit: 'receipts/s', target: { kind: 'min', value: 100 } },
      { name: `drain of ${DRAIN} queued receipts, total time`, value: drain.seconds, unit: 's' },
      { name: 'reference: bare client on the same service, just before', value: drain.ceiling, unit: 'receipts/s' },
    );
    return figures;
  },
};
