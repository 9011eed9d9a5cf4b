// CPF and CNPJ check digits, for the screen as the cashier types and for the fiscal core before
// it signs (fiscal/br/documents.ts adds the field errors and the schema's strictness). The rules
// are brazilian-utils'; this module fixes the form both sides agree on: exactly the digits (and,
// for the alphanumeric CNPJ of IN RFB 2.229/2024, upper-case letters), no mask.
//
// Subpath imports: the package root pulls in every table it ships (~35 ms to import).

import { isValidCnpj as libIsValidCnpj } from '@brazilian-utils/brazilian-utils/is-valid-cnpj';
import { isValidCpf as libIsValidCpf } from '@brazilian-utils/brazilian-utils/is-valid-cpf';

const CPF_FORMAT = /^[0-9]{11}$/;
// Alphanumeric CNPJ: 12 base characters, check digits always numeric.
const CNPJ_FORMAT = /^[0-9A-Z]{12}[0-9]{2}$/;

export function isValidCpf(value: string): boolean {
  return typeof value === 'string' && CPF_FORMAT.test(value) && libIsValidCpf(value);
}

/** Numeric and alphanumeric CNPJs, both unmasked and upper case. */
export function isValidCnpj(value: string): boolean {
  return typeof value === 'string' && CNPJ_FORMAT.test(value) && libIsValidCnpj(value, { version: 2 });
}

/** "12345678909" → "123.456.789-09"; anything not in that form is shown as it is. */
export function formatCpf(cpf: string): string {
  return CPF_FORMAT.test(cpf) ? `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}` : cpf;
}

/** "11222333000181" → "11.222.333/0001-81" (numeric or alphanumeric); anything else as it is. */
export function formatCnpj(cnpj: string): string {
  return CNPJ_FORMAT.test(cnpj) ? `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}` : cnpj;
}
