// Property: whatever the cart (quantities with 4 decimals, prices, discounts, classifications,
// dates in 2026 and 2027, the company's CBS rate for 2027), the NFC-e the builder writes for a
// CRT 3 company keeps every item and total within the rules the sandbox authority checks
// (service/authority/sandbox-reform-rules.ts, the authority's own arithmetic), validates
// against the PL_010 schema, and its totals are the exact sums of the items' written values.

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate, type Certificate } from '../fiscal/certificate.ts';
import { productCents } from '../fiscal/layout-fields.ts';
import { formatDecimal, fromCents, parseDecimal } from '../fiscal/money.ts';
import { issueNfce } from '../fiscal/nfce/build.ts';
import type { NfceItem, NfceRequest } from '../fiscal/nfce/types.ts';
import { demoEmitter } from '../fiscal/samples.ts';
import { validateXml } from '../fiscal/schema.ts';
import { firstText } from '../fiscal/xml.ts';
import { nfceRuleRejection, readReformFacts, reformRejection } from '../service/authority/sandbox-reform-rules.ts';

const CLASSIFICATIONS: (NfceItem['imposto']['IBSCBS'] | undefined)[] = [
  undefined, // the company default (000 / 000001)
  { CST: '000', cClassTrib: '000001' },
  { CST: '200', cClassTrib: '200003' }, // 100 % less
  { CST: '200', cClassTrib: '200034' }, // 60 % less
  { CST: '200', cClassTrib: '200047' }, // 40 % less
  { CST: '410', cClassTrib: '410008' }, // no gIBSCBS
];

const line = fc.record({
  q: fc.integer({ min: 1, max: 5_000_000 }), // ten-thousandths: 0.0001 to 500
  price: fc.integer({ min: 1, max: 2_000_000 }), // cents: 0.01 to 20,000.00
  discountShare: fc.integer({ min: 0, max: 100 }), // percent of the line given as discount
  classification: fc.integer({ min: 0, max: CLASSIFICATIONS.length - 1 }),
});

const scenario = fc.record({
  lines: fc.array(line, { minLength: 1, maxLength: 12 }),
  year: fc.constantFrom(2026, 2027),
  day: fc.integer({ min: 0, max: 364 }),
  cbs2027: fc.integer({ min: 100, max: 120_000 }), // the company's CBS for 2027, scale 4: 0.01 % to 12 %
});

let credentials: Certificate;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'PROPRIEDADE' }).certificate;
});

type Line = { q: number; price: number; discountShare: number; classification: number };

function requestOf(lines: Line[]): NfceRequest {
  let vNF = 0n;
  let vProdTotal = 0n;
  let vDescTotal = 0n;
  const det: NfceItem[] = [];
  for (const [i, l] of lines.entries()) {
    const vUn = BigInt(l.price) * 10n ** 8n; // scale 10
    const vProd = productCents(BigInt(l.q), vUn);
    if (vProd === 0n) continue;
    const vDesc = (vProd * BigInt(l.discountShare)) / 100n;
    vProdTotal += vProd;
    vDescTotal += vDesc;
    vNF += vProd - vDesc;
    const qText = formatDecimal(BigInt(l.q), 4);
    const vUnText = fromCents(BigInt(l.price));
    const classification = CLASSIFICATIONS[l.classification];
    det.push({
      prod: {
        cProd: `P${i}`,
        cEAN: 'SEM GTIN',
        xProd: `Produto ${i}`,
        NCM: '09012100',
        CFOP: '5102',
        uCom: 'KG',
        qCom: qText,
        vUnCom: vUnText,
        vProd: fromCents(vProd),
        cEANTrib: 'SEM GTIN',
        uTrib: 'KG',
        qTrib: qText,
        vUnTrib: vUnText,
        indTot: '1',
        ...(vDesc > 0n && { vDesc: fromCents(vDesc) }),
      },
      imposto: { ICMS: { ICMS40: { orig: '0', CST: '40' } }, ...(classification && { IBSCBS: structuredClone(classification) }) },
    });
  }
  return {
    ide: { serie: 1, nNF: 1 },
    det,
    total: { vProd: fromCents(vProdTotal), vNF: fromCents(vNF), ...(vDescTotal > 0n && { vDesc: fromCents(vDescTotal) }) },
    pag: [{ tPag: '01', vPag: fromCents(vNF) }],
    ...(vNF > 1_000_000n && { dest: { cpf: '52998224725' } }),
  };
}

