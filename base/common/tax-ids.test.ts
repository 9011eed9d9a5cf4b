import { describe, expect, it } from 'vitest';
import { cnpjProblem, cpfProblem, formatCnpj, formatCpf, formatTaxId, isValidCnpj, isValidCpf, typedCnpj, typedTaxId, unmaskTaxId } from './tax-ids.ts';

describe('CPF and CNPJ check digits', () => {
  it('accept exactly one pair of check digits per base number', () => {
    for (const base of ['123456789', '000000001', '987654321']) {
      const valid = Array.from({ length: 100 }, (_, i) => base + String(i).padStart(2, '0')).filter(isValidCpf);
      expect(valid, base).toHaveLength(1);
    }
    for (const base of ['112223330001', '000000000001', '987654320001']) {
      const valid = Array.from({ length: 100 }, (_, i) => base + String(i).padStart(2, '0')).filter(isValidCnpj);
      expect(valid, base).toHaveLength(1);
    }
  });

  it('take only the unmasked form the XML carries', () => {
    expect(isValidCpf('52998224725')).toBe(true);
    expect(isValidCpf('529.982.247-25')).toBe(false);
    expect(isValidCnpj('11222333000181')).toBe(true);
    expect(isValidCnpj('11.222.333/0001-81')).toBe(false);
  });

  it('refuse documents of one repeated digit, whose check digits happen to work', () => {
    expect(isValidCpf('11111111111')).toBe(false);
    expect(isValidCnpj('00000000000000')).toBe(false);
  });

  it('take the alphanumeric CNPJ in upper case only', () => {
    expect(isValidCnpj('12ABC34501DE35')).toBe(true);
    expect(isValidCnpj('12abc34501de35')).toBe(false);
    expect(isValidCnpj('12ABC34501DE36')).toBe(false);
  });
});

describe('formatCpf and formatCnpj', () => {
  it('mask a document in the stored form, and show anything else as it is', () => {
    expect(formatCpf('52998224725')).toBe('529.982.247-25');
    expect(formatCnpj('11222333000181')).toBe('11.222.333/0001-81');
    expect(formatCnpj('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
    expect(formatCpf('1234')).toBe('1234');
    expect(formatCnpj('ISENTO')).toBe('ISENTO');
  });
});

describe('what a wrong document is told, and the document as typed', () => {
  it('names each problem of a CNPJ in Portuguese; a valid one, numeric or alphanumeric, has none', () => {
    expect(cnpjProblem('11222333000181')).toBeUndefined();
    expect(cnpjProblem('12ABC34501DE35')).toBeUndefined();
    expect(cnpjProblem('')).toBe('CNPJ obrigatório');
    expect(cnpjProblem('12abc34501de35')).toMatch(/letras maiúsculas/);
    expect(cnpjProblem('12.ABC.345/01DE-35')).toMatch(/sem pontuação/);
    expect(cnpjProblem('12ABC34501DE3')).toBe('CNPJ deve ter 14 caracteres (recebidos 13)');
    expect(cnpjProblem('12ABC34501DEA5')).toMatch(/numéricos/);
    expect(cnpjProblem('12ABC34501DE36')).toBe('CNPJ inválido (dígito verificador não confere)');
    expect(cpfProblem('52998224724')).toBe('CPF inválido (dígito verificador não confere)');
  });

  it('reads what the cashier types: mask optional, 11 digits a CPF, 14 characters a CNPJ, lower case refused, never raised', () => {
    expect(typedTaxId('529.982.247-25')).toEqual({ ok: true, kind: 'cpf', value: '52998224725' });
    expect(typedTaxId(' 12.ABC.345/01DE-35 ')).toEqual({ ok: true, kind: 'cnpj', value: '12ABC34501DE35' });
    expect(typedTaxId('12.abc.345/01de-35')).toMatchObject({ ok: false, problem: expect.stringMatching(/letras maiúsculas/) });
    expect(typedTaxId('1234')).toEqual({ ok: false, problem: 'informe 11 dígitos (CPF) ou 14 caracteres (CNPJ); foram 4' });
    expect(typedCnpj('12.ABC.345/01DE-36')).toEqual({ ok: false, problem: 'CNPJ inválido (dígito verificador não confere)' });
    expect(unmaskTaxId('12.ABC.345/01DE-35')).toBe('12ABC34501DE35');
    expect(formatTaxId('52998224725')).toBe('529.982.247-25');
    expect(formatTaxId('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
  });
});
