// The NFC-e with the tax reform groups (IBS/CBS): who writes them, with which rates, where in the
// document, how values sent by an integrator are checked; and the NT 2026.002 consumer rule.

import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate, type Certificate } from '../certificate.ts';
import type { Emitter } from '../company.ts';
import { FieldError } from '../errors.ts';
import type { IbsCbsSettings } from '../ibscbs/settings.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import { validateXml } from '../schema.ts';
import { verifyXmlSignature } from '../signature.ts';
import { buildNfce, issueNfce } from './build.ts';
import type { NfceItem, NfceRequest } from './types.ts';

const REGIME_NORMAL = { ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '0.00', pICMS: '18.00', vICMS: '0.00' } } };

let credentials: Certificate;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'MERCADO BALCAO' }).certificate;
});

const crt3 = (ibsCbs?: IbsCbsSettings): Emitter => demoEmitter({ crt: 3, ...(ibsCbs && { ibsCbs }) });

/** The demo cart (3 items) with regime-normal ICMS, or the given items. */
function cart(over: (item: NfceItem, i: number) => void = () => {}, items = 3): NfceRequest {
  const body = sampleNfceRequest({ nNF: 501, items });
  body.det.forEach((d, i) => {
    d.imposto = structuredClone(REGIME_NORMAL);
    over(d, i);
  });
  return body;
}

const NS = 'http://www.portalfiscal.inf.br/nfe';
function parse(xml: string) {
  const doc = new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
  const all = (name: string) => Array.from(doc.getElementsByTagNameNS(NS, name));
  const textIn = (el: Element | undefined, name: string) => el?.getElementsByTagNameNS(NS, name)[0]?.textContent ?? undefined;
  return { doc, all, textIn };
}

function authorizedProc(signed: string): string {
  const prot = nfeProtocolFor(signed, { cStat: '100', xMotivo: 'Autorizado o uso da NF-e', verAplic: 'TESTE', dhRecbto: new Date(), nProt: '135260000000001' });
  return wrapNfeProc(signed, prot);
}

const fieldsOf = (fn: () => unknown): { field: string; message: string }[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err.issues;
    throw err;
  }
  throw new Error('nenhum FieldError');
};

