// The consumer (`dest`) of the NFC-e (docs/fiscal.md, "NFC-e layout", "emit and dest"): optional,
// exactly one of CPF, CNPJ or a foreigner's document, never an IE (rejection 729), and required
// above the consumer-identification limit (NT 2026.002, rejection 750). Checked into the caller's
// IssueCollector; written once the whole document is sound.

import { assertCnpj, assertCpf } from '../br/documents.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { asObject, optTString } from '../layout-fields.ts';
import type { QrDest } from '../qrcode.ts';
import { el, text } from '../xml.ts';
import { consumerIdentificationRequired, identificationRequiredMessage } from './consumer-identification.ts';
import type { NfceRequest } from './types.ts';

/** Rejection 598: dest/xNome in homologação. */
export const HOMOLOGACAO_DEST_XNOME = 'NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL';

export type CheckedDest = { tag: 'CPF' | 'CNPJ' | 'idEstrangeiro'; doc: string; xNome?: string };

/** The consumer as checked; undefined when the request has none or it was reported. */
export function checkDest(input: NfceRequest, homolog: boolean, issues: IssueCollector): CheckedDest | undefined {
  if (input.dest === undefined || input.dest === null) return undefined;
  const d = asObject(input.dest, 'dest', issues);
  if (!d) return undefined;
  for (const k of ['IE', 'ie', 'indIEDest']) {
    if (k in d) issues.add(`dest.${k}`, 'NFC-e não admite IE do destinatário (rejeição 729); indIEDest é sempre 9');
  }
  const ids = (['cpf', 'cnpj', 'idEstrangeiro'] as const).filter((k) => d[k] !== undefined && d[k] !== null);
  if (ids.length !== 1) {
    issues.add('dest', ids.length ? 'informe apenas um entre cpf, cnpj e idEstrangeiro' : 'informe o cpf, o cnpj ou o idEstrangeiro do consumidor');
    return undefined;
  }
  const id = ids[0]!;
  const doc = issues.capture(() => {
    if (id === 'cpf') return assertCpf(d.cpf, 'dest.cpf');
    if (id === 'cnpj') return assertCnpj(d.cnpj, 'dest.cnpj', issues);
    if (typeof d.idEstrangeiro !== 'string' || !/^([!-\u00ff]{5,20})?$/.test(d.idEstrangeiro)) {
      throw new FieldError('dest.idEstrangeiro', 'documento do estrangeiro: de 5 a 20 caracteres sem espaços, ou vazio');
    }
    return d.idEstrangeiro;
  });
  const xNome = homolog ? HOMOLOGACAO_DEST_XNOME : issues.capture(() => optTString(d.xNome, 'dest.xNome', 2, 60));
  return doc === undefined ? undefined : { tag: id === 'cpf' ? 'CPF' : id === 'cnpj' ? 'CNPJ' : 'idEstrangeiro', doc, xNome };
}

/** Rejection 750: above the UF's limit the consumer must be identified by CPF or CNPJ. */
export function checkIdentificationLimit(dest: CheckedDest | undefined, uf: string | undefined, vNF: bigint, issues: IssueCollector): void {
  const identified = dest?.tag === 'CPF' || dest?.tag === 'CNPJ';
  if (uf && !identified && consumerIdentificationRequired(uf, vNF)) issues.add('dest', identificationRequiredMessage(uf));
}

export function destXml(dest: CheckedDest | undefined): string | undefined {
  return dest && el('dest', undefined, text(dest.tag, dest.doc), text('xNome', dest.xNome), text('indIEDest', '9'));
}

/** The consumer as the v3 offline QR Code identifies it. */
export function qrDestOf(dest: CheckedDest | undefined): QrDest | undefined {
  return dest && (dest.tag === 'CPF' ? { cpf: dest.doc } : dest.tag === 'CNPJ' ? { cnpj: dest.doc } : { idEstrangeiro: dest.doc });
}
