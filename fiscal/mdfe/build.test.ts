import { describe, expect, it } from 'vitest';
import { checkDigit, parseAccessKey } from '../access-key.ts';
import { generateTestCertificate } from '../certificate.ts';
import type { Emitter } from '../company.ts';
import { FieldError } from '../errors.ts';
import { mdfeProtocolFor, wrapMdfeProc } from '../protocol.ts';
import { validateXml } from '../schema.ts';
import { verifyXmlSignature } from '../signature.ts';
import { buildMdfe, decimalOf, issueMdfe, MDFE_REJECTIONS, mdfeRuleViolation, type MdfeIssueContext } from './build.ts';
import type { MdfeRequest } from './types.ts';

const CNPJ = '11222333000181';
const { certificate } = generateTestCertificate({ cnpj: CNPJ, xNome: 'TRANSPORTES TESTE LTDA' });
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };

const emitter: Emitter = {
  cnpj: CNPJ,
  ie: '111222333444',
  xNome: 'TRANSPORTES TESTE LTDA',
  xFant: 'Transportes Teste',
  address: {
    xLgr: 'Avenida Paulista',
    nro: '1000',
    xBairro: 'Bela Vista',
    cMun: '3550308',
    xMun: 'São Paulo',
    UF: 'SP',
    CEP: '01310100',
    fone: '1133334444',
  },
  crt: 3,
  environment: 'homologacao',
  qrCodeVersion: 2,
};

const ctx: MdfeIssueContext = { emitter, dhEmi: '2026-11-22T14:03:05-03:00', credentials };

// A real NF-e key (SP, model 55, valid DV: docs/fiscal.md, "Access key") and a synthetic CT-e key (model 57).
const NFE_KEY = '35180834128745000152550010000474281920007498';
const cteBody = '35261111222333000181570010000001231' + '12345679';
const CTE_KEY = cteBody + checkDigit(cteBody);

/** Own fleet: neither veicTracao.prop nor tpTransp. SP → BA through MG. */
function ownFleet(): MdfeRequest {
  return {
    ide: {
      nMDF: 123,
      serie: 1,
      modal: '1',
      tpEmit: '1',
      UFIni: 'SP',
      UFFim: 'BA',
      infMunCarrega: [{ cMunCarrega: '3550308', xMunCarrega: 'São Paulo' }],
      infPercurso: [{ UFPer: 'MG' }],
    },
    rodo: {
      RNTRC: '12345678',
      veicTracao: {
        placa: 'ABC1D23',
        UF: 'SP',
        tara: '9000',
        capKG: 25000,
        condutor: { xNome: 'João da Silva', CPF: '52998224725' },
        tpRod: '03',
        tpCar: '02',
      },
      infContratante: [{ xNome: 'Comércio Contratante Ltda', CNPJ: '11444777000161' }],
      infPag: [
        {
          xNome: 'Comércio Contratante Ltda',
          CNPJ: '11444777000161',
          Comp: [
            { tpComp: '04', vComp: 3500.5 },
            { tpComp: '01', vComp: 120, xComp: 'Pedágio' },
          ],
          vContrato: 3620.5,
          indPag: '0',
          infBanc: { PIX: 'financeiro@contratante.com.br' },
        },
      ],
    },
    infDoc: {
      infMunDescarga: [
        { cMunDescarga: '2927408', xMunDescarga: 'Salvador', infCTe: [{ chCTe: CTE_KEY }] },
        { cMunDescarga: '2910800', xMunDescarga: 'Feira de Santana', infNFe: [{ chNFe: NFE_KEY }] },
      ],
    },
    seg: {
      respSeg: '1',
      xSeg: 'Seguradora Exemplo S.A.',
      seg_CNPJ: '11444777000161',
      nApol: 'APOL-2026-001',
      nAver: 'AVB-000123',
    },
    prodPred: {
      tpCarga: '05',
      xProd: 'Eletrodomésticos',
      NCM: '84181000',
      infLotacao: { cepCarrega: '01310100', cepDescarrega: '40020000' },
    },
    tot: { vCarga: 152340.75, cUnid: '01', qCarga: 12500.125 },
  };
}

