// The terminal core as its own process for the dynamic PIX crash tests (test/pix-crash.test.ts),
// its PSP from BALCAO_PIX_* as a real first start reads it. Lines of JSON on stdout.
//   PIX_MODE=charge: opens a sale, asks for a PIX charge of it, and SIGKILLs itself the moment
//                    the charge reaches PIX_KILL_AT ('active': created at the PSP, not paid;
//                    'paid': the PIX on disk, the NFC-e not yet made) — announcing it first.
//   PIX_MODE=resume: starts on the same folder and waits for PIX_TXID to be settled.

import { profileOfEmitter } from '../../electron/core/company-profile.ts';
import { pspSetupFromEnv } from '../../electron/core/pix/psp-settings.ts';
import { demoEmitter, DEMO_CSC } from '../../fiscal/samples.ts';
import { testTerminal } from '../terminal-fixtures.ts';

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const terminal = await testTerminal({ dataDir: process.env.PIX_DATA!, pixKey: '12345678000195', pixPsp: pspSetupFromEnv(process.env)! });
if (process.env.PIX_MODE === 'charge') {
  terminal.configure({ company: { ...profileOfEmitter(demoEmitter()), cscToken: DEMO_CSC.token } }, 'teste de queda do PIX');
  const killAt = process.env.PIX_KILL_AT;
  terminal.subscribe((event) => {
    if (event.type !== 'pix') return;
    say({ event: 'pix', state: event.charge.state, txid: event.charge.txid, saleId: event.charge.saleId });
    // A real SIGKILL, at the exact point: nothing after this line runs, no handler, no flush.
    if (event.charge.state === killAt) process.kill(process.pid, 'SIGKILL');
  });
  const sale = await terminal.addItem((await terminal.openSale()).id, { code: '7891000100103' });
  const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
  say({ event: 'created', txid: charge.txid, saleId: sale.id });
} else {
  const settled = await terminal.waitForPixCharge(process.env.PIX_TXID!, (c) => c.state === 'finished', 120_000);
  say({ event: 'settled', state: settled.state });
  await terminal.close();
  process.exit(0);
}
