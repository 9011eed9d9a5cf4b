// The consumer's CPF or CNPJ, checked on the screen as it is typed so the cashier hears about a
// mistyped digit before the core (which checks again: documento_invalido) or the authority does.
// Numeric documents only: the NFC-e 4.00 layout does not take the alphanumeric CNPJ yet, and the
// core refuses it for the consumer.

export type DocumentCheck =
  | { ok: true; kind: 'cpf' | 'cnpj'; digits: string; formatted: string }
  | { ok: false; message: string };

const FIELD = 'CPF/CNPJ do consumidor';

/** Check digit of the mod-11 scheme shared by CPF and CNPJ, for the given weights. */
function mod11(digits: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += Number(digits[i]) * weights[i]!;
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

const CPF_W1 = [10, 9, 8, 7, 6, 5, 4, 3, 2];
const CPF_W2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

export function isValidCpf(digits: string): boolean {
  if (!/^[0-9]{11}$/.test(digits) || /^(.)\1{10}$/.test(digits)) return false;
  return mod11(digits, CPF_W1) === Number(digits[9]) && mod11(digits, CPF_W2) === Number(digits[10]);
}

export function isValidCnpj(digits: string): boolean {
  if (!/^[0-9]{14}$/.test(digits) || /^(.)\1{13}$/.test(digits)) return false;
  return mod11(digits, CNPJ_W1) === Number(digits[12]) && mod11(digits, CNPJ_W2) === Number(digits[13]);
}

export function formatCpf(d: string): string {
  return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`;
}

export function formatCnpj(d: string): string {
  return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
}

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
