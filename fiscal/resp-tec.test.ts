import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from './certificate.ts';
import { FieldError } from './errors.ts';
import { issueMdfe } from './mdfe/build.ts';
import { issueNfce } from './nfce/build.ts';
import { checkTechnicalResponsible, hashCsrt, type TechnicalResponsible } from './resp-tec.ts';
import { DEMO_CNPJ, demoEmitter, sampleMdfeRequest, sampleNfceRequest } from './samples.ts';
import { validateXml } from './schema.ts';
import { verifyXmlSignature } from './signature.ts';

const certificate = generateTestCertificate({ cnpj: DEMO_CNPJ, xNome: 'MERCADO BALCAO' }).certificate;
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };
const DH_EMI = '2026-11-27T10:00:00-03:00';
const CSRT = 'G8063VRTNDMO886SFNK5LDUDEI24XJ22YIPO';
const respTec: TechnicalResponsible = {
  cnpj: '12ABC34501DE35',
  contact: 'Equipe Fiscal & Suporte',
  email: 'fiscal@balcao.dev',
  phone: '1133334444',
  csrt: { id: 1, token: CSRT },
};

/** The infRespTec group of a document and what follows it inside infNFe / infMDFe. */
function group(xml: string): { fields: Record<string, string>; after: string } {
  const m = /<infRespTec>(.*?)<\/infRespTec>(.*?)<\/inf(?:NFe|MDFe)>/.exec(xml);
  if (!m) throw new Error('sem infRespTec');
  return { fields: Object.fromEntries([...m[1]!.matchAll(/<(\w+)>([^<]*)<\/\1>/g)].map((f) => [f[1]!, f[2]!])), after: m[2]! };
}

describe('the technical responsible (infRespTec)', () => {
  it('hashCSRT is base64(SHA-1(CSRT + key)): 28 characters, as openssl computes it', () => {
    // printf '%s' "$CSRT$KEY" | openssl dgst -sha1 -binary | base64
    expect(hashCsrt(CSRT, '35261211222333000181650010000000011000000011')).toBe('znkcflSiRT5hJj9TKysurJ9pfOo=');
  });

  it('an NFC-e and an MDF-e carry it last in their info group, in each layout’s widths, with the hash of their own key; valid and signed', () => {
    const emitter = demoEmitter({ respTec });
    const nfce = issueNfce(sampleNfceRequest({ nNF: 1 }), { emitter, dhEmi: DH_EMI, tpEmis: 1, credentials });
    expect(validateXml(nfce.xml, 'nfe').errors).toEqual([]);
    expect(verifyXmlSignature(nfce.xml).valid).toBe(true);
    expect(group(nfce.xml)).toEqual({
      fields: {
        CNPJ: '12ABC34501DE35',
        xContato: 'Equipe Fiscal &amp; Suporte',
        email: 'fiscal@balcao.dev',
        fone: '1133334444',
        idCSRT: '01',
        hashCSRT: hashCsrt(CSRT, nfce.key),
      },
      after: '',
    });

    const mdfe = issueMdfe(sampleMdfeRequest({ nMDF: 1 }), { emitter, dhEmi: DH_EMI, credentials });
    expect(validateXml(mdfe.xml, 'mdfe').errors).toEqual([]);
    expect(group(mdfe.xml).fields).toMatchObject({ idCSRT: '001', hashCSRT: hashCsrt(CSRT, mdfe.key) });
    expect(group(mdfe.xml).after).toBe('');
  });

  it('without a CSRT the group has no idCSRT/hashCSRT; without a technical responsible there is no group', () => {
    const { csrt: _, ...noCsrt } = respTec;
    const withoutCsrt = issueNfce(sampleNfceRequest({ nNF: 2 }), { emitter: demoEmitter({ respTec: noCsrt }), dhEmi: DH_EMI, tpEmis: 1, credentials });
    expect(validateXml(withoutCsrt.xml, 'nfe').errors).toEqual([]);
    expect(Object.keys(group(withoutCsrt.xml).fields)).toEqual(['CNPJ', 'xContato', 'email', 'fone']);
    expect(issueNfce(sampleNfceRequest({ nNF: 3 }), { emitter: demoEmitter(), dhEmi: DH_EMI, tpEmis: 1, credentials }).xml).not.toContain('infRespTec');
  });

  it('is checked as configured, every field named', () => {
    expect(checkTechnicalResponsible({ ...respTec })).toEqual(respTec);
    let err: unknown;
    try {
      checkTechnicalResponsible({ cnpj: '12abc34501de35', contact: 'X', email: 'sem-arroba', phone: '(11) 3333-4444', csrt: { id: 100, token: 'com espaço' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FieldError);
    expect((err as FieldError).issues.map((i) => i.field)).toEqual([
      'responsavelTecnico.cnpj',
      'responsavelTecnico.contato',
      'responsavelTecnico.email',
      'responsavelTecnico.telefone',
      'responsavelTecnico.csrtId',
      'responsavelTecnico.csrt',
    ]);
  });
});
