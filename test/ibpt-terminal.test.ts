// The IBPT table at the terminal (Lei 12.741/2012): imported by `balcao ibpt import` and by the
// manager (PIN), stored in the terminal's SQLite file as dated data, and used by the sales made
// on its days: each item's vTotTrib is the table's rate for its NCM in the store's UF, an NCM the
// table lacks falls back to the flat rate and is listed for the manager; before the table's
// validity nothing comes from it, after its end it is still used and the manager is told.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run as ibptCommand } from '../bin/ibpt.ts';
import { iso } from '../base/common/clock.ts';
import { seedDemoCatalog } from '../electron/core/catalog.ts';
import { ibptContextNow, ibptStatus, importIbpt, keepIbptEstimate } from '../electron/core/ibpt/ibpt.ts';
import { IbptStore } from '../electron/core/ibpt/ibpt-store.ts';
import { createManager } from '../electron/core/managers.ts';
import { PosStore } from '../electron/core/pos-store.ts';
import * as sales from '../electron/core/sales.ts';
import { buildNfce } from '../fiscal/nfce/build.ts';
import { withIbptEstimate } from '../fiscal/nfce/total.ts';
import type { NfceRequest } from '../fiscal/nfce/types.ts';
import { demoEmitter } from '../fiscal/samples.ts';
import { firstText } from '../fiscal/xml.ts';

const FILE = 'TabelaIBPTaxSP26.2.A.csv';
const TABLE = new URL(`../fiscal/ibpt/testdata/${FILE}`, import.meta.url);

let dir: string;
let now: number;
const clock = () => now;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-ibpt-'));
  now = Date.parse('2026-11-20T13:00:00.000Z');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `balcao ibpt …` in this process, with what it wrote. */
