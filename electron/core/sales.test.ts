import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildNfce } from '../../fiscal/nfce/build.ts';
import { loadMigrations, migrationSetDir } from '../../migrations/migrate.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import { demoEmitter, DEMO_PRODUCTS } from '../../fiscal/samples.ts';
import { ean13 } from '../../test/helpers/scale-labels.ts';
import type { ScaleLabelSettings } from '../api/terminal-api.ts';
import { seedDemoCatalog, saveProduct } from './catalog.ts';
import { POS_DB_FILE } from './db.ts';
import { TerminalError } from './errors.ts';
import { PosStore } from './pos-store.ts';
import * as sales from './sales.ts';
import { iso } from '../../base/common/clock.ts';

let dir: string;
let store: PosStore;
let now: number;
let ctx: sales.SalesContext;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-pos-sales-'));
  store = PosStore.open(dir);
  now = Date.parse('2026-11-22T15:00:00.000Z');
  ctx = { store, clock: () => now, serie: 1 };
  store.series.ensureSeries(1);
  seedDemoCatalog(store, iso(now));
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const emitter = demoEmitter();
/** The fiscal builder is the judge of "exact to the cent": it rejects what SEFAZ would (629, 869...). */
const assertBuilds = (request: NfceRequest) => buildNfce(request, { emitter, dhEmi: new Date(now), tpEmis: 1 });

function saleWith(items: { code: string; quantity?: string }[], payments: Parameters<typeof sales.addPayment>[2][]): string {
  const sale = sales.openSale(ctx);
  for (const i of items) sales.addItem(ctx, sale.id, i);
  for (const p of payments) sales.addPayment(ctx, sale.id, p);
  return sale.id;
}

