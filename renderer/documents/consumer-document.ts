// The consumer's CPF or CNPJ, checked on the screen as it is typed so the cashier hears about a
// mistyped digit before the core (which checks again, with the same check digits of
// base/common/tax-ids.ts: documento_invalido) or the authority does.
// Numeric documents only: the NFC-e 4.00 layout does not take the alphanumeric CNPJ yet, and the
// core refuses it for the consumer.

import { formatCnpj, formatCpf, isValidCnpj, isValidCpf } from '../../base/common/tax-ids.ts';

export type DocumentCheck = { ok: true; kind: 'cpf' | 'cnpj'; digits: string; formatted: string } | { ok: false; message: string };

const FIELD = 'CPF/CNPJ do consumidor';

/** Punctuation and spaces are ignored; the message names the field and what is wrong. */
export function checkConsumerDocument(text: string): DocumentCheck {
  const digits = text.replace(/[.\-/\s]/g, '');
  if (digits === '') return { ok: false, message: `${FIELD}: informe o documento` };
  if (!/^[0-9]+$/.test(digits)) return { ok: false, message: `${FIELD}: use somente números (pontos, traço e barra são opcionais)` };
  if (digits.length === 11) {
    return isValidCpf(digits)
      ? { ok: true, kind: 'cpf', digits, formatted: formatCpf(digits) }
      : { ok: false, message: `${FIELD}: CPF inválido (dígitos verificadores não conferem)` };
  }
  if (digits.length === 14) {
    return isValidCnpj(digits)
      ? { ok: true, kind: 'cnpj', digits, formatted: formatCnpj(digits) }
      : { ok: false, message: `${FIELD}: CNPJ inválido (dígitos verificadores não conferem)` };
  }
  return { ok: false, message: `${FIELD}: informe 11 dígitos (CPF) ou 14 (CNPJ); foram ${digits.length}` };
}

/** A stored document (digits) as the cashier reads it. */
export function formatDocument(digits: string): string {
  return digits.length === 11 ? formatCpf(digits) : digits.length === 14 ? formatCnpj(digits) : digits;
}
