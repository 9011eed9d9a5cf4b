import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FieldError } from '../errors.ts';
import { assertCnpj, assertCpf, assertGtinOrSemGtin, isValidCnpj, isValidCpf, isValidGtin, SEM_GTIN } from './documents.ts';

function fieldErrorOf(fn: () => unknown): FieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err;
    throw err;
  }
  throw new Error('expected a FieldError');
}

// Independent statement of the Receita rule (manual DV CNPJ): weights 2..9 from the right,
// values ord(c) - 48, remainder < 2 → 0.
function cnpjDigit(s: string): number {
  let sum = 0;
  for (let i = s.length - 1, w = 2; i >= 0; i--, w = w === 9 ? 2 : w + 1) sum += (s.charCodeAt(i) - 48) * w;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}
const withCnpjDigits = (base: string) => {
  const d1 = cnpjDigit(base);
  return `${base}${d1}${cnpjDigit(base + d1)}`;
};

describe('CPF', () => {
  it.each(['52998224725', '11144477735', '00000000191'])('accepts %s', (cpf) => {
    expect(isValidCpf(cpf)).toBe(true);
    expect(assertCpf(cpf, 'dest.CPF')).toBe(cpf);
  });

  it.each([
    ['52998224724', 'dígito verificador'],
    ['11111111111', 'inválido'],
    ['5299822472', '11 dígitos'],
    ['529982247250', '11 dígitos'],
    ['529.982.247-25', 'somente dígitos'],
    [' 52998224725', 'somente dígitos'],
    ['5299822472a', 'somente dígitos'],
    ['', 'obrigatório'],
  ])('rejects %j (%s)', (cpf, message) => {
    expect(isValidCpf(cpf)).toBe(false);
    const err = fieldErrorOf(() => assertCpf(cpf, 'dest.CPF'));
    expect(err.field).toBe('dest.CPF');
    expect(err.message).toContain(message);
  });

  it('rejects non-strings without crashing', () => {
    expect(isValidCpf(52998224725 as unknown as string)).toBe(false);
    expect(fieldErrorOf(() => assertCpf(undefined, 'dest.CPF')).field).toBe('dest.CPF');
  });
});

describe('CNPJ', () => {
  it('12ABC34501DE is the Receita example base and 35 its check digits', () => {
    expect(withCnpjDigits('12ABC34501DE')).toBe('12ABC34501DE35');
  });

  it.each(['11222333000181', '12ABC34501DE35', '00000000000191', 'Q0SLFMBD7VX439'])('accepts %s', (cnpj) => {
    expect(isValidCnpj(cnpj)).toBe(true);
    expect(assertCnpj(cnpj, 'emit.CNPJ')).toBe(cnpj);
  });

  it.each([
    ['11222333000180', 'dígito verificador'],
    ['12ABC34501DE36', 'dígito verificador'],
    ['00000000000000', 'inválido'],
    ['12abc34501de35', 'maiúsculas'],
    ['11.222.333/0001-81', 'somente dígitos'],
    ['12.ABC.345/01DE-35', 'somente dígitos'],
    ['1122233300018', '14 caracteres'],
    ['12ABC34501DEA5', 'numéricos'],
    ['', 'obrigatório'],
  ])('rejects %j (%s)', (cnpj, message) => {
    expect(isValidCnpj(cnpj)).toBe(false);
    const err = fieldErrorOf(() => assertCnpj(cnpj, 'emit.CNPJ'));
    expect(err.field).toBe('emit.CNPJ');
    expect(err.message).toContain(message);
  });

  it('agrees with the mod-11 rule on ord(c)-48 for any alphanumeric base', () => {
    const base = fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'), minLength: 12, maxLength: 12 });
    fc.assert(
      fc.property(base, fc.integer({ min: 1, max: 9 }), (b, delta) => {
        const cnpj = withCnpjDigits(b);
        // The library refuses the all-equal numeric bases (00000000000000 …) as reserved.
        if (/^(\d)\1{11}$/.test(b)) return;
        expect(isValidCnpj(cnpj)).toBe(true);
        const wrong = cnpj.slice(0, 13) + ((Number(cnpj[13]) + delta) % 10);
        expect(isValidCnpj(wrong)).toBe(false);
      }),
    );
  });
});

// Independent GS1 statement: left-pad the body to 17 digits (the longest GS1 key, SSCC-18, minus
// its check digit), then weights 3,1,3,… from the left.
function gtinDigit(body: string): number {
  const padded = body.padStart(17, '0');
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(padded[i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
}

describe('GTIN', () => {
  it.each([
    ['4006381333931', 'GTIN-13'],
    ['7891000315507', 'GTIN-13'],
    ['7894900011517', 'GTIN-13'],
    ['7891910000197', 'GTIN-13'],
    ['96385074', 'GTIN-8'],
    ['036000291452', 'GTIN-12 (UPC-A)'],
    ['10012345678902', 'GTIN-14'],
  ])('accepts %s (%s)', (code) => {
    expect(isValidGtin(code)).toBe(true);
    expect(assertGtinOrSemGtin(code, 'det[0].prod.cEAN')).toBe(code);
  });

  it.each([
    ['4006381333932', 'dígito verificador'],
    ['7891000315500', 'dígito verificador'],
    ['96385075', 'dígito verificador'],
    ['1234567', '8, 12, 13 ou 14'],
    ['12345678901', '8, 12, 13 ou 14'],
    ['123456789012345', '8, 12, 13 ou 14'],
    ['789 1000315507', 'somente dígitos'],
    ['sem gtin', 'somente dígitos'],
    ['', 'obrigatório'],
  ])('rejects %j (%s)', (code, message) => {
    expect(isValidGtin(code)).toBe(false);
    const err = fieldErrorOf(() => assertGtinOrSemGtin(code, 'det[0].prod.cEAN'));
    expect(err.field).toBe('det[0].prod.cEAN');
    expect(err.message).toContain(message);
  });

  it('takes exactly "SEM GTIN" as the no-barcode marker, but isValidGtin does not', () => {
    expect(SEM_GTIN).toBe('SEM GTIN');
    expect(assertGtinOrSemGtin('SEM GTIN', 'det[0].prod.cEANTrib')).toBe('SEM GTIN');
    expect(isValidGtin('SEM GTIN')).toBe(false);
  });

  it('matches the GS1 rule for every length and flags every wrong final digit', () => {
    const body = fc.constantFrom(7, 11, 12, 13).chain((n) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n }));
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 9 }), (b, delta) => {
        const d = gtinDigit(b);
        expect(isValidGtin(`${b}${d}`)).toBe(true);
        expect(isValidGtin(`${b}${(d + delta) % 10}`)).toBe(false);
      }),
    );
  });
});
