// The customer's PIX QR slip printed once per charge (electron/core/pix/qr-slip.ts): off by
// default; turned on, the charge that becomes active prints it once, the loop's later rounds do
// not print it again, and neither does a restart of the terminal while the charge is still
// being followed (the claim is on the charge's row, on disk, before the bytes leave).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { demoEmitter, DEMO_CSC } from '../fiscal/samples.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { decodeEscPos } from './escpos-decoder.ts';
import { tempDataDir } from './helpers/service-process.ts';
import { eventually, testTerminal } from './terminal-fixtures.ts';

describe("the customer's PIX QR slip", () => {
  let psp: PixPspSimulator;
  let terminal: Terminal | undefined;
  const dataDir = tempDataDir('balcao-pix-slip-');

  const open = async (printer: MemoryPrinter) => {
    const t = await testTerminal({
      dataDir,
      serviceUrl: 'http://127.0.0.1:9',
      token: 'blc_teste',
      pixKey: '12345678000195',
      pixPsp: psp.terminalSetup,
      printerTransport: printer,
    });
    if (!t.settings.company()) t.configure({ company: { ...profileOfEmitter(demoEmitter()), cscToken: DEMO_CSC.token } }, 'teste do comprovante PIX');
    return t;
  };
  const polls = (txid: string) => psp.requests.filter((r) => r === `GET /cob/${txid}`).length;

  beforeAll(async () => {
    psp = await startPixPspSimulator();
  });

  afterAll(async () => {
    await terminal?.close();
    await psp?.close();
  });

  it('prints once when the charge becomes active, not again on later rounds nor after a restart; not at all when off', async () => {
    const first = new MemoryPrinter();
    terminal = await open(first);
    const quiet = await terminal.openSale().then((s) => terminal!.addItem(s.id, { code: '7891000100103' }));
    const off = await terminal.createPixCharge(quiet.id, quiet.remainingCents);
    await terminal.waitForPixCharge(off.txid, (c) => c.state === 'active', 60_000);
    await terminal.cancelPixCharge(off.txid);
    await terminal.waitForPixCharge(off.txid, (c) => c.state === 'cancelled', 60_000);
    expect(first.jobs).toHaveLength(0); // off by default

    terminal.psp.setPrintQr(true);
    const sale = await terminal.openSale().then((s) => terminal!.addItem(s.id, { code: '7891000100103' }));
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    const active = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    await eventually('the slip', () => first.jobs.length === 1);
    const slip = decodeEscPos(first.jobs[0]!);
    expect(slip.qrCodes.map((q) => q.payload)).toEqual([active.brCode]);
    expect(slip.lines.map((l) => l.text.trim())).toContain('Pague com PIX');
    const seen = polls(charge.txid);
    await eventually('two more rounds of the loop', () => polls(charge.txid) >= seen + 2);
    expect(first.jobs).toHaveLength(1);
    expect((await terminal.pixCharge(charge.txid)).qrSlipPrinted).toBe(true);

    await terminal.close();
    const second = new MemoryPrinter();
    terminal = await open(second);
    const before = polls(charge.txid);
    await eventually('the restarted loop following the charge', () => polls(charge.txid) >= before + 2);
    expect((await terminal.pixCharge(charge.txid)).state).toBe('active');
    expect(second.jobs).toHaveLength(0);
    expect(psp.problems).toEqual([]);
  });
});
