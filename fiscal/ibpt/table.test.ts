import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../errors.ts';
import { buildNfce } from '../nfce/build.ts';
import { itemTaxBurden } from '../nfce/total.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import { firstText } from '../xml.ts';
import { ibptItemRate, ibptRatesOf, ibptTableAt, parseIbptCsv, type IbptTable } from './table.ts';

// A small table in IBPT's published layout: Windows-1252, CRLF, quoted descriptions, an EX line and
// an NBS (tipo 1) line, named as IBPT names its files.
const FILE = 'TabelaIBPTaxSP26.2.A.csv';
const sp = (): IbptTable => parseIbptCsv(readFileSync(new URL(`./testdata/${FILE}`, import.meta.url)), FILE);

describe('the IBPT table (Lei 12.741)', () => {
  it('reads the official layout: the UF from the file name, the validity, chave and versão, NCM lines only, EX apart', () => {
    const t = sp();
    expect({ uf: t.uf, from: t.from, until: t.until, chave: t.chave, versao: t.versao, fonte: t.fonte }).toEqual({
      uf: 'SP',
      from: '2026-11-01',
      until: '2027-01-31',
      chave: 'B1A2C3',
      versao: '26.2.A',
      fonte: 'IBPT',
    });
    expect([...t.rates.keys()]).toEqual(['09012100/', '17019900/', '17019900/01']);
    expect(ibptRatesOf(t, '09012100')).toEqual({ nacionalfederal: 1345n, importadosfederal: 1650n, estadual: 1800n, municipal: 0n });
    expect(ibptRatesOf(t, '17019900', '01')!.nacionalfederal).toBe(900n);
    expect(ibptRatesOf(t, '10063021')).toBeUndefined();
    // A foreign good (origin 1, 2, 6, 7) takes the imported federal rate.
    expect([ibptItemRate(ibptRatesOf(t, '09012100')!, '0'), ibptItemRate(ibptRatesOf(t, '09012100')!, '1')]).toEqual([3145n, 3450n]);
  });

  it('is dated: chosen by the day, the one in force first, an expired one only when nothing newer exists', () => {
    const t = sp();
    expect(ibptTableAt([t], 'SP', '2026-10-31')).toBeUndefined();
    expect(ibptTableAt([t], 'SP', '2026-11-01')).toEqual({ table: t, expired: false });
    expect(ibptTableAt([t], 'SP', '2027-02-01')).toEqual({ table: t, expired: true });
    expect(ibptTableAt([t], 'RJ', '2026-11-20')).toBeUndefined();
  });

  it('refuses what is not IBPT’s layout, naming the file, the line and the column', () => {
    const header = 'codigo;ex;tipo;descricao;nacionalfederal;importadosfederal;estadual;municipal;vigenciainicio;vigenciafim;chave;versao;fonte';
    const line = (rate: string, until = '31/01/2027') => `09012100;;0;Café;${rate};16.50;18.00;0.00;01/11/2026;${until};B1;26.2.A;IBPT`;
    const refusal = (text: string, file = FILE) => {
      try {
        parseIbptCsv(text, file);
      } catch (err) {
        return (err as FieldError).issues;
      }
      return 'aceito';
    };
    expect(refusal('codigo;ncm;aliquota\n1;2;3')).toEqual([{ field: FILE, message: expect.stringMatching(/^cabeçalho diferente do leiaute do IBPT/) }]);
    expect(refusal(`${header}\n${line('13,45')}\n${line('treze')}`)).toEqual([
      { field: `${FILE}, linha 3, nacionalfederal`, message: 'percentual inválido: "treze" (esperado como 13,45 ou 13.45)' },
    ]);
    expect(refusal(`${header}\n${line('13.45')}\n${line('13.45', '28/02/2027')}`)).toEqual([
      { field: `${FILE}, linha 3, versao`, message: expect.stringMatching(/vigência ou versão diferente/) },
    ]);
    expect(refusal(`${header}\n${line('13.45')}`, 'tabela.csv')).toEqual([
      { field: 'tabela.csv', message: expect.stringMatching(/^UF da tabela não informada/) },
    ]);
  });

  it('vTotTrib per item is the table’s rates for its NCM in the store’s UF; an NCM outside it falls back to the flat rate and is reported; the receipt names the source', () => {
    // The demo cart: Café 18.90 (09012100), Açúcar 2 × 4.79 (17019900), Arroz 3 × 27.45 (10063021, not in the table).
    const body = sampleNfceRequest({ nNF: 1 });
    const built = buildNfce(body, { emitter: demoEmitter(), dhEmi: '2026-11-20T10:00:00-03:00', tpEmis: 1, ibpt: [sp()] });
    const items = built.xml.match(/<det nItem="[0-9]+">.*?<\/det>/g)!.map((d) => firstText(d, 'vTotTrib'));
    // 18.90 × (13.45 + 18.00) % = 5.944 → 5.94; 9.58 × (10.15 + 7.00) % = 1.643 → 1.64; 82.35 × 4.00 % (CRT 1's flat rate) = 3.294 → 3.29
    expect(items).toEqual(['5.94', '1.64', '3.29']);
    expect(firstText(/<ICMSTot>.*<\/ICMSTot>/.exec(built.xml)![0], 'vTotTrib')).toBe('10.87');
    expect(firstText(built.xml, 'infCpl')).toContain('Fonte: IBPT, chave B1A2C3, versão 26.2.A');

    // The same in another UF's store, or before the table's validity: the flat rate for every item, no source.
    const before = buildNfce(sampleNfceRequest({ nNF: 2 }), { emitter: demoEmitter(), dhEmi: '2026-10-31T10:00:00-03:00', tpEmis: 1, ibpt: [sp()] });
    expect(firstText(/<ICMSTot>.*<\/ICMSTot>/.exec(before.xml)![0], 'vTotTrib')).toBe('4.43'); // (18.90 + 9.58 + 82.35) × 4 % = 4.4332
    expect(before.xml).not.toContain('IBPT');
  });

  it('lists the NCMs that fell back, for the manager', async () => {
    const { checkItems } = await import('../nfce/det.ts');
    const { documentReform } = await import('../nfce/reform.ts');
    const { IssueCollector } = await import('../errors.ts');
    const issues = new IssueCollector();
    const body = sampleNfceRequest({ nNF: 3 });
    const reform = documentReform(demoEmitter(), 1, '2026-11-20T10:00:00-03:00', issues);
    const checked = checkItems(body, { crt: 1, homolog: true, reform }, issues);
    const burden = itemTaxBurden(body, checked, 1, undefined, issues, { tables: [sp()], uf: 'SP', date: '2026-11-20' });
    expect(burden.fallbackNcms).toEqual(['10063021']);
    expect(burden.ibpt).toMatchObject({ expired: false, table: { versao: '26.2.A' } });
  });
});
