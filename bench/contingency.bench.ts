// Offline contingency at the terminal: what the cashier waits for when a sale is issued by the
// terminal itself, and how fast the receipts issued offline reach the authority once the
// service is back.
//
// - issue-offline: per receipt, the fiscal work of contingency.ts/issue.ts: build the NFC-e
//   (tpEmis 9), sign it with the A1 certificate, the offline QR Code (v2: digVal + CSC hash),
//   and the ESC/POS of its two copies (80 mm), for two printer profiles: the Epson TM-T20
//   (the default), which draws the QR Code itself (GS ( k), and the Bematech MP-4200, whose QR
//   Code goes as a raster image the terminal draws (GS v 0). Receipts of 1–5 items, as the
//   terminal builds them. Target p99 < 50 ms for both.
// - finish-sale in contingency: the whole finishSaleNow (the above minus the ESC/POS, which is
//   rendered after the sale returns, plus the number, the rows and the fsync of the commit).
// - catch-up: a terminal with its worker running against the real `balcao service` process
//   (sandbox authority latency 0). The service process is killed; the first sale fails to go
//   out and those failures put the terminal into contingency by itself (as in a store); the
//   rest of the 300 sales are issued offline while the worker keeps probing the dead service.
//   Then the service starts again on the same port, and the clock runs from the moment it is
//   back until the last receipt is authorized: the worker's own backoff (how soon it notices)
//   is part of the figure, reported apart as "back → first authorized", and the drain itself
//   (first → last authorized) too. Each receipt is sent as its signed XML and checked by the
//   service (schema, signature, certificate) before it is transmitted.
// - authority known down: the sandbox authority is unavailable and the service already knows it
//   (an NFC-e it tried to send failed). A terminal that has not sold since (a fresh one each
//   time) finishes a cash sale; the figure runs from "Finalizar venda" to the contingency
//   receipt's first copy at the printer. Target p99 < 3 s. The NFC-e the service received from
//   these terminals are counted too: once contingency is active, none may be sent online.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEscPos, type PrinterProfileId } from '../fiscal/danfe/escpos.ts';
import { danfeModel } from '../fiscal/danfe/model.ts';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { issueOffline } from '../electron/core/contingency/issue.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { readDb } from '../test/helpers/nfce.ts';
import { api, tempDataDir, startService } from '../test/helpers/service-process.ts';
import { storeCompanyWithCertificate, setUpContingency } from '../test/terminal-fixtures.ts';
import { percentile, type BenchFigure, type BenchSuite } from './types.ts';

const ISSUES = 500;
const CATCH_UP = 300;
const PRODUCTS = ['1001', '1002', '1003', '1004', '1005', '1006', '1007', '1008', '1009', '1010'];

