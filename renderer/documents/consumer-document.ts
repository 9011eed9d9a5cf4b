// The consumer's CPF or CNPJ, checked on the screen as it is typed so the cashier hears about a
// mistyped digit before the core (which checks again, with the same rule of
// base/common/tax-ids.ts: documento_invalido) or the authority does. The CNPJ may be
// alphanumeric (letters in upper case, the check digits numeric); the mask is optional.

import { formatTaxId, typedTaxId } from '../../base/common/tax-ids.ts';

export type DocumentCheck = { ok: true; kind: 'cpf' | 'cnpj'; digits: string; formatted: string } | { ok: false; message: string };

const FIELD = 'CPF/CNPJ do consumidor';

/** Punctuation and spaces are ignored; the message names the field and what is wrong. */
export function checkConsumerDocument(text: string): DocumentCheck {
  const typed = typedTaxId(text);
  if (!typed.ok) return { ok: false, message: `${FIELD}: ${typed.problem}` };
  return { ok: true, kind: typed.kind, digits: typed.value, formatted: formatTaxId(typed.value) };
}

/** A stored document (CPF or CNPJ) as the cashier reads it. */
export const formatDocument = formatTaxId;
