// The access key (chave de acesso) of the NF-e, NFC-e and MDF-e: its form and its check digit,
// for every layer (the API's schemas, the fiscal core, the service's and the terminal's readers).
// fiscal/access-key.ts builds and parses keys on top of this; docs/fiscal.md, "Access key".
//
// 44 positions: cUF(2) AAMM(4) CNPJ(14) mod(2) serie(3) nNF(9) tpEmis(1) cNF(8) cDV(1). The
// CNPJ's first 12 positions may hold upper-case letters (alphanumeric CNPJ, NT 2026.004), so
// the key is no longer all digits.

/** TChNFe / TChDFe of the schemas (PL_010d, PL_MDFe_300a): unanchored, for regular expressions and JSON Schema. */
export const ACCESS_KEY_PATTERN = '[0-9]{6}[0-9A-Z]{12}[0-9]{26}';

/** A whole string that has the key's form (the check digit is `accessKeyCheckDigit`'s business). */
export const ACCESS_KEY = new RegExp(`^${ACCESS_KEY_PATTERN}$`);

/**
 * Modulo-11 check digit over the 43 leading characters, weights 2..9 from the right, cycling;
 * 0 when the result is 10 or 11. A character is worth its code point minus 48, which is its
 * value for a digit and gives a letter of an alphanumeric CNPJ its value (A = 17).
 */
export function accessKeyCheckDigit(first43: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = first43.length - 1; i >= 0; i--) {
    sum += (first43.charCodeAt(i) - 48) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const dv = 11 - (sum % 11);
  return dv > 9 ? 0 : dv;
}

/** A key in the right form whose last digit is its check digit. */
export function isWellFormedAccessKey(key: unknown): key is string {
  return typeof key === 'string' && ACCESS_KEY.test(key) && accessKeyCheckDigit(key.slice(0, 43)) === Number(key[43]);
}
