import { readdirSync, readFileSync } from 'node:fs';
import { createVerify } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from './certificate.ts';
import { issueNfce } from './nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from './samples.ts';
import { fixtureDir, fixturePath } from './testdata/fixtures.ts';
import { digestValueOf, fastVerifyXmlSignature, signRsaSha1Base64, signXml, verifyWithXmlCrypto, verifyXmlSignature } from './signature.ts';

const { certificate } = generateTestCertificate({ cnpj: '11222333000181', xNome: 'EMPRESA TESTE' });
const creds = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };
const realSigned = readFileSync(fixturePath('sped-nfe_nfce_com_qrcode_minified_realsig.xml'), 'utf8').trim();

/** The unsigned content of the real fixture: infNFeSupl and Signature removed. */
const unsignedReal = realSigned.replace(/<infNFeSupl>.*<\/infNFeSupl>/, '').replace(/<Signature .*<\/Signature>/, '');

describe('signXml', () => {
  it('reproduces the DigestValue of the real signed BA fixture (sped-common signer)', () => {
    expect(unsignedReal).not.toContain('<Signature');
    const signed = signXml(unsignedReal, creds);
    expect(digestValueOf(signed)).toBe('m9ZrQTKMxv7A1Blnf/nmNGVX+N8=');
  });

  it('follows the SEFAZ profile: unprefixed, one Reference to the Id, X509Certificate only, last child', () => {
    const signed = signXml(unsignedReal, creds);
    const signature = /<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature>/.exec(signed)?.[0] ?? '';
    expect(signature).toContain('<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>');
    expect(signature).toContain('<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>');
    expect(signature).toContain('<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/>');
    expect(signature.match(/<Reference /g)).toHaveLength(1);
    expect(signature).toContain('URI="#NFe29181033657677000156650010001654399001654399"');
    expect(signature.match(/<Transform /g)).toHaveLength(2);
    expect(signature).toMatch(/<KeyInfo><X509Data><X509Certificate>[A-Za-z0-9+/=]+<\/X509Certificate><\/X509Data><\/KeyInfo>/);
    expect(signature).not.toMatch(/ds:|KeyValue|X509SubjectName/);
    expect(signed.endsWith('</Signature></NFe>')).toBe(true);
  });
});

describe('verifyXmlSignature', () => {
  it('accepts the real ICP-Brasil signature of the fixture and returns its certificate', () => {
    const result = verifyXmlSignature(realSigned);
    expect(result.valid).toBe(true);
    if (result.valid) {
      expect(result.digestValue).toBe('m9ZrQTKMxv7A1Blnf/nmNGVX+N8=');
      expect(result.certificatePem).toMatch(/BEGIN CERTIFICATE/);
    }
  });

  it('accepts what signXml produced and rejects any edit of the signed content', () => {
    const signed = signXml(unsignedReal, creds);
    expect(verifyXmlSignature(signed).valid).toBe(true);
    const tampered = signed.replace('<vNF>150.00</vNF>', '<vNF>15.00</vNF>');
    expect(tampered).not.toBe(signed);
    const result = verifyXmlSignature(tampered);
    expect(result.valid).toBe(false);
  });

  it('rejects a document without a signature, a ds: prefixed one, and malformed XML', () => {
    expect(verifyXmlSignature(unsignedReal)).toMatchObject({ valid: false });
    const prefixed = signXml(unsignedReal, creds)
      .replace('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">')
      .replace('</Signature>', '</ds:Signature>');
    expect(verifyXmlSignature(prefixed)).toMatchObject({ valid: false });
    expect(verifyXmlSignature('<NFe><infNFe')).toMatchObject({ valid: false });
  });

  it('verifies the test-certificate fixtures (NFC-e and MDF-e events)', () => {
    for (const name of [
      'nfce_tpEmis1_qrV2_online_signed_testcert.xml',
      'nfce_tpEmis9_qrV3_offline_signed_testcert.xml',
      'mdfe_evento_110112_encerramento_signed_testcert.xml',
      'sped-nfe_envEvento_110111_cancelamento.xml',
    ]) {
      const xml = readFileSync(fixturePath(name), 'utf8').trim();
      expect(verifyXmlSignature(xml), name).toMatchObject({ valid: true });
    }
  });
});

