import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAccessKey } from '../access-key.ts';
import { generateTestCertificate } from '../certificate.ts';
import type { Emitter } from '../company.ts';
import { FieldError } from '../errors.ts';
import { fromCents, toCents } from '../money.ts';
import { HOMOLOGACAO_DEST_XNOME, issueNfce } from '../nfce/build.ts';
import type { NfceItem, NfceRequest } from '../nfce/types.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { hashCsrt } from '../resp-tec.ts';
import { demoEmitter } from '../samples.ts';
import { validateXml } from '../schema.ts';
import { verifyXmlSignature, type SigningCredentials } from '../signature.ts';
import { buildDevolucao, issueDevolucao, proportionalShare, returnCfop, type IssueDevolucaoContext } from './devolucao.ts';
import type { DevolucaoRequest } from './types.ts';

const CNPJ = '11222333000181';
const DH_EMI = '2026-11-22T14:03:05-03:00';
const LATER = '2026-11-23T10:00:00-03:00';
const MOTIVO = 'Produto com defeito de fabricação';

let credentials: SigningCredentials;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: CNPJ, xNome: 'MERCADO DEMO' }).certificate;
});

const SN102 = { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } } };

function item(
  cProd: string,
  NCM: string,
  qCom: string,
  vUnCom: string,
  vProd: string,
  extra: Partial<NfceItem['prod']> = {},
  imposto: NfceItem['imposto'] = SN102,
): NfceItem {
  return {
    prod: {
      cProd,
      cEAN: 'SEM GTIN',
      xProd: `Produto ${cProd}`,
      NCM,
      CFOP: '5102',
      uCom: 'UN',
      qCom,
      vUnCom,
      vProd,
      cEANTrib: 'SEM GTIN',
      uTrib: 'UN',
      qTrib: qCom,
      vUnTrib: vUnCom,
      indTot: '1',
      ...extra,
    },
    imposto,
  };
}

/**
 * Three items: 2 × 18.90 with PIS/COFINS (NT), 3 for 10.00 (a third does not divide evenly)
 * with a 0.10 discount, and 3 × 4.79 with ICMS-ST retained (CFOP 5405). vNF 62.07.
 */
function saleRequest(over: Partial<NfceRequest> = {}): NfceRequest {
  const det = [
    item('1001', '09012100', '2', '18.90', '37.80', {}, { ...SN102, PIS: { PISNT: { CST: '07' } }, COFINS: { COFINSNT: { CST: '07' } } }),
    item('1002', '19053100', '3', '3.3333333333', '10.00', { vDesc: '0.10' }),
    item(
      '1003',
      '17019900',
      '3',
      '4.79',
      '14.37',
      { CFOP: '5405' },
      {
        ICMS: { ICMSSN500: { orig: '0', CSOSN: '500', vBCSTRet: '4.00', pST: '18.00', vICMSSTRet: '0.72' } },
        vTotTrib: '1.00',
      },
    ),
  ];
  const vProd = det.reduce((a, d) => a + toCents(d.prod.vProd, 'vProd'), 0n);
  const vNF = fromCents(vProd - 10n);
  return {
    ide: { serie: 1, nNF: 321 },
    det,
    total: { vProd: fromCents(vProd), vNF },
    pag: [{ tPag: '01', vPag: vNF }],
    dest: { cpf: '52998224725', xNome: 'José da Silva' },
    ...over,
  };
}

/** An authorized NFC-e of `emitter`: its nfeProc. */
function authorizedNfce(request: NfceRequest = saleRequest(), emitter: Emitter = demoEmitter()): { key: string; proc: string; signed: string } {
  const issued = issueNfce(request, { emitter, dhEmi: DH_EMI, tpEmis: 1, cNF: '48151623', credentials });
  const protocol = nfeProtocolFor(issued.xml, {
    cStat: '100',
    xMotivo: 'Autorizado o uso da NF-e',
    verAplic: 'SANDBOX',
    dhRecbto: DH_EMI,
    nProt: '135260000000001',
  });
  return { key: issued.key, proc: wrapNfeProc(issued.xml, protocol), signed: issued.xml };
}

