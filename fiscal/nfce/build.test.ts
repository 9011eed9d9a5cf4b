import { verify } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAccessKey } from '../access-key.ts';
import { generateTestCertificate } from '../certificate.ts';
import type { Emitter } from '../company.ts';
import { FieldError } from '../errors.ts';
import { validateXml } from '../schema.ts';
import { digestValueOf, verifyXmlSignature } from '../signature.ts';
import { firstText } from '../xml.ts';
import {
  buildNfce,
  HOMOLOGACAO_DEST_XNOME,
  HOMOLOGACAO_XPROD,
  issueNfce,
  paymentRuleViolation,
  readNfceSummary,
  REJECTION_TEXTS,
  type IssueNfceContext,
} from './build.ts';
import type { NfceItem, NfceRequest } from './types.ts';
import { ACCESS_KEY_PATTERN } from '../../base/common/access-key.ts';

const TRICKY = `Biscoito "Maria" & <Cia> d'Ávila`;

const emitter = (over: Partial<Emitter> = {}): Emitter => ({
  cnpj: '11222333000181',
  ie: '123456789012',
  xNome: 'PADARIA & CONFEITARIA SÃO JOÃO LTDA',
  xFant: 'Padaria São João',
  address: {
    xLgr: 'Rua das Flores',
    nro: '100',
    xBairro: 'Centro',
    cMun: '3550308',
    xMun: 'São Paulo',
    UF: 'SP',
    CEP: '01001000',
    fone: '1133334444',
  },
  crt: 1,
  environment: 'homologacao',
  csc: { id: '000001', token: 'CSC-DE-TESTE-123456' },
  qrCodeVersion: 2,
  ...over,
});

const SN102 = { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } } };

function item(
  xProd: string,
  NCM: string,
  qCom: string,
  vUnCom: string,
  vProd: string,
  extra: Partial<NfceItem['prod']> = {},
  imposto: NfceItem['imposto'] = SN102,
): NfceItem {
  return {
    prod: {
      cProd: String(NCM.slice(0, 4)),
      cEAN: 'SEM GTIN',
      xProd,
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

/** Five items, accents and XML special characters; vProd 77.70, vDesc 1.00, vNF 76.70. */
function request(over: Partial<NfceRequest> = {}): NfceRequest {
  return {
    ide: { serie: 1, nNF: 1234 },
    det: [
      item(
        'Café torrado Pilão 500g',
        '09012100',
        '2',
        '18.90',
        '37.80',
        { cEAN: '7891000100103', cEANTrib: '7891000100103' },
        {
          ...SN102,
          PIS: { PISNT: { CST: '07' } },
          COFINS: { COFINSNT: { CST: '07' } },
        },
      ),
      item(TRICKY, '19053100', '3', '4.99', '14.97'),
      item('Água mineral s/ gás 500ml', '22011000', '6', '2.5', '15.00', { vDesc: '1.00' }),
      item('Pão francês', '19059020', '0.345', '14.90', '5.14', { uCom: 'KG', uTrib: 'KG' }),
      item(
        'Açúcar refinado União 1kg',
        '17019900',
        '1',
        '4.79',
        '4.79',
        { CFOP: '5405' },
        {
          ICMS: { ICMSSN500: { orig: '0', CSOSN: '500', vBCSTRet: '4.00', pST: '18.00', vICMSSTRet: '0.72' } },
          vTotTrib: '1.23',
        },
      ),
    ],
    total: { vProd: '77.70', vNF: '76.70' },
    pag: [
      { tPag: '01', vPag: '50.00' },
      { tPag: '03', vPag: '30.00', card: { tBand: '01' } },
    ],
    dest: { cpf: '52998224725', xNome: 'José da Silva' },
    infCpl: 'Obrigado pela preferência & volte sempre',
    ...over,
  };
}

const DH_EMI = '2026-11-22T14:03:05-03:00';
const DAY = DH_EMI.slice(0, 10);
const CONTINGENCY = { dhCont: '2026-11-22T13:50:00-03:00', xJust: 'Sem conexão com a SEFAZ (internet da loja fora do ar)' };

let credentials: IssueNfceContext['credentials'];
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'PADARIA SAO JOAO' }).certificate;
});

