// The till through the screen API, on a real SQLite file, the service away (a refused port): the
// sales finish durably, which is all the till needs. The closing report goes to a MemoryPrinter
// and is read back with the ESC/POS decoder.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import { MemoryPrinter } from '../../native/printer/transports.ts';
import type { ManagerView } from '../api/terminal-api.ts';
import { DEMO_CSC, demoEmitter } from '../../fiscal/samples.ts';
import { requestCancellation } from './cancellation.ts';
import { settleRefund } from './cash-session.ts';
import { profileOfEmitter } from './company-profile.ts';
import { TerminalError } from './errors.ts';
import { createTerminal, type Terminal } from './terminal.ts';

let dir: string;
let terminal: Terminal;
let printer: MemoryPrinter;
let manager: ManagerView;
const PIN = '4321';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-caixa-'));
  printer = new MemoryPrinter();
  terminal = await createTerminal({
    dataDir: dir,
    serviceUrl: `http://127.0.0.1:${await closedPort()}`,
    token: 'blc_teste',
    series: 1,
    startWorker: false,
    printerTransport: printer,
  });
  terminal.seedDemoCatalog();
  manager = await terminal.createManager({ name: 'Gerente Teste', pin: PIN });
});

afterEach(async () => {
  await terminal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A finished sale of one coffee (R$ 18,90) paid with `payments`. */
async function sell(payments: { tPag: string; amountCents: number; card?: { tpIntegra: '2' } }[]) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001' });
  for (const p of payments) sale = await terminal.addPayment(sale.id, p);
  return terminal.finishSale(sale.id);
}

const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TerminalError);
  return err as TerminalError;
};