function context(nfceXml: string, over: Partial<IssueDevolucaoContext> = {}): IssueDevolucaoContext {
  return { emitter: demoEmitter(), nfceXml, serie: 1, nNF: 17, dhEmi: LATER, cNF: '73194028', credentials, ...over };
}

function issues(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err.issues;
    throw err;
  }
  throw new Error('expected a FieldError, but a document was returned');
}

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
const NS = 'http://www.portalfiscal.inf.br/nfe';
const texts = (doc: Document, name: string): string[] => Array.from(doc.getElementsByTagNameNS(NS, name)).map((e) => e.textContent ?? '');
const one = (doc: Document, name: string): string => {
  const all = texts(doc, name);
  expect(all, name).toHaveLength(1);
  return all[0]!;
};

describe('issueDevolucao: the return of two of three items', () => {
  it('is valid against nfe_v4.00.xsd, signed, and with its protocol against procNFe_v4.00.xsd', () => {
    const nfce = authorizedNfce();
    const request: DevolucaoRequest = {
      chave_nfce: nfce.key,
      itens: [
        { numero_item: 1, quantidade: '1' },
        { numero_item: 3, quantidade: '3' },
      ],
      justificativa: MOTIVO,
    };
    const ret = issueDevolucao(request, context(nfce.proc));

    expect(validateXml(ret.xml, 'nfe')).toEqual({ valid: true, errors: [] });
    const sig = verifyXmlSignature(ret.xml);
    expect(sig.valid).toBe(true);
    if (sig.valid) expect(sig.signedId).toBe(`NFe${ret.key}`);

    const protocol = nfeProtocolFor(ret.xml, {
      cStat: '100',
      xMotivo: 'Autorizado o uso da NF-e',
      verAplic: 'SANDBOX',
      dhRecbto: LATER,
      nProt: '135260000000002',
    });
    expect(validateXml(wrapNfeProc(ret.xml, protocol), 'procNFe')).toEqual({ valid: true, errors: [] });

    const key = parseAccessKey(ret.key);
    expect(key).toMatchObject({ model: '55', serie: 1, number: 17, tpEmis: 1, code: '73194028', cnpj: CNPJ, cUF: '35', yearMonth: '2611' });
  });

  it('carries the technical responsible (infRespTec) last, with the hash of its own key, when the emitter has one', () => {
    const nfce = authorizedNfce();
    const respTec = {
      cnpj: '11444777000161',
      contact: 'Suporte Fiscal',
      email: 'fiscal@balcao.dev',
      phone: '1133334444',
      csrt: { id: 7, token: 'CSRT-DE-TESTE' },
    };
    const ret = issueDevolucao(
      { chave_nfce: nfce.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO },
      context(nfce.proc, { emitter: demoEmitter({ respTec }) }),
    );
    expect(validateXml(ret.xml, 'nfe')).toEqual({ valid: true, errors: [] });
    expect(ret.xml).toContain(
      `<infRespTec><CNPJ>11444777000161</CNPJ><xContato>Suporte Fiscal</xContato><email>fiscal@balcao.dev</email><fone>1133334444</fone><idCSRT>07</idCSRT><hashCSRT>${hashCsrt('CSRT-DE-TESTE', ret.key)}</hashCSRT></infRespTec></infNFe>`,
    );
  });

  it('writes an inbound return: mod 55, tpNF 0, finNFe 4, refNFe, CFOP 1202 / 1411, tPag 90 with vPag 0.00', () => {
    const nfce = authorizedNfce();
    const ret = issueDevolucao(
      {
        chave_nfce: nfce.key,
        itens: [
          { numero_item: 1, quantidade: '1' },
          { numero_item: 3, quantidade: '3' },
        ],
        justificativa: MOTIVO,
      },
      context(nfce.proc),
    );
    const doc = parse(ret.xml);
    expect({
      mod: one(doc, 'mod'),
      tpNF: one(doc, 'tpNF'),
      finNFe: one(doc, 'finNFe'),
      idDest: one(doc, 'idDest'),
      indFinal: one(doc, 'indFinal'),
      indPres: one(doc, 'indPres'),
      tpImp: one(doc, 'tpImp'),
      refNFe: one(doc, 'refNFe'),
      natOp: one(doc, 'natOp'),
      tPag: one(doc, 'tPag'),
      vPag: one(doc, 'vPag'),
      modFrete: one(doc, 'modFrete'),
    }).toEqual({
      mod: '55',
      tpNF: '0',
      finNFe: '4',
      idDest: '1',
      indFinal: '1',
      indPres: '1',
      tpImp: '1',
      refNFe: nfce.key,
      natOp: 'DEVOLUÇÃO DE VENDA',
      tPag: '90',
      vPag: '0.00',
      modFrete: '9',
    });
    expect(texts(doc, 'CFOP')).toEqual(['1202', '1411']);
    expect(texts(doc, 'qCom')).toEqual(['1.0000', '3.0000']);
    expect(texts(doc, 'vProd')).toEqual(['18.90', '14.37', '33.27']); // two items, then ICMSTot
    // The consumer is the NFC-e's; homologação writes the mandatory name (598).
    expect(one(doc, 'CPF')).toBe('52998224725');
    expect(texts(doc, 'xNome')).toContain(HOMOLOGACAO_DEST_XNOME);
    expect(one(doc, 'infCpl')).toContain(`chave ${nfce.key}`);
    expect(one(doc, 'infCpl')).toContain(`Motivo: ${MOTIVO}`);
    // Item 1 keeps its PIS/COFINS (NT 07); item 3 had none and gets the zero group model 55 needs.
    expect(texts(doc, 'CST')).toEqual(['07', '07', '99', '99']);
    expect(one(doc, 'vBCSTRet')).toBe('4.00');
    expect(one(doc, 'vICMSSTRet')).toBe('0.72');
    expect(one(doc, 'vNF')).toBe('33.27');
    expect(ret).toMatchObject({ vNF: '33.27', idDest: '1', serie: 1, nNF: 17, nfce: { key: nfce.key, serie: 1, nNF: 321 } });
    expect(ret.items).toEqual([
      { numero_item: 1, cProd: '1001', xProd: expect.any(String), uCom: 'UN', quantidade: '1', units: 10_000n, valor: '18.90' },
      { numero_item: 3, cProd: '1003', xProd: 'Produto 1003', uCom: 'UN', quantidade: '3', units: 30_000n, valor: '14.37' },
    ]);
  });
});

