import { describe, expect, it } from 'vitest';
import { parseCentsOrZero } from './money-input.ts';

describe('parseCentsOrZero', () => {
  it('takes zero as a count, and any other amount as the payment dialog does', () => {
    for (const zero of ['0', '0,00', 'R$ 0,0', ' 00 ']) expect(parseCentsOrZero(zero, 'Troco inicial')).toBe(0);
    expect(parseCentsOrZero('100,00', 'Troco inicial')).toBe(10_000);
    expect(parseCentsOrZero('1.234,5', 'Contado')).toBe(123_450);
    expect(() => parseCentsOrZero('', 'Troco inicial')).toThrow(/Troco inicial: informe o valor/);
    expect(() => parseCentsOrZero('-5', 'Contado')).toThrow(/Contado/);
  });
});
