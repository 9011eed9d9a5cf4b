// Dynamic PIX: from the moment the customer's bank pays the charge to the sale's NFC-e authorized
// and printed, at the counter. The terminal core against the PSP simulator (mutual TLS, OAuth2,
// answering in 0 ms, then in 300 ms) and the real `balcao service` (sandbox authority latency 0),
// the receipt printed in ESC/POS to an in-memory printer. Each sale: a charge asked for, shown
// (active), paid at the simulator — the clock starts — and the terminal finds the PIX, finishes
// the sale, the service authorizes it and the printer gets it. Without a webhook the terminal's
// polling finds it; with one (the simulator posting to the service's receiver, docs/pix.md "The
// webhook") the terminal hears of it from the service and reads the charge at the PSP once.

import { profileOfEmitter } from '../electron/core/company-profile.ts';
import { createTerminal } from '../electron/core/terminal.ts';
import { demoEmitter, DEMO_CSC } from '../fiscal/samples.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { startPixPspSimulator } from '../service/pix-psp/simulator.ts';
import { api, createCompany, startService, tempDataDir } from '../test/helpers/service-process.ts';
import { percentile, type BenchFigure, type BenchSuite } from './types.ts';

const SALES = 30;

async function paidToPrinted(latencies: number[], webhook: boolean): Promise<Map<number, number[]>> {
  const serviceDir = tempDataDir('balcao-bench-pix-service-');
  const { token } = await createCompany(serviceDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
  const service = await startService({ dataDir: serviceDir });
  const webhookUrl = webhook ? ((await api(service.url, token).post('/api/v1/pix/webhook')).body.webhook_url as string) : undefined;
  const psp = await startPixPspSimulator({ ...(webhookUrl && { webhookUrl }) });
  const printer = new MemoryPrinter();
  const terminal = await createTerminal({
    dataDir: tempDataDir('balcao-bench-pix-terminal-'),
    serviceUrl: service.url,
    token,
    series: 1,
    printerTransport: printer,
    pixKey: '12345678000195',
    pixPsp: psp.terminalSetup,
  });
  const out = new Map<number, number[]>();
  try {
    const control = await api(service.url, token).post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
    if (control.status !== 200) throw new Error(`sandbox/autoridade: HTTP ${control.status}`);
    terminal.configure({ company: { ...profileOfEmitter(demoEmitter()), cscToken: DEMO_CSC.token } }, 'bench PIX');
    terminal.seedDemoCatalog();
    await terminal.openCashSession({ floatCents: 0, operator: 'bench' });
    terminal.start();
    for (const latency of latencies) {
      psp.latencyMs = latency;
      const times: number[] = [];
      for (let i = 0; i < SALES; i++) {
        const sale = await terminal.addItem((await terminal.openSale()).id, { code: '7891000100103' });
        const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
        await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
        const printed = printer.jobs.length;
        const t0 = performance.now();
        psp.pay(charge.txid);
        for (;;) {
          const receipt = terminal.store.receipts.receiptBySale(sale.id);
          if (receipt?.state === 'authorized' && printer.jobs.length > printed) break;
          if (performance.now() - t0 > 120_000) throw new Error(`venda PIX ${i} não concluída em 120 s (${receipt?.state ?? 'sem NFC-e'})`);
          await new Promise((r) => setTimeout(r, 2));
        }
        times.push(performance.now() - t0);
      }
      out.set(
        latency,
        times.sort((a, b) => a - b),
      );
    }
    if (psp.problems.length) throw new Error(`simulador PIX: ${psp.problems.join('; ')}`);
    return out;
  } finally {
    await terminal.close();
    await psp.close();
    await service.stop();
  }
}

export const suite: BenchSuite = {
  name: 'pix',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    for (const webhook of [false, true]) {
      const how = webhook ? ', webhook' : '';
      for (const [latency, times] of await paidToPrinted([0, 300], webhook)) {
        figures.push(
          { name: `PIX paid → NFC-e authorized and printed p50 (PSP ${latency} ms${how})`, value: percentile(times, 50), unit: 'ms' },
          { name: `PIX paid → NFC-e authorized and printed p99 (PSP ${latency} ms${how})`, value: percentile(times, 99), unit: 'ms' },
        );
      }
    }
    return figures;
  },
};