describe('verifyXmlSignature: fast path and reference', () => {
  const emitter = demoEmitter();
  const dhEmi = new Date('2026-11-22T10:00:00-03:00');
  const contingency = { dhCont: new Date('2026-11-22T09:00:00-03:00'), xJust: 'Sem conexao com a internet no caixa' };
  const issue = (nNF: number, offline: 0 | 2 | 3 = 0) =>
    issueNfce(sampleNfceRequest({ nNF, items: 10 }), {
      emitter: offline === 3 ? { ...emitter, qrCodeVersion: 3 } : emitter,
      dhEmi,
      tpEmis: offline ? 9 : 1,
      contingency: offline ? contingency : undefined,
      credentials: creds,
    });
  /** The second item's description (the first is replaced by the homologation text). */
  const secondXProd = (xml: string) => [...xml.matchAll(/<xProd>([^<&]+)<\/xProd>/g)][1]![0];

  it('agrees with the reference on every shared fixture, and vouches for all the valid ones', () => {
    let accepted = 0;
    let valid = 0;
    for (const name of readdirSync(fixtureDir).filter((f) => f.endsWith('.xml'))) {
      const xml = readFileSync(fixturePath(name), 'utf8');
      const reference = verifyWithXmlCrypto(xml);
      const fast = fastVerifyXmlSignature(xml);
      if (reference.valid) valid++;
      if (fast) {
        accepted++;
        expect(reference, name).toEqual(fast);
      }
      expect(verifyXmlSignature(xml), name).toEqual(reference);
    }
    // Including the real-certificate sped-nfe NFC-e and the pretty-printed envEvento batches.
    expect(accepted).toBe(valid);
    expect(accepted).toBeGreaterThanOrEqual(8);
  });

  it("vouches for NFC-e online and offline (QR v2 and v3) with the reference verifier's result", () => {
    for (const doc of [issue(900), issue(901, 2), issue(902, 3)]) {
      const fast = fastVerifyXmlSignature(doc.xml);
      expect(fast).toMatchObject({ valid: true, digestValue: doc.digestValue });
      expect(verifyWithXmlCrypto(doc.xml)).toEqual(fast);
    }
  });

  it('sees through equivalent spellings: character references, XML declaration, BOM', () => {
    const doc = issue(903);
    const xProd = secondXProd(doc.xml);
    const respelled =
      '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n' +
      doc.xml.replace(xProd, `<xProd>&#${xProd.charCodeAt(7)};${xProd.slice(8)}`).replace('versao="4.00"', 'versao="4&#x2E;00"');
    expect(respelled).toContain('<xProd>&#');
    const fast = fastVerifyXmlSignature(respelled);
    expect(fast).toMatchObject({ valid: true, digestValue: doc.digestValue });
    expect(verifyWithXmlCrypto(respelled)).toEqual(fast);
  });

  it('leaves unusual spellings to the reference, and never throws', () => {
    const doc = issue(905);
    const quoted = doc.xml.replace('versao="4.00"', "versao='4.00'");
    expect(fastVerifyXmlSignature(quoted)).toBeUndefined();
    expect(verifyXmlSignature(quoted)).toMatchObject({ valid: true, digestValue: doc.digestValue });
    // A blank inside <DigestValue > once made this throw (the DigestValue was read by pattern).
    const spaced = doc.xml.replace('<DigestValue>', '<DigestValue >');
    expect(fastVerifyXmlSignature(spaced)).toBeUndefined();
    expect(verifyXmlSignature(spaced)).toMatchObject({ valid: true, digestValue: doc.digestValue });
    const spacedAndTampered = spaced.replace(secondXProd(spaced), secondXProd(spaced).replace('</xProd>', ' X</xProd>'));
    expect(spacedAndTampered).not.toBe(spaced);
    expect(verifyXmlSignature(spacedAndTampered)).toMatchObject({ valid: false, reason: expect.any(String) });
    for (const garbage of ['', '<', 'NFe', '<NFe><infNFe Id="x">', `${doc.xml}<NFe/>`]) {
      expect(verifyXmlSignature(garbage)).toMatchObject({ valid: false, reason: expect.any(String) });
    }
  });

  it('leaves signature wrapping to the reference: a twin Id, a second signed element', () => {
    const doc = issue(906);
    const id = /<infNFe [^>]*Id="([^"]+)"/.exec(doc.xml)![1]!;
    const twin = doc.xml.replace('</NFe>', `<infAdic ID="${id}"/></NFe>`);
    expect(fastVerifyXmlSignature(twin)).toBeUndefined();
    expect(verifyXmlSignature(twin)).toMatchObject({ valid: false });
    // A forged infNFe placed first: the Reference no longer points at the first signed element.
    const forged = doc.xml.replace('<NFe xmlns="http://www.portalfiscal.inf.br/nfe">', `$&<infNFe Id="NFe${'9'.repeat(44)}" versao="4.00"/>`);
    expect(forged).not.toBe(doc.xml);
    expect(fastVerifyXmlSignature(forged)).toBeUndefined();
    expect(verifyXmlSignature(forged)).toMatchObject({ valid: false });
  });

  it('never accepts a document the reference rejects (random edits)', () => {
    const doc = issue(904).xml;
    const chars = ['a', '0', ' ', '\n', '\t', '\r', '\u0001', '&', '&amp;', '&#65;', '&#13;', '<', '>', ']]>', '"', "'", '/', '=', ':', 'x', '<!---->', ''];
    fc.assert(
      fc.property(fc.nat(doc.length - 1), fc.constantFrom(...chars), fc.boolean(), (at, ch, insert) => {
        const edited = doc.slice(0, at) + ch + doc.slice(insert ? at : at + 1);
        const fast = fastVerifyXmlSignature(edited);
        if (fast) expect(verifyWithXmlCrypto(edited)).toEqual(fast);
      }),
      { numRuns: 400 },
    );
  });
});

describe('signRsaSha1Base64', () => {
  it('signs UTF-8 text with RSA-SHA1 so that the certificate verifies it', () => {
    const data = '29181033657677000156650010001654399001654399|3|2|01|150.00||';
    const signature = signRsaSha1Base64(data, creds.privateKeyPem);
    const ok = createVerify('RSA-SHA1').update(data, 'utf8').verify(creds.certificatePem, signature, 'base64');
    expect(ok).toBe(true);
    expect(
      createVerify('RSA-SHA1')
        .update(data + 'x')
        .verify(creds.certificatePem, signature, 'base64'),
    ).toBe(false);
  });
});