function issueLatency(profile: PrinterProfileId): number[] {
  const cnpj = '11222333000181';
  const credentials = { emitter: demoEmitter({ cnpj }), certificate: generateTestCertificate({ cnpj, xNome: 'BENCH' }).certificate };
  const facts = { dhCont: new Date(Date.now() - 60_000).toISOString(), xJust: 'Falha de comunicação com o serviço de emissão de NFC-e' };
  const once = (i: number) => {
    const r = issueOffline(sampleNfceRequest({ nNF: i + 1, items: 1 + (i % 5) }), credentials, facts, new Date());
    const model = danfeModel(r.signedXml);
    for (const copy of model.copies) encodeEscPos({ ...model, copies: [copy] }, { profile, paperWidth: 80 });
  };
  for (let i = 0; i < 30; i++) once(i); // warm-up
  const times: number[] = [];
  for (let i = 0; i < ISSUES; i++) {
    const t0 = process.hrtime.bigint();
    once(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

async function prepareSale(terminal: Terminal, n: number): Promise<string> {
  let sale = await terminal.openSale();
  for (let i = 0; i < 1 + (n % 5); i++) {
    sale = await terminal.addItem(sale.id, { code: PRODUCTS[(n + i * 3) % PRODUCTS.length]!, quantity: String(1 + (i % 2)) });
  }
  await terminal.addPayment(sale.id, { tPag: '01', amountCents: Math.ceil(sale.totalCents / 1000) * 1000 });
  return sale.id;
}

type CatchUp = { finish: number[]; outage: number; toFirst: number; seconds: number; drainRate: number };

async function catchUp(): Promise<CatchUp> {
  const serviceDir = tempDataDir('balcao-bench-contingency-service-');
  const company = await storeCompanyWithCertificate(serviceDir);
  const service = await startService({ dataDir: serviceDir });
  const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-contingency-'));
  const terminal = await createTerminal({ dataDir: dir, serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
  await terminal.openCashSession({ floatCents: 0, operator: 'bench' }); // no sale finishes without an open till
  try {
    const control = await api(service.url, company.token).post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
    if (control.status !== 200) throw new Error(`sandbox/autoridade: HTTP ${control.status}`);
    terminal.seedDemoCatalog();
    const pin = '2580';
    const manager = await terminal.createManager({ name: 'Bench', pin });
    await setUpContingency(terminal, company, { managerId: manager.id, pin }, { maxReceipts: CATCH_UP + 10 });

    // The outage: the service process is gone; the first sale's failed sends open the period.
    await service.kill();
    const down = performance.now();
    terminal.finishSaleNow(await prepareSale(terminal, 0));
    await until('contingência automática', () => terminal.contingency.status().active, 60_000);
    const finish: number[] = [];
    for (let i = 1; i < CATCH_UP; i++) {
      const id = await prepareSale(terminal, i);
      const t0 = process.hrtime.bigint();
      terminal.finishSaleNow(id);
      finish.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await terminal.contingency.printsSettled();
    const offline = terminal.store.receipts.allReceipts().filter((r) => r.tp_emis === 9).length;
    if (offline !== CATCH_UP) throw new Error(`${offline} de ${CATCH_UP} NFC-e emitidas em contingência`);

    // Back: the same port, the same data; the worker finds it by itself.
    await service.restart({ hard: true });
    const back = performance.now();
    let first: number | undefined;
    for (;;) {
      const authorized = terminal.store.receipts.countReceiptsIn(['authorized']);
      if (authorized > 0) first ??= performance.now();
      if (terminal.store.receipts.countReceiptsIn(['authorized', 'rejected', 'needs_attention']) >= CATCH_UP) break;
      if (performance.now() - back > 300_000) throw new Error(`catch-up parado: ${authorized}/${CATCH_UP} em 300 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const last = performance.now();
    const authorized = terminal.store.receipts.countReceiptsIn(['authorized']);
    if (authorized !== CATCH_UP) throw new Error(`${CATCH_UP - authorized} NFC-e de contingência não autorizadas`);
    return {
      finish: finish.sort((a, b) => a - b),
      outage: (back - down) / 1000,
      toFirst: (first! - back) / 1000,
      seconds: (last - back) / 1000,
      drainRate: (CATCH_UP - 1) / ((last - first!) / 1000),
    };
  } finally {
    await terminal.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const KNOWN_DOWN_TRIALS = 6;

type KnownDown = { printed: number[]; onlineAttempts: number; sentOnline: number };

async function authorityKnownDown(): Promise<KnownDown> {
  const serviceDir = tempDataDir('balcao-bench-known-down-');
  const company = await storeCompanyWithCertificate(serviceDir);
  const service = await startService({ dataDir: serviceDir });
  const client = api(service.url, company.token);
  const printed: number[] = [];
  let onlineAttempts = 0;
  let sentOnline = 0;
  try {
    const control = await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: false });
    if (control.status !== 200) throw new Error(`sandbox/autoridade: HTTP ${control.status}`);
    // Another till's sale: the service tries it and learns that the authority does not answer.
    const probe = await client.post('/api/v1/nfce', sampleNfceRequest({ nNF: 900_001, serie: 9 }));
    if (probe.status !== 202) throw new Error(`NFC-e de sondagem: HTTP ${probe.status} ${probe.text}`);
    await new Promise((r) => setTimeout(r, 500));
    for (let trial = 0; trial < KNOWN_DOWN_TRIALS; trial++) {
      const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-known-down-terminal-'));
      const printer = new MemoryPrinter();
      const terminal = await createTerminal({ dataDir: dir, serviceUrl: service.url, token: company.token, series: 10 + trial, printerTransport: printer });
      await terminal.openCashSession({ floatCents: 0, operator: 'bench' }); // no sale finishes without an open till
      try {
        terminal.seedDemoCatalog();
        const manager = await terminal.createManager({ name: 'Bench', pin: '2580' });
        await setUpContingency(terminal, company, { managerId: manager.id, pin: '2580' });
        const id = await prepareSale(terminal, trial);
        const t0 = performance.now();
        terminal.finishSaleNow(id);
        await until('NFC-e de contingência impressa', () => printer.jobs.length > 0, 120_000);
        printed.push(performance.now() - t0);
        // Received online from this terminal (its own series) after its contingency began.
        const since = terminal.contingency.status().since;
        if (since === null) throw new Error('a NFC-e saiu impressa sem contingência ativa');
        onlineAttempts += readDb(
          serviceDir,
          (db) =>
            db
              .prepare('SELECT count(*) FROM nfce_documents WHERE serie = ? AND tp_emis = 1 AND created_at >= ?')
              .pluck()
              .get(10 + trial, since) as number,
        );
        // ...and at all: an online original of a sale then covered offline is cancelled by substitution later.
        sentOnline += readDb(
          serviceDir,
          (db) =>
            db
              .prepare('SELECT count(*) FROM nfce_documents WHERE serie = ? AND tp_emis = 1')
              .pluck()
              .get(10 + trial) as number,
        );
      } finally {
        await terminal.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
    return { printed: printed.sort((a, b) => a - b), onlineAttempts, sentOnline };
  } finally {
    await service.stop();
  }
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`tempo esgotado: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const suite: BenchSuite = {
  name: 'contingency',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    for (const [profile, label] of [
      ['epson-tm-t20', 'Epson TM-T20, native QR'],
      ['bematech-mp4200-escpos', 'Bematech MP-4200, raster QR'],
    ] as const) {
      const issue = issueLatency(profile);
      figures.push(
        { name: `issue-offline ${label} p50`, value: percentile(issue, 50), unit: 'ms' },
        { name: `issue-offline ${label} p99`, value: percentile(issue, 99), unit: 'ms', target: { kind: 'max', value: 50 } },
      );
    }
    const k = await authorityKnownDown();
    figures.push(
      { name: 'authority known down: finish → contingency receipt printed p50', value: percentile(k.printed, 50), unit: 'ms' },
      {
        name: 'authority known down: finish → contingency receipt printed p99',
        value: percentile(k.printed, 99),
        unit: 'ms',
        target: { kind: 'max', value: 3000 },
      },
      { name: 'authority known down: NFC-e sent online once in contingency', value: k.onlineAttempts, unit: 'documents', target: { kind: 'max', value: 0 } },
      { name: `authority known down: of ${KNOWN_DOWN_TRIALS} sales, sent online at all`, value: k.sentOnline, unit: 'documents' },
    );
    const c = await catchUp();
    figures.push(
      { name: 'finish-sale in contingency (sign+commit) p50', value: percentile(c.finish, 50), unit: 'ms' },
      { name: 'finish-sale in contingency (sign+commit) p99', value: percentile(c.finish, 99), unit: 'ms' },
      { name: `catch-up of ${CATCH_UP}: outage (service killed → back)`, value: c.outage, unit: 's' },
      { name: `catch-up of ${CATCH_UP}: service back → first authorized`, value: c.toFirst, unit: 's' },
      { name: `catch-up of ${CATCH_UP}: service back → all authorized`, value: c.seconds, unit: 's' },
      { name: `catch-up of ${CATCH_UP}: rate from service back`, value: CATCH_UP / c.seconds, unit: 'receipts/s' },
      { name: `catch-up of ${CATCH_UP}: drain rate (first → last authorized)`, value: c.drainRate, unit: 'receipts/s' },
    );
    return figures;
  },
};
