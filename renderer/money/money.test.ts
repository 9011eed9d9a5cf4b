import { describe, expect, it } from 'vitest';
import { centsToInput, formatCents, formatQuantity, InputError, looksLikeCode, parseCents, parseEntry, parseQuantity } from './money.ts';

describe('parseCents', () => {
  it.each([
    ['12,50', 1250],
    ['12,5', 1250],
    ['12', 1200],
    ['0,01', 1],
    ['1.234,56', 123456],
    ['1.234.567,89', 123456789],
    ['R$ 12,50', 1250],
    [' 7 ', 700],
    ['12.50', 1250],
    ['12.5', 1250],
    ['1.234', 123400],
    ['0,10', 10],
    ['90071992547409,91', Number.MAX_SAFE_INTEGER],
  ])('%s → %i cents', (text, cents) => {
    expect(parseCents(text)).toBe(cents);
  });

  it('adds exactly, where floats would not (0,10 + 0,20)', () => {
    expect(parseCents('0,10') + parseCents('0,20')).toBe(30);
    expect(parseCents('1,15')).toBe(115); // 1.15 * 100 = 114.99999999999999 in floating point
  });

  it.each([
    ['', 'informe o valor'],
    ['abc', 'valor inválido'],
    ['-5,00', 'valor inválido'],
    ['12,345', 'no máximo 2 casas decimais'],
    ['0,00', 'maior que zero'],
    ['1,2,3', 'valor inválido'],
    ['12.3456', 'valor inválido'],
    ['90071992547409,92', 'grande demais'],
  ])('%j is refused (%s), naming the field', (text, message) => {
    expect(() => parseCents(text, 'Valor recebido')).toThrow(InputError);
    expect(() => parseCents(text, 'Valor recebido')).toThrow(new RegExp(`^Valor recebido: .*${message}`));
  });
});

describe('formatCents', () => {
  it.each([
    [1250, 'R$ 12,50'],
    [5, 'R$ 0,05'],
    [0, 'R$ 0,00'],
    [123456789, 'R$ 1.234.567,89'],
    [-1999, '-R$ 19,99'],
  ])('%i → %s', (cents, text) => {
    expect(formatCents(cents).replace('\u00a0', ' ')).toBe(text);
  });

  it('refuses a fraction of a cent instead of printing a rounded lie', () => {
    expect(() => formatCents(12.5)).toThrow(RangeError);
  });

  it('round-trips through the input form', () => {
    for (const cents of [1, 99, 100, 1250, 100000, 123456789]) expect(parseCents(centsToInput(cents))).toBe(cents);
  });
});

describe('quantities', () => {
  it.each([
    ['3', '3'],
    ['0,350', '0.35'],
    ['1.5', '1.5'],
    ['007', '7'],
    ['2,0000', '2'],
  ])('%s → %s', (text, q) => expect(parseQuantity(text)).toBe(q));

  it.each(['0', '0,000', 'x', '1,23456', '-1', ''])('%j is refused', (text) => {
    expect(() => parseQuantity(text)).toThrow(/^Quantidade: /);
  });

  it('shows the core quantity the Brazilian way', () => {
    expect(formatQuantity('0.350')).toBe('0,35');
    expect(formatQuantity('3')).toBe('3');
    expect(formatQuantity('2.0000')).toBe('2');
  });
});

describe('product entry', () => {
  it('reads quantity*code as the scanner shortcut', () => {
    expect(parseEntry('3*7891000100103')).toEqual({ quantity: '3', term: '7891000100103' });
    expect(parseEntry('0,5*1006')).toEqual({ quantity: '0.5', term: '1006' });
    expect(parseEntry(' café ')).toEqual({ quantity: null, term: 'café' });
    expect(() => parseEntry('x*1001')).toThrow(/Quantidade/);
  });

  it('tells codes from names', () => {
    expect(looksLikeCode('7891000100103')).toBe(true);
    expect(looksLikeCode('1001')).toBe(true);
    expect(looksLikeCode('café')).toBe(false);
    expect(looksLikeCode('arroz 5kg')).toBe(false);
  });
});