describe('the terminal database', () => {
  it('is in WAL mode with synchronous FULL and foreign keys on, at the current migration', () => {
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    const shipped = loadMigrations(migrationSetDir('pos')).map((m) => m.id);
    expect(shipped[0]).toBe('20261122T0400_init');
    expect(store.db.prepare('SELECT id FROM schema_migrations ORDER BY id').pluck().all()).toEqual(shipped);
  });

  it("commits the worker's bookkeeping without its own fsync, and is back to FULL right after", () => {
    expect(store.relaxedTransaction(() => store.db.pragma('synchronous', { simple: true }))).toBe(1); // NORMAL inside
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(() =>
      store.relaxedTransaction(() => {
        throw new Error('falhou');
      }),
    ).toThrow('falhou');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it("checkpoints the WAL only when enough changed, and leaves SQLite's own checkpoint far away", () => {
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(16384);
    store.checkpointIfDue(0);
    expect(store.checkpointIfDue(500)).toBe(false);
    for (let i = 0; i < 3; i++) {
      const id = saleWith([{ code: '1001' }], [{ tPag: '01', amountCents: 1890 }]);
      sales.finishSale(ctx, id);
    }
    expect(store.checkpointIfDue(500)).toBe(false);
    expect(store.checkpointIfDue(10)).toBe(true);
    expect(store.checkpointIfDue(10)).toBe(false);
  });

  it('keeps the audit log append-only', () => {
    store.managers.appendAudit({
      at: iso(now),
      actor_kind: 'system',
      actor_id: 't',
      actor_name: 'T',
      action: 'x',
      receipt_id: null,
      reason: null,
      details: null,
    });
    expect(() => store.db.exec("UPDATE audit_log SET reason = 'mudou'")).toThrow(/somente inclusão/);
    expect(() => store.db.exec('DELETE FROM audit_log')).toThrow(/somente inclusão/);
    expect(store.managers.auditLog()).toHaveLength(1);
  });
});

describe('items and totals', () => {
  it('rounds quantity × price half-up to the cent, like the 629 rule', () => {
    expect(sales.itemTotalCents(3500n, 1490n)).toBe(522n); // 0.35 kg × 14.90 = 5.215 → 5.22
    expect(sales.itemTotalCents(3333n, 1000n)).toBe(333n); // 0.3333 × 10.00 = 3.333 → 3.33
    expect(sales.itemTotalCents(10000n, 1890n)).toBe(1890n);
    expect(sales.formatQuantity(3500n)).toBe('0.35');
    expect(sales.formatQuantity(20000n)).toBe('2');
  });

  it('adds by code or GTIN, removes an item from every total but keeps it listed', () => {
    const sale = sales.openSale(ctx);
    sales.addItem(ctx, sale.id, { code: '1001', quantity: '2' });
    let view = sales.addItem(ctx, sale.id, { code: '7891910000197' });
    expect(view.items.map((i) => [i.code, i.quantity, i.totalCents])).toEqual([
      ['1001', '2', 3780],
      ['1002', '1', 479],
    ]);
    expect(view.totalCents).toBe(4259);
    view = sales.removeItem(ctx, sale.id, view.items[0]!.id);
    expect(view.items[0]!.removed).toBe(true);
    expect(view.totalCents).toBe(479);
    expect(() => sales.removeItem(ctx, sale.id, view.items[0]!.id)).toThrow(TerminalError);
  });

  it("changes a line's quantity as the tape does: the line struck through, the product again at its sold price, the total follows", () => {
    const sale = sales.openSale(ctx);
    let view = sales.addItem(ctx, sale.id, { code: '1001' });
    sales.addItem(ctx, sale.id, { code: '1002' });
    saveProduct(
      store,
      { code: '1001', gtin: '7891000100103', description: 'Café', ncm: '09012100', cfop: '5102', unit: 'UN', price: '99.99', taxGroup: 'SN102' },
      iso(now),
    );
    view = sales.changeItemQuantity(ctx, sale.id, view.items[0]!.id, '3');
    expect(view.items.map((i) => [i.code, i.quantity, i.totalCents, i.removed])).toEqual([
      ['1001', '1', 1890, true],
      ['1002', '1', 479, false],
      ['1001', '3', 5670, false],
    ]);
    expect(view.totalCents).toBe(5670 + 479);
    // A removed line, a bad quantity: refused, nothing changed.
    expect(() => sales.changeItemQuantity(ctx, sale.id, view.items[0]!.id, '2')).toThrow(/já removido/);
    expect(() => sales.changeItemQuantity(ctx, sale.id, view.items[2]!.id, '0')).toThrow(TerminalError);
    expect(sales.saleView(store, store.sales.sale(sale.id)!).totalCents).toBe(5670 + 479);
  });

  it("refuses unknown products and bad quantities with the cashier's message", () => {
    const sale = sales.openSale(ctx);
    expect(() => sales.addItem(ctx, sale.id, { code: '999' })).toThrow(/Produto não encontrado: 999/);
    for (const quantity of ['0', '-1', '1,5', 'abc', '1.00001']) {
      expect(() => sales.addItem(ctx, sale.id, { code: '1001', quantity }), quantity).toThrow(TerminalError);
    }
    expect(() => sales.addItem(ctx, sale.id, { code: '1002', quantity: '0.0001' })).toThrow(/R\$ 0,00/);
  });

  it('copies the product at the time of sale: a later price change does not touch it', () => {
    const sale = sales.openSale(ctx);
    sales.addItem(ctx, sale.id, { code: '1001' });
    saveProduct(
      store,
      { code: '1001', gtin: '7891000100103', description: 'Café', ncm: '09012100', cfop: '5102', unit: 'UN', price: '99.99', taxGroup: 'SN102' },
      iso(now),
    );
    expect(sales.saleView(store, store.sales.sale(sale.id)!).totalCents).toBe(1890);
  });
});

describe('consumer document', () => {
  it('accepts a CPF or CNPJ (numeric or alphanumeric) with or without punctuation, and refuses a wrong check digit or a lower-case letter', () => {
    expect(sales.normalizeConsumerDocument('529.982.247-25')).toEqual({ kind: 'cpf', document: '52998224725' });
    expect(sales.normalizeConsumerDocument('11.222.333/0001-81')).toEqual({ kind: 'cnpj', document: '11222333000181' });
    expect(sales.normalizeConsumerDocument('12.ABC.345/01DE-35')).toEqual({ kind: 'cnpj', document: '12ABC34501DE35' });
    expect(() => sales.normalizeConsumerDocument('52998224724')).toThrow(/dígito verificador/);
    expect(() => sales.normalizeConsumerDocument('12ABC34501DE36')).toThrow(/^CPF\/CNPJ do consumidor: CNPJ inválido \(dígito verificador/);
    expect(() => sales.normalizeConsumerDocument('12.abc.345/01de-35')).toThrow(/letras maiúsculas/);
    expect(() => sales.normalizeConsumerDocument('123')).toThrow(/11 dígitos \(CPF\) ou 14 caracteres \(CNPJ\)/);
    const sale = sales.openSale(ctx);
    expect(sales.setConsumer(ctx, sale.id, '52998224725').consumer).toEqual({ kind: 'cpf', document: '52998224725' });
    expect(sales.setConsumer(ctx, sale.id, null).consumer).toBeNull();
  });
});

describe('payments', () => {
  it('gives change only from cash', () => {
    const ok = saleWith(
      [{ code: '1001' }],
      [
        { tPag: '03', amountCents: 1000, card: { tpIntegra: '2' } },
        { tPag: '01', amountCents: 1000 },
      ],
    );
    expect(sales.saleView(store, store.sales.sale(ok)!).changeCents).toBe(110);
    const bad = saleWith([{ code: '1001' }], [{ tPag: '03', amountCents: 2000, card: { tpIntegra: '2' } }]);
    expect(() => sales.finishSale(ctx, bad)).toThrow(/Só pagamento em dinheiro pode ter troco/);
  });

  it('refuses an insufficient payment and a sale without items, consuming no number', () => {
    const short = saleWith([{ code: '1001' }], [{ tPag: '01', amountCents: 1889 }]);
    expect(() => sales.finishSale(ctx, short)).toThrow(/faltam R\$ 0,01/);
    const empty = saleWith([], [{ tPag: '01', amountCents: 100 }]);
    expect(() => sales.finishSale(ctx, empty)).toThrow(/não tem itens/);
    expect(store.series.nextNumber(1)).toBe(1);
    expect(store.sales.sale(short)!.state).toBe('open');
  });

  it('checks the card group: integrated needs the acquirer CNPJ and the authorization code (392)', () => {
    const sale = sales.openSale(ctx);
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '03', amountCents: 100, card: { tpIntegra: '1' } })).toThrow(/TEF.*CNPJ/);
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '03', amountCents: 100, card: { tpIntegra: '2', cnpj: '11222333000180' } })).toThrow(
      /dígito verificador/,
    );
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '03', amountCents: 100, card: { tpIntegra: '2', cnpj: '12abc34501de35' } })).toThrow(
      expect.objectContaining({ field: 'payment.card.cnpj', message: expect.stringMatching(/letras maiúsculas/) }),
    );
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 100, card: { tpIntegra: '2' } })).toThrow(/não leva dados de cartão/);
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '99', amountCents: 100 })).toThrow(/não aceita/);
    expect(() => sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 10.5 })).toThrow(/inteiro de centavos/);
    const view = sales.addPayment(ctx, sale.id, { tPag: '04', amountCents: 100, card: { tpIntegra: '1', cnpj: '11222333000181', cAut: 'A1B2', tBand: '02' } });
    expect(view.payments[0]!.card).toEqual({ tpIntegra: '1', cnpj: '11222333000181', cAut: 'A1B2', tBand: '02' });
    // An acquirer with an alphanumeric CNPJ.
    const alpha = sales.addPayment(ctx, sale.id, { tPag: '03', amountCents: 100, card: { tpIntegra: '1', cnpj: '12ABC34501DE35', cAut: 'X9' } });
    expect(alpha.payments[1]!.card).toEqual({ tpIntegra: '1', cnpj: '12ABC34501DE35', cAut: 'X9' });
  });

  it('a PIX (17) always carries the card group: without one given, tpIntegra 2', () => {
    const sale = sales.openSale(ctx);
    const view = sales.addPayment(ctx, sale.id, { tPag: '17', amountCents: 100 });
    expect(view.payments[0]).toMatchObject({ description: 'PIX Dinâmico', card: { tpIntegra: '2' } });
  });

  it('takes PIX Automático (23) and TEF Book Transfer (24) from 2026-05-04 (Brasília), not the day before', () => {
    const sale = sales.openSale(ctx);
    now = Date.parse('2026-05-04T02:59:59Z'); // 2026-05-03 23:59:59 in Brasília
    for (const tPag of ['23', '24']) {
      expect(() => sales.addPayment(ctx, sale.id, { tPag, amountCents: 100 })).toThrow(new RegExp(`${tPag} .*vale a partir de 04/05/2026`));
    }
    now = Date.parse('2026-05-04T03:00:00Z');
    sales.addPayment(ctx, sale.id, { tPag: '23', amountCents: 100 });
    const view = sales.addPayment(ctx, sale.id, { tPag: '24', amountCents: 100 });
    expect(view.payments.map((p) => [p.tPag, p.description])).toEqual([
      ['23', 'PIX Automático'],
      ['24', 'TEF Book Transfer'],
    ]);
  });
});

