import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBRL, formatDecimal, fromCents, normalizeDecimal, parseDecimal, toCents } from './money.ts';

describe('decimal strings', () => {
  it('parses into exact integer units', () => {
    expect(toCents('0.10', 'x') + toCents('0.20', 'x')).toBe(30n);
    expect(parseDecimal('3', 4, 'qCom')).toBe(30000n);
    expect(parseDecimal('12.5', 2, 'vProd')).toBe(1250n);
  });

  it.each(['1,50', '-1.00', '1.', '.5', '01.00', '1e3', '', ' 1.00'])('refuses %j, naming the field', (v) => {
    expect(() => parseDecimal(v, 2, 'pag[0].vPag')).toThrow(/pag\[0\]\.vPag/);
  });

  it('refuses numbers and more places than the field has, instead of rounding', () => {
    expect(() => toCents(1.5, 'vNF')).toThrow(/vNF/);
    expect(() => toCents('1.005', 'vNF')).toThrow(/no máximo 2 casas/);
  });

  it('formats with exactly the field places and round-trips', () => {
    expect(fromCents(5n)).toBe('0.05');
    expect(formatDecimal(30000n, 4)).toBe('3.0000');
    expect(normalizeDecimal('2', 2, 'x')).toBe('2.00');
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (c) => toCents(fromCents(c), 'x') === c));
  });

  it('formats reais for people', () => {
    expect(formatBRL(123456789n)).toBe('1.234.567,89');
    expect(formatBRL(5n)).toBe('0,05');
  });
});