function issues(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err.issues;
    throw err;
  }
  throw new Error('expected a FieldError, but a document was returned');
}
const fields = (fn: () => unknown): string[] => issues(fn).map((i) => i.field);

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
const childNames = (el: Element): string[] =>
  Array.from(el.childNodes)
    .filter((n) => n.nodeType === 1)
    .map((n) => (n as Element).localName);

describe('issueNfce: the four QR/emission modes', () => {
  const modes = [
    { name: 'online v2', tpEmis: 1 as const, version: 2 as const },
    { name: 'online v3', tpEmis: 1 as const, version: 3 as const },
    { name: 'offline v2', tpEmis: 9 as const, version: 2 as const },
    { name: 'offline v3', tpEmis: 9 as const, version: 3 as const },
  ];

  for (const mode of modes) {
    it(`${mode.name}: schema-valid, signature verifies, infNFeSupl before Signature`, () => {
      const issued = issueNfce(request(), {
        emitter: emitter({ qrCodeVersion: mode.version }),
        dhEmi: DH_EMI,
        tpEmis: mode.tpEmis,
        contingency: mode.tpEmis === 9 ? CONTINGENCY : undefined,
        cNF: '48151623',
        credentials,
      });
      const schema = validateXml(issued.xml, 'nfe');
      expect(schema.errors).toEqual([]);
      expect(schema.valid).toBe(true);
      const sig = verifyXmlSignature(issued.xml);
      expect(sig.valid).toBe(true);
      if (sig.valid) expect(sig.signedId).toBe(`NFe${issued.key}`);

      expect(issued.xml.startsWith('<NFe xmlns="http://www.portalfiscal.inf.br/nfe"><infNFe')).toBe(true);
      expect(issued.xml).not.toContain('<?xml');
      const root = parse(issued.xml).documentElement;
      expect(childNames(root)).toEqual(['infNFe', 'infNFeSupl', 'Signature']);

      const key = parseAccessKey(issued.key);
      expect(key).toMatchObject({
        cUF: '35',
        yearMonth: '2611',
        cnpj: '11222333000181',
        model: '65',
        serie: 1,
        number: 1234,
        tpEmis: mode.tpEmis,
        code: '48151623',
      });
      expect(issued.qrCode).toContain(`?p=${issued.key}|${mode.version}|2`);
      expect(issued.qrCode.startsWith('https://www.homologacao.nfce.fazenda.sp.gov.br/qrcode?p=')).toBe(true);
      expect(issued.urlChave).toBe('https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica');
      expect(issued.digestValue).toBe(digestValueOf(issued.xml));
      expect(issued.vNF).toBe('76.70');

      expect(readNfceSummary(issued.xml)).toEqual({
        key: issued.key,
        nNF: 1234,
        serie: 1,
        dhEmi: DH_EMI,
        vNF: '76.70',
        tpEmis: mode.tpEmis,
        tpAmb: 2,
        qrCode: issued.qrCode,
        urlChave: issued.urlChave,
        digestValue: issued.digestValue,
        cnpj: '11222333000181',
      });

      if (mode.tpEmis === 9) {
        expect(firstText(issued.xml, 'dhCont')).toBe(CONTINGENCY.dhCont);
        expect(firstText(issued.xml, 'xJust')).toBe(CONTINGENCY.xJust);
      } else {
        expect(issued.xml).not.toContain('<dhCont>');
      }
    });
  }

  it('offline v2: digVal in the QR is the hex of the signed DigestValue, hash with the CSC', () => {
    const issued = issueNfce(request(), { emitter: emitter({ qrCodeVersion: 2 }), dhEmi: DH_EMI, tpEmis: 9, contingency: CONTINGENCY, credentials });
    const parts = issued.qrCode.split('?p=')[1]!.split('|');
    expect(parts.slice(1, 5)).toEqual(['2', '2', '22', '76.70']);
    expect(parts[5]).toBe(Buffer.from(digestValueOf(issued.xml), 'ascii').toString('hex'));
    expect(parts[6]).toBe('1');
    expect(parts[7]).toMatch(/^[0-9A-F]{40}$/);
  });

  it('offline v3: the QR signature of fields 1–7 verifies with the certificate, consumer identified by CPF', () => {
    const issued = issueNfce(request(), {
      emitter: emitter({ qrCodeVersion: 3, csc: undefined }),
      dhEmi: DH_EMI,
      tpEmis: 9,
      contingency: CONTINGENCY,
      credentials,
    });
    const p = issued.qrCode.split('?p=')[1]!;
    const cut = p.lastIndexOf('|');
    const signed = p.slice(0, cut);
    expect(signed).toBe(`${issued.key}|3|2|22|76.70|2|52998224725`);
    expect(verify('RSA-SHA1', Buffer.from(signed), credentials.certificatePem, Buffer.from(p.slice(cut + 1), 'base64'))).toBe(true);
  });

  it("alphanumeric CNPJs: the emitter's letters in the key and the QR (v2 online, v3 offline); a consumer with letters gets type 1 and no number in the v3 QR; all valid", () => {
    const alpha = generateTestCertificate({ cnpj: '12ABC34501DE35', xNome: 'MERCADO ALFA' }).certificate;
    const body = request({ dest: { cnpj: 'Q0SLFMBD7VX439', xNome: 'Distribuidora Alfa' } });
    const online = issueNfce(body, { emitter: emitter({ cnpj: '12ABC34501DE35' }), dhEmi: DH_EMI, tpEmis: 1, credentials: alpha });
    expect(online.key.slice(6, 20)).toBe('12ABC34501DE35');
    expect(online.qrCode).toContain(`?p=${online.key}|2|2|1|`);
    expect(validateXml(online.xml, 'nfe')).toEqual({ valid: true, errors: [] });

    const offline = issueNfce(body, {
      emitter: emitter({ cnpj: '12ABC34501DE35', qrCodeVersion: 3, csc: undefined }),
      dhEmi: DH_EMI,
      tpEmis: 9,
      contingency: CONTINGENCY,
      credentials: alpha,
    });
    const p = offline.qrCode.split('?p=')[1]!;
    const signed = p.slice(0, p.lastIndexOf('|'));
    expect(signed).toBe(`${offline.key}|3|2|22|76.70|1|`);
    expect(verify('RSA-SHA1', Buffer.from(signed), alpha.certificatePem, Buffer.from(p.slice(p.lastIndexOf('|') + 1), 'base64'))).toBe(true);
    expect(offline.xml).toContain('<dest><CNPJ>Q0SLFMBD7VX439</CNPJ>');
    expect(validateXml(offline.xml, 'nfe')).toEqual({ valid: true, errors: [] });
  });

  it('online v2: hash and cIdToken without leading zeros', () => {
    const issued = issueNfce(request(), { emitter: emitter(), dhEmi: DH_EMI, tpEmis: 1, credentials });
    expect(issued.qrCode).toMatch(new RegExp(`\\?p=${ACCESS_KEY_PATTERN}\\|2\\|2\\|1\\|[0-9A-F]{40}$`));
  });

  it('v2 without a CSC is a FieldError on csc, v3 does not need it', () => {
    expect(fields(() => issueNfce(request(), { emitter: emitter({ csc: undefined }), dhEmi: DH_EMI, tpEmis: 1, credentials }))).toEqual(['csc']);
    expect(
      fields(() => issueNfce(request(), { emitter: emitter({ csc: undefined }), dhEmi: DH_EMI, tpEmis: 9, contingency: CONTINGENCY, credentials })),
    ).toEqual(['csc']);
    expect(issueNfce(request(), { emitter: emitter({ csc: undefined, qrCodeVersion: 3 }), dhEmi: DH_EMI, tpEmis: 1, credentials }).qrCode).toMatch(/\|3\|2$/);
  });
});