/** Third-party freight: the vehicle belongs to a TAC, so prop and tpTransp go together. */
function thirdParty(): MdfeRequest {
  const r = ownFleet();
  r.tpTransp = '1';
  r.rodo.veicTracao.prop = {
    CPF: '11144477735',
    RNTRC: '87654321',
    xNome: 'Pedro Caminhoneiro',
    UF: 'MG',
    tpProp: '1',
  };
  return r;
}

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FieldError);
    return (err as FieldError).issues.map((i) => i.field);
  }
  throw new Error('esperado FieldError');
}

const protocolVerdict = {
  cStat: '100',
  xMotivo: 'Autorizado o uso do MDF-e',
  verAplic: 'SVRS-SANDBOX',
  dhRecbto: '2026-11-22T14:03:07-03:00',
  nProt: '941260000000123',
};

describe.each([
  ['own fleet', ownFleet],
  ['third party', thirdParty],
])('issueMdfe: %s', (_name, request) => {
  const issued = issueMdfe(request(), ctx);

  it('builds a schema-valid MDF-e (rodo included) whose signature verifies', () => {
    // validateXml also checks infModal's rodo content (xs:any in mdfe_v3.00.xsd) in place.
    expect(validateXml(issued.xml, 'mdfe')).toEqual({ valid: true, errors: [] });
    const brokenRodo = issued.xml.replace('<RNTRC>12345678</RNTRC>', '<RNTRC>1234567X</RNTRC>');
    const broken = validateXml(brokenRodo, 'mdfe');
    expect(broken.valid).toBe(false);
    expect(broken.errors.join()).toMatch(/infModal \(mdfeModalRodoviario_v3\.00\.xsd\).*RNTRC/);
    const check = verifyXmlSignature(issued.xml);
    expect(check.valid).toBe(true);
    expect(check.valid && check.signedId).toBe(`MDFe${issued.key}`);
  });

  it('wrapped with its protocol in mdfeProc, validates against procMDFe_v3.00.xsd', () => {
    const proc = wrapMdfeProc(issued.xml, mdfeProtocolFor(issued.xml, protocolVerdict));
    expect(validateXml(proc, 'procMDFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
    expect(proc).toContain(`<chMDFe>${issued.key}</chMDFe>`);
  });

  it('has a model-58 key and the SVRS QR code, placed before the Signature', () => {
    const k = parseAccessKey(issued.key);
    expect(k).toMatchObject({ cUF: '35', yearMonth: '2611', cnpj: CNPJ, model: '58', serie: 1, number: 123, tpEmis: 1 });
    expect(issued.qrCode).toBe(`https://dfe-portal.svrs.rs.gov.br/mdfe/qrCode?chMDFe=${issued.key}&tpAmb=2`);
    expect(issued.xml).toContain(
      `<infMDFeSupl><qrCodMDFe>https://dfe-portal.svrs.rs.gov.br/mdfe/qrCode?chMDFe=${issued.key}&amp;tpAmb=2</qrCodMDFe></infMDFeSupl><Signature `,
    );
    expect(issued.xml).toMatch(/<\/Signature><\/MDFe>$/);
  });

  it('counts the linked documents and writes decimals in the schema format', () => {
    expect(issued.xml).toContain('<tot><qCTe>1</qCTe><qNFe>1</qNFe><vCarga>152340.75</vCarga><cUnid>01</cUnid><qCarga>12500.1250</qCarga></tot>');
    expect(issued.xml).toContain('<Comp><tpComp>04</tpComp><vComp>3500.50</vComp></Comp>');
    expect(issued.xml).toContain('<vContrato>3620.50</vContrato>');
    expect(issued.xml).toContain('<infModal versaoModal="3.00"><rodo><infANTT><RNTRC>12345678</RNTRC>');
    expect(issued.xml).toContain(`<infNFe><chNFe>${NFE_KEY}</chNFe></infNFe>`);
    expect(issued.xml).toContain(`<infCTe><chCTe>${CTE_KEY}</chCTe></infCTe>`);
    expect(issued.xml).toContain('<dhEmi>2026-11-22T14:03:05-03:00</dhEmi>');
  });

  it('breaks none of the stateless rejection rules', () => {
    expect(mdfeRuleViolation(request())).toBeUndefined();
  });
});

describe('issueMdfe: details', () => {
  it('writes prop and tpTransp only for the third-party vehicle', () => {
    const own = issueMdfe(ownFleet(), ctx).xml;
    expect(own).not.toContain('<prop>');
    expect(own).not.toContain('<tpTransp>');
    const third = issueMdfe(thirdParty(), ctx).xml;
    expect(third).toContain('<tpEmit>1</tpEmit><tpTransp>1</tpTransp><mod>58</mod>');
    // The empty IE may come back self-closed: the signer re-serialises the document.
    expect(third).toMatch(
      /<prop><CPF>11144477735<\/CPF><RNTRC>87654321<\/RNTRC><xNome>Pedro Caminhoneiro<\/xNome><IE(\/>|><\/IE>)<UF>MG<\/UF><tpProp>1<\/tpProp><\/prop><condutor>/,
    );
  });

  it('keeps a given cMDF, so a corrected request can be re-issued with the same key', () => {
    const a = issueMdfe(ownFleet(), { ...ctx, cMDF: '40817263' });
    const b = issueMdfe(ownFleet(), { ...ctx, cMDF: '40817263' });
    expect(a.key).toBe(b.key);
    expect(a.key.slice(35, 43)).toBe('40817263');
    expect(() => issueMdfe(ownFleet(), { ...ctx, cMDF: '12345678' })).toThrow(FieldError);
  });

  it('generates a cMDF obeying NT 2019.001', () => {
    const { cMDF } = buildMdfe(ownFleet(), ctx);
    expect(cMDF).toMatch(/^[0-9]{8}$/);
    expect(cMDF).not.toMatch(/^(\d)\1{7}$/);
  });

  it('signs the QR code in contingency (tpEmis 2)', () => {
    const issued = issueMdfe(ownFleet(), { ...ctx, tpEmis: 2 });
    expect(issued.key[34]).toBe('2');
    expect(issued.qrCode).toMatch(/&tpAmb=2&sign=[A-Za-z0-9+/]+=*$/);
    expect(validateXml(issued.xml, 'mdfe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(issued.xml).valid).toBe(true);
  });

  it('without seg and prodPred still yields a schema-valid signed document, rejected by rule', () => {
    const r = ownFleet();
    delete r.seg;
    delete r.prodPred;
    const issued = issueMdfe(r, ctx);
    expect(validateXml(issued.xml, 'mdfe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(issued.xml).valid).toBe(true);
    expect(issued.xml).not.toContain('<seg>');
    expect(mdfeRuleViolation(r)?.cStat).toBe('698');
  });

  it('incomplete insurance and no contractors still build and validate', () => {
    const r = ownFleet();
    r.seg = { respSeg: '1', nApol: '123' };
    delete r.rodo.infContratante;
    delete r.rodo.infPag;
    const issued = issueMdfe(r, ctx);
    // validateXml also checks infModal's rodo content (xs:any in mdfe_v3.00.xsd) in place.
    expect(validateXml(issued.xml, 'mdfe')).toEqual({ valid: true, errors: [] });
    const brokenRodo = issued.xml.replace('<RNTRC>12345678</RNTRC>', '<RNTRC>1234567X</RNTRC>');
    const broken = validateXml(brokenRodo, 'mdfe');
    expect(broken.valid).toBe(false);
    expect(broken.errors.join()).toMatch(/infModal \(mdfeModalRodoviario_v3\.00\.xsd\).*RNTRC/);
    expect(mdfeRuleViolation(r)?.cStat).toBe('699');
  });

  it('a route the authority rejects (663) is still a valid document', () => {
    const r = ownFleet();
    r.ide.infPercurso = [];
    const issued = issueMdfe(r, ctx);
    expect(validateXml(issued.xml, 'mdfe').valid).toBe(true);
    expect(mdfeRuleViolation(r)?.cStat).toBe('663');
  });
});

describe('mdfeRuleViolation', () => {
  const cases: [string, (r: MdfeRequest) => void][] = [
    ['745', (r) => (r.tpTransp = '2')],
    ['699', (r) => delete (r.seg as { nAver?: string }).nAver],
    ['698', (r) => delete r.seg],
    ['725', (r) => delete r.prodPred],
    ['578', (r) => delete r.rodo.infContratante],
    ['663', (r) => (r.ide.infPercurso = [{ UFPer: 'GO' }])],
  ];

  it.each(cases)('returns %s for its crafted input', (cStat, breakIt) => {
    const r = ownFleet();
    breakIt(r);
    const v = mdfeRuleViolation(r);
    expect(v?.cStat).toBe(cStat);
    expect(v?.xMotivo).toMatch(/^Rejeição: /);
  });

  it('745 also for prop without tpTransp, with its own text', () => {
    const r = thirdParty();
    delete r.tpTransp;
    expect(mdfeRuleViolation(r)).toEqual(MDFE_REJECTIONS.propSemTpTransp);
    const s = ownFleet();
    s.tpTransp = '1';
    expect(mdfeRuleViolation(s)).toEqual({
      cStat: '745',
      xMotivo: 'Rejeição: Informado tpTransp sem o grupo do proprietário do veículo (prop)',
    });
  });

  it('699: each missing piece of the insurance makes it incomplete; an empty nAver list too', () => {
    for (const k of ['xSeg', 'seg_CNPJ', 'nApol', 'nAver'] as const) {
      const r = ownFleet();
      delete (r.seg as Record<string, unknown>)[k];
      expect(mdfeRuleViolation(r)?.cStat, k).toBe('699');
    }
    const r = ownFleet();
    r.seg = { ...(r.seg as object), respSeg: '1', nAver: [] };
    expect(mdfeRuleViolation(r)?.cStat).toBe('699');
  });

  it('respects the order 745, 699, 698, 725, 578, 663', () => {
    const all = ownFleet();
    all.tpTransp = '1';
    delete (all.seg as { nAver?: string }).nAver;
    delete all.prodPred;
    delete all.rodo.infContratante;
    all.ide.infPercurso = [{ UFPer: 'RS' }];
    const seen: string[] = [];
    // Fix the first rule broken, check again, until the request passes.
    for (let v = mdfeRuleViolation(all); v; v = mdfeRuleViolation(all)) {
      seen.push(v.cStat);
      if (v.cStat === '745') delete all.tpTransp;
      else if (v.cStat === '699') delete all.seg;
      else if (v.cStat === '698') all.seg = ownFleet().seg;
      else if (v.cStat === '725') all.prodPred = ownFleet().prodPred;
      else if (v.cStat === '578') all.rodo.infContratante = ownFleet().rodo.infContratante;
      else if (v.cStat === '663') all.ide.infPercurso = [{ UFPer: 'MG' }];
      expect(seen.length).toBeLessThan(10);
    }
    expect(seen).toEqual(['745', '699', '698', '725', '578', '663']);
  });

  it('accepts routes without percurso between bordering or equal states', () => {
    const r = ownFleet();
    r.ide.UFFim = 'MG';
    r.ide.infPercurso = [];
    expect(mdfeRuleViolation(r)).toBeUndefined();
  });
});

describe('buildMdfe: bad input is a FieldError naming the field', () => {
  it('unknown municipality', () => {
    const r = ownFleet();
    r.infDoc.infMunDescarga[0]!.cMunDescarga = '2999999';
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['infDoc.infMunDescarga[0].cMunDescarga']);
  });

  it('municipality of another UF: loading belongs to UFIni, unloading to UFFim', () => {
    const r = ownFleet();
    r.ide.infMunCarrega[0]!.cMunCarrega = '2927408'; // Salvador/BA, but the trip starts in SP
    r.infDoc.infMunDescarga[1]!.cMunDescarga = '3509502'; // Campinas/SP, but the trip ends in BA
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['ide.infMunCarrega[0].cMunCarrega', 'infDoc.infMunDescarga[1].cMunDescarga']);
  });

  it('invalid CPF of the driver', () => {
    const r = ownFleet();
    (r.rodo.veicTracao.condutor as { CPF: string }).CPF = '52998224724';
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['rodo.veicTracao.condutor.CPF']);
  });

  it('several drivers are named by index', () => {
    const r = ownFleet();
    r.rodo.veicTracao.condutor = [
      { xNome: 'João da Silva', CPF: '52998224725' },
      { xNome: 'Maria', CPF: '123' },
    ];
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['rodo.veicTracao.condutor[1].CPF']);
  });

  it('invalid CNPJ (contractor, insurer, owner)', () => {
    const r = thirdParty();
    r.rodo.infContratante![0]!.CNPJ = '11444777000162';
    (r.seg as { seg_CNPJ: string }).seg_CNPJ = '1144477700016';
    r.rodo.veicTracao.prop = { ...r.rodo.veicTracao.prop!, CPF: undefined, CNPJ: '11222333000180' };
    // Reported in document order: infANTT (contractors) comes before veicTracao, seg after rodo.
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['rodo.infContratante[0].CNPJ', 'rodo.veicTracao.prop.CNPJ', 'seg.seg_CNPJ']);
  });

  it('7-digit CEP', () => {
    const r = ownFleet();
    r.prodPred!.infLotacao!.cepCarrega = '0131010';
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['prodPred.infLotacao.cepCarrega']);
  });

  it('UF codes, types and enumerations, all reported at once', () => {
    const r = ownFleet() as unknown as Record<string, Record<string, unknown>>;
    r.ide!.UFFim = 'XX';
    r.ide!.nMDF = '123';
    r.ide!.infPercurso = [{ UFPer: 'mg' }];
    r.tot!.cUnid = '03';
    (r.rodo!.veicTracao as Record<string, unknown>).placa = 'AB-12';
    const fields = fieldsOf(() => buildMdfe(r as unknown as MdfeRequest, ctx));
    expect(fields).toEqual(expect.arrayContaining(['ide.UFFim', 'ide.nMDF', 'ide.infPercurso[0].UFPer', 'tot.cUnid', 'rodo.veicTracao.placa']));
  });

  it('linked keys: wrong model and wrong check digit', () => {
    const r = ownFleet();
    r.infDoc.infMunDescarga[0]!.infCTe = [{ chCTe: NFE_KEY }];
    r.infDoc.infMunDescarga[1]!.infNFe = [{ chNFe: NFE_KEY.slice(0, 43) + '0' }];
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['infDoc.infMunDescarga[0].infCTe[0].chCTe', 'infDoc.infMunDescarga[1].infNFe[0].chNFe']);
  });

  it('decimals with more places than the layout, or floating-point noise', () => {
    const r = ownFleet();
    r.tot.vCarga = 0.1 + 0.2; // 0.30000000000000004
    r.tot.qCarga = 1.00001;
    r.rodo.infPag![0]!.vContrato = -5;
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['rodo.infPag[0].vContrato', 'tot.vCarga', 'tot.qCarga']);
  });

  it('a group the schema requires once its parent is present (seg.respSeg, infPag.infBanc)', () => {
    const r = ownFleet();
    delete (r.seg as { respSeg?: string }).respSeg;
    delete (r.rodo.infPag![0] as { infBanc?: unknown }).infBanc;
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['rodo.infPag[0].infBanc', 'seg.respSeg']);
  });

  it('only the road modal', () => {
    const r = ownFleet();
    r.ide.modal = '2';
    expect(fieldsOf(() => buildMdfe(r, ctx))).toEqual(['ide.modal']);
  });
});

