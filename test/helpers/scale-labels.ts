// Scale labels as a scale prints them, for tests: 12 digits completed with their EAN-13 check digit.

import { isValidGtin } from '../../fiscal/br/documents.ts';

/** The 13-digit label for 12 digits, with the right check digit. */
export function ean13(first12: string): string {
  if (!/^[0-9]{12}$/.test(first12)) throw new Error(`12 dígitos esperados: ${first12}`);
  for (let d = 0; d <= 9; d++) if (isValidGtin(first12 + d)) return first12 + d;
  throw new Error(`sem dígito verificador: ${first12}`);
}

/** The same label with a wrong check digit. */
export const withWrongCheckDigit = (label: string): string => label.slice(0, 12) + String((Number(label[12]) + 1) % 10);