describe('buildNfce: content', () => {
  const ctx = { emitter: emitter(), dhEmi: DH_EMI, tpEmis: 1 as const };

  it('escapes user text exactly once (&, <, quotes) and keeps accents', () => {
    const issued = issueNfce(request(), { ...ctx, credentials });
    const doc = parse(issued.xml);
    expect(doc.getElementsByTagName('xProd')[1]!.textContent).toBe(TRICKY);
    expect(doc.getElementsByTagName('xProd')[2]!.textContent).toBe('Água mineral s/ gás 500ml');
    expect(doc.getElementsByTagName('infCpl')[0]!.textContent).toBe('Obrigado pela preferência & volte sempre');
    expect(doc.getElementsByTagName('xNome')[0]!.textContent).toBe('PADARIA & CONFEITARIA SÃO JOÃO LTDA');
    expect(issued.xml).not.toMatch(/&amp;(amp|lt|gt|quot|#39);/);
    expect(issued.xml).not.toContain('<Cia>');
  });

  it('homologação: item 1 and dest/xNome carry the texts of rejections 373 and 598', () => {
    const built = buildNfce(request(), ctx);
    const doc = parse(built.xml);
    expect(doc.getElementsByTagName('xProd')[0]!.textContent).toBe(HOMOLOGACAO_XPROD);
    expect(HOMOLOGACAO_XPROD).toBe('NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL');
    expect(firstText(built.xml.slice(built.xml.indexOf('<dest>')), 'xNome')).toBe(HOMOLOGACAO_DEST_XNOME);
    expect(HOMOLOGACAO_DEST_XNOME).toBe('NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL');
    expect(doc.getElementsByTagName('xProd')[1]!.textContent).toBe(TRICKY);
    expect(firstText(built.xml, 'tpAmb')).toBe('2');
  });

  it('produção: the descriptions and the consumer name are kept', () => {
    const built = buildNfce(request(), { ...ctx, emitter: emitter({ environment: 'producao' }) });
    expect(firstText(built.xml, 'tpAmb')).toBe('1');
    expect(firstText(built.xml, 'xProd')).toBe('Café torrado Pilão 500g');
    expect(built.xml).toContain('<dest><CPF>52998224725</CPF><xNome>José da Silva</xNome><indIEDest>9</indIEDest></dest>');
    expect(built.xml).not.toContain('HOMOLOGACAO');
  });

  it('ide: fixed NFC-e values, dhEmi in the Brasília offset', () => {
    const built = buildNfce(request(), { ...ctx, dhEmi: new Date('2026-11-22T17:03:05.789Z') });
    const ide = built.xml.slice(built.xml.indexOf('<ide>'), built.xml.indexOf('</ide>'));
    expect(firstText(ide, 'dhEmi')).toBe('2026-11-22T14:03:05-03:00');
    for (const [name, value] of [
      ['mod', '65'],
      ['tpNF', '1'],
      ['idDest', '1'],
      ['tpImp', '4'],
      ['tpEmis', '1'],
      ['finNFe', '1'],
      ['indFinal', '1'],
      ['indPres', '1'],
      ['procEmi', '0'],
      ['cMunFG', '3550308'],
      ['cUF', '35'],
      ['natOp', 'VENDA'],
    ]) {
      expect(firstText(ide, name!), name).toBe(value);
    }
    expect(firstText(ide, 'cDV')).toBe(built.key.slice(43));
    expect(firstText(ide, 'cNF')).toBe(built.key.slice(35, 43));
    const other = buildNfce(request(), { ...ctx, dhEmi: '2026-11-30T23:30:00-04:00' });
    expect(other.dhEmi).toBe('2026-12-01T00:30:00-03:00');
    expect(other.key.slice(2, 6)).toBe('2612');
  });

  it('generated cNF follows NT 2019.001 and the key is consistent', () => {
    for (let i = 0; i < 20; i++) {
      const built = buildNfce(request(), ctx);
      const k = parseAccessKey(built.key);
      expect(k.code).toBe(built.cNF);
      expect(k.code).not.toMatch(/^(\d)\1{7}$/);
      expect(Number(k.code)).not.toBe(1234);
    }
  });

  it('decimals as the schema patterns want them; vProd checked half-up to the cent', () => {
    const built = buildNfce(request(), ctx);
    expect(built.xml).toContain('<qCom>0.3450</qCom><vUnCom>14.90</vUnCom><vProd>5.14</vProd>');
    expect(built.xml).toContain('<qCom>6.0000</qCom><vUnCom>2.50</vUnCom><vProd>15.00</vProd>');
    expect(built.xml).toContain('<vUnTrib>2.50</vUnTrib><vDesc>1.00</vDesc><indTot>1</indTot>');
    // 3 × 0.335 = 1.005 → 1.01 (half-up)
    const half = request({
      det: [item('Bala', '17019900', '3', '0.335', '1.01')],
      total: { vProd: '1.01', vNF: '1.01' },
      pag: [{ tPag: '01', vPag: '1.01' }],
    });
    expect(buildNfce(half, ctx).xml).toContain('<vUnCom>0.335</vUnCom><vProd>1.01</vProd>');
    const wrong = { ...half, det: [item('Bala', '17019900', '3', '0.335', '1.00')] };
    expect(fields(() => buildNfce(wrong, ctx))).toContain('det[0].prod.vProd');
    const manyPlaces = request({
      det: [item('Parafuso', '17019900', '1000', '0.0123456789', '12.35')],
      total: { vProd: '12.35', vNF: '12.35' },
      pag: [{ tPag: '01', vPag: '12.35' }],
    });
    expect(buildNfce(manyPlaces, ctx).xml).toContain('<qCom>1000.0000</qCom><vUnCom>0.0123456789</vUnCom><vProd>12.35</vProd>');
  });

  it('totals: ICMSTot with every required field, discount and ST retained', () => {
    const built = buildNfce(request(), ctx);
    const tot = built.xml.slice(built.xml.indexOf('<ICMSTot>'), built.xml.indexOf('</ICMSTot>'));
    const names = [...tot.matchAll(/<([A-Za-z]+)>/g)].map((m) => m[1]).slice(1);
    expect(names).toEqual([
      'vBC',
      'vICMS',
      'vICMSDeson',
      'vFCP',
      'vBCST',
      'vST',
      'vFCPST',
      'vFCPSTRet',
      'vProd',
      'vFrete',
      'vSeg',
      'vDesc',
      'vII',
      'vIPI',
      'vIPIDevol',
      'vPIS',
      'vCOFINS',
      'vOutro',
      'vNF',
      'vTotTrib',
    ]);
    expect(firstText(tot, 'vProd')).toBe('77.70');
    expect(firstText(tot, 'vDesc')).toBe('1.00');
    expect(firstText(tot, 'vNF')).toBe('76.70');
    expect(firstText(tot, 'vST')).toBe('0.00');
    expect(built.xml).toContain('<transp><modFrete>9</modFrete></transp>');
  });

  it('vTotTrib: the item value is kept, the others estimated at the CRT rate, total = sum', () => {
    const built = buildNfce(request(), ctx);
    const perItem = [...built.xml.matchAll(/<imposto><vTotTrib>([0-9.]+)<\/vTotTrib>/g)].map((m) => m[1]);
    // CRT 1 → 4.00% of the net value, half-up: 37.80→1.51, 14.97→0.60, 14.00→0.56, 5.14→0.21; item 5 own 1.23
    expect(perItem).toEqual(['1.51', '0.60', '0.56', '0.21', '1.23']);
    expect(built.vTotTrib).toBe('4.11');
    expect(firstText(built.xml.slice(built.xml.indexOf('<ICMSTot>')), 'vTotTrib')).toBe('4.11');
    const rated = buildNfce(request(), { ...ctx, vTotTribRate: '10' });
    expect(rated.vTotTrib).toBe('8.42'); // 3.78 + 1.50 (1.497) + 1.40 + 0.51 (0.514) + 1.23
  });

  it('vTotTrib given in the body: spread over the items without one, to the cent', () => {
    const built = buildNfce(request({ vTotTrib: '10.00' }), ctx);
    const perItem = [...built.xml.matchAll(/<imposto><vTotTrib>([0-9.]+)<\/vTotTrib>/g)].map((m) => m[1]!);
    expect(perItem[4]).toBe('1.23');
    const cents = perItem.reduce((a, v) => a + Math.round(Number(v) * 100), 0);
    expect(cents).toBe(1000);
    expect(built.vTotTrib).toBe('10.00');
    expect(fields(() => buildNfce(request({ vTotTrib: '1.00' }), ctx))).toEqual(['vTotTrib']);
  });

  it('payments: card group with tpIntegra 2 by default, change computed', () => {
    const built = buildNfce(request(), ctx);
    expect(built.xml).toContain(
      '<pag><detPag><tPag>01</tPag><vPag>50.00</vPag></detPag><detPag><tPag>03</tPag><vPag>30.00</vPag><card><tpIntegra>2</tpIntegra><tBand>01</tBand></card></detPag><vTroco>3.30</vTroco></pag>',
    );
    expect(built.vTroco).toBe('3.30');
    expect(fields(() => buildNfce(request({ vTroco: '3.00' }), ctx))).toEqual(['vTroco']);
    expect(fields(() => buildNfce(request({ pag: [{ tPag: '01', vPag: '70.00' }] }), ctx))).toEqual(['pag']);
  });

  it('dest with CNPJ or without dest; no IE for the consumer', () => {
    const cnpj = buildNfce(request({ dest: { cnpj: '60701190000104' } }), { ...ctx, emitter: emitter({ environment: 'producao' }) });
    expect(cnpj.xml).toContain('<dest><CNPJ>60701190000104</CNPJ><indIEDest>9</indIEDest></dest>');
    const none = buildNfce(request({ dest: undefined }), ctx);
    expect(none.xml).not.toContain('<dest>');
    expect(fields(() => buildNfce(request({ dest: { cpf: '52998224725', IE: '123' } as NfceRequest['dest'] }), ctx))).toEqual(['dest.IE']);
  });

  it('regime normal (CRT 3): ICMS00/20/40/60/90 with PIS/COFINS variants, schema-valid, summed totals', () => {
    const det: NfceItem[] = [
      item(
        'Refrigerante 2L',
        '22021000',
        '1',
        '10.00',
        '10.00',
        {},
        {
          ICMS: { ICMS00: { orig: '0', CST: '00', modBC: '3', vBC: '10.00', pICMS: '18', vICMS: '1.80' } },
          PIS: { PISAliq: { CST: '01', vBC: '10.00', pPIS: '1.65', vPIS: '0.17' } },
          COFINS: { COFINSAliq: { CST: '01', vBC: '10.00', pCOFINS: '7.6', vCOFINS: '0.76' } },
        },
      ),
      item(
        'Queijo minas',
        '04061010',
        '1',
        '20.00',
        '20.00',
        {},
        {
          ICMS: {
            ICMS20: {
              orig: '0',
              CST: '20',
              modBC: '3',
              pRedBC: '33.33',
              vBC: '13.33',
              pICMS: '18',
              vICMS: '2.40',
              vICMSDeson: '1.20',
              motDesICMS: '9',
              indDeduzDeson: '1',
            },
          },
          PIS: { PISOutr: { CST: '49', vBC: '0.00', pPIS: '0.00', vPIS: '0.00' } },
          COFINS: { COFINSOutr: { CST: '99', qBCProd: '1', vAliqProd: '0.5', vCOFINS: '0.50' } },
        },
      ),
      item('Livro', '19053100', '1', '30.00', '30.00', {}, { ICMS: { ICMS40: { orig: '0', CST: '41' } } }),
      item(
        'Cerveja lata',
        '22030000',
        '2',
        '4.50',
        '9.00',
        { CFOP: '5405' },
        {
          ICMS: {
            ICMS60: { orig: '0', CST: '60', vBCSTRet: '9.00', pST: '18.0000', vICMSSTRet: '1.62', vBCFCPSTRet: '9.00', pFCPSTRet: '2', vFCPSTRet: '0.18' },
          },
        },
      ),
      item('Outros', '17019900', '1', '1.00', '1.00', {}, { ICMS: { ICMS90: { orig: '2', CST: '90' } } }),
    ];
    const input = request({ det, total: { vProd: '70.00', vNF: '68.80' }, pag: [{ tPag: '17', vPag: '68.80', card: { tpIntegra: '2' } }], dest: undefined });
    const issued = issueNfce(input, { ...ctx, emitter: emitter({ crt: 3 }), credentials });
    expect(validateXml(issued.xml, 'nfe').errors).toEqual([]);
    const tot = issued.xml.slice(issued.xml.indexOf('<ICMSTot>'), issued.xml.indexOf('</ICMSTot>'));
    expect(firstText(tot, 'vBC')).toBe('23.33');
    expect(firstText(tot, 'vICMS')).toBe('4.20');
    expect(firstText(tot, 'vICMSDeson')).toBe('1.20');
    expect(firstText(tot, 'vFCPSTRet')).toBe('0.18');
    expect(firstText(tot, 'vPIS')).toBe('0.17');
    expect(firstText(tot, 'vCOFINS')).toBe('1.26');
    expect(firstText(tot, 'vNF')).toBe('68.80'); // 70.00 − 1.20 deducted
    expect(issued.xml).toContain('<ICMS60><orig>0</orig><CST>60</CST><vBCSTRet>9.00</vBCSTRet><pST>18.00</pST><vICMSSTRet>1.62</vICMSSTRet>');
    expect(issued.xml).toContain('<COFINSOutr><CST>99</CST><qBCProd>1.0000</qBCProd><vAliqProd>0.5000</vAliqProd><vCOFINS>0.50</vCOFINS></COFINSOutr>');
    expect(paymentRuleViolation(input, DAY)).toBeUndefined();
  });

  it('indPres 4 (delivery) is accepted and writes indIntermed 0; other values are rejection 717', () => {
    const built = buildNfce(request({ ide: { serie: 1, nNF: 5, indPres: '4' } }), ctx);
    expect(built.xml).toContain('<indPres>4</indPres><indIntermed>0</indIntermed><procEmi>0</procEmi>');
    expect(fields(() => buildNfce(request({ ide: { serie: 1, nNF: 5, indPres: '2' } }), ctx))).toEqual(['ide.indPres']);
  });
});

describe('paymentRuleViolation (391/392) and the builder that does not enforce it', () => {
  const ctx = { emitter: emitter(), dhEmi: DH_EMI, tpEmis: 1 as const };

  it('card payment without card group: XML still built (for the authority to reject 391)', () => {
    const input = request({ pag: [{ tPag: '04', vPag: '76.70' }] });
    const issued = issueNfce(input, { ...ctx, credentials });
    expect(issued.xml).not.toContain('<card>');
    expect(validateXml(issued.xml, 'nfe').valid).toBe(true);
    expect(paymentRuleViolation(input, DAY)).toEqual({ cStat: 391, xMotivo: REJECTION_TEXTS[391] });
    expect(REJECTION_TEXTS[391]).toBe('Não informados os dados do cartão de crédito / débito nas Formas de Pagamento da Nota Fiscal');
  });

  it('top-level card applies to card payments', () => {
    const input = request({ pag: [{ tPag: '03', vPag: '76.70' }], card: { tpIntegra: '1', CNPJ: '60701190000104', cAut: 'A1B2C3', tBand: '02' } });
    const built = buildNfce(input, ctx);
    expect(built.xml).toContain('<card><tpIntegra>1</tpIntegra><CNPJ>60701190000104</CNPJ><tBand>02</tBand><cAut>A1B2C3</cAut></card>');
    expect(paymentRuleViolation(input, DAY)).toBeUndefined();
  });

  it('tpIntegra 1 without CNPJ and cAut is 392, still built', () => {
    const input = request({ pag: [{ tPag: '03', vPag: '76.70', card: { tpIntegra: '1' } }] });
    expect(buildNfce(input, ctx).xml).toContain('<card><tpIntegra>1</tpIntegra></card>');
    expect(paymentRuleViolation(input, DAY)).toEqual({ cStat: 392, xMotivo: REJECTION_TEXTS[392] });
    expect(paymentRuleViolation(request({ pag: [{ tPag: '01', vPag: '80.00' }] }), DAY)).toBeUndefined();
  });
});

describe('bad input: FieldError naming the field, nothing returned', () => {
  const ctx = { emitter: emitter(), dhEmi: DH_EMI, tpEmis: 1 as const };

  it('invalid NCM', () => {
    const input = request();
    input.det[1]!.prod.NCM = '99999999';
    expect(fields(() => buildNfce(input, ctx))).toEqual(['det[1].prod.NCM']);
    expect(fields(() => issueNfce(input, { ...ctx, credentials }))).toEqual(['det[1].prod.NCM']);
  });

  it('invalid CPF', () => {
    expect(fields(() => buildNfce(request({ dest: { cpf: '52998224724' } }), ctx))).toEqual(['dest.cpf']);
    expect(fields(() => buildNfce(request({ dest: { cpf: '529.982.247-25' } }), ctx))).toEqual(['dest.cpf']);
  });

  it('vNF not matching the items', () => {
    const found = issues(() => buildNfce(request({ total: { vProd: '77.70', vNF: '77.70' } }), ctx));
    expect(found.map((i) => i.field)).toEqual(['total.vNF']);
    expect(found[0]!.message).toContain('76.70');
    expect(fields(() => buildNfce(request({ total: { vProd: '77.00', vNF: '76.70' } }), ctx))).toEqual(['total.vProd']);
  });

  it('missing nNF', () => {
    const input = request({ ide: { serie: 1 } as NfceRequest['ide'] });
    expect(fields(() => issueNfce(input, { ...ctx, credentials }))).toEqual(['ide.nNF']);
  });

  it('tpEmis 9 without xJust, or with dhCont after dhEmi', () => {
    expect(fields(() => buildNfce(request(), { ...ctx, tpEmis: 9, contingency: { dhCont: CONTINGENCY.dhCont } as never }))).toEqual(['ide.xJust']);
    expect(fields(() => buildNfce(request(), { ...ctx, tpEmis: 9 }))).toEqual(['ide.dhCont', 'ide.xJust']);
    expect(fields(() => buildNfce(request(), { ...ctx, tpEmis: 9, contingency: { ...CONTINGENCY, xJust: 'curta demais' } }))).toEqual(['ide.xJust']);
    expect(fields(() => buildNfce(request(), { ...ctx, tpEmis: 9, contingency: { ...CONTINGENCY, dhCont: '2026-11-22T14:03:06-03:00' } }))).toEqual([
      'ide.dhCont',
    ]);
  });

  it('reports every issue at once', () => {
    const input = request({ dest: { cpf: '123' } });
    input.det[0]!.prod.CFOP = '6102';
    input.det[2]!.prod.qCom = '1,5';
    input.det[3]!.prod.cEAN = '7891000100104';
    input.det[4]!.prod.xProd = 'Emoji 🍞';
    input.det[1]!.imposto = { ICMS: { ICMS00: { orig: '0', CST: '00' } } };
    expect(fields(() => buildNfce(input, ctx))).toEqual([
      'dest.cpf',
      'det[0].prod.CFOP',
      'det[1].imposto.ICMS.ICMS00.modBC',
      'det[1].imposto.ICMS.ICMS00.vBC',
      'det[1].imposto.ICMS.ICMS00.pICMS',
      'det[1].imposto.ICMS.ICMS00.vICMS',
      'det[1].imposto.ICMS',
      'det[2].prod.qCom',
      'det[3].prod.cEAN',
      'det[4].prod.xProd',
    ]);
  });

  it('unknown tax group, unknown field, IPI group', () => {
    const input = request();
    input.det[1]!.imposto = { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102', pICMS: '18' } }, IPI: {} } as never;
    input.det[2]!.imposto = { ICMS: { ICMS99: { orig: '0' } } };
    expect(fields(() => buildNfce(input, ctx))).toEqual(['det[1].imposto.ICMS.ICMSSN102.pICMS', 'det[1].imposto.IPI', 'det[2].imposto.ICMS.ICMS99']);
  });

  it('a bad emitter is named under emit', () => {
    const bad = emitter({ cnpj: '11222333000180', address: { ...emitter().address, cMun: '2927408' } });
    expect(fields(() => buildNfce(request(), { ...ctx, emitter: bad }))).toEqual(['emit.CNPJ', 'emit.enderEmit.cMun', 'ide.cMunFG']);
  });
});
