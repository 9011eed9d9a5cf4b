// Dynamic PIX in the terminal core (electron/core/pix/charges.ts) against the PSP simulator over
// mutual TLS: the charge's row and txid on disk before the PSP is asked, the QR Code's BR Code,
// the sale finished by itself once the PSP reports the PIX (the NFC-e request's card group:
// tpIntegra 1, the PSP's CNPJ, the endToEndId in cAut), a lost answer that makes no second
// charge, the cashier's cancel, a PIX that arrives after the cashier gave up, for the manager, and
// the refund of a PIX-paid sale whose NFC-e the manager cancels (the real service authorizes both).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBRL } from '../base/common/money.ts';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import { chargeTxid } from '../electron/core/pix/pix-store.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { demoEmitter, DEMO_CSC } from '../fiscal/samples.ts';
import { SIMULATED_PSP, startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { testTerminal } from './terminal-fixtures.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('dynamic PIX charges in the terminal core', () => {
  let psp: PixPspSimulator;
  let service: ServiceProcess;
  let terminal: Terminal;

  beforeAll(async () => {
    const serviceDir = tempDataDir('balcao-pix-charges-service-');
    const { token } = await createCompany(serviceDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    service = await startService({ dataDir: serviceDir });
    psp = await startPixPspSimulator();
    terminal = await testTerminal({
      serviceUrl: service.url,
      token,
      pixKey: '12345678000195',
      pixPsp: psp.terminalSetup,
    });
    terminal.configure({ company: { ...profileOfEmitter(demoEmitter()), cscToken: DEMO_CSC.token } }, 'teste PIX dinâmico');
  });

  afterAll(async () => {
    await terminal?.close();
    await psp?.close();
    await service?.stop();
  });

  const saleOf = async (code = '7891000100103') => {
    const sale = await terminal.openSale();
    return terminal.addItem(sale.id, { code });
  };

  it('charges the sale, shows the BR Code, and finishes the sale by itself when the PSP says it is paid', async () => {
    const sale = await saleOf();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    expect(charge).toMatchObject({ txid: chargeTxid(sale.id, 1), state: 'creating', amountCents: sale.remainingCents });

    const active = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    expect(active.brCode).toMatch(/^00020101021226\d{2}0014br\.gov\.bcb\.pix25\d{2}localhost:\d+\/qr\/v2\/[0-9a-f]{32}/);
    expect(psp.charge(charge.txid)?.valor).toBe((sale.remainingCents / 100).toFixed(2));
    await expect(terminal.createPixCharge(sale.id, sale.remainingCents)).rejects.toMatchObject({ message: expect.stringMatching(/já tem uma cobrança PIX/) });

    const paid = psp.pay(charge.txid);
    const finished = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    expect(finished).toMatchObject({ e2eid: paid.endToEndId, paidCents: sale.remainingCents });
    const receipt = terminal.store.receipts.receiptBySale(sale.id)!;
    const request = JSON.parse(receipt.request_json) as Json;
    expect(request.pag).toEqual([expect.objectContaining({ tPag: '17', card: { tpIntegra: '1', CNPJ: SIMULATED_PSP.cnpj, cAut: paid.endToEndId } })]);
    expect(psp.problems).toEqual([]);
  });

  it('after a lost answer asks about the same txid: one charge at the PSP, not two', async () => {
    const sale = await saleOf();
    psp.loseNextAnswer();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    const puts = psp.requests.filter((r) => r === `PUT /cob/${charge.txid}`);
    expect(puts).toHaveLength(1);
    expect(psp.requests.filter((r) => r.startsWith(`PUT /cob/${sale.id.replace(/-/g, '')}`))).toHaveLength(1);
    psp.pay(charge.txid);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    expect(terminal.store.receipts.receiptBySale(sale.id)).toBeDefined();
  });

  it('removes a charge the cashier gives up on; a PIX that still arrives goes to the manager, and is refunded', async () => {
    const sale = await saleOf();
    const first = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(first.txid, (c) => c.state === 'active', 60_000);
    await terminal.cancelPixCharge(first.txid);
    expect(await terminal.waitForPixCharge(first.txid, (c) => c.state === 'cancelled', 60_000)).toMatchObject({ state: 'cancelled' });
    expect(psp.charge(first.txid)?.status).toBe('REMOVIDA_PELO_USUARIO_RECEBEDOR');

    // A new charge for the same sale gets the next txid. The PSP stops answering just as the
    // cashier gives up, and the customer pays meanwhile: the PIX is found, for the manager.
    const second = await terminal.createPixCharge(sale.id, sale.remainingCents);
    expect(second.txid).toBe(chargeTxid(sale.id, 2));
    await terminal.waitForPixCharge(second.txid, (c) => c.state === 'active', 60_000);
    psp.failNext(1_000);
    await terminal.cancelPixCharge(second.txid);
    await terminal.waitForPixCharge(second.txid, (c) => c.lastError !== null, 60_000);
    psp.pay(second.txid);
    psp.failNext(0);
    const late = await terminal.waitForPixCharge(second.txid, (c) => c.state !== 'cancelling', 60_000);
    expect(late).toMatchObject({ state: 'paid_late', e2eid: expect.stringMatching(/^E/) });
    expect((await terminal.paidLatePixCharges()).map((c) => c.txid)).toEqual([second.txid]);
    expect((await terminal.getSale(sale.id)).state).toBe('open');
    const manager = await terminal.createManager({ name: 'Gerente PIX', pin: '4321' });
    const auth = { managerId: manager.id, pin: '4321' };
    expect((await terminal.queueStatus()).alerts).toContain('1 cobrança PIX paga sem venda: o gerente conclui a venda ou devolve (F10 › PIX pagos sem venda)');

    // "Devolver" needs the manager's PIN; asked twice, the PIX goes back once.
    await expect(terminal.refundPix(second.txid, { managerId: manager.id, pin: '0000' })).rejects.toMatchObject({ code: 'pin_invalido' });
    await terminal.refundPix(second.txid, auth);
    await expect(terminal.refundPix(second.txid, auth)).rejects.toMatchObject({ message: expect.stringMatching(/não está mais aguardando o gerente/) });
    const refunded = await terminal.waitForPixCharge(second.txid, (c) => c.state === 'refunded', 60_000);
    expect(refunded.refundState).toBe('DEVOLVIDO');
    expect(psp.requests.filter((r) => r === `PUT /pix/${late.e2eid}/devolucao/D${second.txid}`)).toHaveLength(1);
    expect((await terminal.paidPixWithoutSale()).find((c) => c.txid === second.txid)).toMatchObject({ state: 'refunded', refundState: 'DEVOLVIDO' });
    expect((await terminal.queueStatus()).alerts.join()).not.toMatch(/PIX/);
    expect(terminal.auditLog().filter((a) => a.action === 'pix_devolvido')).toEqual([
      expect.objectContaining({ actor_name: 'Gerente PIX', details: expect.stringContaining(second.txid) }),
    ]);
    expect(psp.problems).toEqual([]);
  });

  it('a PIX paid after the cashier cancelled the charge: the manager concludes the sale with it, its NFC-e issued once', async () => {
    const sale = await saleOf();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    await terminal.cancelPixCharge(charge.txid);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'cancelled', 60_000);
    // The simulator's "paid late" fault: the customer's bank pays the removed charge anyway. The
    // loop still reads a charge given up on for a while, and finds the PIX for the manager.
    const paid = psp.pay(charge.txid, { late: true });
    const late = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'paid_late', 60_000);
    expect(late).toMatchObject({ e2eid: paid.endToEndId, paidCents: sale.remainingCents, paidAt: paid.horario });
    expect((await terminal.paidPixWithoutSale()).find((c) => c.txid === charge.txid)).toMatchObject({
      state: 'paid_late',
      sale: { id: sale.id, state: 'open', totalCents: sale.totalCents },
    });

    const manager = await terminal.createManager({ name: 'Gerente PIX 3', pin: '5678' });
    const auth = { managerId: manager.id, pin: '5678' };
    await terminal.finishSaleWithPix(charge.txid, auth);
    // A second click finds it taken: the sale is never finished twice.
    await expect(terminal.finishSaleWithPix(charge.txid, auth)).rejects.toMatchObject({ code: 'estado_invalido' });
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    const after = await terminal.getSale(sale.id);
    expect(after.state).toBe('finished');
    expect(after.payments).toEqual([
      expect.objectContaining({ tPag: '17', amountCents: sale.remainingCents, card: expect.objectContaining({ cAut: paid.endToEndId }) }),
    ]);
    const receipt = terminal.store.receipts.receiptBySale(sale.id)!;
    expect((await terminal.waitForReceipt(receipt.id, (r) => r.state === 'authorized', 60_000)).state).toBe('authorized');
    expect(terminal.auditLog().filter((a) => a.action === 'pix_venda_concluida')).toEqual([expect.objectContaining({ actor_name: 'Gerente PIX 3' })]);
    expect((await terminal.paidPixWithoutSale()).map((c) => c.txid)).not.toContain(charge.txid);
    expect(psp.problems).toEqual([]);
  });

  it('a charge paid twice: the second PIX (another endToEndId, same txid) is refunded automatically, once, and recorded; the sale keeps the first', async () => {
    const sale = await saleOf();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    const first = psp.pay(charge.txid);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    // The simulator's "paid twice" fault: the payer's bank sends a second PIX for the paid charge.
    const second = psp.pay(charge.txid, { late: true });
    expect(second.endToEndId).not.toBe(first.endToEndId);
    const done = await terminal.waitForPixCharge(charge.txid, (c) => c.secondPayments[0]?.refundState === 'DEVOLVIDO', 60_000);
    expect(done).toMatchObject({ state: 'finished', e2eid: first.endToEndId });
    expect(done.secondPayments).toEqual([
      { e2eid: second.endToEndId, paidCents: sale.remainingCents, paidAt: second.horario, refundState: 'DEVOLVIDO', lastError: null },
    ]);
    expect(psp.charge(charge.txid)?.pix[1]?.devolucoes).toEqual([expect.objectContaining({ id: `D${charge.txid}`, status: 'DEVOLVIDO', valor: second.valor })]);
    expect(psp.charge(charge.txid)?.pix[0]?.devolucoes).toEqual([]);
    // The loop keeps reading the charge a while: the refund is never asked again.
    const reads = psp.requests.filter((r) => r === `GET /cob/${charge.txid}`).length;
    await expect.poll(() => psp.requests.filter((r) => r === `GET /cob/${charge.txid}`).length, { timeout: 60_000 }).toBeGreaterThan(reads);
    expect(psp.requests.filter((r) => r.startsWith(`PUT /pix/${second.endToEndId}/devolucao/`))).toHaveLength(1);
    const after = await terminal.getSale(sale.id);
    expect(after.payments.map((p) => p.card?.cAut)).toEqual([first.endToEndId]);
    expect(psp.problems).toEqual([]);
  });

  it('refunds at the PSP the PIX of a sale whose NFC-e the manager cancels, and records the refund', async () => {
    const sale = await saleOf();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    const paid = psp.pay(charge.txid);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    const receipt = terminal.store.receipts.receiptBySale(sale.id)!;
    expect((await terminal.waitForReceipt(receipt.id, (r) => r.state === 'authorized', 60_000)).state).toBe('authorized');

    const manager = await terminal.createManager({ name: 'Gerente PIX 2', pin: '4321' });
    await terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '4321', justification: 'Cliente desistiu da compra paga por PIX' });
    expect((await terminal.waitForReceipt(receipt.id, (r) => r.state === 'cancelled', 60_000)).state).toBe('cancelled');
    const refunded = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'refunded', 60_000);
    expect(refunded).toMatchObject({ state: 'refunded', refundState: 'DEVOLVIDO', e2eid: paid.endToEndId });
    expect(psp.charge(charge.txid)?.pix[0]?.devolucoes).toEqual([expect.objectContaining({ id: `D${charge.txid}`, status: 'DEVOLVIDO', valor: paid.valor })]);
    expect(psp.problems).toEqual([]);
  });

  it("the till's closing counts dynamic PIX by what the PSP confirmed (paid minus refunded), next to the receipts, and says a difference in words", async () => {
    // A PIX the bank received after the cashier gave up, not decided yet: the PSP has it, no receipt does.
    const sale = await saleOf();
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    await terminal.cancelPixCharge(charge.txid);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'cancelled', 60_000);
    psp.pay(charge.txid, { late: true });
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'paid_late', 60_000);
    // Every earlier refund of this file confirmed before the count.
    await expect
      .poll(() => terminal.store.db.prepare("SELECT count(*) AS n FROM pix_charges WHERE state = 'refunding'").get(), { timeout: 60_000 })
      .toEqual({ n: 0 });

    // The customer left: the sales still open are discarded (a till closes with none open).
    for (const open of await terminal.openSales()) await terminal.discardSale(open.id);
    const session = (await terminal.cashSession())!;
    const closed = await terminal.closeCashSession({ counts: session.countMethods.map((m) => ({ tPag: m.tPag, countedCents: 0 })), operator: 'Maria' });
    const pix = closed.closing!.dynamicPix!;
    const receipts = closed.closing!.methods.find((m) => m.tPag === '17')?.expectedCents ?? 0;
    // What the simulator received for this terminal's charges, minus what it refunded.
    const atPsp = terminal.store.db.prepare('SELECT txid FROM pix_charges').all() as { txid: string }[];
    let received = 0;
    let refunded = 0;
    for (const { txid } of atPsp)
      for (const p of psp.charge(txid)?.pix ?? []) {
        received += Math.round(Number(p.valor) * 100);
        refunded += p.devolucoes.filter((d) => d.status === 'DEVOLVIDO').reduce((t, d) => t + Math.round(Number(d.valor) * 100), 0);
      }
    expect(pix).toMatchObject({ confirmedCents: received, refundedCents: refunded, netCents: received - refunded, receiptsCents: receipts });
    expect(pix.differenceCents).toBe(sale.remainingCents);
    expect(pix.words).toMatch(/^O banco confirmou R\$ \d+,\d{2} a mais em PIX dinâmico do que as NFC-e dizem: há PIX pago sem venda/);
    // The printed report (and so the PDF, made from the same lines) carries the same figures.
    const report = closed.closing!.report.map((l) => l.trim());
    expect(report).toContain('PIX DINÂMICO PELO BANCO');
    const block = report.slice(report.indexOf('PIX DINÂMICO PELO BANCO'));
    const money = (cents: number) => `R$ ${formatBRL(cents)}`;
    expect(block.find((l) => l.startsWith('Confirmado pelo banco'))?.endsWith(money(received))).toBe(true);
    expect(block.find((l) => l.startsWith('PIX dinâmico nas NFC-e'))?.endsWith(money(receipts))).toBe(true);
    expect(block.find((l) => l.startsWith('Diferença'))?.endsWith(`+${money(sale.remainingCents)}`)).toBe(true);
    expect(block.join(' ')).toContain('há PIX pago sem venda');
  });
});
