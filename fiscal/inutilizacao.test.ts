import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from './certificate.ts';
import type { Emitter } from './company.ts';
import { FieldError } from './errors.ts';
import { buildInutilizacao, inutilizacaoId, type InutilizacaoParams } from './inutilizacao.ts';
import { retInutNFeFor, wrapProcInutNFe } from './protocol.ts';
import { validateXml } from './schema.ts';
import { verifyXmlSignature } from './signature.ts';

const CNPJ = '11222333000181';
const { certificate } = generateTestCertificate({ cnpj: CNPJ, xNome: 'LOJA TESTE' });
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };

const emitter: Emitter = {
  cnpj: CNPJ,
  ie: '111222333444',
  xNome: 'LOJA TESTE LTDA',
  address: { xLgr: 'Rua A', nro: '1', xBairro: 'Centro', cMun: '2927408', xMun: 'Salvador', UF: 'BA', CEP: '40020000' },
  crt: 1,
  environment: 'homologacao',
  qrCodeVersion: 2,
};

const params: InutilizacaoParams = {
  emitter,
  ano: 26,
  serie: 1,
  nNFIni: 10,
  nNFFin: 12,
  xJust: 'Numeracao pulada por falha do sistema',
  model: '65',
};

function fields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FieldError);
    return (err as FieldError).issues.map((i) => i.field);
  }
  throw new Error('esperado FieldError');
}

describe('buildInutilizacao', () => {
  const inut = buildInutilizacao(params, credentials);
  const id = `ID2926${CNPJ}65001000000010000000012`;

  it('builds a signed inutNFe valid against inutNFe_v4.00.xsd', () => {
    expect(validateXml(inut, 'inutNFe')).toEqual({ valid: true, errors: [] });
    const check = verifyXmlSignature(inut);
    expect(check.valid && check.signedId).toBe(id);
  });

  it('Id = ID + cUF + AA + CNPJ + mod + serie(3) + nNFIni(9) + nNFFin(9), and the fields in layout order', () => {
    expect(id).toMatch(/^ID[0-9]{41}$/);
    expect(inut).toContain(
      `<inutNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00"><infInut Id="${id}"><tpAmb>2</tpAmb><xServ>INUTILIZAR</xServ>` +
        `<cUF>29</cUF><ano>26</ano><CNPJ>${CNPJ}</CNPJ><mod>65</mod><serie>1</serie><nNFIni>10</nNFIni><nNFFin>12</nNFFin>` +
        `<xJust>Numeracao pulada por falha do sistema</xJust></infInut><Signature`,
    );
    expect(inutilizacaoId({ cUF: '29', ano: '26', cnpj: CNPJ, model: '65', serie: 1, nNFIni: 10, nNFFin: 12 })).toBe(id);
  });

  it('with the authority answer, ProcInutNFe validates against procInutNFe_v4.00.xsd', () => {
    const ret = retInutNFeFor(inut, {
      cStat: '102',
      xMotivo: 'Inutilização de número homologado',
      verAplic: 'BA-SANDBOX',
      dhRecbto: '2026-11-22T15:00:00-03:00',
      nProt: '129260000000010',
    });
    const proc = wrapProcInutNFe(inut, ret);
    expect(validateXml(proc, 'procInutNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(proc).valid).toBe(true);
    expect(ret).toContain('<cUF>29</cUF><ano>26</ano>');
  });

  it('accepts the full year, a single number and model 55', () => {
    const x = buildInutilizacao({ ...params, ano: 2026, nNFIni: 7, nNFFin: 7, model: '55', serie: 999 }, credentials);
    expect(x).toContain(`Id="ID2926${CNPJ}55999000000007000000007"`);
    expect(validateXml(x, 'inutNFe').valid).toBe(true);
  });

  it('nNFIni must not exceed nNFFin', () => {
    expect(fields(() => buildInutilizacao({ ...params, nNFIni: 13, nNFFin: 12 }, credentials))).toEqual(['numero_final']);
  });

  it('reports every bad field at once', () => {
    const bad = { ...params, ano: 1999, serie: 1000, nNFIni: 0, xJust: 'curta', model: '59' as '65' };
    expect(fields(() => buildInutilizacao(bad, credentials))).toEqual(['ano', 'mod', 'serie', 'numero_inicial', 'justificativa']);
  });
});
