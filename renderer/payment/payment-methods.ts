// The payment methods the counter offers and the card data each needs (docs/fiscal.md, "Payments"),
// from the one catalog (base/common/payment-methods.ts): cards and PIX carry the card group
// (tpIntegra; with 1 = TEF, the acquirer's CNPJ and the authorization code are required, rejection
// 392), cash carries none.

import type { CardInput, PaymentInput } from '../../electron/api/terminal-api.ts';
import { carriesCardGroup, COUNTER_METHODS, paymentMethod } from '../../base/common/payment-methods.ts';
import { typedCnpj, unmaskTaxId } from '../../base/common/tax-ids.ts';

/** A tPag code. */
export type MethodId = string;

/** The buttons of the payment dialog, in code order. */
export const METHODS: readonly { tPag: MethodId; label: string }[] = COUNTER_METHODS.map((m) => ({ tPag: m.tPag, label: m.label }));

/** tBand codes (docs/fiscal.md, "Payments"). */
export const BRANDS: readonly { code: string; label: string }[] = [
  { code: '01', label: 'Visa' },
  { code: '02', label: 'Mastercard' },
  { code: '03', label: 'American Express' },
  { code: '04', label: 'Sorocred' },
  { code: '05', label: 'Diners' },
  { code: '06', label: 'Elo' },
  { code: '07', label: 'Hipercard' },
  { code: '08', label: 'Aura' },
  { code: '09', label: 'Cabal' },
  { code: '99', label: 'Outros' },
];

export type CardForm = { tpIntegra: '1' | '2'; cnpj: string; tBand: string; cAut: string };

export const emptyCard = (): CardForm => ({ tpIntegra: '2', cnpj: '', tBand: '', cAut: '' });

export const needsCard = (tPag: string): boolean => carriesCardGroup(tPag);

/** Whether the card fields ask for the brand (tBand): cards, not PIX. */
export const asksBrand = (tPag: string): boolean => paymentMethod(tPag)?.cardBrand === true;

/** The card group from the form, or the message naming the field to fix. */
export function cardFromForm(form: CardForm): { card: CardInput } | { error: string } {
  const cnpj = unmaskTaxId(form.cnpj);
  const cAut = form.cAut.trim();
  const typed = cnpj ? typedCnpj(cnpj) : undefined;
  if (typed && !typed.ok) return { error: `CNPJ da credenciadora: ${typed.problem}` };
  if (form.tpIntegra === '1' && !cnpj) return { error: 'CNPJ da credenciadora: obrigatório no pagamento integrado (TEF)' };
  if (form.tpIntegra === '1' && !cAut) return { error: 'Código de autorização: obrigatório no pagamento integrado (TEF)' };
  return {
    card: {
      tpIntegra: form.tpIntegra,
      ...(cnpj && { cnpj }),
      ...(form.tBand && { tBand: form.tBand }),
      ...(cAut && { cAut }),
    },
  };
}

export function paymentFrom(tPag: MethodId, amountCents: number, card: CardForm): { payment: PaymentInput } | { error: string } {
  if (!needsCard(tPag)) return { payment: { tPag, amountCents } };
  const c = cardFromForm(card);
  return 'error' in c ? c : { payment: { tPag, amountCents, card: c.card } };
}
