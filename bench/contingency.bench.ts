// Offline contingency at the terminal: what the cashier waits for when a sale is issued by the
// terminal itself, and how fast the receipts issued offline reach the authority once the
// service is back.
//
// - issue-offline: per receipt, the fiscal work of contingency.ts/issue.ts: build the NFC-e
//   (tpEmis 9), sign it with the A1 certificate, the offline QR Code (v2: digVal + CSC hash),
//   and the ESC/POS of its two copies for the default printer (Epson, 80 mm). Receipts of 1–5
//   items, as the terminal builds them. Target p99 < 50 ms.
// - finish-sale in contingency: the whole finishSaleNow (the above minus the ESC/POS, which is
//   rendered after the sale returns, plus the number, the rows and the fsync of the commit).
// - catch-up: 300 sales issued offline with the service away, then the worker started against
//   the real `balcao service` process (sandbox authority latency 0); receipts per second until
//   the last is authorized, each sent as its signed XML and checked by the service (schema,
//   signature, certificate) before it is transmitted.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEscPos } from '../fiscal/danfe/escpos.ts';
import { danfeModel } from '../fiscal/danfe/model.ts';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { issueOffline } from '../electron/core/contingency/issue.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { api, tempDataDir, startService } from '../test/helpers/service-process.ts';
import { storeCompanyWithCertificate, setUpContingency } from '../test/terminal-fixtures.ts';
import { percentile, type BenchFigure, type BenchSuite } from './types.ts';

const ISSUES = 500;
const CATCH_UP = 300;
const PRODUCTS = ['1001', '1002', '1003', '1004', '1005', '1006', '1007', '1008', '1009', '1010'];

function issueLatency(): number[] {
  const cnpj = '11222333000181';
  const credentials = { emitter: demoEmitter({ cnpj }), certificate: generateTestCertificate({ cnpj, xNome: 'BENCH' }).certificate };
  const facts = { dhCont: new Date(Date.now() - 60_000).toISOString(), xJust: 'Falha de comunicação com o serviço de emissão de NFC-e' };
  const once = (i: number) => {
    const r = issueOffline(sampleNfceRequest({ nNF: i + 1, items: 1 + (i % 5) }), credentials, facts, new Date());
    const model = danfeModel(r.signedXml);
    for (const copy of model.copies) encodeEscPos({ ...model, copies: [copy] }, { profile: 'epson-tm-t20', paperWidth: 80 });
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

async function catchUp(): Promise<{ finish: number[]; rate: number; seconds: number }> {
  const serviceDir = tempDataDir('balcao-bench-contingency-service-');
  const company = await storeCompanyWithCertificate(serviceDir);
  const service = await startService({ dataDir: serviceDir });
  const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-contingency-'));
  const terminal = await createTerminal({ dataDir: dir, serviceUrl: service.url, token: company.token, series: 1, startWorker: false, printerTransport: new MemoryPrinter() });
  try {
    const control = await api(service.url, company.token).post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
    if (control.status !== 200) throw new Error(`sandbox/autoridade: HTTP ${control.status}`);
    terminal.seedDemoCatalog();
    const pin = '2580';
    const manager = await terminal.createManager({ name: 'Bench', pin });
    const auth = { managerId: manager.id, pin };
    await setUpContingency(terminal, company, auth, { maxReceipts: CATCH_UP + 10 });
    await terminal.enterContingency({ ...auth, justification: `Medição de contingência ${randomUUID().slice(0, 8)}` });
    const finish: number[] = [];
    for (let i = 0; i < CATCH_UP; i++) {
      const id = await prepareSale(terminal, i);
      const t0 = process.hrtime.bigint();
      terminal.finishSaleNow(id);
      finish.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await terminal.contingency.printsSettled();
    const t0 = performance.now();
    terminal.worker.start();
    for (;;) {
      const settled = terminal.store.countReceiptsIn(['authorized', 'rejected', 'needs_attention']);
      if (settled >= CATCH_UP) break;
      if (performance.now() - t0 > 300_000) throw new Error(`catch-up parado: ${settled}/${CATCH_UP} em 300 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - t0) / 1000;
    const authorized = terminal.store.countReceiptsIn(['authorized']);
    if (authorized !== CATCH_UP) throw new Error(`${CATCH_UP - authorized} NFC-e de contingência não autorizadas`);
    return { finish: finish.sort((a, b) => a - b), rate: CATCH_UP / seconds, seconds };
  } finally {
    await terminal.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const suite: BenchSuite = {
  name: 'contingency',
  async run(): Promise<BenchFigure[]> {
    const issue = issueLatency();
    const figures: BenchFigure[] = [
      { name: 'issue-offline (build+sign+QR+2×ESC/POS) p50', value: percentile(issue, 50), unit: 'ms' },
      { name: 'issue-offline (build+sign+QR+2×ESC/POS) p99', value: percentile(issue, 99), unit: 'ms', target: { kind: 'max', value: 50 } },
    ];
    const c = await catchUp();
    figures.push(
      { name: 'finish-sale in contingency (sign+commit) p50', value: percentile(c.finish, 50), unit: 'ms' },
      { name: 'finish-sale in contingency (sign+commit) p99', value: percentile(c.finish, 99), unit: 'ms' },
      { name: `catch-up of ${CATCH_UP} contingency receipts`, value: c.rate, unit: 'receipts/s' },
      { name: `catch-up of ${CATCH_UP} contingency receipts, total time`, value: c.seconds, unit: 's' },
    );
    return figures;
  },
};
