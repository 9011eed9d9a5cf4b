import { describe, expect, it } from 'vitest';
import { FieldError } from '../errors.ts';
import { cUFOf, isUF, UFS, ufOfCUF } from './uf.ts';

// The cUF table (docs/fiscal.md, "Access key"), written out independently of the module's own table.
const TABLE_1_1: Record<string, string> = {
  '11': 'RO',
  '12': 'AC',
  '13': 'AM',
  '14': 'RR',
  '15': 'PA',
  '16': 'AP',
  '17': 'TO',
  '21': 'MA',
  '22': 'PI',
  '23': 'CE',
  '24': 'RN',
  '25': 'PB',
  '26': 'PE',
  '27': 'AL',
  '28': 'SE',
  '29': 'BA',
  '31': 'MG',
  '32': 'ES',
  '33': 'RJ',
  '35': 'SP',
  '41': 'PR',
  '42': 'SC',
  '43': 'RS',
  '50': 'MS',
  '51': 'MT',
  '52': 'GO',
  '53': 'DF',
};

describe('UFS', () => {
  it('holds the 27 UFs once each, in alphabetical order', () => {
    expect(UFS).toHaveLength(27);
    expect(new Set(UFS).size).toBe(27);
    expect([...UFS]).toEqual(Object.values(TABLE_1_1).sort());
  });

  it('cannot be mutated by a caller', () => {
    expect(() => (UFS as string[]).push('XX')).toThrow(TypeError);
  });
});

describe('cUF', () => {
  it.each(Object.entries(TABLE_1_1))('%s ↔ %s', (cUF, uf) => {
    expect(cUFOf(uf)).toBe(cUF);
    expect(ufOfCUF(cUF)).toBe(uf);
  });

  it('answers undefined for codes that are not a cUF', () => {
    for (const c of ['00', '10', '18', '30', '34', '54', '99', '3', '035', '', 'SP']) expect(ufOfCUF(c)).toBeUndefined();
  });

  it('throws a FieldError naming the field for an unknown UF, default field "UF"', () => {
    expect(() => cUFOf('XX')).toThrow(FieldError);
    expect(() => cUFOf('XX')).toThrow(/^UF: /);
    try {
      cUFOf('sp', 'emit.enderEmit.UF');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(FieldError);
      expect((err as FieldError).field).toBe('emit.enderEmit.UF');
      expect((err as FieldError).message).toContain('"sp"');
    }
  });
});

describe('isUF', () => {
  it('accepts the upper-case codes only', () => {
    expect(UFS.every(isUF)).toBe(true);
    for (const x of ['sp', 'Sp', 'EX', 'XX', '', ' SP', 'SP ', 35, null, undefined, 'toString', '__proto__', 'constructor']) {
      expect(isUF(x)).toBe(false);
    }
  });
});