describe('NFC-e of a CRT 3 company (regime normal): the IBS/CBS groups', () => {
  it('dated 2026: every item carries IBSCBS at 0.10 / 0 / 0.90 %, vItem, IBSCBSTot and vNFTot = vNF; the nfeProc validates against PL_010 and the signature verifies', () => {
    const issued = issueNfce(cart(), { emitter: crt3(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1, credentials });
    const { all, textIn } = parse(issued.xml);
    const dets = all('det');
    expect(dets).toHaveLength(3);
    // Café 18.90 × 1, Açúcar 4.79 × 2, Arroz 27.45 × 3 (sampleNfceRequest).
    const expected = [
      { vBC: '18.90', vIBSUF: '0.02', vCBS: '0.17' },
      { vBC: '9.58', vIBSUF: '0.01', vCBS: '0.09' },
      { vBC: '82.35', vIBSUF: '0.08', vCBS: '0.74' },
    ];
    dets.forEach((det, i) => {
      const ibscbs = det.getElementsByTagNameNS(NS, 'IBSCBS')[0]!;
      expect(textIn(ibscbs, 'CST')).toBe('000');
      expect(textIn(ibscbs, 'cClassTrib')).toBe('000001');
      expect(textIn(ibscbs, 'vBC')).toBe(expected[i]!.vBC);
      expect(textIn(ibscbs, 'pIBSUF')).toBe('0.10');
      expect(textIn(ibscbs, 'vIBSUF')).toBe(expected[i]!.vIBSUF);
      expect(textIn(ibscbs, 'pIBSMun')).toBe('0.00');
      expect(textIn(ibscbs, 'vIBSMun')).toBe('0.00');
      expect(textIn(ibscbs, 'vIBS')).toBe(expected[i]!.vIBSUF);
      expect(textIn(ibscbs, 'pCBS')).toBe('0.90');
      expect(textIn(ibscbs, 'vCBS')).toBe(expected[i]!.vCBS);
      // In 2026 the amounts are informative: the item's value is not changed by them.
      expect(textIn(det, 'vItem')).toBe(expected[i]!.vBC);
      // Schema order: IBSCBS is the last group of imposto, vItem follows imposto.
      expect(det.lastChild?.nodeName).toBe('vItem');
      expect(ibscbs.parentNode?.lastChild).toBe(ibscbs);
    });
    const tot = all('IBSCBSTot')[0]!;
    expect(textIn(tot, 'vBCIBSCBS')).toBe('110.83');
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gIBS')[0], 'vIBS')).toBe('0.11');
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gIBSUF')[0], 'vIBSUF')).toBe('0.11');
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gCBS')[0], 'vCBS')).toBe('1.00');
    expect(textIn(all('total')[0], 'vNFTot')).toBe('110.83');
    expect(textIn(all('ICMSTot')[0], 'vNF')).toBe('110.83');
    // The Lei 12.741 estimate stays as it was.
    expect(textIn(all('ICMSTot')[0], 'vTotTrib')).toBe(issued.vTotTrib);

    const proc = authorizedProc(issued.xml);
    expect(validateXml(proc, 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(validateXml(issued.xml, 'nfe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(issued.xml).valid).toBe(true);
    expect(verifyXmlSignature(proc).valid).toBe(true);
  });

  it('dated 2027: IBS-UF 0.05 %, IBS-Mun 0.05 % and the CBS the company states, with the taxes taken out of the price for the base', () => {
    const emitter = crt3({
      optIn: false,
      defaultClassification: { CST: '000', cClassTrib: '000001' },
      rates: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.80' }],
    });
    const body = cart((d) => {
      d.prod.vUnCom = '100.00';
      d.prod.vUnTrib = '100.00';
      d.prod.qCom = d.prod.qTrib = '1';
      d.prod.vProd = '100.00';
    }, 1);
    body.total = { vProd: '100.00', vNF: '100.00' };
    body.pag = [{ tPag: '01', vPag: '100.00' }];
    const issued = issueNfce(body, {
      emitter,
      dhEmi: '2027-01-15T09:30:00-03:00',
      tpEmis: 9,
      credentials,
      contingency: { dhCont: '2027-01-15T09:00:00-03:00', xJust: 'Sem conexao com a internet no caixa' },
    });
    const { all, textIn } = parse(issued.xml);
    const ibscbs = all('IBSCBS')[0]!;
    // 100.00 / (1 + (0.05 + 0.05 + 8.80)/100) = 91.827… → 91.83
    expect(textIn(ibscbs, 'vBC')).toBe('91.83');
    expect(textIn(ibscbs, 'pIBSUF')).toBe('0.05');
    expect(textIn(ibscbs, 'vIBSUF')).toBe('0.05');
    expect(textIn(ibscbs, 'pIBSMun')).toBe('0.05');
    expect(textIn(ibscbs, 'vIBSMun')).toBe('0.05');
    expect(textIn(ibscbs, 'vIBS')).toBe('0.10');
    expect(textIn(ibscbs, 'pCBS')).toBe('8.80');
    expect(textIn(ibscbs, 'vCBS')).toBe('8.08');
    // The taxes are inside vProd: the item and the note keep their value.
    expect(textIn(all('det')[0], 'vItem')).toBe('100.00');
    expect(textIn(all('total')[0], 'vNFTot')).toBe('100.00');
    expect(validateXml(authorizedProc(issued.xml), 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(issued.xml).valid).toBe(true);
  });

  it('dated 2027 with no CBS rate from anyone: built with the provisional 8.80 %; the operator’s rate for all companies replaces it', () => {
    const pCBS = (emitter: Emitter) => {
      const { all, textIn } = parse(buildNfce(cart(), { emitter, dhEmi: '2027-02-01T10:00:00-03:00', tpEmis: 1 }).xml);
      return textIn(all('IBSCBS')[0], 'pCBS');
    };
    expect(pCBS(crt3())).toBe('8.80');
    expect(pCBS({ ...crt3(), operatorRates: [{ from: '2027-01-01', pCBS: '8.70' }] })).toBe('8.70');
    // From 2029 nothing is published nor provisional: refused, naming who can state it.
    const issues = fieldsOf(() => buildNfce(cart(), { emitter: crt3(), dhEmi: '2029-02-01T10:00:00-03:00', tpEmis: 1 }));
    expect(issues).toContainEqual({
      field: 'emit.ibsCbs.rates',
      message: expect.stringMatching(/alíquota da CBS vigente em 2029-02-01 ainda não publicada.*balcao ibscbs aliquotas/),
    });
  });

  it('dated before 2026: no reform groups', () => {
    const built = buildNfce(cart(), { emitter: crt3(), dhEmi: '2025-12-31T23:00:00-03:00', tpEmis: 1 });
    expect(built.xml).not.toContain('IBSCBS');
    expect(built.xml).not.toContain('vItem');
  });

  it('a reduced classification (CST 200) writes gRed with the effective rate; immunity (CST 410) writes no gIBSCBS', () => {
    const body = cart((d, i) => {
      if (i === 0) d.imposto.IBSCBS = { CST: '200', cClassTrib: '200034' }; // 60 % less
      if (i === 1) d.imposto.IBSCBS = { CST: '200', cClassTrib: '200003' }; // cesta básica, 100 % less
      if (i === 2) d.imposto.IBSCBS = { CST: '410', cClassTrib: '410008' }; // books
    });
    const built = issueNfce(body, { emitter: crt3(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1, credentials });
    const { all, textIn } = parse(built.xml);
    const [reduced, zero, immune] = all('IBSCBS');
    const uf = reduced!.getElementsByTagNameNS(NS, 'gIBSUF')[0];
    expect(textIn(uf, 'pIBSUF')).toBe('0.10');
    expect(textIn(uf, 'pRedAliq')).toBe('60.00');
    expect(textIn(uf, 'pAliqEfet')).toBe('0.04');
    expect(textIn(uf, 'vIBSUF')).toBe('0.01'); // 18.90 × 0.04 % = 0.00756
    expect(textIn(reduced!.getElementsByTagNameNS(NS, 'gCBS')[0], 'pAliqEfet')).toBe('0.36');
    expect(textIn(reduced!.getElementsByTagNameNS(NS, 'gCBS')[0], 'vCBS')).toBe('0.07'); // 18.90 × 0.36 % = 0.06804
    expect(textIn(zero, 'pAliqEfet')).toBe('0.00');
    expect(textIn(zero, 'vIBS')).toBe('0.00');
    expect(textIn(zero, 'vCBS')).toBe('0.00');
    expect(immune!.getElementsByTagNameNS(NS, 'gIBSCBS')).toHaveLength(0);
    expect(textIn(immune, 'cClassTrib')).toBe('410008');
    const tot = all('IBSCBSTot')[0]!;
    expect(textIn(tot, 'vBCIBSCBS')).toBe('28.48'); // 18.90 + 9.58: the immune item has no base
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gCBS')[0], 'vCBS')).toBe('0.07');
    expect(validateXml(built.xml, 'nfe')).toEqual({ valid: true, errors: [] });
  });

  it('the company default classification applies to items that state none', () => {
    const emitter = crt3({ optIn: false, defaultClassification: { CST: '200', cClassTrib: '200035' }, rates: [] });
    const built = buildNfce(cart(), { emitter, dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1 });
    expect(
      parse(built.xml)
        .all('cClassTrib')
        .map((e) => e.textContent),
    ).toEqual(['200035', '200035', '200035']);
  });
});

describe('NFC-e of the Simples Nacional (CRT 1)', () => {
  it('carries no reform group by default, even with a classification on the item (a catalog fact, checked and left out)', () => {
    const body = sampleNfceRequest({ nNF: 7 });
    body.det[0]!.imposto.IBSCBS = { CST: '000', cClassTrib: '000001' };
    const built = buildNfce(body, { emitter: demoEmitter(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1 });
    expect(built.xml).not.toContain('IBSCBS');
    expect(built.xml).not.toContain('vItem');
    expect(built.xml).not.toContain('vNFTot');
    // A wrong classification is still a wrong catalog entry.
    body.det[0]!.imposto.IBSCBS = { CST: '999', cClassTrib: '000001' };
    expect(fieldsOf(() => buildNfce(body, { emitter: demoEmitter(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1 }))[0]!.field).toBe(
      'det[0].imposto.IBSCBS.CST',
    );
  });

  it('values sent for a company that does not write the groups are refused, naming them', () => {
    const body = sampleNfceRequest({ nNF: 7 });
    body.det[1]!.imposto.IBSCBS = { CST: '000', cClassTrib: '000001', gIBSCBS: { vBC: '9.58' } };
    expect(fieldsOf(() => buildNfce(body, { emitter: demoEmitter(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1 }))).toEqual([
      { field: 'det[1].imposto.IBSCBS.gIBSCBS', message: expect.stringMatching(/CRT 1 não informa IBS\/CBS: a opção está desativada/) },
    ]);
  });

  it('with the company setting on, it writes them like a CRT 3', () => {
    const emitter = demoEmitter({ ibsCbs: { optIn: true, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] } });
    const built = issueNfce(sampleNfceRequest({ nNF: 8 }), { emitter, dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1, credentials });
    expect(parse(built.xml).all('IBSCBS')).toHaveLength(3);
    expect(built.xml).toContain('<vNFTot>');
    expect(validateXml(built.xml, 'nfe')).toEqual({ valid: true, errors: [] });
  });
});

describe('values an integrator sends are checked, not trusted', () => {
  const dhEmi = '2026-11-24T10:00:00-03:00';
  const withValues = (gIBSCBS: NonNullable<NonNullable<NfceItem['imposto']['IBSCBS']>['gIBSCBS']>) =>
    cart((d, i) => {
      if (i === 0) d.imposto.IBSCBS = { CST: '000', cClassTrib: '000001', gIBSCBS };
    });

  it('values within the rules are written as sent (one cent off the rounding is within SEFAZ tolerance) and the totals add what is written', () => {
    const built = buildNfce(withValues({ vBC: '18.90', gIBSUF: { pIBSUF: '0.1000', vIBSUF: '0.01' }, vIBS: '0.01', gCBS: { pCBS: '0.90', vCBS: '0.18' } }), {
      emitter: crt3(),
      dhEmi,
      tpEmis: 1,
    });
    const { all, textIn } = parse(built.xml);
    expect(textIn(all('IBSCBS')[0], 'vIBSUF')).toBe('0.01');
    expect(textIn(all('IBSCBS')[0], 'vCBS')).toBe('0.18');
    const tot = all('IBSCBSTot')[0]!;
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gIBS')[0], 'vIBS')).toBe('0.10'); // 0.01 + 0.01 + 0.08
    expect(textIn(tot.getElementsByTagNameNS(NS, 'gCBS')[0], 'vCBS')).toBe('1.01'); // 0.18 + 0.09 + 0.74
  });

  it('a wrong rate, base or amount is refused naming the field, with what it should be', () => {
    const issues = fieldsOf(() =>
      buildNfce(
        withValues({
          vBC: '19.00',
          gIBSUF: { pIBSUF: '0.05', vIBSUF: '0.05' },
          gIBSMun: { pIBSMun: '0.10' },
          vIBS: '0.30',
          gCBS: { pCBS: '0.90', vCBS: '0.20' },
        }),
        { emitter: crt3(), dhEmi, tpEmis: 1 },
      ),
    );
    const base = 'det[0].imposto.IBSCBS.gIBSCBS';
    expect(issues.map((i) => i.field)).toEqual([
      `${base}.vBC`,
      `${base}.gIBSUF.pIBSUF`,
      `${base}.gIBSUF.vIBSUF`,
      `${base}.gIBSMun.pIBSMun`,
      `${base}.gCBS.vCBS`,
      `${base}.vIBS`,
    ]);
    expect(issues[0]!.message).toContain('18.90');
    expect(issues[1]!.message).toMatch(/0\.10 \(rejeição 1026\)/);
    expect(issues[2]!.message).toMatch(/0\.02, com tolerância de 0,01 \(rejeição 1041\)/);
    expect(issues[3]!.message).toMatch(/rejeição 1036/);
    expect(issues[4]!.message).toMatch(/0\.17, com tolerância de 0,01 \(rejeição 1069\)/);
    expect(issues[5]!.message).toMatch(/rejeição 1150/);
  });

  it('classification errors: unknown CST (1020), cClassTrib of another CST (1024), a CST the NFC-e does not take, gIBSCBS where the CST has none (1021)', () => {
    const body = cart((d, i) => {
      d.imposto.IBSCBS = [
        { CST: '123', cClassTrib: '000001' },
        { CST: '000', cClassTrib: '200003' },
        { CST: '510', cClassTrib: '000001' },
      ][i];
    });
    const issues = fieldsOf(() => buildNfce(body, { emitter: crt3(), dhEmi, tpEmis: 1 }));
    expect(issues.map((i) => [i.field, i.message.match(/rejeição \d+|não é emitido/)?.[0]])).toEqual([
      ['det[0].imposto.IBSCBS.CST', 'rejeição 1020'],
      ['det[1].imposto.IBSCBS.cClassTrib', 'rejeição 1024'],
      ['det[2].imposto.IBSCBS.CST', 'não é emitido'],
    ]);
    const immune = cart((d, i) => {
      if (i === 0) d.imposto.IBSCBS = { CST: '410', cClassTrib: '410008', gIBSCBS: { vBC: '18.90' } };
    });
    expect(fieldsOf(() => buildNfce(immune, { emitter: crt3(), dhEmi, tpEmis: 1 }))).toEqual([
      { field: 'det[0].imposto.IBSCBS.gIBSCBS', message: expect.stringMatching(/rejeição 1021/) },
    ]);
  });
});

describe('NT 2026.002 for the NFC-e', () => {
  /** One item of `cents` (a TV), paid in cash. */
  const sale = (vUn: string, dest?: NfceRequest['dest']): NfceRequest => {
    const body = cart((d) => {
      d.prod.vUnCom = d.prod.vUnTrib = d.prod.vProd = vUn;
      d.prod.qCom = d.prod.qTrib = '1';
    }, 1);
    body.total = { vProd: vUn, vNF: vUn };
    body.pag = [{ tPag: '01', vPag: vUn }];
    if (dest) body.dest = dest;
    return body;
  };
  const ctx = { emitter: crt3(), dhEmi: '2026-11-24T10:00:00-03:00', tpEmis: 1 as const };

  it('above R$ 10.000,00 the consumer CPF or CNPJ is required: refused naming dest (750); up to the limit, or identified, it is built', () => {
    expect(fieldsOf(() => buildNfce(sale('10000.01'), ctx))).toEqual([
      { field: 'dest', message: 'NFC-e acima de R$ 10.000,00 exige o CPF ou o CNPJ do consumidor (rejeição 750)' },
    ]);
    expect(fieldsOf(() => buildNfce(sale('10500.00', { idEstrangeiro: 'AB123456' }), ctx))[0]!.field).toBe('dest');
    expect(buildNfce(sale('10000.00'), ctx).vNF).toBe('10000.00');
    expect(buildNfce(sale('10500.00', { cpf: '52998224725' }), ctx).xml).toContain('<CPF>52998224725</CPF>');
    expect(buildNfce(sale('10500.00', { cnpj: '11444777000161' }), ctx).xml).toContain('<CNPJ>11444777000161</CNPJ>');
  });

  it('finNFe is always 1', () => {
    expect(buildNfce(sale('10.00'), ctx).xml).toContain('<finNFe>1</finNFe>');
  });
});
