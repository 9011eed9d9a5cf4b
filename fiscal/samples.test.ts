import { describe, expect, it } from 'vitest';
import { generateTestCertificate } from './certificate.ts';
import { mdfeRuleViolation, issueMdfe } from './mdfe/build.ts';
import { issueNfce, paymentRuleViolation } from './nfce/build.ts';
import { demoEmitter, sampleMdfeRequest, sampleNfceRequest } from './samples.ts';
import { validateXml } from './schema.ts';

const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'MERCADO BALCAO' }).certificate;
const dhEmi = '2026-11-22T10:00:00-03:00';

describe('samples', () => {
  it.each([1, 3, 10, 25])('an NFC-e of %i items issues, validates and breaks no payment rule', (items) => {
    for (const payment of ['cash', 'card'] as const) {
      const req = sampleNfceRequest({ nNF: 7, items, payment });
      expect(paymentRuleViolation(req, dhEmi.slice(0, 10))).toBeUndefined();
      const issued = issueNfce(req, { emitter: demoEmitter(), dhEmi, tpEmis: 1, credentials });
      expect(validateXml(issued.xml, 'nfe').errors).toEqual([]);
      expect(issued.vNF).toBe(req.total.vNF);
    }
  });

  it('the MDF-e issues, validates and meets every authority content rule', () => {
    const req = sampleMdfeRequest({ nMDF: 1 });
    expect(mdfeRuleViolation(req)).toBeUndefined();
    const issued = issueMdfe(req, { emitter: demoEmitter({ crt: 3 }), dhEmi, credentials });
    expect(validateXml(issued.xml, 'mdfe').errors).toEqual([]);
  });
});