const cents = (v: string | undefined) => parseDecimal(v ?? '0', 2, 'v');
const all = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);

describe('IBS/CBS of random carts (property)', () => {
  it('every item and total is within the sandbox rules; totals are exact sums; vNFTot = vNF; the document validates', () => {
    let checked = 0;
    fc.assert(
      fc.property(scenario, ({ lines, year, day, cbs2027 }) => {
        const request = requestOf(lines);
        fc.pre(request.det.length > 0 && cents(request.total.vNF) > 0n);
        const dhEmi = new Date(Date.UTC(year, 0, 1, 15) + day * 86_400_000);
        const emitter = demoEmitter({
          crt: 3,
          ibsCbs: {
            optIn: false,
            defaultClassification: { CST: '000', cClassTrib: '000001' },
            rates: [{ from: '2027-01-01', to: '2027-12-31', pCBS: formatDecimal(BigInt(cbs2027), 4) }],
          },
        });
        const issued = issueNfce(request, { emitter, dhEmi, tpEmis: 1, credentials });
        const xml = issued.xml;

        const facts = readReformFacts(xml);
        expect(nfceRuleRejection(facts)).toBeUndefined();
        expect(reformRejection(facts)).toBeUndefined();
        expect(validateXml(xml, 'nfe')).toEqual({ valid: true, errors: [] });

        // Every item carries IBSCBS; the totals add the written item values, nothing recomputed.
        const items = [...xml.matchAll(/<det nItem="[0-9]+">.*?<\/det>/g)].map((m) => m[0]);
        expect(items.every((d) => d.includes('<IBSCBS>'))).toBe(true);
        const groups = items.map((d) => /<gIBSCBS>.*?<\/gIBSCBS>/.exec(d)?.[0]).filter((g): g is string => g !== undefined);
        const tot = /<IBSCBSTot>.*?<\/IBSCBSTot>/.exec(xml)![0];
        const sum = (name: string) => groups.reduce((a, g) => a + cents(firstText(g, name)), 0n);
        expect(cents(firstText(tot, 'vBCIBSCBS'))).toBe(sum('vBC'));
        if (groups.length > 0) {
          expect(cents(firstText(tot, 'vIBSUF'))).toBe(sum('vIBSUF'));
          expect(cents(firstText(tot, 'vIBSMun'))).toBe(sum('vIBSMun'));
          expect(cents(firstText(tot, 'vIBS'))).toBe(sum('vIBS'));
          expect(cents(firstText(tot, 'vCBS'))).toBe(sum('vCBS'));
        }
        // Each base: the net value (2026), or the net value without the taxes inside it (2027),
        // never above the net value; vItem is the net value; vNFTot = Σ vItem = vNF.
        for (const d of items) {
          const net = cents(firstText(d, 'vProd')) - cents(firstText(/<prod>.*?<\/prod>/.exec(d)![0], 'vDesc'));
          expect(cents(firstText(d, 'vItem'))).toBe(net);
          const vBC = /<gIBSCBS>/.test(d) ? cents(firstText(/<gIBSCBS>.*<\/gIBSCBS>/.exec(d)![0], 'vBC')) : undefined;
          if (vBC !== undefined && year === 2026) expect(vBC).toBe(net);
          if (vBC !== undefined) expect(vBC <= net).toBe(true);
        }
        const vNF = cents(firstText(/<ICMSTot>.*<\/ICMSTot>/.exec(xml)![0], 'vNF'));
        expect(all(xml, 'vItem').reduce((a, v) => a + cents(v), 0n)).toBe(vNF);
        expect(cents(firstText(xml, 'vNFTot'))).toBe(vNF);
        // The year's rates.
        expect(new Set(all(xml, 'pIBSUF'))).toEqual(new Set(groups.length ? [year === 2026 ? '0.10' : '0.05'] : []));
        checked++;
      }),
      { numRuns: 150 },
    );
    expect(checked).toBeGreaterThan(100);
  });
});