describe('values proportional to the quantity, to the cent', () => {
  it('cumulative half-up rounding: the returns of a whole line add up to it exactly', () => {
    expect([1n, 2n, 3n].map((x) => proportionalShare(1000n, 3n, x - 1n, 1n))).toEqual([333n, 334n, 333n]);
    expect(proportionalShare(1000n, 3n, 0n, 3n)).toBe(1000n);
    // Any split of any line: the parts sum to the whole.
    for (const whole of [1n, 7n, 101n, 999n, 1234567n]) {
      for (const sold of [1n, 3n, 7n, 3500n]) {
        let before = 0n;
        let total = 0n;
        for (const step of [1n, 2n, 5n, 1000n]) {
          const q = step > sold - before ? sold - before : step;
          if (q === 0n) break;
          total += proportionalShare(whole, sold, before, q);
          before += q;
        }
        if (before === sold) expect(total).toBe(whole);
      }
    }
  });

  it('three returns of one unit each give back vProd, vDesc, the ST values and vTotTrib of the line exactly', () => {
    const nfce = authorizedNfce();
    const returned = new Map<number, bigint>();
    const sums = { vProd: 0n, vDesc: 0n, vBCSTRet: 0n, vICMSSTRet: 0n, vTotTrib: 0n, vNF: 0n };
    const parts: string[][] = [];
    for (let k = 0; k < 3; k++) {
      const ret = issueDevolucao(
        {
          chave_nfce: nfce.key,
          itens: [
            { numero_item: 2, quantidade: '1' },
            { numero_item: 3, quantidade: '1' },
          ],
          justificativa: MOTIVO,
        },
        context(nfce.proc, { nNF: 20 + k, returned }),
      );
      expect(validateXml(ret.xml, 'nfe').errors).toEqual([]);
      const doc = parse(ret.xml);
      const vProd = texts(doc, 'vProd');
      parts.push([vProd[0]!, texts(doc, 'vDesc')[0]!]);
      sums.vProd += toCents(vProd[0], 'vProd') + toCents(vProd[1], 'vProd');
      sums.vDesc += toCents(texts(doc, 'vDesc')[0], 'vDesc');
      sums.vBCSTRet += toCents(one(doc, 'vBCSTRet'), 'vBCSTRet');
      sums.vICMSSTRet += toCents(one(doc, 'vICMSSTRet'), 'vICMSSTRet');
      sums.vTotTrib += toCents(texts(doc, 'vTotTrib').at(-1), 'vTotTrib');
      sums.vNF += toCents(ret.vNF, 'vNF');
      returned.set(2, (returned.get(2) ?? 0n) + 10_000n);
      returned.set(3, (returned.get(3) ?? 0n) + 10_000n);
    }
    // 10.00 in thirds: 3.33, 3.34, 3.33; the discount 0.10: 0.03, 0.04, 0.03.
    expect(parts).toEqual([
      ['3.33', '0.03'],
      ['3.34', '0.04'],
      ['3.33', '0.03'],
    ]);
    const original = parse(nfce.proc);
    const itemTotTrib = (n: number) =>
      toCents(Array.from(original.getElementsByTagNameNS(NS, 'det'))[n - 1]!.getElementsByTagNameNS(NS, 'vTotTrib')[0]!.textContent, 'vTotTrib');
    expect(sums).toEqual({
      vProd: 1000n + 1437n,
      vDesc: 10n,
      vBCSTRet: 400n,
      vICMSSTRet: 72n,
      vTotTrib: itemTotTrib(2) + itemTotTrib(3),
      vNF: 990n + 1437n,
    });
  });

  it('regime normal: vBC and vICMS of ICMS00 are scaled and summed into ICMSTot', () => {
    const emitter = demoEmitter({ crt: 3 });
    const icms00 = { ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '20.00', pICMS: '18.00', vICMS: '3.60' } } };
    const request = saleRequest({
      det: [item('2001', '09012100', '4', '5.00', '20.00', {}, icms00)],
      total: { vProd: '20.00', vNF: '20.00' },
      pag: [{ tPag: '01', vPag: '20.00' }],
    });
    const nfce = authorizedNfce(request, emitter);
    const ret = issueDevolucao({ chave_nfce: nfce.key, itens: [{ numero_item: 1, quantidade: '3' }], justificativa: MOTIVO }, context(nfce.proc, { emitter }));
    expect(validateXml(ret.xml, 'nfe').errors).toEqual([]);
    const doc = parse(ret.xml);
    expect(texts(doc, 'vBC').slice(0, 2)).toEqual(['15.00', '0.00']); // ICMS00, then the PISOutr zero base
    expect(texts(doc, 'vICMS')).toEqual(['2.70', '2.70']); // the item, then ICMSTot
    expect(ret.vNF).toBe('15.00');
  });
});

