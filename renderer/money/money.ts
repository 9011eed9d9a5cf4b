// Money and quantities as the cashier types and reads them. Integer cents inside, pt-BR text
// outside ("12,50", "R$ 1.234,56"), converted with string arithmetic: a float never touches a
// sale. Totals and change are the core's (SaleView); the screen only parses what is typed.

import { formatBRL } from '../../base/common/money.ts';

/** A value the cashier typed that the screen cannot use; `field` is the label it came from. */
export class InputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'InputError';
  }
}

// "1234,56", "1.234,56", "12", "12,5"; and, leniently, a decimal dot with one or two places
// ("12.50"), since a dot followed by exactly three digits is a thousands separator in pt-BR.
const PT_BR = /^(?<int>[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)(?:,(?<frac>[0-9]*))?$/;
const DOT_DECIMAL = /^(?<int>[0-9]+)\.(?<frac>[0-9]{1,2})$/;
const MAX_CENTS = BigInt(Number.MAX_SAFE_INTEGER);

/** "12,50" → 1250. Accepts "R$" and spaces; refuses negatives, more than two places, zero. */
export function parseCents(text: string, field = 'Valor'): number {
  const clean = text.replace(/^\s*R\$/, '').replace(/\s+/g, '');
  if (clean === '') throw new InputError(field, 'informe o valor');
  const m = DOT_DECIMAL.exec(clean) ?? PT_BR.exec(clean);
  if (!m?.groups) throw new InputError(field, 'valor inválido (use o formato 12,50)');
  const int = m.groups.int!.replaceAll('.', '');
  const frac = m.groups.frac ?? '';
  if (frac.length > 2) throw new InputError(field, 'no máximo 2 casas decimais');
  const cents = BigInt(int) * 100n + BigInt(frac.padEnd(2, '0') || '0');
  if (cents <= 0n) throw new InputError(field, 'deve ser maior que zero');
  if (cents > MAX_CENTS) throw new InputError(field, 'valor grande demais');
  return Number(cents);
}

function split(cents: number): { sign: string; int: string; frac: string } {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`centavos devem ser um inteiro: ${cents}`);
  const digits = String(Math.abs(cents)).padStart(3, '0');
  return { sign: cents < 0 ? '-' : '', int: digits.slice(0, -2), frac: digits.slice(-2) };
}

/** 123456 → "R$ 1.234,56" (with a no-break space, so it never wraps). */
export function formatCents(cents: number): string {
  const text = formatBRL(cents);
  return text.startsWith('-') ? `-R$\u00a0${text.slice(1)}` : `R$\u00a0${text}`;
}

/** 1250 → "12,50": how an amount is pre-filled in an input the cashier may edit. */
export function centsToInput(cents: number): string {
  const { sign, int, frac } = split(cents);
  return `${sign}${int},${frac}`;
}

const QUANTITY = /^(?<int>[0-9]+)(?:[.,](?<frac>[0-9]*))?$/;

/** "0,350" → "0.350" (the core's decimal string, up to 4 places); refuses zero and junk. */
export function parseQuantity(text: string, field = 'Quantidade'): string {
  const clean = text.trim();
  const m = QUANTITY.exec(clean);
  if (!m?.groups) throw new InputError(field, 'use números, com vírgula para frações (ex.: 0,350)');
  const int = m.groups.int!.replace(/^0+(?=[0-9])/, '');
  const frac = (m.groups.frac ?? '').replace(/0+$/, '');
  if (frac.length > 4) throw new InputError(field, 'no máximo 4 casas decimais');
  if (/^0*$/.test(int) && frac === '') throw new InputError(field, 'deve ser maior que zero');
  return frac ? `${int}.${frac}` : int;
}

/** "0.350" → "0,35", "3" → "3": the core's quantity as the cashier reads it. */
export function formatQuantity(quantity: string): string {
  const [int, frac = ''] = quantity.split('.');
  const trimmed = frac.replace(/0+$/, '');
  return trimmed ? `${int},${trimmed}` : (int ?? quantity);
}

/** What the product input holds: `3*7891000100103` sets the quantity; otherwise code or name. */
export type EntryText = { quantity: string | null; term: string };

export function parseEntry(text: string): EntryText {
  const star = text.indexOf('*');
  if (star < 0) return { quantity: null, term: text.trim() };
  const quantity = parseQuantity(text.slice(0, star));
  return { quantity, term: text.slice(star + 1).trim() };
}

/** A scanner or keypad code (digits only, or a product code typed as is) versus a name search. */
export function looksLikeCode(term: string): boolean {
  return /^[0-9]+$/.test(term) || term.toUpperCase() === 'SEM GTIN';
}
