// Issuing at the terminal in contingency: the document the service will later transmit as is.
// It passes the official schema, its signature verifies with the company's certificate, its key
// says tpEmis 9, its QR is the offline one of the company's version (v2 with digVal and the CSC
// hash, v3 with the RSA signature of its own fields), and a company profile the fiscal core
// refuses is a configuration error naming the field, with nothing issued.

import { createVerify } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sameCertificate } from '../../../fiscal/certificate.ts';
import { generateTestCertificate, type Certificate } from '../../../fiscal/certificate.ts';
import { danfeModel } from '../../../fiscal/danfe/model.ts';
import { readNfceSummary } from '../../../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../../../fiscal/samples.ts';
import { validateXml } from '../../../fiscal/schema.ts';
import { digestValueOf, verifyXmlSignature } from '../../../fiscal/signature.ts';
import { TerminalError } from '../errors.ts';
import { issueOffline, offlinePayload } from './issue.ts';

const CNPJ = '11222333000181';
let certificate: Certificate;

beforeAll(() => {
  certificate = generateTestCertificate({ cnpj: CNPJ, xNome: 'LOJA TESTE' }).certificate;
});

const facts = { dhCont: '2026-11-22T10:00:00-03:00', xJust: 'Falha de comunicação com o serviço de emissão de NFC-e' };
const at = new Date('2026-11-22T13:05:00.000Z');

describe('issueOffline', () => {
  it('QR v2: schema-valid, signed with the company certificate, tpEmis 9 key, digVal of the very DigestValue, dhCont/xJust written', () => {
    const r = issueOffline(sampleNfceRequest({ nNF: 7 }), { emitter: demoEmitter({ cnpj: CNPJ }), certificate }, facts, at);
    expect(validateXml(r.signedXml, 'nfe')).toMatchObject({ valid: true });
    const verified = verifyXmlSignature(r.signedXml);
    expect(verified.valid).toBe(true);
    if (verified.valid) expect(sameCertificate(verified.certificatePem, certificate.certificatePem)).toBe(true);
    const summary = readNfceSummary(r.signedXml);
    expect(summary).toMatchObject({ key: r.chave, nNF: 7, tpEmis: 9, qrCode: r.qrcode, urlChave: r.urlConsulta, digestValue: r.digestValue });
    expect(r.chave[34]).toBe('9');
    expect(r.digestValue).toBe(digestValueOf(r.signedXml));
    const params = r.qrcode.split('?p=')[1]!.split('|');
    expect(params.slice(0, 3)).toEqual([r.chave, '2', '2']);
    expect(params[5]).toBe(Buffer.from(r.digestValue, 'ascii').toString('hex'));
    expect(r.signedXml).toContain('<dhCont>2026-11-22T10:00:00-03:00</dhCont>');
    expect(r.signedXml).toContain(`<xJust>${facts.xJust}</xJust>`);
    expect(r.dhEmi).toBe('2026-11-22T10:05:00-03:00');
    // The DANFE of what was signed: pending, two labelled copies.
    expect(danfeModel(r.signedXml)).toMatchObject({ contingency: true, pendingAuthorization: true, copies: ['consumidor', 'estabelecimento'] });
    expect(JSON.parse(offlinePayload(r.signedXml))).toEqual({ xml: r.signedXml });
  });

  it('QR v3: the signature of fields 1–7 verifies with the certificate; no CSC needed', () => {
    const emitter = demoEmitter({ cnpj: CNPJ, qrCodeVersion: 3, csc: undefined });
    const r = issueOffline({ ...sampleNfceRequest({ nNF: 8 }), dest: { cpf: '11144477735' } }, { emitter, certificate }, facts, at);
    expect(validateXml(r.signedXml, 'nfe')).toMatchObject({ valid: true });
    const fields = r.qrcode.split('?p=')[1]!.split('|');
    expect(fields.slice(0, 7)).toEqual([r.chave, '3', '2', '22', expect.stringMatching(/^[0-9]+\.[0-9]{2}$/), '2', '11144477735']);
    const ok = createVerify('RSA-SHA1').update(fields.slice(0, 7).join('|')).verify(certificate.certificatePem, Buffer.from(fields[7]!, 'base64'));
    expect(ok).toBe(true);
  });

  it('a company the fiscal core refuses: configuracao_invalida naming the field, nothing issued', () => {
    const emitter = demoEmitter({ cnpj: CNPJ, csc: undefined });
    let error: unknown;
    try {
      issueOffline(sampleNfceRequest({ nNF: 9 }), { emitter, certificate }, facts, at);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TerminalError);
    expect(error).toMatchObject({ code: 'configuracao_invalida', field: 'csc', message: expect.stringMatching(/contingência.*CSC/) });
  });

  it('dhCont after dhEmi is refused by the builder (the period must have begun before the sale)', () => {
    expect(() =>
      issueOffline(
        sampleNfceRequest({ nNF: 10 }),
        { emitter: demoEmitter({ cnpj: CNPJ }), certificate },
        { ...facts, dhCont: '2026-11-22T11:00:00-03:00' },
        at,
      ),
    ).toThrow(expect.objectContaining({ code: 'configuracao_invalida' }));
  });
});