describe('an NFC-e with the tax reform groups (IBS/CBS)', () => {
  const emitter = demoEmitter({ crt: 3 });
  const icms00 = { ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '0.00', pICMS: '18.00', vICMS: '0.00' } } };
  /** 3 × 33.33 (full rate) and 2 × 7.50 of cesta básica (CST 200, 100 % less), authorized with an alert (120). */
  function reformNfce() {
    const request = saleRequest({
      det: [
        item('3001', '09012100', '3', '33.33', '99.99', {}, structuredClone(icms00)),
        item('3002', '10063021', '2', '7.50', '15.00', {}, { ...structuredClone(icms00), IBSCBS: { CST: '200', cClassTrib: '200003' } }),
      ],
      total: { vProd: '114.99', vNF: '114.99' },
      pag: [{ tPag: '01', vPag: '114.99' }],
    });
    const issued = issueNfce(request, { emitter, dhEmi: DH_EMI, tpEmis: 1, cNF: '48151623', credentials });
    const protocol = nfeProtocolFor(issued.xml, {
      cStat: '120',
      xMotivo: 'Autorizado o uso da NF-e com alerta',
      verAplic: 'SANDBOX',
      dhRecbto: DH_EMI,
      nProt: '135260000000002',
      message: { cMsg: '999', xMsg: 'Alerta de teste' },
    });
    return { key: issued.key, proc: wrapNfeProc(issued.xml, protocol) };
  }

  it("the return carries each line's classification and rates, its base scaled and the amounts recomputed; vItem, IBSCBSTot, vNFTot; every item names its NFC-e line", () => {
    const nfce = reformNfce();
    const ret = issueDevolucao(
      {
        chave_nfce: nfce.key,
        itens: [
          { numero_item: 1, quantidade: '1' },
          { numero_item: 2, quantidade: '2' },
        ],
        justificativa: MOTIVO,
      },
      context(nfce.proc, { emitter }),
    );
    expect(validateXml(ret.xml, 'nfe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(ret.xml).valid).toBe(true);
    const doc = parse(ret.xml);
    expect(texts(doc, 'cClassTrib')).toEqual(['000001', '200003']);
    // 1/3 of 99.99 = 33.33: IBS-UF 0.03 (0.03333), CBS 0.30 (0.29997); cesta básica: all zero.
    expect(texts(doc, 'pIBSUF')).toEqual(['0.10', '0.10']);
    expect(texts(doc, 'vIBSUF')).toEqual(['0.03', '0.00', '0.03']); // the items, then IBSCBSTot
    expect(texts(doc, 'vCBS')).toEqual(['0.30', '0.00', '0.30']);
    expect(texts(doc, 'pAliqEfet')).toEqual(['0.00', '0.00', '0.00']);
    expect(texts(doc, 'vBCIBSCBS')).toEqual(['48.33']);
    expect(texts(doc, 'vItem')).toEqual(['33.33', '15.00']);
    expect(texts(doc, 'vNFTot')).toEqual(['48.33']);
    expect(ret.vNF).toBe('48.33');
    expect(texts(doc, 'chaveAcesso')).toEqual([nfce.key, nfce.key]);
    expect(texts(doc, 'nItem')).toEqual(['1', '2']);
  });

  it("the bases of the returns of a whole line add up to the NFC-e line's base", () => {
    const nfce = reformNfce();
    const returned = new Map<number, bigint>();
    const bases: string[] = [];
    for (let n = 0; n < 3; n++) {
      const ret = buildDevolucao(
        { chave_nfce: nfce.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO },
        context(nfce.proc, { emitter, returned, nNF: 20 + n }),
      );
      bases.push(texts(parse(ret.xml), 'vBCIBSCBS')[0]!);
      returned.set(1, (returned.get(1) ?? 0n) + 10_000n);
    }
    expect(bases).toEqual(['33.33', '33.33', '33.33']);
    expect(bases.reduce((a, b) => a + toCents(b, 'vBC'), 0n)).toBe(9999n);
  });

  it('an NFC-e without the groups gives a return without them', () => {
    const nfce = authorizedNfce();
    const ret = buildDevolucao({ chave_nfce: nfce.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO }, context(nfce.proc));
    expect(ret.xml).not.toContain('IBSCBS');
    expect(ret.xml).not.toContain('vItem');
    expect(ret.xml).toContain('<DFeReferenciado>');
  });
});

