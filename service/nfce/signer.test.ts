// The signing thread: the same NFC-e the event loop would have built (same key for the same cNF
// and dhEmi, a valid signature), and a request that cannot be signed comes back as the FieldError
// the queue turns into a rejection.

import { afterAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { buildNfce } from '../../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../../fiscal/samples.ts';
import { verifyXmlSignature } from '../../fiscal/signature.ts';
import { NfceSigner } from './signer.ts';

const certificate = generateTestCertificate({ cnpj: '11222333000181', xNome: 'LOJA' }).certificate;
const credentials = { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem };
const threadErrors: unknown[] = [];
const signer = new NfceSigner((err) => threadErrors.push(err));

afterAll(() => signer.close());

describe('NfceSigner', () => {
  it('signs on its thread the receipt accepted earlier: same key, valid signature', async () => {
    const request = sampleNfceRequest({ nNF: 42 });
    const accepted = buildNfce(request, { emitter: demoEmitter(), dhEmi: new Date(), tpEmis: 1 });
    const signed = await Promise.all(
      [1, 2, 3].map(() => signer.sign(JSON.stringify(request), { emitter: demoEmitter(), credentials, dhEmi: accepted.dhEmi, cNF: accepted.cNF, tpEmis: 1 })),
    );
    for (const s of signed) {
      expect(s.key).toBe(accepted.key);
      expect(s.qrCode).toContain(accepted.key);
      expect(verifyXmlSignature(s.xml)).toMatchObject({ valid: true, certificatePem: expect.any(String) });
    }
    expect(threadErrors).toEqual([]);
  });

  it('reports a request that cannot be signed as a FieldError', async () => {
    const request = sampleNfceRequest({ nNF: 43 });
    const emitter = demoEmitter({ csc: undefined });
    await expect(signer.sign(JSON.stringify(request), { emitter, credentials, dhEmi: '2026-11-22T10:00:00-03:00', tpEmis: 1 })).rejects.toThrow(FieldError);
  });
});
