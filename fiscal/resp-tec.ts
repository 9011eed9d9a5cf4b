// The technical responsible (`infRespTec`, NT 2018.005): who develops and keeps the software that
// issues the document, and, where the UF has registered one, its security code (CSRT) proved by
// `hashCSRT`. It belongs to whoever runs the Balcão deployment, not to the store: the service keeps
// one for all its companies (service/resp-tec.ts) and hands it to the builders with the emitter.
//
// The NF-e/NFC-e (`TInfRespTec`) and the MDF-e (`TRespTec`) write the same group with different
// widths: phone 6–14 digits and `idCSRT` 2 digits in the NF-e, phone 7–12 and `idCSRT` 3 digits in
// the MDF-e. One setting fits both: a phone of 7 to 12 digits, a CSRT id from 1 to 99, written
// zero-padded to each layout's width.

import { createHash } from 'node:crypto';
import { assertCnpj } from './br/documents.ts';
import { FieldError, IssueCollector } from './errors.ts';
import { pattern, tString } from './layout-fields.ts';
import { el, text } from './xml.ts';

export type TechnicalResponsible = {
  /** CNPJ of the technical responsible (numeric or alphanumeric). */
  cnpj: string;
  /** xContato: the person to contact. */
  contact: string;
  email: string;
  /** Digits only, 7 to 12 (fits the NF-e's 6–14 and the MDF-e's 7–12). */
  phone: string;
  /** The CSRT the UF issued to the technical responsible, and its id; absent where none is registered. */
  csrt?: { id: number; token: string };
};

/** `hashCSRT`: base64(SHA-1(CSRT + access key)), 28 characters (the layout's 20 bytes). */
export function hashCsrt(token: string, key: string): string {
  return createHash('sha1')
    .update(token + key, 'utf8')
    .digest('base64');
}

const EMAIL = /^[^@\s]+@[^.@\s]+\.[^@\s]+$/;
const CSRT_TOKEN = /^[\x21-\x7e]{1,64}$/;

/** Checks a technical responsible as configured (fields named under `prefix`); throws FieldError with every issue. */
export function checkTechnicalResponsible(value: unknown, prefix = 'responsavelTecnico'): TechnicalResponsible {
  const issues = new IssueCollector();
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const cnpj = cap(() => assertCnpj(v.cnpj, `${prefix}.cnpj`));
  const contact = cap(() => tString(v.contact, `${prefix}.contato`, 2, 60));
  const email = cap(() => pattern(v.email, `${prefix}.email`, EMAIL, 'e-mail inválido (nome@dominio.tld, de 6 a 60 caracteres)'));
  if (email !== undefined && (email.length < 6 || email.length > 60)) issues.add(`${prefix}.email`, 'e-mail deve ter de 6 a 60 caracteres');
  const phone = cap(() => pattern(v.phone, `${prefix}.telefone`, /^[0-9]{7,12}$/, 'telefone: de 7 a 12 dígitos, só números (com DDD)'));
  let csrt: TechnicalResponsible['csrt'];
  if (v.csrt !== undefined && v.csrt !== null) {
    const c = v.csrt as Record<string, unknown>;
    const id = typeof c.id === 'number' && Number.isInteger(c.id) && c.id >= 1 && c.id <= 99 ? c.id : undefined;
    if (id === undefined) issues.add(`${prefix}.csrtId`, 'identificador do CSRT: um número de 1 a 99, como a SEFAZ o informou');
    const token = typeof c.token === 'string' && CSRT_TOKEN.test(c.token) ? c.token : undefined;
    if (token === undefined) issues.add(`${prefix}.csrt`, 'CSRT: de 1 a 64 caracteres, sem espaços, como a SEFAZ o informou');
    if (id !== undefined && token !== undefined) csrt = { id, token };
  }
  issues.throwIfAny();
  return { cnpj: cnpj!, contact: contact!, email: email!, phone: phone!, ...(csrt && { csrt }) };
}

/** `<infRespTec>` of the document whose access key is `key`, in the layout's widths. */
export function infRespTecXml(rt: TechnicalResponsible, key: string, layout: 'nfe' | 'mdfe'): string {
  if (!/^[0-9]{7,12}$/.test(rt.phone)) throw new FieldError('responsavelTecnico.telefone', 'telefone: de 7 a 12 dígitos');
  return el(
    'infRespTec',
    undefined,
    text('CNPJ', rt.cnpj),
    text('xContato', rt.contact),
    text('email', rt.email),
    text('fone', rt.phone),
    rt.csrt && text('idCSRT', String(rt.csrt.id).padStart(layout === 'nfe' ? 2 : 3, '0')),
    rt.csrt && text('hashCSRT', hashCsrt(rt.csrt.token, key)),
  );
}