describe('refusals name the field', () => {
  const nfce = () => authorizedNfce();

  it('a quantity beyond what was sold: itens[0].quantidade', () => {
    const n = nfce();
    const found = issues(() =>
      buildDevolucao({ chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '2.0001' }], justificativa: MOTIVO }, context(n.proc)),
    );
    expect(found).toEqual([{ field: 'itens[0].quantidade', message: expect.stringMatching(/vendido 2 UN, já devolvido 0, disponível 2/) }]);
  });

  it('a quantity beyond what is left after the other returns: itens[1].quantidade', () => {
    const n = nfce();
    const returned = new Map([[3, 20_000n]]);
    const found = issues(() =>
      buildDevolucao(
        {
          chave_nfce: n.key,
          itens: [
            { numero_item: 1, quantidade: '1' },
            { numero_item: 3, quantidade: '2' },
          ],
          justificativa: MOTIVO,
        },
        context(n.proc, { returned }),
      ),
    );
    expect(found).toEqual([{ field: 'itens[1].quantidade', message: expect.stringMatching(/já devolvido 2, disponível 1/) }]);
    // What is left is still accepted.
    expect(() =>
      buildDevolucao({ chave_nfce: n.key, itens: [{ numero_item: 3, quantidade: '1' }], justificativa: MOTIVO }, context(n.proc, { returned })),
    ).not.toThrow();
  });

  it('unknown, repeated and empty items, a zero quantity, a short justificativa: every problem at once', () => {
    const n = nfce();
    const found = issues(() =>
      buildDevolucao(
        {
          chave_nfce: n.key,
          itens: [
            { numero_item: 9, quantidade: '1' },
            { numero_item: 1, quantidade: '0' },
            { numero_item: 2, quantidade: '1' },
            { numero_item: 2, quantidade: '1' },
            { numero_item: 3, quantidade: '1,5' },
          ],
          justificativa: 'curto',
        },
        context(n.proc),
      ),
    );
    expect(found.map((i) => i.field)).toEqual(['justificativa', 'itens[0].numero_item', 'itens[1].quantidade', 'itens[3].numero_item', 'itens[4].quantidade']);
    expect(issues(() => buildDevolucao({ chave_nfce: n.key, itens: [], justificativa: MOTIVO }, context(n.proc))).map((i) => i.field)).toEqual(['itens']);
  });

  it('the NFC-e must be the authorized one of this emitter, in the same environment', () => {
    const n = nfce();
    const request = { chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO };
    expect(issues(() => buildDevolucao(request, context(n.signed)))).toEqual([{ field: 'chave_nfce', message: expect.stringMatching(/nfeProc/) }]);
    const rejected = n.proc.replace('<cStat>100</cStat>', '<cStat>391</cStat>');
    expect(issues(() => buildDevolucao(request, context(rejected)))).toEqual([{ field: 'chave_nfce', message: expect.stringMatching(/não está autorizada/) }]);
    expect(issues(() => buildDevolucao({ ...request, chave_nfce: '3'.repeat(44) }, context(n.proc))).map((i) => i.field)).toEqual(['chave_nfce']);
    const other = demoEmitter({ cnpj: '11444777000161' });
    expect(issues(() => buildDevolucao(request, context(n.proc, { emitter: other })))).toEqual([
      { field: 'chave_nfce', message: expect.stringMatching(/outro CNPJ/) },
    ]);
    expect(issues(() => buildDevolucao(request, context(n.proc, { emitter: demoEmitter({ environment: 'producao' }) })))).toEqual([
      { field: 'chave_nfce', message: expect.stringMatching(/homologação/) },
    ]);
  });
});

