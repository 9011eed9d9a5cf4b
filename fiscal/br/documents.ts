// Taxpayer ids (CPF, CNPJ) and product barcodes (GTIN).
//
// The check digits are base/common/tax-ids.ts's (brazilian-utils, shared with the screen); this
// module adds the field errors the fiscal API answers with. The XML carries exactly the schema
// form (TCpf `[0-9]{11}`, TCnpj `[0-9A-Z]{12}[0-9]{2}`), so a mask or a lower-case letter is
// refused here instead of being silently normalised: the value the caller sent is the value
// that will be signed. GTIN is hand-written because brazilian-utils 2.4.0 has no GTIN/EAN
// validator.

import { isValidCnpj, isValidCpf } from '../../base/common/tax-ids.ts';
import { FieldError } from '../errors.ts';

export { isValidCnpj, isValidCpf };

// Alphanumeric CNPJ (IN RFB 2.229/2024): 12 base characters, check digits always numeric.
const CNPJ_FORMAT = /^[0-9A-Z]{12}[0-9]{2}$/;
const GTIN_FORMAT = /^(?:[0-9]{8}|[0-9]{12,14})$/;

export const SEM_GTIN = 'SEM GTIN';

export function assertCpf(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(field, 'CPF obrigatório');
  if (!/^[0-9]+$/.test(value)) {
    throw new FieldError(field, 'CPF deve conter somente dígitos, sem pontuação ou espaços');
  }
  if (value.length !== 11) throw new FieldError(field, `CPF deve ter 11 dígitos (recebidos ${value.length})`);
  if (!isValidCpf(value)) throw new FieldError(field, 'CPF inválido (dígito verificador não confere)');
  return value;
}

export function assertCnpj(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(field, 'CNPJ obrigatório');
  if (/[a-z]/.test(value) && /^[0-9A-Za-z]+$/.test(value)) {
    // The library would accept it, but TCnpj only admits upper case.
    throw new FieldError(field, 'CNPJ alfanumérico deve usar letras maiúsculas');
  }
  if (!/^[0-9A-Z]+$/.test(value)) {
    throw new FieldError(field, 'CNPJ deve conter somente dígitos (ou letras maiúsculas, no CNPJ alfanumérico), sem pontuação ou espaços');
  }
  if (value.length !== 14) throw new FieldError(field, `CNPJ deve ter 14 caracteres (recebidos ${value.length})`);
  if (!CNPJ_FORMAT.test(value)) throw new FieldError(field, 'CNPJ inválido: os dois dígitos verificadores devem ser numéricos');
  if (!isValidCnpj(value)) {
    throw new FieldError(field, 'CNPJ inválido (dígito verificador não confere)');
  }
  return value;
}

/**
 * GS1 check digit for GTIN-8, -12, -13 and -14: weights 3,1,3,… from the digit next to the
 * check digit leftwards, so the same loop serves every length. "SEM GTIN" is not a GTIN; the
 * callers that accept it use `assertGtinOrSemGtin`.
 */
export function isValidGtin(code: string): boolean {
  if (typeof code !== 'string' || !GTIN_FORMAT.test(code)) return false;
  let sum = 0;
  for (let i = code.length - 2, weight = 3; i >= 0; i--, weight = 4 - weight) {
    sum += (code.charCodeAt(i) - 48) * weight;
  }
  return (10 - (sum % 10)) % 10 === code.charCodeAt(code.length - 1) - 48;
}

/**
 * cEAN / cEANTrib: a valid GTIN or the literal "SEM GTIN". The schema also admits an empty
 * string, but SEFAZ has required "SEM GTIN" for products without a barcode since 2019, so empty
 * is refused here.
 */
export function assertGtinOrSemGtin(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new FieldError(field, 'GTIN obrigatório: informe o código de barras ou "SEM GTIN"');
  }
  if (value === SEM_GTIN) return value;
  if (!/^[0-9]+$/.test(value)) {
    throw new FieldError(field, 'GTIN deve conter somente dígitos (ou ser exatamente "SEM GTIN")');
  }
  if (!GTIN_FORMAT.test(value)) {
    throw new FieldError(field, `GTIN deve ter 8, 12, 13 ou 14 dígitos (recebidos ${value.length})`);
  }
  if (!isValidGtin(value)) throw new FieldError(field, 'GTIN inválido (dígito verificador não confere)');
  return value;
}
