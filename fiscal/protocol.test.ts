import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FieldError } from './errors.ts';
import {
  brasiliaDate,
  brasiliaDateTime,
  eventAnswer,
  eventFamilyOf,
  mdfeProtocol,
  nfeProtocol,
  nfeProtocolFor,
  retEvento,
  retInutNFe,
  wrapMdfeProc,
  wrapNfeProc,
  wrapProcEventoNFe,
} from './protocol.ts';
import { validateXml } from './schema.ts';
import { fixturePath } from './testdata/fixtures.ts';
import { digestValueOf, verifyXmlSignature } from './signature.ts';

// Signed NFC-e (BA, tpEmis 1, valid key DV) and signed NF-e / MDF-e events from the fixtures.
const NFCE = readFileSync(fixturePath('nfce_tpEmis1_qrV2_online_signed_testcert.xml'), 'utf8').trim();
const NFCE_KEY = '29181033657677000156650010001654391001654392';
const NFE_CANC = readFileSync(fixturePath('sped-nfe_envEvento_110111_cancelamento.xml'), 'utf8').trim();
const NFE_CANC_EVENTO = /<evento .*<\/evento>/.exec(NFE_CANC)![0];

const verdict = {
  cStat: 100,
  xMotivo: 'Autorizado o uso da NF-e',
  verAplic: 'BA-SANDBOX-1.0',
  dhRecbto: new Date('2026-11-22T17:03:06Z'),
  nProt: '129260000000001',
};

function field(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FieldError);
    return (err as FieldError).field;
  }
  throw new Error('esperado FieldError');
}

describe('Brasília datetimes', () => {
  it('writes the instant with the Brasília offset', () => {
    expect(brasiliaDateTime(new Date('2026-11-22T17:03:05Z'))).toBe('2026-11-22T14:03:05-03:00');
    expect(brasiliaDateTime('2026-11-22T14:03:05-03:00')).toBe('2026-11-22T14:03:05-03:00');
    expect(brasiliaDateTime('2026-11-22T12:03:05.999-05:00')).toBe('2026-11-22T14:03:05-03:00');
  });

  it('the day is the Brasília calendar day', () => {
    expect(brasiliaDate(new Date('2026-11-23T02:59:59Z'))).toBe('2026-11-22');
    expect(brasiliaDate(new Date('2026-11-23T03:00:00Z'))).toBe('2026-11-23');
  });

  it('refuses a datetime without offset (ambiguous) or an invalid one', () => {
    expect(field(() => brasiliaDateTime('2026-11-22T14:03:05', 'dhEmi'))).toBe('dhEmi');
    expect(field(() => brasiliaDateTime('ontem', 'dhEmi'))).toBe('dhEmi');
  });
});