async function command(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  try {
    return { code: await ibptCommand(args), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** Sells one of each of `codes` (cash) in an SP store on `now`, with the stored IBPT tables. */
function sell(store: PosStore, ibpt: IbptStore, codes: string[], nNF: number): NfceRequest {
  const ctx: sales.SalesContext = { store, clock, serie: 1, uf: () => 'SP', ibpt: () => ibptContextNow(ibpt, 'SP', clock) };
  store.series.ensureSeries(1);
  const sale = sales.openSale(ctx);
  for (const code of codes) sales.addItem(ctx, sale.id, { code });
  const total = sales.saleView(store, store.sales.sale(sale.id)!).totalCents;
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: total });
  const { receipt } = sales.finishSale(ctx, sale.id);
  expect(receipt.nnf).toBe(nNF);
  return JSON.parse(receipt.request_json) as NfceRequest;
}

const itemTaxes = (xml: string) => xml.match(/<det nItem="[0-9]+">.*?<\/det>/g)!.map((d) => firstText(d, 'vTotTrib'));
const totalTax = (xml: string) => firstText(/<ICMSTot>.*<\/ICMSTot>/.exec(xml)![0], 'vTotTrib');

describe('the IBPT table at the terminal', () => {
  it('imported by `balcao ibpt import`: sales take each item’s vTotTrib from it by NCM and UF, an NCM outside it falls back and is listed; dated by the sale’s day', async () => {
    const file = join(dir, FILE);
    copyFileSync(TABLE, file);
    const done = await command(['import', file, '--data', dir]);
    expect(done).toMatchObject({ code: 0, err: '' });
    expect(done.out).toBe('Tabela do IBPT importada: UF SP, versão 26.2.A, chave B1A2C3, vigência de 01/11/2026 a 31/01/2027, 3 NCMs.\n');

    const store = PosStore.open(dir);
    try {
      seedDemoCatalog(store, iso(now));
      const ibpt = new IbptStore(store.db);
      // Café (09012100) and Açúcar (17019900) are in the table; Arroz (10063021) is not.
      const request = sell(store, ibpt, ['1001', '1002', '1003'], 1);
      // 18.90 × (13.45 + 18.00) % = 5.944 → 5.94; 4.79 × (10.15 + 7.00) % = 0.821 → 0.82; Arroz left to the builder.
      expect(request.det.map((d) => d.imposto.vTotTrib)).toEqual(['5.94', '0.82', undefined]);
      expect(request.infCpl).toBe('Fonte: IBPT, chave B1A2C3, versão 26.2.A');
      // Whoever builds the XML (the service, or this terminal offline) keeps them; Arroz at CRT 1's flat 4 %: 27.45 × 4 % = 1.098 → 1.10.
      const built = buildNfce(request, { emitter: demoEmitter(), dhEmi: new Date(now), tpEmis: 1 });
      expect(itemTaxes(built.xml)).toEqual(['5.94', '0.82', '1.10']);
      expect(totalTax(built.xml)).toBe('7.86');
      expect(firstText(built.xml, 'infCpl')).toBe('Fonte: IBPT, chave B1A2C3, versão 26.2.A');

      // The manager's screen: the table in force and the products on the flat rate (Arroz and the others outside the table).
      const status = ibptStatus(ibpt, 'SP', clock);
      expect(status).toMatchObject({ storeUf: 'SP', expired: false, warning: null, current: { uf: 'SP', versao: '26.2.A', ncmCount: 3, fileName: FILE } });
      expect(status.fallbackProducts.map((p) => p.code)).toEqual(['1003', '1004', '1005', '1006', '1007', '1008', '1009', '1010']);
      expect(status.fallbackProducts[0]).toEqual({ code: '1003', description: 'Arroz branco tipo 1 5kg', ncm: '10063021' });
      expect(status.fallbackCount).toBe(8);
      // A store of another UF has no table: every product on the flat rate, and the screen says so.
      expect(ibptStatus(ibpt, 'RJ', clock)).toMatchObject({
        current: null,
        warning: expect.stringMatching(/^Nenhuma tabela do IBPT de RJ importada/),
        fallbackCount: 10,
      });

      // The service, with a table that also has Arroz, estimates only what the terminal left, naming the same table once.
      const withRice = { ...ibpt.tables()[0]!, rates: new Map([...ibpt.tables()[0]!.rates, ['10063021/', ibpt.tables()[0]!.rates.get('09012100/')!]]) };
      const atService = withIbptEstimate(request, { tables: [withRice], uf: 'SP', date: '2026-11-20' }).request;
      expect(atService.det.map((d) => d.imposto.vTotTrib)).toEqual(['5.94', '0.82', '8.63']); // 27.45 × 31.45 % = 8.633
      expect(atService.infCpl).toBe('Fonte: IBPT, chave B1A2C3, versão 26.2.A');

      // A new number for the same sale (the authority held the first) keeps its estimate.
      const renumbered = keepIbptEstimate(JSON.stringify(request), {
        ...request,
        det: request.det.map((d) => ({ ...d, imposto: { ICMS: d.imposto.ICMS } })),
        infCpl: undefined,
      });
      expect(renumbered.det.map((d) => d.imposto.vTotTrib)).toEqual(['5.94', '0.82', undefined]);
      expect(renumbered.infCpl).toBe('Fonte: IBPT, chave B1A2C3, versão 26.2.A');

      // The day before the table's validity: nothing from it, no source named.
      now = Date.parse('2026-10-31T13:00:00.000Z');
      const before = sell(store, ibpt, ['1001', '1002', '1003'], 2);
      expect(before.det.map((d) => d.imposto.vTotTrib)).toEqual([undefined, undefined, undefined]);
      expect(before.infCpl).toBeUndefined();
      expect(ibptStatus(ibpt, 'SP', clock)).toMatchObject({ current: null, warning: expect.stringMatching(/só vale a partir do início da sua vigência/) });
      // Its first day, then the day after its end: still the table (IBPT publishes late), and the manager is told it expired.
      now = Date.parse('2026-11-01T13:00:00.000Z');
      expect(sell(store, ibpt, ['1001'], 3).det[0]!.imposto.vTotTrib).toBe('5.94');
      now = Date.parse('2027-02-01T13:00:00.000Z');
      expect(sell(store, ibpt, ['1001'], 4).det[0]!.imposto.vTotTrib).toBe('5.94');
      expect(ibptStatus(ibpt, 'SP', clock)).toMatchObject({ expired: true, warning: expect.stringMatching(/venceu em 31\/01\/2027/) });
    } finally {
      store.close();
    }
  });

  it('refuses a file outside IBPT’s layout naming the file and the line, and a wrong PIN; nothing is stored', async () => {
    const bad = join(dir, FILE);
    writeFileSync(bad, readFileSync(TABLE, 'latin1').replace('10.15', 'dez'), 'latin1');
    const refused = await command(['import', bad, '--data', dir]);
    expect(refused).toMatchObject({ code: 1, out: '' });
    expect(refused.err).toBe(`Tabela do IBPT não importada: ${FILE}, linha 3, nacionalfederal: percentual inválido: "dez" (esperado como 13,45 ou 13.45)\n`);
    expect((await command(['import', bad])).code).toBe(2);

    const store = PosStore.open(dir);
    try {
      const ibpt = new IbptStore(store.db);
      expect(ibpt.list()).toEqual([]);
      const manager = await createManager(store, clock, { name: 'Gerente', pin: '2468' });
      const csvBase64 = readFileSync(TABLE).toString('base64');
      const deps = { store, ibpt, clock, uf: 'SP' };
      await expect(importIbpt(deps, { managerId: manager.id, pin: '1111', fileName: FILE, csvBase64 })).rejects.toMatchObject({ code: 'pin_invalido' });
      await expect(
        importIbpt(deps, { managerId: manager.id, pin: '2468', fileName: FILE, csvBase64: readFileSync(bad).toString('base64') }),
      ).rejects.toMatchObject({ code: 'configuracao_invalida', message: expect.stringContaining(`${FILE}, linha 3, nacionalfederal`) });
      expect(ibpt.list()).toEqual([]);
      // The screen's way, with the PIN: imported, then imported again (the same UF and versão replace it).
      const status = await importIbpt(deps, { managerId: manager.id, pin: '2468', fileName: FILE, csvBase64 });
      expect(status.current).toMatchObject({ uf: 'SP', versao: '26.2.A', from: '2026-11-01', until: '2027-01-31', ncmCount: 3 });
      await importIbpt(deps, { managerId: manager.id, pin: '2468', fileName: FILE, csvBase64 });
      expect(ibpt.list()).toHaveLength(1);
    } finally {
      store.close();
    }
  });
});
