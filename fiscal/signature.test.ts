import { readFileSync } from 'node:fs';
import { createVerify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from './certificate.ts';
import { fixturePath } from './shared-files.ts';
import { digestValueOf, signRsaSha1Base64, signXml, verifyXmlSignature } from './signature.ts';

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

describe('signRsaSha1Base64', () => {
  it('signs UTF-8 text with RSA-SHA1 so that the certificate verifies it', () => {
    const data = '29181033657677000156650010001654399001654399|3|2|01|150.00||';
    const signature = signRsaSha1Base64(data, creds.privateKeyPem);
    const ok = createVerify('RSA-SHA1').update(data, 'utf8').verify(creds.certificatePem, signature, 'base64');
    expect(ok).toBe(true);
    expect(createVerify('RSA-SHA1').update(data + 'x').verify(creds.certificatePem, signature, 'base64')).toBe(false);
  });
});
