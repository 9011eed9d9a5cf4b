// Money and quantities as the fiscal documents carry them: decimal strings in, integer units
// inside. Never a floating-point number: 0.1 + 0.2 must not reach a receipt.

import { FieldError } from './errors.ts';

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * Parses a non-negative decimal string into an integer scaled by 10^scale.
 * `parseDecimal('12.5', 2)` → 1250n. More fractional digits than `scale` is an error, not a
 * silent rounding: the caller decides how many places a field has.
 */
export function parseDecimal(value: unknown, scale: number, field: string): bigint {
  if (typeof value !== 'string' || !DECIMAL.test(value)) {
    throw new FieldError(field, 'deve ser um número decimal em texto, com ponto (ex.: "10.50")');
  }
  const [int, frac = ''] = value.split('.');
  if (frac.length > scale) throw new FieldError(field, `no máximo ${scale} casas decimais`);
  return BigInt(int + frac.padEnd(scale, '0'));
}

/** Formats an integer scaled by 10^scale with exactly `scale` decimals: (1250n, 2) → "12.50". */
export function formatDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale);
  return (negative ? '-' : '') + (scale ? `${int}.${frac}` : int);
}

/** Cents of a decimal money string ("12.50" → 1250n). */
export const toCents = (value: unknown, field: string): bigint => parseDecimal(value, 2, field);

/** Decimal money string of cents (1250n → "12.50"). */
export const fromCents = (cents: bigint): string => formatDecimal(cents, 2);

/** Rescales a decimal string to the number of places a schema field demands ("3" → "3.0000"). */
export function normalizeDecimal(value: unknown, scale: number, field: string): string {
  return formatDecimal(parseDecimal(value, scale, field), scale);
}

/** Brazilian display form for screens and receipts: 1234567n → "12.345,67" (base/common/money.ts). */
export { formatBRL } from '../base/common/money.ts';
