// Catalog CSV import on a real terminal database: a file with good rows and every kind of bad
// row, both delimiters, BOM, prices to cents without floats; malformed files and a wrong PIN
// import nothing.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importCatalogCsv, parsePriceCents, planCatalogImport } from './catalog-import.ts';
import { seedDemoCatalog } from './catalog.ts';
import { createManager } from './managers.ts';
import { PosStore } from './pos-store.ts';
import { iso } from '../../base/common/clock.ts';

let dir: string;
let store: PosStore;
const clock = () => Date.parse('2026-11-22T15:00:00.000Z');
let auth: { managerId: string; pin: string };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-catalog-import-'));
  store = PosStore.open(dir);
  seedDemoCatalog(store, iso(clock()));
  auth = { managerId: (await createManager(store, clock, { name: 'Gerente', pin: '2468' })).id, pin: '2468' };
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const HEADER = 'codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario';

describe('importCatalogCsv', () => {
  it('reads the optional IBS/CBS classification columns (both or neither), checked against the tables', async () => {
    const csv = [
      `${HEADER};cst_ibs_cbs;cclasstrib`,
      '4001;;Arroz cesta básica;10063021;5102;UN;27,90;ISENTO40;200;200003', // 2 reduced
      '4002;;Sem classificação;10063021;5102;UN;5,00;ISENTO40;;', // 3 company default
      '4003;;CST inexistente;10063021;5102;UN;5,00;ISENTO40;999;000001', // 4
      '4004;;Classificação de outro CST;10063021;5102;UN;5,00;ISENTO40;000;200003', // 5
      '4005;;Só o CST;10063021;5102;UN;5,00;ISENTO40;000;', // 6
    ].join('\n');
    const report = await importCatalogCsv(store, clock, csv, auth);
    expect(report.imported).toBe(2);
    expect(report.rejected.map((r) => [r.line, r.field, r.message.match(/rejeição \d+|obrigatório/i)?.[0]])).toEqual([
      [4, 'cst_ibs_cbs', 'rejeição 1020'],
      [5, 'cclasstrib', 'rejeição 1024'],
      [6, 'cclasstrib', 'Obrigatório'],
    ]);
    expect(store.products.productByCodeOrGtin('4001')).toMatchObject({ ibscbs_cst: '200', ibscbs_cclasstrib: '200003' });
    expect(store.products.productByCodeOrGtin('4002')).toMatchObject({ ibscbs_cst: null, ibscbs_cclasstrib: null });
    // One of the two columns alone is a malformed file: nothing is imported.
    await expect(importCatalogCsv(store, clock, `${HEADER};cclasstrib\n4009;;X;10063021;5102;UN;1,00;SN102;000001`, auth)).rejects.toThrow(
      /faltam as colunas cst_ibs_cbs/,
    );
    expect(store.products.productByCodeOrGtin('4009')).toBeUndefined();
  });

  it('saves the good rows and reports each bad one with its line, code, column and message', async () => {
    const csv = [
      `\uFEFF${HEADER}`,
      '3001;7891000100103;Arroz tipo 1 5kg;10063021;5102;UN;27,90;SN102', // 2 new
      '1001;7891000100103;Café torrado e moído 500g (novo preço);09012100;5102;UN;19.5;SN102', // 3 update
      '3002;7891000100104;GTIN errado;10063021;5102;UN;5,00;SN102', // 4 gtin
      '3003;;NCM errado;1006302;5102;UN;5,00;SN102', // 5 ncm
      '3004;;CFOP de entrada;10063021;1102;UN;5,00;SN102', // 6 cfop
      '3005;;Preço com texto;10063021;5102;UN;5 reais;SN102', // 7 preco
      '3006;;Preço zero;10063021;5102;UN;0,00;SN102', // 8 preco
      '3007;;Grupo desconhecido;10063021;5102;UN;5,00;XYZ', // 9 grupo
      '', // 10 empty line, skipped
      '3008;;Colunas a menos;10063021;5102;UN;5,00', // 11 linha
      ';;Sem código;10063021;5102;UN;5,00;SN102', // 12 codigo
      '3001;;Arroz repetido;10063021;5102;UN;1,00;SN102', // 13 duplicate
      '3009;;"Feijão; carioca ""especial""";07133399;5102;KG;1.234,56;SN500', // 14 new (quoted, thousands)
      '3010;;;10063021;5102;UNIDADE;5,00;SN102', // 15 descricao + unidade
    ].join('\n');
    const report = await importCatalogCsv(store, clock, csv, auth);
    expect(report.imported).toBe(2);
    expect(report.updated).toBe(1);
    expect(report.rejected.map((r) => [r.line, r.code, r.field])).toEqual([
      [4, '3002', 'gtin'],
      [5, '3003', 'ncm'],
      [6, '3004', 'cfop'],
      [7, '3005', 'preco'],
      [8, '3006', 'preco'],
      [9, '3007', 'grupo_tributario'],
      [11, '3008', 'linha'],
      [12, null, 'codigo'],
      [13, '3001', 'codigo'],
      [15, '3010', 'descricao'],
      [15, '3010', 'unidade'],
    ]);
    for (const r of report.rejected) expect(r.message).toMatch(/^[A-ZÀ-Ú]/);
    expect(report.rejected.find((r) => r.line === 13)?.message).toBe('Código repetido no arquivo (já está na linha 2)');
    expect(store.products.productByCodeOrGtin('3001')).toMatchObject({ price_cents: 2790, gtin: '7891000100103', tax_group: 'SN102' });
    expect(store.products.productByCodeOrGtin('1001')).toMatchObject({ price_cents: 1950, description: 'Café torrado e moído 500g (novo preço)' });
    expect(store.products.productByCodeOrGtin('3009')).toMatchObject({
      price_cents: 123456,
      description: 'Feijão; carioca "especial"',
      gtin: 'SEM GTIN',
      unit: 'KG',
    });
    expect(store.products.productByCodeOrGtin('3002')).toBeUndefined();
    expect(store.managers.auditLog().at(-1)).toMatchObject({
      action: 'catalogo_importado',
      actor_kind: 'manager',
      details: JSON.stringify({ novos: 2, atualizados: 1, recusados: 11 }),
    });
  });

  it('reads comma-separated files, CRLF, headers with accents and capitals in another order', () => {
    const csv = 'Preço,Código,GTIN,Descrição,NCM,CFOP,Unidade,Grupo_Tributário\r\n"12,50",4001,,Suco de laranja 1L,20091200,5102,UN,SN102\r\n';
    const plan = planCatalogImport(csv, iso(clock()));
    expect(plan.rejected).toEqual([]);
    expect(plan.rows).toEqual([expect.objectContaining({ code: '4001', price_cents: 1250, description: 'Suco de laranja 1L' })]);
  });

  it('refuses a malformed file whole, with one clear error, before asking for the PIN', async () => {
    const before = store.products.countProducts();
    const cases: [unknown, RegExp][] = [
      ['', /vazio/],
      ['\uFEFF\n\n', /vazio/],
      ['codigo;gtin;descricao\n1;2;3', /faltam as colunas ncm, cfop, unidade, preco, grupo_tributario/],
      [`${HEADER};estoque\n1;;x;10063021;5102;UN;1,00;SN102;5`, /colunas desconhecidas: estoque/],
      [`${HEADER}\n4002;;"Aspas abertas;10063021;5102;UN;1,00;SN102\n4003;;ok;10063021;5102;UN;1,00;SN102`, /ilegível.*aspas/],
      [42, /vazio/],
    ];
    for (const [csv, message] of cases) {
      await expect(importCatalogCsv(store, clock, csv, { ...auth, pin: '0000' })).rejects.toMatchObject({
        code: 'configuracao_invalida',
        field: 'csv',
        message: expect.stringMatching(message),
      });
    }
    expect(store.products.countProducts()).toBe(before);
    expect(store.managers.auditLog()).toEqual([]); // the wrong PIN was never checked
  });

  it('a wrong PIN imports nothing', async () => {
    await expect(importCatalogCsv(store, clock, `${HEADER}\n5001;;Água 500ml;22011000;5102;UN;2,50;SN102`, { ...auth, pin: '1111' })).rejects.toMatchObject({
      code: 'pin_invalido',
    });
    expect(store.products.productByCodeOrGtin('5001')).toBeUndefined();
  });
});

describe('parsePriceCents', () => {
  it('reads the digits, never a float', () => {
    expect(parsePriceCents('12,50')).toBe(1250n);
    expect(parsePriceCents('12.5')).toBe(1250n);
    expect(parsePriceCents('0,07')).toBe(7n);
    expect(parsePriceCents('R$ 1.234,56')).toBe(123456n);
    expect(parsePriceCents('9999999999999,99')).toBe(999999999999999n);
    expect(parsePriceCents('1.234')).toBe(undefined); // ambiguous: thousands or decimals?
    for (const bad of ['', '12,345', '-1,00', '1,2,3', '1e3', '12 , 50']) expect(parsePriceCents(bad)).toBeUndefined();
  });
});
