// The screen API in plain Node, with the service unreachable (a real refused connection on a
// port nobody listens on): everything the cashier does works offline, the receipt waits in the
// outbox with its key, and the queue status says so. The exchanges with the real service are in
// test/terminal-*.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildNfce } from '../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import { demoEmitter } from '../../fiscal/samples.ts';
import { ean13, withWrongCheckDigit } from '../../test/helpers/scale-labels.ts';
import type { TerminalEvent } from '../api/terminal-api.ts';
import { saveProduct } from './catalog.ts';
import { createTerminal, type Terminal } from './terminal.ts';

let dir: string;
let terminal: Terminal | undefined;
let deadUrl: string;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`tempo esgotado esperando: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-terminal-'));
  deadUrl = `http://127.0.0.1:${await closedPort()}`;
});

afterEach(async () => {
  await terminal?.close();
  terminal = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The terminal on `dir`, its till open (no sale finishes without one: cash-session.test.ts). */
async function open(over: Partial<Parameters<typeof createTerminal>[0]> = {}): Promise<Terminal> {
  const t = await createTerminal({
    dataDir: dir,
    serviceUrl: deadUrl,
    token: 'blc_teste',
    series: 7,
    retry: { baseMs: 20, capMs: 100 },
    healthIntervalMs: 50,
    ...over,
  });
  if (!(await t.cashSession())) await t.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
  return t;
}

describe('the screen API with the service down', () => {
  it('sells, finishes durably, and keeps the receipt pending under the same key while the service is away', async () => {
    let later = 0;
    terminal = await open({ clock: () => Date.now() + later });
    await terminal.seedDemoCatalog();
    const events: TerminalEvent[] = [];
    terminal.subscribe((e) => events.push(e));

    expect((await terminal.findProducts('café')).map((p) => p.code)).toEqual(['1001']);
    let sale = await terminal.openSale();
    sale = await terminal.addItem(sale.id, { code: '7891000100103', quantity: '2' });
    sale = await terminal.addItem(sale.id, { code: '1006', quantity: '0.5' });
    sale = await terminal.setConsumer(sale.id, '529.982.247-25');
    sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 5000 });
    expect(sale).toMatchObject({ totalCents: 3780 + 745, paidCents: 5000, remainingCents: 0, changeCents: 475 });
    const { receipt } = await terminal.finishSale(sale.id);
    expect(receipt).toMatchObject({ serie: 7, nNF: 1, state: 'pending', totalCents: 4525, canCorrect: false, canVoid: false });
    expect(receipt.cancellation).toEqual({ allowed: false, deadline: null, secondsLeft: null, remedy: null });
    expect((await terminal.getSale(sale.id)).receiptId).toBe(receipt.id);

    const key = terminal.store.receipts.receipt(receipt.id)!.idempotency_key;
    const entry = await until('três tentativas', () => {
      const e = terminal!.store.outbox.outboxOf(receipt.id)[0]!;
      return e.attempts >= 3 && e;
    });
    expect(entry).toMatchObject({ kind: 'emit', state: 'pending', idempotency_key: key });
    expect(entry.last_error).toMatch(/fora do ar/);
    expect(terminal.store.receipts.receipt(receipt.id)).toMatchObject({ state: 'pending', idempotency_key: key, nnf: 1 });

    const status = await terminal.queueStatus();
    expect(status).toMatchObject({ online: false, pending: 1, needsAttention: 0, oldestPendingAt: receipt.createdAt });
    expect(status.lastError).toMatch(/conexão recusada/);
    expect(status.oldestPendingAgeSeconds).toBeLessThan(60);
    later = 7 * 60_000; // seven minutes on, still waiting: the age says so
    expect((await terminal.queueStatus()).oldestPendingAgeSeconds).toBeGreaterThanOrEqual(7 * 60);
    expect(events.some((e) => e.type === 'receipt' && e.receipt.id === receipt.id)).toBe(true);
    expect(events.some((e) => e.type === 'queue' && e.status.online === false)).toBe(true);
  });

  it('keeps everything across a restart: open sales, receipts, the outbox entry and its key', async () => {
    terminal = await open();
    terminal.seedDemoCatalog();
    const kept = await terminal.openSale();
    await terminal.addItem(kept.id, { code: '1002' });
    const sale = await terminal.openSale();
    await terminal.addItem(sale.id, { code: '1001' });
    await terminal.addPayment(sale.id, { tPag: '01', amountCents: 1890 });
    const { receipt } = await terminal.finishSale(sale.id);
    const key = terminal.store.receipts.receipt(receipt.id)!.idempotency_key;
    await terminal.close();

    terminal = await open();
    expect((await terminal.openSales()).map((s) => s.id)).toEqual([kept.id]);
    expect((await terminal.recentReceipts()).map((r) => [r.id, r.nNF, r.state])).toEqual([[receipt.id, 1, 'pending']]);
    expect(terminal.store.outbox.outboxOf(receipt.id)).toEqual([expect.objectContaining({ state: 'pending', idempotency_key: key })]);
    // The next sale takes the next number.
    await terminal.addPayment(kept.id, { tPag: '01', amountCents: 479 });
    expect((await terminal.finishSale(kept.id)).receipt.nNF).toBe(2);
  });

  it("refuses what the receipt's state does not allow, with the screen's codes", async () => {
    terminal = await open({ startWorker: false });
    terminal.seedDemoCatalog();
    const manager = await terminal.createManager({ name: 'Gerente', pin: '9876' });
    expect(await terminal.listManagers()).toEqual([manager]);
    const sale = await terminal.openSale();
    await terminal.addItem(sale.id, { code: '1001' });
    await terminal.addPayment(sale.id, { tPag: '01', amountCents: 1890 });
    const { receipt } = await terminal.finishSale(sale.id);
    await expect(terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '9876', justification: 'Cliente desistiu da compra' })).rejects.toMatchObject(
      {
        code: 'estado_invalido',
      },
    );
    await expect(terminal.correctAndResubmit(receipt.id, {}, { managerId: manager.id, pin: '9876', reason: 'teste' })).rejects.toMatchObject({
      code: 'estado_invalido',
    });
    await expect(
      terminal.voidReceipt(receipt.id, { managerId: manager.id, pin: '9876', justification: 'Venda abandonada pelo cliente' }),
    ).rejects.toMatchObject({
      code: 'estado_invalido',
    });
    await expect(terminal.reprint(receipt.id, { managerId: manager.id, pin: '9876', reason: 'papel enroscou' })).rejects.toMatchObject({
      code: 'estado_invalido',
    });
    await expect(terminal.printReceipt(receipt.id)).rejects.toMatchObject({ code: 'estado_invalido' });
    await expect(terminal.addItem(sale.id, { code: '1001' })).rejects.toMatchObject({ code: 'estado_invalido', message: 'Esta venda já foi finalizada' });
    await expect(terminal.getReceipt('nao-existe')).rejects.toMatchObject({ code: 'nao_encontrado' });
    const err = await terminal.finishSale(sale.id).catch((e: unknown) => e);
    expect(JSON.parse(JSON.stringify(err))).toEqual({ code: 'estado_invalido', message: 'Esta venda já foi finalizada' });
    expect((await terminal.queueStatus()).online).toBeNull();
  });

  it('discards an open sale without a number', async () => {
    terminal = await open({ startWorker: false });
    terminal.seedDemoCatalog();
    const sale = await terminal.openSale();
    await terminal.addItem(sale.id, { code: '1001' });
    expect((await terminal.discardSale(sale.id)).state).toBe('discarded');
    expect(await terminal.openSales()).toEqual([]);
    expect(terminal.store.series.nextNumber(7)).toBe(1);
  });
});

