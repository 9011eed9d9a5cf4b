// Amounts typed at the till: like any amount (money.ts), but a float or a count may be zero.

import { parseCents } from '../money/money.ts';

/** "0", "0,00" → 0; anything else as parseCents reads it. */
export function parseCentsOrZero(text: string, field: string): number {
  if (/^\s*(R\$)?\s*0+([.,]0{0,2})?\s*$/.test(text)) return 0;
  return parseCents(text, field);
}
