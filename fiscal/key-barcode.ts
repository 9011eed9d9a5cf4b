// The access key as the Code 128 barcode of the printed auxiliary documents (the DAMDFE here;
// the DANFE and DACTE follow the same rule). Until the alphanumeric CNPJ the key was all digits
// and printed in code set C, two digits per symbol. NT Conjunta 2025.001 (CNPJ alfanumérico)
// keeps set C for the digits and switches to code set A for the letters of the CNPJ: a numeric
// key is the same CODE-128C as before, and only a key with letters changes. The NT words the
// switch as "código 100"; a reader understands the symbol values of ISO/IEC 15417, which are the
// ones written here (CODE A = 101 from set C, CODE C = 99 from set A). docs/fiscal.md, "Access key".
//
// Only the symbol values are decided here; the bars (check symbol, stop pattern) are drawn by
// bwip-js from them, so the encoding is ours and the barcode library's is not second-guessed.

import { ACCESS_KEY } from '../base/common/access-key.ts';
import { FieldError } from './errors.ts';

const START_C = 105;
/** In set C: switch to set A. */
const CODE_A = 101;
/** In set A: switch to set C. */
const CODE_C = 99;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * The symbol values (start included; check symbol and stop left to the renderer) of the key:
 * digits in pairs in set C; set A for a letter and for a digit that has no partner before the
 * next letter, back to set C as soon as an even run of digits follows.
 */
export function keyBarcodeSymbols(key: string): number[] {
  if (!ACCESS_KEY.test(key)) throw new FieldError('chave', 'chave de acesso deve ter 44 posições');
  const symbols = [START_C];
  let set: 'A' | 'C' = 'C';
  let i = 0;
  while (i < key.length) {
    if (set === 'C' && isDigit(key[i]) && isDigit(key[i + 1])) {
      symbols.push(Number(key.slice(i, i + 2)));
      i += 2;
      continue;
    }
    if (set === 'A' && digitRun(key, i) >= 2 && digitRun(key, i) % 2 === 0) {
      symbols.push(CODE_C);
      set = 'C';
      continue;
    }
    if (set === 'C') {
      symbols.push(CODE_A);
      set = 'A';
    }
    // Set A: ASCII 32–95 are the values 0–63 (digits and upper-case letters among them).
    symbols.push(key.charCodeAt(i) - 32);
    i++;
  }
  return symbols;
}

function digitRun(key: string, from: number): number {
  let j = from;
  while (isDigit(key[j])) j++;
  return j - from;
}

/** The symbols as bwip-js takes them in its `raw` mode: `^105^041…`. */
export function keyBarcodeRaw(key: string): string {
  return keyBarcodeSymbols(key)
    .map((s) => `^${String(s).padStart(3, '0')}`)
    .join('');
}
