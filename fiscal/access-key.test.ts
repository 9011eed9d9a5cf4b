import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildAccessKey, checkDigit, formatAccessKey, generateNumericCode, isValidNumericCode, parseAccessKey } from './access-key.ts';
import { FieldError } from './errors.ts';
import { CNPJ_FORMAT } from '../base/common/tax-ids.ts';

// Real keys from docs/fiscal.md, "Access key" (and the synthetic BA fixture key): the algorithm must give
// the digit each carries.
const REAL_KEYS = [
  '41170410422724000187650010000005101000010235',
  '35180834128745000152550010000474281920007498',
  '41210780568835000181580010402005751006005791',
  '50170876063965000276580010000011311421039568',
  '41170310422724000187650010000000061000005858',
  '42210775277525000178550030000266631762885493',
  '29181033657677000156650010001654391001654392',
];

describe('check digit', () => {
  it.each(REAL_KEYS)('matches the real key %s', (key) => {
    expect(checkDigit(key.slice(0, 43))).toBe(Number(key[43]));
    expect(parseAccessKey(key).key).toBe(key);
  });

  it.each([
    ['29181033657677000156650010001654399001654399', 8],
    ['43211105730928000145650010000002401717268120', 9],
    ['35240305730928000145650010000001421071400478', 6],
  ])('flags the fixture key %s whose digit is wrong (computed %i)', (key, computed) => {
    expect(checkDigit(key.slice(0, 43))).toBe(computed);
    expect(() => parseAccessKey(key)).toThrow(/dígito verificador/);
  });
});

describe('parseAccessKey', () => {
  it('splits the 44 positions', () => {
    expect(parseAccessKey('41210780568835000181580010402005751006005791')).toEqual({
      key: '41210780568835000181580010402005751006005791',
      cUF: '41',
      yearMonth: '2107',
      cnpj: '80568835000181',
      model: '58',
      serie: 1,
      number: 40200575,
      tpEmis: 1,
      code: '00600579',
      checkDigit: 1,
    });
  });

  it.each([
    ['short', '4117041042272400018765001000000510100001023'],
    ['letters in the number', '4117041042272400018765001000000A101000010235'],
    ['not a string', 41170410422724000187650010000005101000010235],
    ['unknown model', '41170410422724000187570010000005101000010235'],
  ])('refuses a malformed key (%s), naming the field', (_label, key) => {
    try {
      parseAccessKey(key, 'chave_substituta');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(FieldError);
      expect((err as FieldError).field).toBe('chave_substituta');
    }
  });

  it('an alphanumeric key: its digit, computed apart (Python, each character worth ord(c) − 48), is 5; lower case is not a key', () => {
    const key = '35261212ABC34501DE35580010000003101040041065';
    expect(checkDigit(key.slice(0, 43))).toBe(5);
    expect(parseAccessKey(key)).toMatchObject({ cnpj: '12ABC34501DE35', model: '58', number: 310, checkDigit: 5 });
    expect(() => parseAccessKey(key.slice(0, 43) + '4')).toThrow(/dígito verificador/);
    expect(() => parseAccessKey(key.toLowerCase())).toThrow(/44 posições/);
  });

  it('accepts an alphanumeric CNPJ (letters count as ord(c) - 48)', () => {
    const key = buildAccessKey({ cUF: '35', yearMonth: '2607', cnpj: '12ABC34501DE35', model: '55', serie: 1, number: 7, tpEmis: 1, code: '13572468' });
    expect(parseAccessKey(key).cnpj).toBe('12ABC34501DE35');
  });
});

describe('buildAccessKey', () => {
  it('rebuilds a real key from its parts', () => {
    const parts = parseAccessKey('35180834128745000152550010000474281920007498');
    expect(buildAccessKey(parts)).toBe(parts.key);
  });

  it('round-trips any valid parts', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('11', '29', '35', '53'),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 1, max: 12 }),
        fc.stringMatching(CNPJ_FORMAT), // numeric and alphanumeric CNPJs
        fc.constantFrom('55', '58', '65') as fc.Arbitrary<'55' | '58' | '65'>,
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: 1, max: 999_999_999 }),
        fc.constantFrom(1, 2, 9),
        (cUF, yy, mm, cnpj, model, serie, number, tpEmis) => {
          const yearMonth = String(yy).padStart(2, '0') + String(mm).padStart(2, '0');
          const code = generateNumericCode(number);
          const key = buildAccessKey({ cUF, yearMonth, cnpj, model, serie, number, tpEmis, code });
          const parsed = parseAccessKey(key);
          expect(parsed).toMatchObject({ cUF, yearMonth, cnpj, model, serie, number, tpEmis, code });
        },
      ),
    );
  });

  it('names the field of a number out of range', () => {
    expect(() =>
      buildAccessKey({ cUF: '35', yearMonth: '2611', cnpj: '11222333000181', model: '65', serie: 1000, number: 1, tpEmis: 1, code: '13572468' }),
    ).toThrow(/serie/);
  });
});

describe('cNF (NT 2019.001)', () => {
  it.each(['00000000', '77777777', '12345678', '23456789', '01234567', '98765432'])('refuses %s', (code) => {
    expect(isValidNumericCode(code, 1)).toBe(false);
  });

  it('refuses a code equal to the document number', () => {
    expect(isValidNumericCode('00001234', 1234)).toBe(false);
    expect(isValidNumericCode('00001234', 1235)).toBe(true);
  });

  it('never generates a forbidden code, even when the random source keeps offering them', () => {
    const offers = [11111111, 12345678, 4321, 24681357];
    let i = 0;
    expect(generateNumericCode(4321, () => offers[i++]!)).toBe('24681357');
    fc.assert(fc.property(fc.integer({ min: 1, max: 99_999_999 }), (n) => isValidNumericCode(generateNumericCode(n), n)));
  });
});

it('formats the key in 11 groups of 4', () => {
  expect(formatAccessKey(REAL_KEYS[0]!)).toBe('4117 0410 4227 2400 0187 6500 1000 0005 1010 0001 0235');
});