describe('the person returning the goods (dest)', () => {
  it('without a consumer on the NFC-e, the destinatario is required and used', () => {
    const n = authorizedNfce(saleRequest({ dest: undefined }));
    const base = { chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO };
    expect(issues(() => buildDevolucao(base, context(n.proc)))).toEqual([{ field: 'destinatario', message: expect.stringMatching(/cpf ou o cnpj/) }]);
    expect(issues(() => buildDevolucao({ ...base, destinatario: { cpf: '12345678900' } }, context(n.proc))).map((i) => i.field)).toEqual(['destinatario.cpf']);
    const ret = issueDevolucao({ ...base, destinatario: { cnpj: '11444777000161', nome: 'Empresa Compradora' } }, context(n.proc));
    const doc = parse(ret.xml);
    expect(texts(doc, 'CNPJ')).toEqual([CNPJ, '11444777000161']);
    expect(validateXml(ret.xml, 'nfe').errors).toEqual([]);
  });

  it('a company with an alphanumeric CNPJ returns goods from the day homologação accepts it (15/06/2026), not the day before', () => {
    const n = authorizedNfce(saleRequest({ dest: undefined }));
    const base = { chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO, destinatario: { cnpj: 'G9PQPJHY9KPK34' } };
    expect(issues(() => buildDevolucao(base, context(n.proc, { dhEmi: '2026-06-14T10:00:00-03:00' })))).toEqual([
      { field: 'destinatario.cnpj', message: expect.stringMatching(/^CNPJ alfanumérico só é aceito em homologação a partir de 15\/06\/2026/) },
    ]);
    expect(texts(parse(buildDevolucao(base, context(n.proc, { dhEmi: '2026-06-15T10:00:00-03:00' })).xml), 'CNPJ')).toEqual([CNPJ, 'G9PQPJHY9KPK34']);
  });

  it('with a consumer on the NFC-e, another document is refused; its name is used in production', () => {
    const emitter = demoEmitter({ environment: 'producao' });
    const n = authorizedNfce(saleRequest(), emitter);
    const base = { chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO };
    expect(issues(() => buildDevolucao({ ...base, destinatario: { cpf: '11144477735' } }, context(n.proc, { emitter })))).toEqual([
      { field: 'destinatario.cpf', message: expect.stringMatching(/difere do consumidor/) },
    ]);
    const doc = parse(issueDevolucao({ ...base, destinatario: { cpf: '529.982.247-25' } }, context(n.proc, { emitter })).xml);
    expect(texts(doc, 'xNome')).toContain('José da Silva');
    const named = parse(issueDevolucao({ ...base, destinatario: { nome: 'José S. Souza' } }, context(n.proc, { emitter })).xml);
    expect(texts(named, 'xNome')).toContain('José S. Souza');
  });

  it('an address in another UF makes it interstate: idDest 2, CFOP 2202 / 2411, enderDest', () => {
    const n = authorizedNfce();
    const ret = issueDevolucao(
      {
        chave_nfce: n.key,
        itens: [
          { numero_item: 1, quantidade: '1' },
          { numero_item: 3, quantidade: '1' },
        ],
        justificativa: MOTIVO,
        destinatario: {
          endereco: {
            logradouro: 'Rua do Ouvidor',
            numero: '50',
            bairro: 'Centro',
            codigo_municipio: '3304557',
            municipio: 'Rio de Janeiro',
            uf: 'RJ',
            cep: '20040030',
          },
        },
      },
      context(n.proc),
    );
    const doc = parse(ret.xml);
    expect(one(doc, 'idDest')).toBe('2');
    expect(texts(doc, 'CFOP')).toEqual(['2202', '2411']);
    expect(texts(doc, 'UF')).toEqual(['SP', 'RJ']);
    expect(validateXml(ret.xml, 'nfe').errors).toEqual([]);
    // Same UF: internal.
    const internal = issueDevolucao(
      {
        chave_nfce: n.key,
        itens: [{ numero_item: 1, quantidade: '1' }],
        justificativa: MOTIVO,
        destinatario: { endereco: { logradouro: 'Rua A', numero: '1', bairro: 'Centro', codigo_municipio: '3509502', municipio: 'Campinas', uf: 'SP' } },
      },
      context(n.proc),
    );
    expect(one(parse(internal.xml), 'idDest')).toBe('1');
    expect(
      issues(() =>
        buildDevolucao(
          {
            chave_nfce: n.key,
            itens: [{ numero_item: 1, quantidade: '1' }],
            justificativa: MOTIVO,
            destinatario: {
              endereco: { logradouro: 'Rua A', numero: '1', bairro: 'Centro', codigo_municipio: '3304557', municipio: 'Rio de Janeiro', uf: 'SP' },
            },
          },
          context(n.proc),
        ),
      ).map((i) => i.field),
    ).toEqual(['destinatario.endereco.codigo_municipio']);
  });
});

describe('returnCfop', () => {
  it('maps the sale CFOPs to their returns, internal and interstate, and knows no others', () => {
    expect(['5101', '5102', '5103', '5104', '5401', '5402', '5403', '5405'].map((c) => returnCfop(c, '1'))).toEqual([
      '1201',
      '1202',
      '1201',
      '1202',
      '1410',
      '1410',
      '1411',
      '1411',
    ]);
    expect(returnCfop('5102', '2')).toBe('2202');
    expect(returnCfop('5405', '2')).toBe('2411');
    expect(returnCfop('5933', '1')).toBeUndefined();
  });

  it('an item sold with a CFOP without a return here is refused naming it', () => {
    const request = saleRequest();
    request.det[0]!.prod.CFOP = '5656';
    const n = authorizedNfce(request);
    expect(issues(() => buildDevolucao({ chave_nfce: n.key, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: MOTIVO }, context(n.proc)))).toEqual([
      { field: 'itens[0].numero_item', message: expect.stringMatching(/CFOP 5656/) },
    ]);
  });
});