describe('finish: the one transaction', () => {
  it('allocates contiguous numbers and writes sale, receipt and outbox entry with a fresh key', () => {
    const ids = [0, 1, 2].map(() => saleWith([{ code: '1001' }], [{ tPag: '01', amountCents: 2000 }]));
    const outcomes = ids.map((id) => sales.finishSale(ctx, id));
    expect(outcomes.map((o) => o.receipt.nnf)).toEqual([1, 2, 3]);
    expect(new Set(outcomes.map((o) => o.receipt.idempotency_key)).size).toBe(3);
    for (const o of outcomes) {
      expect(o.sale.state).toBe('finished');
      expect(o.receipt.state).toBe('pending');
      const [entry, ...others] = store.outbox.outboxOf(o.receipt.id);
      expect(others).toEqual([]);
      expect(entry).toMatchObject({ kind: 'emit', state: 'pending', idempotency_key: o.receipt.idempotency_key, attempts: 0 });
      expect(JSON.parse(entry!.payload)).toEqual(JSON.parse(o.receipt.request_json));
    }
    expect(store.series.nextNumber(1)).toBe(4);
    expect(() => sales.finishSale(ctx, ids[0]!)).toThrow(/já foi finalizada/);
  });

  it('builds the request of spec 2.3 from the sale: items, exact totals, change, card group, consumer', () => {
    const id = saleWith(
      [{ code: '1006', quantity: '0.35' }, { code: '1001', quantity: '3' }, { code: '1002' }],
      [
        { tPag: '04', amountCents: 5000, card: { tpIntegra: '2', tBand: '01' } },
        { tPag: '01', amountCents: 2000 },
      ],
    );
    sales.setConsumer(ctx, id, '52998224725');
    const { receipt } = sales.finishSale(ctx, id);
    const request = JSON.parse(receipt.request_json) as NfceRequest;
    // 0.35 × 14.90 = 5.215 → 5.22; 3 × 18.90 = 56.70; 4.79: 66.71. Paid 70.00: change 3.29.
    expect(request).toEqual({
      ide: { serie: 1, nNF: 1 },
      det: [
        expect.objectContaining({
          prod: expect.objectContaining({
            cProd: '1006',
            cEAN: 'SEM GTIN',
            qCom: '0.35',
            vUnCom: '14.90',
            vProd: '5.22',
            uCom: 'KG',
            qTrib: '0.35',
            vUnTrib: '14.90',
            indTot: '1',
          }),
        }),
        expect.objectContaining({ prod: expect.objectContaining({ cProd: '1001', qCom: '3', vProd: '56.70' }) }),
        expect.objectContaining({ prod: expect.objectContaining({ cProd: '1002', qCom: '1', vProd: '4.79' }) }),
      ],
      total: { vProd: '66.71', vNF: '66.71' },
      pag: [
        { tPag: '04', vPag: '50.00', card: { tpIntegra: '2', tBand: '01' } },
        { tPag: '01', vPag: '20.00' },
      ],
      vTroco: '3.29',
      dest: { cpf: '52998224725' },
    });
    expect(request.det[0]!.imposto).toEqual({ ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } } });
    expect(receipt.total_cents).toBe(6671);
    expect(store.sales.sale(id)!.change_cents).toBe(329);
    const built = assertBuilds(request);
    expect(built.vNF).toBe('66.71');
    expect(built.vTroco).toBe('3.29');
  });

  it('property: any sale of the catalog yields a request the fiscal builder accepts, totals to the cent', () => {
    const product = fc.constantFrom(...DEMO_PRODUCTS.map((p) => p.cProd));
    const quantity = fc.integer({ min: 1, max: 99_999 }).map((u) => sales.formatQuantity(BigInt(u)));
    fc.assert(
      fc.property(fc.array(fc.record({ code: product, quantity }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 5000 }), (items, extra) => {
        const sale = sales.openSale(ctx);
        let view = sales.saleView(store, store.sales.sale(sale.id)!);
        for (const i of items) {
          try {
            view = sales.addItem(ctx, sale.id, i);
          } catch (err) {
            if (!(err instanceof TerminalError && err.code === 'quantidade_invalida')) throw err; // rounds to R$ 0,00
          }
        }
        if (view.totalCents === 0) return;
        sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: view.totalCents + extra });
        const { receipt } = sales.finishSale(ctx, sale.id);
        const request = JSON.parse(receipt.request_json) as NfceRequest;
        const built = assertBuilds(request);
        expect(built.vNF).toBe(request.total.vNF);
        expect(BigInt(built.vNF.replace('.', ''))).toBe(BigInt(view.totalCents));
        expect(request.det.reduce((s, d) => s + BigInt(d.prod.vProd.replace('.', '')), 0n)).toBe(BigInt(view.totalCents));
      }),
      { numRuns: 60 },
    );
  });

  it("carries each product's IBS/CBS classification in the request; products without one leave it to the company default", () => {
    saveProduct(
      store,
      {
        code: '9001',
        gtin: 'SEM GTIN',
        description: 'Arroz 5kg',
        ncm: '10063021',
        cfop: '5102',
        unit: 'UN',
        price: '27.45',
        taxGroup: 'ISENTO40',
        ibsCbs: { CST: '200', cClassTrib: '200003' },
      },
      iso(now),
    );
    const id = saleWith([{ code: '9001' }, { code: '1001' }], [{ tPag: '01', amountCents: 10_000 }]);
    const { receipt } = sales.finishSale(ctx, id);
    const request = JSON.parse(receipt.request_json) as NfceRequest;
    expect(request.det[0]!.imposto.IBSCBS).toEqual({ CST: '200', cClassTrib: '200003' });
    expect(request.det[1]!.imposto).not.toHaveProperty('IBSCBS');
    expect(() =>
      saveProduct(
        store,
        {
          code: '9002',
          gtin: 'SEM GTIN',
          description: 'X',
          ncm: '10063021',
          cfop: '5102',
          unit: 'UN',
          price: '1.00',
          taxGroup: 'SN102',
          ibsCbs: { CST: '000', cClassTrib: '200003' },
        },
        iso(now),
      ),
    ).toThrow(/rejeição 1024/);
  });

  it('above R$ 10.000,00 the sale says so and cannot finish without the consumer CPF or CNPJ (750); no number is taken', () => {
    saveProduct(
      store,
      { code: '9100', gtin: 'SEM GTIN', description: 'Televisor', ncm: '85287200', cfop: '5102', unit: 'UN', price: '3500.00', taxGroup: 'SN102' },
      iso(now),
    );
    const exactly = saleWith(
      [
        { code: '9100', quantity: '2' },
        { code: '9100', quantity: '0.8571' },
      ],
      [],
    );
    const limit = sales.saleView(store, store.sales.sale(exactly)!);
    expect([limit.totalCents, limit.consumerRequired, limit.identificationLimitCents]).toEqual([999_985, false, 1_000_000]);
    const id = saleWith([{ code: '9100', quantity: '3' }], [{ tPag: '01', amountCents: 1_050_000 }]);
    expect(sales.saleView(store, store.sales.sale(id)!).consumerRequired).toBe(true);
    let err: unknown;
    try {
      sales.finishSale(ctx, id);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'documento_invalido', field: 'consumer', message: 'Venda acima de R$ 10.000,00: informe o CPF ou o CNPJ do consumidor' });
    expect(store.db.prepare('SELECT count(*) FROM receipts').pluck().get()).toBe(0);
    sales.setConsumer(ctx, id, '529.982.247-25');
    expect(sales.finishSale(ctx, id).receipt.nnf).toBe(1);
  });

  it('commits all or nothing: a failure inside the transaction leaves no number taken and no entry', () => {
    const id = saleWith([{ code: '1001' }], [{ tPag: '01', amountCents: 2000 }]);
    // Another process holding the series row under a different number would make the receipt
    // insert collide: simulate it with a receipt that already owns number 1.
    const other = saleWith([{ code: '1002' }], [{ tPag: '01', amountCents: 500 }]);
    sales.finishSale(ctx, other);
    store.db.prepare('UPDATE series SET next_nnf = 1 WHERE serie = 1').run();
    expect(() => sales.finishSale(ctx, id)).toThrow(/UNIQUE/);
    expect(store.sales.sale(id)!.state).toBe('open');
    expect(store.receipts.receiptBySale(id)).toBeUndefined();
    expect(store.series.nextNumber(1)).toBe(1);
    expect(store.outbox.allOutbox()).toHaveLength(1);
  });

  it('is on disk when it returns: another connection sees it at once', () => {
    const id = saleWith([{ code: '1001' }], [{ tPag: '01', amountCents: 2000 }]);
    const { receipt } = sales.finishSale(ctx, id);
    const other = new Database(join(dir, POS_DB_FILE), { readonly: true });
    try {
      expect(other.prepare('SELECT nnf FROM receipts WHERE id = ?').pluck().get(receipt.id)).toBe(1);
      expect(other.prepare("SELECT count(*) FROM outbox WHERE state = 'pending'").pluck().get()).toBe(1);
    } finally {
      other.close();
    }
  });
});