describe('NF-e protocol and nfeProc', () => {
  it('protNFe has the TProtNFe fields in order', () => {
    const prot = nfeProtocol({ ...verdict, key: NFCE_KEY, tpAmb: 2, digVal: 'm9ZrQTKMxv7A1Blnf/nmNGVX+N8=' });
    expect(prot).toBe(
      `<protNFe versao="4.00"><infProt><tpAmb>2</tpAmb><verAplic>BA-SANDBOX-1.0</verAplic><chNFe>${NFCE_KEY}</chNFe>` +
        '<dhRecbto>2026-11-22T14:03:06-03:00</dhRecbto><nProt>129260000000001</nProt><digVal>m9ZrQTKMxv7A1Blnf/nmNGVX+N8=</digVal>' +
        '<cStat>100</cStat><xMotivo>Autorizado o uso da NF-e</xMotivo></infProt></protNFe>',
    );
  });

  it('nfeProc of a signed NFC-e validates against procNFe_v4.00.xsd and keeps the signature valid', () => {
    const prot = nfeProtocolFor(NFCE, verdict);
    expect(prot).toContain(`<digVal>${digestValueOf(NFCE)}</digVal>`);
    const proc = wrapNfeProc(`<?xml version="1.0" encoding="UTF-8"?>\n${NFCE}`, prot);
    expect(proc.startsWith('<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00"><NFe ')).toBe(true);
    expect(validateXml(proc, 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
  });

  it('a rejection carries no nProt', () => {
    const prot = nfeProtocolFor(NFCE, { ...verdict, cStat: '391', xMotivo: 'Rejeição: Não informados os dados do cartão', nProt: undefined });
    expect(prot).not.toContain('<nProt>');
    expect(validateXml(wrapNfeProc(NFCE, prot), 'procNFe').valid).toBe(true);
  });

  it("carries the reform's 4-digit rejections and the alert of a cStat 120 (PL_010)", () => {
    const rejected = nfeProtocolFor(NFCE, { ...verdict, cStat: '1115', xMotivo: 'Rejeição: IBS/CBS não informado', nProt: undefined });
    expect(rejected).toContain('<cStat>1115</cStat>');
    expect(validateXml(wrapNfeProc(NFCE, rejected), 'procNFe').valid).toBe(true);
    const alert = nfeProtocolFor(NFCE, {
      ...verdict,
      cStat: '120',
      xMotivo: 'Autorizado o uso da NF-e com alerta',
      message: { cMsg: '1115', xMsg: 'IBS/CBS não informado' },
    });
    expect(alert).toMatch(/<cStat>120<\/cStat><xMotivo>[^<]+<\/xMotivo><cMsg>1115<\/cMsg><xMsg>IBS\/CBS não informado<\/xMsg><\/infProt>/);
    expect(validateXml(wrapNfeProc(NFCE, alert), 'procNFe').valid).toBe(true);
  });

  it('refuses a protocol of another key and malformed values', () => {
    const other = nfeProtocol({ ...verdict, key: '35180834128745000152550010000474281920007498', tpAmb: 2 });
    expect(field(() => wrapNfeProc(NFCE, other))).toBe('protNFe');
    expect(field(() => nfeProtocol({ ...verdict, key: NFCE_KEY, tpAmb: 2, nProt: '12' }))).toBe('nProt');
    expect(field(() => nfeProtocol({ ...verdict, key: NFCE_KEY, tpAmb: 2, cStat: '10000' }))).toBe('cStat');
    expect(field(() => nfeProtocol({ ...verdict, key: NFCE_KEY, tpAmb: 2, message: { cMsg: '12345', xMsg: 'alerta' } }))).toBe('cMsg');
    expect(field(() => nfeProtocol({ ...verdict, key: NFCE_KEY.slice(1), tpAmb: 2 }))).toBe('chNFe');
    expect(field(() => wrapNfeProc('<nfeProc/>', other))).toBe('NFe');
  });
});

describe('MDF-e protocol', () => {
  it('protMDFe accepts 4-digit cStat and infFisco', () => {
    const key = '41210780568835000181580010402005751006005791';
    const prot = mdfeProtocol({
      key,
      tpAmb: 1,
      verAplic: 'SVRS',
      dhRecbto: '2026-11-22T14:03:06-03:00',
      cStat: '1001',
      xMotivo: 'Rejeição: teste',
      infFisco: { cMsg: '200', xMsg: 'Mensagem do fisco' },
    });
    expect(prot).toBe(
      `<protMDFe versao="3.00"><infProt><tpAmb>1</tpAmb><verAplic>SVRS</verAplic><chMDFe>${key}</chMDFe>` +
        '<dhRecbto>2026-11-22T14:03:06-03:00</dhRecbto><cStat>1001</cStat><xMotivo>Rejeição: teste</xMotivo></infProt>' +
        '<infFisco><cMsg>200</cMsg><xMsg>Mensagem do fisco</xMsg></infFisco></protMDFe>',
    );
    expect(field(() => wrapMdfeProc('<MDFe><infMDFe versao="3.00" Id="MDFe' + key.replace(/1$/, '2') + '"/></MDFe>', prot))).toBe('protMDFe');
  });
});

describe('event answers', () => {
  it('retEvento of an NF-e event echoes key, type and sequence; procEventoNFe validates', () => {
    const ret = retEvento(NFE_CANC_EVENTO, {
      cStat: '135',
      xMotivo: 'Evento registrado e vinculado a NF-e',
      verAplic: 'SP_EVENTOS_PL_100',
      dhRegEvento: new Date('2026-11-22T17:10:00Z'),
      nProt: '135260000000001',
    });
    expect(ret).toBe(
      '<retEvento versao="1.00"><infEvento><tpAmb>2</tpAmb><verAplic>SP_EVENTOS_PL_100</verAplic><cOrgao>35</cOrgao><cStat>135</cStat>' +
        '<xMotivo>Evento registrado e vinculado a NF-e</xMotivo><chNFe>35150300822602000124550010009923461099234656</chNFe>' +
        '<tpEvento>110111</tpEvento><xEvento>Cancelamento</xEvento><nSeqEvento>1</nSeqEvento>' +
        '<dhRegEvento>2026-11-22T14:10:00-03:00</dhRegEvento><nProt>135260000000001</nProt></infEvento></retEvento>',
    );
    const proc = wrapProcEventoNFe(NFE_CANC_EVENTO, ret);
    expect(validateXml(proc, 'procEventoCancNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
  });

  it('a rejected event answer has no protocol; MDF-e answers use retEventoMDFe', () => {
    const ret = eventAnswer('mdfe', {
      tpAmb: 2,
      verAplic: 'SVRS',
      cOrgao: '35',
      cStat: '628',
      xMotivo: 'Rejeição: Atributo ID do evento não corresponde',
      dhRegEvento: '2026-11-22T14:10:00-03:00',
    });
    expect(ret).toMatch(/^<retEventoMDFe versao="3\.00"><infEvento><tpAmb>2<\/tpAmb>.*<cStat>628<\/cStat>/);
    expect(ret).not.toContain('<nProt>');
    expect(eventFamilyOf('<eventoMDFe versao="3.00"/>')).toBe('mdfe');
    expect(field(() => eventFamilyOf('<NFe/>'))).toBe('evento');
  });

  it('retInutNFe writes the TRetInutNFe fields in order', () => {
    expect(
      retInutNFe({
        tpAmb: 2,
        verAplic: 'BA',
        cStat: '241',
        xMotivo: 'Rejeição: Um número da faixa já foi utilizado',
        cUF: '29',
        dhRecbto: '2026-11-22T14:10:00-03:00',
      }),
    ).toBe(
      '<retInutNFe versao="4.00"><infInut><tpAmb>2</tpAmb><verAplic>BA</verAplic><cStat>241</cStat>' +
        '<xMotivo>Rejeição: Um número da faixa já foi utilizado</xMotivo><cUF>29</cUF><dhRecbto>2026-11-22T14:10:00-03:00</dhRecbto></infInut></retInutNFe>',
    );
  });
});
