// CPF and CNPJ: their form, their check digits and what to say when one is wrong, for every
// layer: the screen as the cashier types, the terminal core, the fiscal core before it signs and
// the API's schemas. fiscal/br/documents.ts turns a problem into a field error; the screen puts
// its field's label in front of it. The check digits are brazilian-utils'; this module fixes the
// form every side agrees on: exactly what the XML carries, no mask.
//
// The CNPJ is alphanumeric since IN RFB 2.229/2024 (assigned from July 2026; SEFAZ takes it from
// 2026-07-01, NT 2026.004): 12 characters that are digits or upper-case letters, then two check
// digits that are always numeric, each character worth its code point minus 48 (A = 17). A
// numeric CNPJ is the special case of 14 digits, so one definition covers both.
//
// Subpath imports: the package root pulls in every table it ships (~35 ms to import).

import { isValidCnpj as libIsValidCnpj } from '@brazilian-utils/brazilian-utils/is-valid-cnpj';
import { isValidCpf as libIsValidCpf } from '@brazilian-utils/brazilian-utils/is-valid-cpf';

/** TCnpj of the schemas (PL_010, PL_MDFe_300a): unanchored, for regular expressions and JSON Schema. */
export const CNPJ_PATTERN = '[0-9A-Z]{12}[0-9]{2}';
/** TCpf of the schemas. */
export const CPF_PATTERN = '[0-9]{11}';

/** A whole string in the form of a CNPJ (check digits not checked: that is `isValidCnpj`). */
export const CNPJ_FORMAT = new RegExp(`^${CNPJ_PATTERN}$`);
const CPF_FORMAT = new RegExp(`^${CPF_PATTERN}$`);

export function isValidCpf(value: string): boolean {
  return typeof value === 'string' && CPF_FORMAT.test(value) && libIsValidCpf(value);
}

/** Numeric and alphanumeric CNPJs, both unmasked and upper case. */
export function isValidCnpj(value: string): boolean {
  return typeof value === 'string' && CNPJ_FORMAT.test(value) && libIsValidCnpj(value, { version: 2 });
}

/** What is wrong with a CPF in the XML's form (11 digits), in Portuguese; undefined when it is valid. */
export function cpfProblem(value: string): string | undefined {
  if (value === '') return 'CPF obrigatório';
  if (!/^[0-9]+$/.test(value)) return 'CPF deve conter somente dígitos, sem pontuação ou espaços';
  if (value.length !== 11) return `CPF deve ter 11 dígitos (recebidos ${value.length})`;
  if (!isValidCpf(value)) return 'CPF inválido (dígito verificador não confere)';
  return undefined;
}

/**
 * What is wrong with a CNPJ in the XML's form, in Portuguese; undefined when it is valid. A
 * lower-case letter is refused, not raised: the value sent is the value signed, and TCnpj admits
 * upper case only.
 */
export function cnpjProblem(value: string): string | undefined {
  if (value === '') return 'CNPJ obrigatório';
  if (/[a-z]/.test(value) && /^[0-9A-Za-z]+$/.test(value)) return 'CNPJ deve usar letras maiúsculas (ex.: 12ABC34501DE35)';
  if (!/^[0-9A-Z]+$/.test(value)) return 'CNPJ deve conter somente dígitos e letras maiúsculas, sem pontuação ou espaços';
  if (value.length !== 14) return `CNPJ deve ter 14 caracteres (recebidos ${value.length})`;
  if (!CNPJ_FORMAT.test(value)) return 'CNPJ inválido: os dois últimos caracteres (dígitos verificadores) são numéricos';
  if (!isValidCnpj(value)) return 'CNPJ inválido (dígito verificador não confere)';
  return undefined;
}

/** A document as people type it, without the punctuation of its mask (dots, dash, slash, blanks). */
export function unmaskTaxId(text: string): string {
  return String(text).replace(/[.\-/\s]/g, '');
}

export type TypedTaxId = { ok: true; kind: 'cpf' | 'cnpj'; value: string } | { ok: false; problem: string };

/**
 * A CPF or a CNPJ as typed at the counter, mask optional: 11 digits are a CPF, 14 characters a
 * CNPJ (letters allowed, in upper case), anything else is refused saying what was expected.
 */
export function typedTaxId(text: string): TypedTaxId {
  const value = unmaskTaxId(text);
  if (value === '') return { ok: false, problem: 'informe o documento' };
  if (value.length === 11 && /^[0-9]+$/.test(value)) return checked('cpf', value, cpfProblem(value));
  if (value.length === 14 || /[A-Za-z]/.test(value)) return checked('cnpj', value, cnpjProblem(value));
  if (!/^[0-9]+$/.test(value)) return { ok: false, problem: 'use somente números e letras maiúsculas (pontos, traço e barra são opcionais)' };
  return { ok: false, problem: `informe 11 dígitos (CPF) ou 14 caracteres (CNPJ); foram ${value.length}` };
}

/** A CNPJ as typed (mask optional). */
export function typedCnpj(text: string): TypedTaxId {
  const value = unmaskTaxId(text);
  return checked('cnpj', value, cnpjProblem(value));
}

function checked(kind: 'cpf' | 'cnpj', value: string, problem: string | undefined): TypedTaxId {
  return problem === undefined ? { ok: true, kind, value } : { ok: false, problem };
}

/** "12345678909" → "123.456.789-09"; anything not in that form is shown as it is. */
export function formatCpf(cpf: string): string {
  return CPF_FORMAT.test(cpf) ? `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}` : cpf;
}

/** "11222333000181" → "11.222.333/0001-81", "12ABC34501DE35" → "12.ABC.345/01DE-35"; anything else as it is. */
export function formatCnpj(cnpj: string): string {
  return CNPJ_FORMAT.test(cnpj) ? `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}` : cnpj;
}

/** A stored CPF (11) or CNPJ (14) with its mask. */
export function formatTaxId(value: string): string {
  return value.length === 11 ? formatCpf(value) : formatCnpj(value);
}
