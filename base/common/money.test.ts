import { describe, expect, it } from 'vitest';
import { formatBRL } from './money.ts';

describe('formatBRL', () => {
  it('groups thousands with dots and writes two decimals after a comma', () => {
    expect(formatBRL(0)).toBe('0,00');
    expect(formatBRL(5)).toBe('0,05');
    expect(formatBRL(123456)).toBe('1.234,56');
    expect(formatBRL(123456789012n)).toBe('1.234.567.890,12');
  });

  it('keeps the sign of a negative amount', () => {
    expect(formatBRL(-50)).toBe('-0,50');
    expect(formatBRL(-100000n)).toBe('-1.000,00');
  });

  it('takes bigint cents beyond what a number holds exactly', () => {
    expect(formatBRL(9007199254740993n)).toBe('90.071.992.547.409,93');
  });

  it('refuses a fraction of a cent', () => {
    expect(() => formatBRL(12.5)).toThrow(RangeError);
  });
});