describe('scale labels at the counter', () => {
  it('the manager sets the layout; price and weight labels enter the product, the weighed quantity and the exact total, and the receipt builds', async () => {
    terminal = await open({ startWorker: false });
    terminal.seedDemoCatalog();
    saveProduct(
      terminal.store,
      { code: '2345', gtin: 'SEM GTIN', description: 'Queijo prato', ncm: '04069020', cfop: '5102', unit: 'KG', price: '59.90', taxGroup: 'SN102' },
      new Date().toISOString(),
    );
    const manager = await terminal.createManager({ name: 'Gerente', pin: '9876' });
    const auth = { managerId: manager.id, pin: '9876' };
    const priceLabel = ean13('2' + '2345' + '0' + '002102'); // Toledo 2CCCC0TTTTTT: R$ 21,02 of cheese
    const weightLabel = ean13('2' + '01006' + '0' + '00355'); // 2CCCCC0PPPPP: 0,355 kg of bread

    // Off (the default): a label is just a code the catalog does not have.
    expect((await terminal.getSettings()).scaleLabels).toEqual({ enabled: false, codeLength: 4, valueLength: 6, content: 'price', decimals: 2 });
    let sale = await terminal.openSale();
    await expect(terminal.addItem(sale.id, { code: priceLabel })).rejects.toMatchObject({
      code: 'produto_nao_encontrado',
      field: 'code',
      message: `Produto não encontrado: ${priceLabel} (se for etiqueta de balança, ative a leitura em Configurações → Balança)`,
    });

    await terminal.updateSettings({ scaleLabels: { enabled: true, codeLength: 4, valueLength: 6, content: 'price', decimals: 2 } }, auth);
    sale = await terminal.addItem(sale.id, { code: priceLabel });
    // 0,351 kg × R$ 59,90 = 21,0249 → R$ 21,02, the label's total.
    expect(sale.items[0]).toMatchObject({ code: '2345', description: 'Queijo prato', unit: 'KG', quantity: '0.351', unitPriceCents: 5990, totalCents: 2102 });
    await expect(terminal.addItem(sale.id, { code: withWrongCheckDigit(priceLabel) })).rejects.toMatchObject({
      code: 'etiqueta_invalida',
      field: 'code',
      message: expect.stringMatching(/^Etiqueta de balança 22345000210\d{2} com dígito verificador inválido \(o último dígito deveria ser \d\)/),
    });
    await expect(terminal.addItem(sale.id, { code: priceLabel, quantity: '2' })).rejects.toMatchObject({ code: 'quantidade_invalida', field: 'quantity' });
    await expect(terminal.addItem(sale.id, { code: ean13('2' + '9999' + '0' + '000500') })).rejects.toMatchObject({
      code: 'produto_nao_encontrado',
      message: expect.stringContaining('Produto 9999 da etiqueta de balança'),
    });

    await expect(
      terminal.updateSettings({ scaleLabels: { enabled: true, codeLength: 6, valueLength: 6, content: 'weight', decimals: 3 } }, auth),
    ).rejects.toMatchObject({
      code: 'configuracao_invalida',
      field: 'scaleLabels.valueLength',
    });
    await terminal.updateSettings({ scaleLabels: { enabled: true, codeLength: 5, valueLength: 5, content: 'weight', decimals: 3 } }, auth);
    sale = await terminal.addItem(sale.id, { code: weightLabel });
    // 0,355 kg × R$ 14,90 = 5,2895 → R$ 5,29
    expect(sale.items[1]).toMatchObject({ code: '1006', description: 'Pão francês', quantity: '0.355', unitPriceCents: 1490, totalCents: 529 });
    expect(sale.totalCents).toBe(2102 + 529);
    expect(terminal.store.managers.auditLog().filter((a) => a.action === 'configuracoes_alteradas')).toHaveLength(2);

    await terminal.addPayment(sale.id, { tPag: '01', amountCents: 3000 });
    const { receipt } = await terminal.finishSale(sale.id);
    const request = JSON.parse(terminal.store.receipts.receipt(receipt.id)!.request_json) as NfceRequest;
    expect(request.det.map((d) => [d.prod.cProd, d.prod.cEAN, d.prod.qCom, d.prod.vUnCom, d.prod.vProd])).toEqual([
      ['2345', 'SEM GTIN', '0.351', '59.90', '21.02'],
      ['1006', 'SEM GTIN', '0.355', '14.90', '5.29'],
    ]);
    // The fiscal builder recomputes vProd = qCom × vUnCom (rejection 629) and the totals.
    expect(() => buildNfce(request, { emitter: demoEmitter(), dhEmi: new Date(), tpEmis: 1 })).not.toThrow();
  });
});
