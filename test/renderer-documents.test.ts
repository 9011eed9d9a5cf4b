// The screen checks the consumer's CPF/CNPJ itself (renderer/ may not import fiscal/); the core
// checks again. Both must agree on every document, or the cashier sees a document accepted on
// the screen and refused at finishing (or the other way round).
import { describe, expect, it } from 'vitest';
import { isValidCnpj as coreCnpj, isValidCpf as coreCpf } from '../fiscal/br/documents.ts';
import { isValidCnpj, isValidCpf } from '../renderer/documents/consumer-document.ts';

describe('screen and fiscal core agree on consumer documents', () => {
  it('for every pair of check digits of a spread of base numbers', () => {
    let validCpf = 0;
    let validCnpj = 0;
    for (let n = 0; n < 150; n++) {
      const cpfBase = String((n * 6_700_417 + 1_234) % 1_000_000_000).padStart(9, '0');
      const cnpjBase = String((n * 67_280_421_310 + 5_678) % 1_000_000_000_000).padStart(12, '0');
      for (let dv = 0; dv < 100; dv++) {
        const cpf = cpfBase + String(dv).padStart(2, '0');
        const cnpj = cnpjBase + String(dv).padStart(2, '0');
        expect(isValidCpf(cpf), cpf).toBe(coreCpf(cpf));
        expect(isValidCnpj(cnpj), cnpj).toBe(coreCnpj(cnpj));
        if (coreCpf(cpf)) validCpf++;
        if (coreCnpj(cnpj)) validCnpj++;
      }
    }
    // Valid documents were really among the samples (all but repeated-digit bases).
    expect(validCpf).toBeGreaterThan(140);
    expect(validCnpj).toBeGreaterThan(140);
  });
});
