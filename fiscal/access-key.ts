// The 44-position access key (chave de acesso) of NF-e (55), NFC-e (65) and MDF-e (58), built and
// parsed with field errors, and the random code cNF with the NT 2019.001 rules. Its form and its
// check digit are base/common/access-key.ts's, the one definition every layer uses.
// Layout (docs/fiscal.md, "Access key"): cUF(2) AAMM(4) CNPJ(14) mod(2) serie(3) nNF(9) tpEmis(1) cNF(8) cDV(1).

import { randomInt } from 'node:crypto';
import { ACCESS_KEY, ACCESS_KEY_PATTERN, accessKeyCheckDigit } from '../base/common/access-key.ts';
import { CNPJ_FORMAT } from '../base/common/tax-ids.ts';
import { FieldError } from './errors.ts';

/** The check digit rule is base/common's, shared with the readers that have no FieldError. */
export { accessKeyCheckDigit as checkDigit };

export type DocumentModel = '55' | '58' | '65';

export type AccessKeyParts = {
  cUF: string; // 2 digits, IBGE state code
  yearMonth: string; // AAMM of dhEmi
  cnpj: string; // 14 characters (numeric, or alphanumeric CNPJ); a CPF is left-padded with zeros
  model: DocumentModel;
  serie: number;
  number: number; // nNF or nMDF
  tpEmis: number;
  code: string; // cNF / cMDF, 8 digits
};

export type ParsedAccessKey = AccessKeyParts & { checkDigit: number; key: string };

const MODELS: readonly string[] = ['55', '58', '65'];

function digits(value: number, width: number, field: string): string {
  if (!Number.isInteger(value) || value < 0 || value >= 10 ** width) {
    throw new FieldError(field, `deve ser um inteiro de 0 a ${10 ** width - 1}`);
  }
  return String(value).padStart(width, '0');
}

export function buildAccessKey(p: AccessKeyParts): string {
  if (!/^[0-9]{2}$/.test(p.cUF)) throw new FieldError('cUF', 'deve ter 2 dígitos');
  if (!/^[0-9]{2}(0[1-9]|1[0-2])$/.test(p.yearMonth)) throw new FieldError('AAMM', 'deve ser AAMM');
  const cnpj = p.cnpj.length === 11 ? p.cnpj.padStart(14, '0') : p.cnpj;
  if (!CNPJ_FORMAT.test(cnpj)) throw new FieldError('CNPJ', 'deve ter 14 posições');
  if (!MODELS.includes(p.model)) throw new FieldError('mod', 'modelo deve ser 55, 58 ou 65');
  if (!/^[0-9]{8}$/.test(p.code)) throw new FieldError('cNF', 'deve ter 8 dígitos');
  const body = p.cUF + p.yearMonth + cnpj + p.model + digits(p.serie, 3, 'serie') + digits(p.number, 9, 'nNF') + digits(p.tpEmis, 1, 'tpEmis') + p.code;
  return body + accessKeyCheckDigit(body);
}

/** Parses and checks a key; a malformed one is a FieldError naming `field`. */
export function parseAccessKey(key: unknown, field = 'chave'): ParsedAccessKey {
  if (typeof key !== 'string' || !ACCESS_KEY.test(key)) {
    throw new FieldError(field, 'chave de acesso deve ter 44 posições');
  }
  const model = key.slice(20, 22);
  if (!MODELS.includes(model)) throw new FieldError(field, `modelo ${model} desconhecido na chave de acesso`);
  const dv = Number(key[43]);
  if (accessKeyCheckDigit(key.slice(0, 43)) !== dv) throw new FieldError(field, 'dígito verificador da chave de acesso inválido');
  return {
    key,
    cUF: key.slice(0, 2),
    yearMonth: key.slice(2, 6),
    cnpj: key.slice(6, 20),
    model: model as DocumentModel,
    serie: Number(key.slice(22, 25)),
    number: Number(key.slice(25, 34)),
    tpEmis: Number(key[34]),
    code: key.slice(35, 43),
    checkDigit: dv,
  };
}

export function isValidAccessKey(key: unknown): boolean {
  try {
    parseAccessKey(key);
    return true;
  } catch {
    return false;
  }
}

/** The key named by an `Id` attribute's value (`NFe<key>`, `MDFe<key>`); undefined when it names none. */
export function keyOfId(id: string | null | undefined, prefix: 'NFe' | 'MDFe'): string | undefined {
  return new RegExp(`^${prefix}(${ACCESS_KEY_PATTERN})$`).exec(id ?? '')?.[1];
}

/** The key in the `Id` among a start tag's attributes (` versao="4.00" Id="NFe…"`). */
export function keyInAttributes(attributes: string, prefix: 'NFe' | 'MDFe'): string | undefined {
  return new RegExp(`\\bId\\s*=\\s*["']${prefix}(${ACCESS_KEY_PATTERN})["']`).exec(attributes)?.[1];
}

/** The key a signed document names in its `inf<prefix>` start tag, read without parsing the XML. */
export function keyInSignedXml(xml: string, prefix: 'NFe' | 'MDFe'): string | undefined {
  const start = new RegExp(`<inf${prefix}(\\s[^>]*)>`).exec(xml);
  return start ? keyInAttributes(start[1]!, prefix) : undefined;
}

/** Keys quoted in free text (an xMotivo that names the duplicate's chNFe, for instance). */
export function keysInText(text: string): string[] {
  return text.match(new RegExp(`(?<![0-9A-Z])${ACCESS_KEY_PATTERN}(?![0-9A-Z])`, 'g')) ?? [];
}

/** NT 2019.001: not one repeated digit, not an ascending or descending run, not equal to nNF. */
export function isValidNumericCode(code: string, number: number): boolean {
  if (!/^[0-9]{8}$/.test(code)) return false;
  if (/^(\d)\1{7}$/.test(code)) return false;
  const ascending = '0123456789';
  const descending = '9876543210';
  if (ascending.includes(code) || descending.includes(code)) return false;
  return Number(code) !== number;
}

/** A random cNF obeying the NT 2019.001 rules for the given document number. */
export function generateNumericCode(number: number, random: (max: number) => number = randomInt): string {
  for (;;) {
    const code = String(random(100_000_000)).padStart(8, '0');
    if (isValidNumericCode(code, number)) return code;
  }
}

/** The key as the DANFE prints it: 11 groups of 4 separated by spaces. */
export function formatAccessKey(key: string): string {
  return key.replace(/(.{4})(?=.)/g, '$1 ');
}
