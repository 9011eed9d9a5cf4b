// A PC whose clock is wrong, against the real service over HTTP (sandbox authority, whose clock
// is the service's): the terminal dates what it signs itself on the service's clock as it last
// knew it, and says on its status that the PC's clock is wrong and how to fix it.
//
// - The PC 3 h ahead (the terminal's clock injected): receipts issued in contingency during an
//   authority outage would be signed 3 h in the future and refused 703 after the outage; they
//   are authorized (100), their dhEmi within a minute of the service's clock, never after it.
// - The PC 26 h behind the service (the service's sandbox clock moved a day and two hours
//   ahead): they would be dated yesterday and authorized late (150); they are authorized (100)
//   on time, dated within a minute of the service's clock.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Terminal } from '../electron/core/terminal.ts';
import { nfceBody } from './helpers/nfce.ts';
import { api, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, setUpContingency, storeCompanyWithCertificate, testTerminal } from './terminal-fixtures.ts';

const HOUR = 3_600_000;

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-clock-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

/**
 * A company whose terminal runs on `pcClock`, after the service's clock was moved `serviceAheadHours`:
 * both far apart. Returns the terminal ready to issue offline, and the service's time as a function.
 */
async function wrongClock(pcOffsetMs: number, serviceAheadHours: number) {
  const company = await storeCompanyWithCertificate(serviceDir);
  const http = api(service.url, company.token);
  if (serviceAheadHours) expect((await http.post('/api/v1/sandbox/relogio', { avancar_minutos: serviceAheadHours * 60 })).status).toBe(200);
  const serviceNow = () => Date.now() + serviceAheadHours * HOUR;
  const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, clock: () => Date.now() + pcOffsetMs });
  terminals.push(terminal);
  const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
  await setUpContingency(terminal, company, { managerId: manager.id, pin: '2580' }, { failureThreshold: 3 });
  return { terminal, http, serviceNow };
}

/** The authority goes away; the service learns it from another sale of the company (series 9), the terminal from the service. */
async function authorityOutage(terminal: Terminal, http: ReturnType<typeof api>): Promise<void> {
  expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
  expect((await http.post('/api/v1/nfce', nfceBody(1, {}, 9))).status).toBe(202);
  await eventually('contingência', async () => (await terminal.contingencyStatus()).active);
}

/** Two sales in contingency; for each, the service's time when it was finished and the dhEmi it was signed with. */
async function sellOffline(terminal: Terminal, serviceNow: () => number) {
  const out: { id: string; serviceAt: number; dhEmi: number; dhCont: number }[] = [];
  for (let i = 0; i < 2; i++) {
    let sale = await terminal.openSale();
    sale = await terminal.addItem(sale.id, { code: '1001', quantity: '2' });
    await terminal.addPayment(sale.id, { tPag: '01', amountCents: 5000 });
    const { receipt } = await terminal.finishSale(sale.id);
    const serviceAt = serviceNow();
    expect(receipt.contingency).toBe(true);
    const xml = terminal.store.receipts.receipt(receipt.id)!.signed_xml!;
    out.push({
      id: receipt.id,
      serviceAt,
      dhEmi: Date.parse(/<dhEmi>([^<]+)<\/dhEmi>/.exec(xml)![1]!),
      dhCont: Date.parse(/<dhCont>([^<]+)<\/dhCont>/.exec(xml)![1]!),
    });
  }
  return out;
}

async function afterTheOutage(terminal: Terminal, http: ReturnType<typeof api>, sold: Awaited<ReturnType<typeof sellOffline>>): Promise<void> {
  expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
  for (const s of sold) {
    // Dated on the service's clock: within a minute of it, and never after it.
    expect(s.serviceAt - s.dhEmi).toBeGreaterThanOrEqual(0);
    expect(s.serviceAt - s.dhEmi).toBeLessThan(60_000);
    expect(s.dhCont).toBeLessThanOrEqual(s.dhEmi);
    const done = await terminal.waitForReceipt(s.id, (r) => r.state !== 'pending' && r.state !== 'processing', 45_000);
    expect(done).toMatchObject({ state: 'authorized', codigoStatus: '100', contingency: true });
  }
}

describe('a PC clock far from the service', () => {
  it('3 h ahead: the status says so; contingency receipts are dated on the service clock and authorized after the outage (not 703)', async () => {
    const { terminal, http, serviceNow } = await wrongClock(3 * HOUR, 0);
    const alert = await eventually('o relógio errado na barra', async () => (await terminal.queueStatus()).alerts.find((a) => a.includes('relógio')));
    expect(alert).toMatch(/^O relógio deste computador está 3 h adiantado em relação ao serviço de emissão\. Acerte a data e a hora do computador/);
    await authorityOutage(terminal, http);
    await afterTheOutage(terminal, http, await sellOffline(terminal, serviceNow));
  });

  it('26 h behind: the status says so; contingency receipts are dated on the service clock and authorized on time (100, not 150)', async () => {
    const { terminal, http, serviceNow } = await wrongClock(0, 26);
    const alert = await eventually('o relógio errado na barra', async () => (await terminal.queueStatus()).alerts.find((a) => a.includes('relógio')));
    expect(alert).toMatch(/^O relógio deste computador está 26 h atrasado em relação ao serviço de emissão\./);
    await authorityOutage(terminal, http);
    await afterTheOutage(terminal, http, await sellOffline(terminal, serviceNow));
  });
});
