// Field checks of the NF-e/NFC-e layout 4.00 shared by the document builders: the TDec decimal
// types, TString text, patterns and integers, each failing with a FieldError that names the
// field; plus the money arithmetic the builders share (qCom × vUnCom to the cent, proportional
// spreading to the unit). Money is bigint units, never floating point.

import { FieldError, type IssueCollector } from './errors.ts';
import { formatDecimal, parseDecimal } from './money.ts';
import { brasiliaDateTime } from './protocol.ts';

export type DecSpec = { scale: number; intDigits: number; minScale: number; max?: bigint; positive?: boolean };

export const DEC = {
  v: { scale: 2, intDigits: 13, minScale: 2 }, // TDec_1302
  vOpc: { scale: 2, intDigits: 13, minScale: 2, positive: true }, // TDec_1302Opc
  p: { scale: 4, intDigits: 3, minScale: 2 }, // TDec_0302a04
  pMax100: { scale: 4, intDigits: 3, minScale: 2, max: 1_000_000n }, // TDec_0302a04Max100
  q: { scale: 4, intDigits: 11, minScale: 4 }, // TDec_1104v
  q12: { scale: 4, intDigits: 12, minScale: 4 }, // TDec_1204v
  vUn: { scale: 10, intDigits: 11, minScale: 2 }, // TDec_1110v
} as const satisfies Record<string, DecSpec>;

export type Dec = { units: bigint; text: string };

export function trimZeros(s: string, minScale: number): string {
  const [int, frac = ''] = s.split('.');
  let kept = frac.replace(/0+$/, '');
  if (kept.length < minScale) kept = frac.slice(0, minScale);
  return kept ? `${int}.${kept}` : int!;
}

/** A decimal string within a TDec type's limits, written the way its pattern accepts. */
export function decimal(value: unknown, field: string, spec: DecSpec): Dec {
  if (value === undefined || value === null || value === '') throw new FieldError(field, 'obrigatório');
  // The text is derived from the digits as given (the pattern allows no leading zeros), which
  // is what formatting the parsed units would give, without the round trip through a bigint.
  const m = typeof value === 'string' ? PLAIN_DECIMAL.exec(value) : null;
  const int = m?.[1];
  const frac = m?.[2] ?? '';
  if (int === undefined || frac.length > spec.scale) parseDecimal(value, spec.scale, field); // throws the reason
  const padded = frac.padEnd(spec.scale, '0');
  const units = BigInt(int! + padded);
  // The integer part has no leading zero, so its length is its number of digits.
  if (int!.length > spec.intDigits) throw new FieldError(field, `no máximo ${spec.intDigits} dígitos na parte inteira`);
  if (spec.max !== undefined && units > spec.max) {
    throw new FieldError(field, `no máximo ${trimZeros(formatDecimal(spec.max, spec.scale), 0)}`);
  }
  if (spec.positive && units === 0n) throw new FieldError(field, 'deve ser maior que zero (ou omitido)');
  let kept = frac.replace(TRAILING_ZEROS, '');
  if (kept.length < spec.minScale) kept = padded.slice(0, spec.minScale);
  return { units, text: kept ? `${int}.${kept}` : int! };
}

/** The decimal strings parseDecimal accepts (fiscal/money.ts), with the parts apart. */
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
const TRAILING_ZEROS = /0+$/;

export const isAbsent = (v: unknown): boolean => v === undefined || v === null || v === '';

/**
 * TString of the layout: Latin-1 printable characters, no leading/trailing blanks. Line breaks
 * and tabs are turned into spaces and the ends trimmed (the schema forbids them and the user
 * cannot see the difference); anything else outside Latin-1 is reported, not dropped.
 */
export function tString(value: unknown, field: string, min: number, max: number): string {
  if (isAbsent(value)) throw new FieldError(field, 'obrigatório');
  if (typeof value !== 'string') throw new FieldError(field, 'deve ser texto');
  // Nearly every value is already clean: one test spares the replace, the trim and the loop.
  const clean = CLEAN_TSTRING.test(value);
  const v = clean ? value : value.replace(/[\t\r\n]+/g, ' ').trim();
  if (!v) throw new FieldError(field, 'obrigatório');
  if (!clean) checkLatin1(v, field);
  if (v.length < min || v.length > max) throw new FieldError(field, `deve ter de ${min} a ${max} caracteres`);
  return v;
}

function checkLatin1(v: string, field: string): void {
  for (const ch of v) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x20 || cp > 0xff) {
      throw new FieldError(field, `caractere não aceito pelo leiaute da NF-e: "${ch}" (U+${cp.toString(16).toUpperCase().padStart(4, '0')})`);
    }
  }
}

/**
 * Latin-1 printable text that the normalization above leaves as it is: no tab or line break,
 * nothing outside U+0020–U+00FF, and neither end blank (a space or a no-break space, which
 * trim() would remove).
 */
const CLEAN_TSTRING = /^[\x21-\x7e\xa1-\xff](?:[\x20-\xff]*[\x21-\x7e\xa1-\xff])?$/;

export const optTString = (value: unknown, field: string, min: number, max: number): string | undefined =>
  isAbsent(value) ? undefined : tString(value, field, min, max);

export function pattern(value: unknown, field: string, re: RegExp, message: string): string {
  if (isAbsent(value)) throw new FieldError(field, 'obrigatório');
  if (typeof value !== 'string' || !re.test(value)) throw new FieldError(field, message);
  return value;
}

export function integer(value: unknown, field: string, min: number, max: number): number {
  if (value === undefined || value === null) throw new FieldError(field, 'obrigatório');
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FieldError(field, `deve ser um número inteiro de ${min} a ${max}`);
  }
  return value;
}

/** qCom × vUnCom (scales 4 and 10) rounded half-up to cents. */
export function productCents(q: bigint, vUn: bigint): bigint {
  return (q * vUn + HALF_SCALE_14_TO_2) / SCALE_14_TO_2;
}

const SCALE_14_TO_2 = 10n ** 12n;
const HALF_SCALE_14_TO_2 = SCALE_14_TO_2 / 2n;

export function asObject(value: unknown, field: string, issues: IssueCollector): Record<string, unknown> | undefined {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  issues.add(field, value === undefined || value === null ? 'obrigatório' : 'deve ser um objeto');
  return undefined;
}

export function instant(value: unknown, field: string): { text: string; ms: number } {
  if (value === undefined || value === null || value === '') throw new FieldError(field, 'obrigatório');
  if (!(value instanceof Date) && typeof value !== 'string') throw new FieldError(field, 'deve ser data/hora ISO 8601 com fuso');
  const written = brasiliaDateTime(value, field);
  // Whole seconds: the layout has no fraction, and the comparison dhCont ≤ dhEmi uses what is written.
  const ms = Date.parse(written);
  if (!/^20[0-9]{2}-/.test(written)) throw new FieldError(field, 'ano deve estar entre 2000 e 2099');
  return { text: written, ms };
}

/** Spreads `total` over `weights` in proportion, to the unit, by largest remainder (ties: first). */
export function allocate(total: bigint, weights: bigint[]): bigint[] {
  const sum = weights.reduce((a, b) => a + b, 0n);
  if (weights.length === 0) return [];
  if (sum === 0n) return weights.map((_, i) => (i === 0 ? total : 0n));
  const shares = weights.map((w) => (total * w) / sum);
  let rest = total - shares.reduce((a, b) => a + b, 0n);
  const order = weights.map((w, i) => ({ i, r: (total * w) % sum })).sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (let k = 0; rest > 0n; k++, rest--) shares[order[k % order.length]!.i]! += 1n;
  return shares;
}