describe('decimalOf', () => {
  it('converts JSON numbers exactly, from their shortest string form', () => {
    expect(decimalOf(1500.5, 2, 13, 'v')).toBe('1500.50');
    expect(decimalOf(0, 2, 13, 'v')).toBe('0.00');
    expect(decimalOf(1.05, 2, 13, 'v')).toBe('1.05');
    expect(decimalOf(9999999999999.99, 2, 13, 'v')).toBe('9999999999999.99');
    expect(decimalOf(12500.125, 4, 11, 'v')).toBe('12500.1250');
    expect(decimalOf(1e-4, 4, 11, 'v')).toBe('0.0001');
    expect(decimalOf('10.5', 2, 13, 'v')).toBe('10.50');
  });

  it('refuses what would need rounding, an out-of-range magnitude or a non-number', () => {
    expect(() => decimalOf(1.005, 2, 13, 'v')).toThrow(/casas decimais/);
    expect(() => decimalOf(1e-7, 4, 11, 'v')).toThrow(/casas decimais/);
    expect(() => decimalOf(1e13, 2, 13, 'v')).toThrow(/limite/);
    expect(() => decimalOf(1e21, 2, 13, 'v')).toThrow(/limite/);
    expect(() => decimalOf(Number.NaN, 2, 13, 'v')).toThrow(FieldError);
    expect(() => decimalOf('1,50', 2, 13, 'v')).toThrow(FieldError);
    expect(() => decimalOf(true, 2, 13, 'v')).toThrow(FieldError);
  });
});