describe('the till', () => {
  it('refuses to finish a sale while closed, with nothing written and no number taken', async () => {
    let sale = await terminal.openSale();
    sale = await terminal.addItem(sale.id, { code: '1001' });
    sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 2000 });
    const err = await refusal(terminal.finishSale(sale.id));
    expect(err).toMatchObject({ code: 'caixa_fechado', message: expect.stringMatching(/^Caixa fechado: abra o caixa/) });
    expect(terminal.store.receipts.countReceiptsIn(['pending'])).toBe(0);
    expect(terminal.store.series.nextNumber(1)).toBe(1);
    expect((await terminal.getSale(sale.id)).state).toBe('open');

    await terminal.openCashSession({ floatCents: 10_000, operator: 'Maria' });
    expect((await terminal.finishSale(sale.id)).receipt.nNF).toBe(1);
  });

  it('opens once, with the float and the operator, audited', async () => {
    const opened = await terminal.openCashSession({ floatCents: 10_000, operator: '  Maria  da Silva ' });
    expect(opened).toMatchObject({ number: 1, state: 'open', openedBy: 'Maria da Silva', floatCents: 10_000, pinAboveCents: 0, closing: null });
    expect(opened.countMethods).toEqual([{ tPag: '01', description: 'Dinheiro' }]);
    expect(await refusal(terminal.openCashSession({ floatCents: 0, operator: 'João' }))).toMatchObject({
      code: 'estado_invalido',
      message: expect.stringContaining('já está aberto (nº 1, por Maria da Silva)'),
    });
    expect(terminal.auditLog().filter((a) => a.action === 'caixa_aberto')).toMatchObject([{ actor_kind: 'operator', actor_name: 'Maria da Silva' }]);
    expect((await refusal(terminal.openCashSession({ floatCents: -1, operator: 'x' }))).field).toBe('floatCents');
  });

  it('asks the manager’s PIN above the limit, audits who authorized it, and refuses a sangria above the cash expected', async () => {
    await terminal.openCashSession({ floatCents: 10_000, operator: 'Maria' });
    // Limit 0 (the default): every movement asks for the PIN.
    expect(await refusal(terminal.addCashMovement({ kind: 'suprimento', amountCents: 1000, reason: 'Troco extra' }))).toMatchObject({
      code: 'pin_invalido',
      field: 'pin',
    });
    expect(
      await refusal(terminal.addCashMovement({ kind: 'sangria', amountCents: 5000, reason: 'Depósito', managerId: manager.id, pin: '0000' })),
    ).toMatchObject({ code: 'pin_invalido' });
    expect(
      terminal
        .auditLog()
        .filter((a) => a.action === 'pin_recusado')
        .map((a) => a.reason),
    ).toEqual(['sangria']);
    const after = await terminal.addCashMovement({ kind: 'sangria', amountCents: 5000, reason: 'Depósito no banco', managerId: manager.id, pin: PIN });
    expect(after.movements).toMatchObject([{ kind: 'sangria', amountCents: 5000, reason: 'Depósito no banco', authorizedBy: 'Gerente Teste' }]);
    expect(terminal.auditLog().find((a) => a.action === 'sangria')).toMatchObject({
      actor_kind: 'manager',
      actor_name: 'Gerente Teste',
      reason: 'Depósito no banco',
    });

    await terminal.updateSettings({ cash: { pinAboveCents: 5000 } }, { managerId: manager.id, pin: PIN });
    const supplied = await terminal.addCashMovement({ kind: 'suprimento', amountCents: 2000, reason: 'Troco extra' });
    expect(supplied.movements.at(-1)).toMatchObject({ kind: 'suprimento', authorizedBy: null });
    expect(terminal.auditLog().find((a) => a.action === 'suprimento')).toMatchObject({ actor_kind: 'operator', actor_name: 'Maria' });
    // 100,00 − 50,00 + 20,00 = 70,00 in the drawer.
    const tooMuch = await refusal(terminal.addCashMovement({ kind: 'sangria', amountCents: 7001, reason: 'Depósito', managerId: manager.id, pin: PIN }));
    expect(tooMuch).toMatchObject({ code: 'pagamento_invalido', field: 'amountCents', message: expect.stringContaining('R$ 70,00') });
    expect((await refusal(terminal.addCashMovement({ kind: 'sangria', amountCents: 100, reason: 'x' }))).field).toBe('reason');
  });

  it('closes with the count against the sales: cash = float + received − change − sangrias + suprimentos, cancelled sales out; prints and keeps the report', async () => {
    // A store whose CNPJ has letters: the report's header names it with its mask.
    terminal.configure({ company: { ...profileOfEmitter(demoEmitter({ cnpj: '12ABC34501DE35', xFant: 'Mercado Alfa' })), cscToken: DEMO_CSC.token } }, 'teste');
    await terminal.updateSettings({ cash: { pinAboveCents: 10_000 } }, { managerId: manager.id, pin: PIN });
    await terminal.openCashSession({ floatCents: 10_000, operator: 'Maria' });
    await sell([{ tPag: '01', amountCents: 5000 }]); // 18,90 in cash, 31,10 change
    await sell([{ tPag: '03', amountCents: 1890, card: { tpIntegra: '2' } }]);
    const cancelled = await sell([{ tPag: '01', amountCents: 1890 }]);
    // Its cancellation went through (the service's part is tested elsewhere): its money went back.
    terminal.store.transaction(() => terminal.store.receipts.updateReceipt(cancelled.receipt.id, { state: 'cancelled' }, new Date().toISOString()));
    await terminal.addCashMovement({ kind: 'sangria', amountCents: 6000, reason: 'Depósito no banco' });
    await terminal.addCashMovement({ kind: 'suprimento', amountCents: 2000, reason: 'Troco extra' });

    const open = (await terminal.cashSession())!;
    expect(open.countMethods.map((m) => m.tPag)).toEqual(['01', '03']);
    // Every method asked for must be counted; nothing changes when one is missing.
    const missing = await refusal(terminal.closeCashSession({ counts: [{ tPag: '01', countedCents: 0 }], operator: 'Maria' }));
    expect(missing).toMatchObject({ code: 'pagamento_invalido', field: 'counts.03', message: 'Informe o valor contado em Cartão de Crédito' });
    expect((await terminal.cashSession())!.state).toBe('open');

    // 100,00 + 50,00 − 31,10 − 60,00 + 20,00 = 78,90 expected; 77,90 counted.
    const closed = await terminal.closeCashSession({
      counts: [
        { tPag: '01', countedCents: 7790 },
        { tPag: '03', countedCents: 1890 },
      ],
      operator: 'Maria',
    });
    expect(closed.state).toBe('closed');
    expect(closed.closing!.cash).toEqual({
      floatCents: 10_000,
      receivedCents: 5000,
      changeCents: 3110,
      sangriasCents: 6000,
      suprimentosCents: 2000,
      expectedCents: 7890,
      countedCents: 7790,
      differenceCents: -100,
    });
    expect(closed.closing!.methods).toEqual([
      { tPag: '01', description: 'Dinheiro', expectedCents: 7890, countedCents: 7790, differenceCents: -100 },
      { tPag: '03', description: 'Cartão de Crédito', expectedCents: 1890, countedCents: 1890, differenceCents: 0 },
    ]);
    expect(closed.closing!.sales).toEqual({ count: 2, totalCents: 3780, contingencyCount: 0, unauthorizedCount: 2, cancelledCount: 1, cancelledCents: 1890 });
    expect(closed.closing!.differenceCents).toBe(-100);
    expect(closed.closing).toMatchObject({ printed: true, printError: null });

    // The printed report, as the printer reads it.
    expect(printer.jobs).toHaveLength(1);
    const lines = decodeEscPos(printer.jobs[0]!).lines.map((l) => l.text.trimEnd());
    expect(lines.slice(0, 4).map((l) => l.trim())).toEqual(['FECHAMENTO DE CAIXA', 'Mercado Alfa', 'CNPJ 12.ABC.345/01DE-35', 'Caixa nº 1']);
    const cashBlock = lines.slice(lines.indexOf('DINHEIRO'));
    expect(cashBlock.find((l) => l.startsWith('Esperado'))).toMatch(/R\$ 78,90$/);
    expect(cashBlock.find((l) => l.startsWith('Contado'))).toMatch(/R\$ 77,90$/);
    expect(cashBlock.find((l) => l.startsWith('Diferença'))).toMatch(/-R\$ 1,00$/);
    expect(lines.find((l) => l.startsWith('DIFERENÇA TOTAL'))).toMatch(/-R\$ 1,00$/);
    // No dynamic PIX in this session: no block for it on paper.
    expect(lines.map((l) => l.trim())).not.toContain('PIX DINÂMICO PELO BANCO');
    expect(closed.closing!.report.map((l) => l.trimEnd())).toEqual(lines.slice(0, closed.closing!.report.length));

    // The PDF is kept beside the database; the counts and the audit are there too.
    expect(
      readFileSync(join(dir, 'relatorios', 'caixa-000001.pdf'))
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    expect(terminal.store.cash.cashCounts(closed.id).map((c) => [c.tpag, c.expected_cents, c.counted_cents])).toEqual([
      ['01', 7890, 7790],
      ['03', 1890, 1890],
    ]);
    expect(terminal.auditLog().find((a) => a.action === 'caixa_fechado')?.details).toContain('"diferencaCentavos":-100');

    // Closed is closed: no sale, no movement; the closing cannot be rewritten.
    expect((await refusal(sell([{ tPag: '01', amountCents: 2000 }]))).code).toBe('caixa_fechado');
    expect((await refusal(terminal.addCashMovement({ kind: 'suprimento', amountCents: 100, reason: 'Troco' }))).code).toBe('caixa_fechado');
    const db = new Database(join(dir, 'pos.sqlite'));
    try {
      expect(() => db.prepare('UPDATE cash_sessions SET closing_json = ? WHERE id = ?').run('{}', closed.id)).toThrow(/caixa fechado não se altera/);
      expect(() => db.prepare('DELETE FROM cash_movements').run()).toThrow(/somente inclusão/);
    } finally {
      db.close();
    }
    // The next session starts from its own float.
    expect((await terminal.openCashSession({ floatCents: 5000, operator: 'João' })).number).toBe(2);
  });

  it('refuses to close with a sale under way, and says so when the printer fails (the closing stands)', async () => {
    await terminal.openCashSession({ floatCents: 0, operator: 'Maria' });
    const underway = await terminal.addItem((await terminal.openSale()).id, { code: '1001' });
    expect(await refusal(terminal.closeCashSession({ counts: [{ tPag: '01', countedCents: 0 }], operator: 'Maria' }))).toMatchObject({
      message: expect.stringContaining('venda em andamento'),
    });
    await terminal.discardSale(underway.id);
    printer.failWith = 'sem_papel';
    const closed = await terminal.closeCashSession({ counts: [{ tPag: '01', countedCents: 0 }], operator: 'Maria' });
    expect(closed).toMatchObject({ state: 'closed', closing: { printed: false, printError: expect.stringMatching(/papel/i) } });
    expect(await terminal.recentPrints()).toEqual([]);
    printer.failWith = undefined;
    expect((await terminal.printCashReport(closed.id)).closing).toMatchObject({ printed: true, printError: null });
    // The printer's recent jobs list the report that came out, as they list receipts.
    expect(await terminal.recentPrints()).toEqual([{ kind: 'fechamento', cashSessionNumber: 1, printedAt: expect.any(String) }]);
    expect((await terminal.printerStatus()).lastPrintAt).toBe((await terminal.recentPrints())[0]!.printedAt);
    expect(
      Buffer.from((await terminal.cashReportPdf(closed.id)).pdfBase64, 'base64')
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
  });

  it('a sale of a closed till cancelled afterwards: its cash goes back as a sangria of the open till, or of the next one opened; a refusal brings it back in', async () => {
    await terminal.openCashSession({ floatCents: 10_000, operator: 'Maria' });
    const cash = await sell([{ tPag: '01', amountCents: 2000 }]); // 18,90, 1,10 change: 18,90 kept
    const card = await sell([{ tPag: '03', amountCents: 1890, card: { tpIntegra: '2' } }]);
    const later = await sell([{ tPag: '01', amountCents: 1890 }]);
    await terminal.closeCashSession({
      counts: [
        { tPag: '01', countedCents: 13_780 },
        { tPag: '03', countedCents: 1890 },
      ],
      operator: 'Maria',
    });
    // Authorized (the service's part is tested elsewhere), then cancelled by the manager.
    const cancel = (receiptId: string) => {
      terminal.store.transaction(() => terminal.store.receipts.updateReceipt(receiptId, { state: 'authorized' }, new Date().toISOString()));
      requestCancellation(terminal.store, terminal.clock, {
        receipt: terminal.store.receipts.receipt(receiptId)!,
        manager: terminal.store.managers.manager(manager.id)!,
        justification: 'Cliente desistiu da compra no caixa',
        skipLocalWindowCheck: true,
      });
    };

    // The till is closed: the refund waits for the next opening, and is recorded in it.
    cancel(cash.receipt.id);
    cancel(card.receipt.id); // paid by card: the acquirer reverses it, not the drawer
    const reopened = await terminal.openCashSession({ floatCents: 5000, operator: 'João' });
    const refund = 'Devolução em dinheiro: NFC-e nº 1 (série 1) do caixa nº 1 cancelada após o fechamento';
    expect(reopened.movements).toEqual([expect.objectContaining({ kind: 'sangria', amountCents: 1890, reason: refund, authorizedBy: 'Gerente Teste' })]);
    expect(terminal.auditLog(cash.receipt.id).map((a) => [a.action, a.actor_name])).toContainEqual(['sangria', 'Gerente Teste']);

    // With the till open: at once. And a refusal of that cancellation puts the money back.
    cancel(later.receipt.id);
    expect((await terminal.cashSession())!.movements.map((m) => [m.kind, m.amountCents])).toEqual([
      ['sangria', 1890],
      ['sangria', 1890],
    ]);
    terminal.store.transaction(() => {
      terminal.store.receipts.updateReceipt(later.receipt.id, { state: 'authorized' }, new Date().toISOString());
      settleRefund(terminal.store, terminal.clock, later.receipt.id, null);
    });
    const after = (await terminal.cashSession())!;
    expect(after.movements.at(-1)).toMatchObject({
      kind: 'suprimento',
      amountCents: 1890,
      reason: 'Cancelamento recusado: NFC-e nº 3 (série 1) do caixa nº 1; o valor devolvido volta ao caixa',
      authorizedBy: null,
    });
    // 50,00 − 18,90 − 18,90 + 18,90 = 31,10 expected in the drawer; nothing else owed or moved.
    const closed = await terminal.closeCashSession({ counts: [{ tPag: '01', countedCents: 3110 }], operator: 'João' });
    expect(closed.closing!.cash).toMatchObject({ floatCents: 5000, sangriasCents: 3780, suprimentosCents: 1890, expectedCents: 3110, differenceCents: 0 });
    expect(terminal.store.cash.owedCashMovements()).toEqual([]);
  });
});