describe('scale labels (addItem)', () => {
  const on = (s: Partial<ScaleLabelSettings> = {}): sales.SalesContext => ({
    ...ctx,
    scaleLabels: () => ({ enabled: true, codeLength: 6, valueLength: 5, content: 'weight', decimals: 3, ...s }),
  });

  it('finds the product by the label’s code as printed or without leading zeros, and refuses a code the catalog lacks, naming the field', () => {
    const sale = sales.openSale(ctx);
    const view = sales.addItem(on(), sale.id, { code: ean13('2' + '001006' + '01000') }); // 1,000 kg
    expect(view.items[0]).toMatchObject({ code: '1006', quantity: '1', unitPriceCents: 1490, totalCents: 1490 });
    const err = (() => {
      try {
        sales.addItem(on(), sale.id, { code: ean13('2' + '004242' + '01000') });
      } catch (e) {
        return e as TerminalError;
      }
    })();
    expect(err).toBeInstanceOf(TerminalError);
    expect(err).toMatchObject({ code: 'produto_nao_encontrado', field: 'code' });
    expect(err!.message).toMatch(/^Produto 004242 da etiqueta de balança 20042420100\d{2} não encontrado no cadastro$/);
    expect(store.sales.items(sale.id)).toHaveLength(1);
  });

  it('a product registered under the 13 digits themselves is that product, one unit, labels on or off', () => {
    const label = ean13('2' + '001006' + '01000');
    saveProduct(
      store,
      { code: label, gtin: 'SEM GTIN', description: 'Bolo da casa', ncm: '19059090', cfop: '5102', unit: 'UN', price: '12.00', taxGroup: 'SN102' },
      iso(now),
    );
    const sale = sales.openSale(ctx);
    expect(sales.addItem(on(), sale.id, { code: label }).items[0]).toMatchObject({ description: 'Bolo da casa', quantity: '1', totalCents: 1200 });
  });

  it('labels off: a code starting with 2 the catalog lacks is not found, and the message says where to turn labels on', () => {
    const sale = sales.openSale(ctx);
    expect(() =>
      sales.addItem({ ...ctx, scaleLabels: () => ({ ...on().scaleLabels!(), enabled: false }) }, sale.id, { code: ean13('2' + '001006' + '01000') }),
    ).toThrow(expect.objectContaining({ code: 'produto_nao_encontrado', message: expect.stringContaining('ative a leitura em Configurações → Balança') }));
  });
});
