// Taxpayer ids (CPF, CNPJ) and product barcodes (GTIN).
//
// The CPF and CNPJ rules, check digits and messages are base/common/tax-ids.ts's (shared with
// the screen and the terminal); this module adds the field errors the fiscal API answers with.
// The XML carries exactly the schema form (TCpf `[0-9]{11}`, TCnpj: digits or upper-case
// letters, two numeric check digits), so a mask or a lower-case letter is refused here instead of
// being silently normalised: the value the caller sent is the value that will be signed. GTIN is
// hand-written because brazilian-utils 2.4.0 has no GTIN/EAN validator.

import { cnpjProblem, cpfProblem, isValidCnpj, isValidCpf } from '../../base/common/tax-ids.ts';
import { FieldError, type IssueCollector } from '../errors.ts';

export { isValidCnpj, isValidCpf };

const GTIN_FORMAT = /^(?:[0-9]{8}|[0-9]{12,14})$/;

export const SEM_GTIN = 'SEM GTIN';

export function assertCpf(value: unknown, field: string): string {
  const problem = typeof value === 'string' ? cpfProblem(value) : 'CPF obrigatório';
  if (problem) throw new FieldError(field, problem);
  return value as string;
}

/**
 * A numeric or alphanumeric CNPJ, exactly as the XML will carry it. A document's builder passes
 * its collector as `document`, which records the CNPJ under `field` for the checks made on all
 * of a document's CNPJs at once (whether its date admits letters).
 */
export function assertCnpj(value: unknown, field: string, document?: IssueCollector): string {
  const problem = typeof value === 'string' ? cnpjProblem(value) : 'CNPJ obrigatório';
  if (problem) throw new FieldError(field, problem);
  document?.cnpjs.push({ field, value: value as string });
  return value as string;
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
