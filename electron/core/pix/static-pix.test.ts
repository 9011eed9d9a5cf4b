// Static PIX at the counter (docs/pix.md): the key from the first start or the manager, the BR Code
// for part of an open sale, the hand-confirmed line, and the receipt that says so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildNfce } from '../../../fiscal/nfce/build.ts';
import { demoEmitter, DEMO_CSC } from '../../../fiscal/samples.ts';
import { iso } from '../../../base/common/clock.ts';
import { crc16CcittFalse } from '../../../base/common/pix/br-code.ts';
import { seedDemoCatalog } from '../catalog.ts';
import { profileOfEmitter } from '../company-profile.ts';
import type { TerminalError } from '../errors.ts';
import { PosStore } from '../pos-store.ts';
import * as sales from '../sales.ts';
import { fileKeySecretBox } from '../secret-box.ts';
import { Settings } from '../settings.ts';
import { staticPix, staticPixReference } from './static-pix.ts';

let dir: string;
let store: PosStore;
const now = Date.parse('2026-11-27T15:00:00.000Z');
const clock = () => now;
const emitter = demoEmitter();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-static-pix-'));
  store = PosStore.open(dir);
  store.series.ensureSeries(1);
  seedDemoCatalog(store, iso(now));
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const settingsWith = (pixKey?: string) => {
  const settings = new Settings({ store, clock, box: fileKeySecretBox(dir), seed: { pixKey } });
  settings.prepare({ company: { ...profileOfEmitter(emitter), cscToken: DEMO_CSC.token } }).commit();
  return settings;
};

const refused = (f: () => unknown): TerminalError => {
  try {
    f();
  } catch (err) {
    return err as TerminalError;
  }
  throw new Error('not refused');
};

describe('static PIX (tPag 20)', () => {
  it('writes the BR Code for part of an open sale with the store’s key and the sale’s reference, and the receipt says it was confirmed by hand', () => {
    const settings = settingsWith('123.456.789-09');
    expect(settings.pix).toEqual({ key: '12345678909' }); // typed with its mask, kept bare
    const ctx: sales.SalesContext = { store, clock, serie: 1 };
    const sale = sales.openSale(ctx);
    sales.addItem(ctx, sale.id, { code: '1001', quantity: '2' });
    const view = sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 100 });

    const pix = staticPix(settings, view, view.remainingCents);
    expect(pix.reference).toBe(staticPixReference(sale.id));
    expect(pix.reference).toMatch(/^[0-9A-F]{25}$/);
    expect(pix.brCode).toContain(`0111${'12345678909'}`);
    expect(pix.brCode).toContain(`54${String((pix.amountCents / 100).toFixed(2).length).padStart(2, '0')}${(pix.amountCents / 100).toFixed(2)}`);
    expect(pix.brCode).toContain(`0525${pix.reference}`);
    expect(pix.brCode.slice(-4)).toBe(crc16CcittFalse(pix.brCode.slice(0, -4)));
    // Asked again (the cashier went back), the same sale shows the same code.
    expect(staticPix(settings, view, view.remainingCents).brCode).toBe(pix.brCode);

    // More than what is missing, or a sale no longer open: refused naming why.
    expect(refused(() => staticPix(settings, view, view.remainingCents + 1)).message).toMatch(/maior que o que falta/);

    sales.addPayment(ctx, sale.id, { tPag: '20', amountCents: pix.amountCents });
    const { receipt } = sales.finishSale(ctx, sale.id);
    const request = JSON.parse(receipt.request_json) as { infCpl?: string; pag: { tPag: string }[] };
    expect(request.pag.map((p) => p.tPag)).toEqual(['01', '20']);
    expect(request.infCpl).toBe(`PIX estático (tPag 20) conferido pelo operador, sem confirmação do banco. Ref. PIX ${pix.reference}`);
    // The authority's rules take it: tPag 20 needs no card group.
    expect(() => buildNfce(request as never, { emitter, dhEmi: new Date(now), tpEmis: 1 })).not.toThrow();
    expect(refused(() => staticPix(settings, sales.saleView(store, store.sales.sale(sale.id)!), 100)).code).toBe('estado_invalido');
  });

  it('is refused without a PIX key, and a bad key is refused naming the field', () => {
    const settings = settingsWith();
    const ctx: sales.SalesContext = { store, clock, serie: 1 };
    const sale = sales.addItem(ctx, sales.openSale(ctx).id, { code: '1001' });
    const e = refused(() => staticPix(settings, sale, 100));
    expect(e.field).toBe('pix.key');
    expect(e.message).toMatch(/nenhuma chave PIX configurada/);
    expect(refused(() => settings.prepare({ pix: { key: 'chave ruim' } })).field).toBe('pix.key');
    settings.prepare({ pix: { key: 'caixa@loja.com.br' } }).commit();
    expect(staticPix(settings, sale, 100).key).toBe('caixa@loja.com.br');
  });
});
