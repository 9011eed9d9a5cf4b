// The payments (`pag`) of the NFC-e (docs/fiscal.md, "Payments"): one detPag per payment, with its
// card group, and the change (vTroco). Checked into the caller's IssueCollector and written once
// the whole document is sound. What each payment method is (its code, its dates, its card rule)
// is base/common/payment-methods.ts, read through the law table by the document's date
// (fiscal/law/in-force.ts).
//
// Decisions:
// - The sum of the payments may exceed vNF only by the change. Without vTroco the difference is
//   written as vTroco; with it, it must match (869).
// - A code not in force on the document's date (23 and 24 before 2026-05-04, say) is refused
//   naming `pag[i].tPag`.
// - A credit or debit card payment (03, 04) without `card` is written without the group, so the
//   authority rejects it with 391, the rule every UF applies (and the terminal's correction of a
//   rejected receipt meets it). A method whose card rule is at the UF's discretion (PIX dinâmico,
//   17) is refused without it, naming `pag[i].card`: a Balcão NFC-e then passes in every UF.
//   `paymentRuleViolation` tells a caller in advance what the authority will say.

import { paymentMethod } from '../../base/common/payment-methods.ts';
import { assertCnpj } from '../br/documents.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { cardGroupRequired, lawDate, paymentMethodInForce, paymentMethodOutOfForce } from '../law/in-force.ts';
import { asObject, DEC, decimal, isAbsent, optTString, pattern, tString, type Dec } from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { el, text } from '../xml.ts';
import type { NfceCard, NfceRequest } from './types.ts';

export const REJECTION_TEXTS = {
  391: 'Não informados os dados do cartão de crédito / débito nas Formas de Pagamento da Nota Fiscal',
  392: 'Não informados os dados da operação de pagamento por cartão de crédito / débito',
} as const;

export type PaymentRuleViolation = { cStat: 391 | 392; xMotivo: string };

type CardOut = { tpIntegra: string; CNPJ?: string; tBand?: string; cAut?: string; CNPJReceb?: string; idTermPag?: string };
export type PagOut = { indPag?: string; tPag: string; xPag?: string; vPag: Dec; dPag?: string; card?: CardOut };

/** Whether the body's top-level `card` applies to a payment of this code: the methods rule 391 names. */
const takesBodyCard = (tPag: unknown): boolean => {
  const card = typeof tPag === 'string' ? paymentMethod(tPag)?.card : undefined;
  return card === 'required' || card === 'required-uf';
};

/** The card group that applies to a payment: its own, or the body's for a method rule 391 names. */
function cardOf(input: NfceRequest, pag: { tPag?: unknown; card?: NfceCard }, i: number): { card?: NfceCard; path: string } {
  if (pag.card !== undefined && pag.card !== null) return { card: pag.card, path: `pag[${i}].card` };
  if (takesBodyCard(pag.tPag) && input.card) return { card: input.card, path: 'card' };
  return { path: `pag[${i}].card` };
}

/**
 * Rules 391/392 of the payment group (docs/fiscal.md, "Payments") on the document's day (`date`,
 * YYYY-MM-DD), for callers who want to warn before sending.
 */
export function paymentRuleViolation(input: NfceRequest, date: string): PaymentRuleViolation | undefined {
  if (!input || !Array.isArray(input.pag)) return undefined;
  for (const [i, pag] of input.pag.entries()) {
    if (!pag || typeof pag !== 'object') continue;
    const { card } = cardOf(input, pag, i);
    if (!card) {
      if (typeof pag.tPag === 'string' && cardGroupRequired(pag.tPag, date)) return { cStat: 391, xMotivo: REJECTION_TEXTS[391] };
      continue;
    }
    const tpIntegra = card.tpIntegra ?? '2';
    if (tpIntegra === '1' && (isAbsent(card.CNPJ) || isAbsent(card.cAut))) {
      return { cStat: 392, xMotivo: REJECTION_TEXTS[392] };
    }
  }
  return undefined;
}

/**
 * The payments that are sound, in order. `dhEmi`: the document's, as written (undefined when it
 * was reported: the codes are then checked for existence only).
 */
export function checkPayments(input: NfceRequest, dhEmi: string | undefined, issues: IssueCollector): PagOut[] {
  const date = dhEmi === undefined ? undefined : lawDate(dhEmi);
  const pags: PagOut[] = [];
  if (!Array.isArray(input.pag) || input.pag.length === 0) issues.add('pag', 'informe ao menos uma forma de pagamento');
  else if (input.pag.length > 100) issues.add('pag', 'no máximo 100 formas de pagamento');
  for (const [i, raw] of (Array.isArray(input.pag) ? input.pag : []).entries()) {
    const pag = checkPayment(input, raw, i, date, issues);
    if (pag) pags.push(pag);
  }
  return pags;
}

function checkPayment(input: NfceRequest, raw: unknown, i: number, date: string | undefined, issues: IssueCollector): PagOut | undefined {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const base = `pag[${i}]`;
  const pag = asObject(raw, base, issues);
  if (!pag) return undefined;
  const tPag = cap(() => {
    const v = pattern(pag.tPag, `${base}.tPag`, /^[0-9]{2}$/, 'tPag deve ter 2 dígitos');
    if (!paymentMethod(v)) throw new FieldError(`${base}.tPag`, `meio de pagamento ${v} inexistente`);
    if (date !== undefined && !paymentMethodInForce(v, date)) throw new FieldError(`${base}.tPag`, paymentMethodOutOfForce(v, date));
    return v;
  });
  const vPag = cap(() => decimal(pag.vPag, `${base}.vPag`, DEC.v));
  const xPag = cap(() => (tPag === '99' ? tString(pag.xPag, `${base}.xPag`, 2, 60) : optTString(pag.xPag, `${base}.xPag`, 2, 60)));
  const indPag = cap(() => (isAbsent(pag.indPag) ? undefined : pattern(pag.indPag, `${base}.indPag`, /^[01]$/, 'indPag deve ser 0 (à vista) ou 1 (a prazo)')));
  const dPag = cap(() =>
    isAbsent(pag.dPag) ? undefined : pattern(pag.dPag, `${base}.dPag`, /^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/, 'data deve ser AAAA-MM-DD'),
  );
  const { card, path } = cardOf(input, { tPag: pag.tPag, card: pag.card as NfceCard | undefined }, i);
  const cardOut = card === undefined ? undefined : checkCard(card, path, issues);
  const method = tPag === undefined ? undefined : paymentMethod(tPag);
  if (card === undefined && method?.card === 'required-uf' && date !== undefined && cardGroupRequired(method.tPag, date)) {
    issues.add(path, `pagamento por ${method.label} (tPag ${method.tPag}) exige o grupo card, ao menos com tpIntegra (regra YA04-10, rejeição 391)`);
  }
  return tPag && vPag ? { indPag, tPag, xPag, vPag, dPag, card: cardOut } : undefined;
}

function checkCard(card: NfceCard, path: string, issues: IssueCollector): CardOut | undefined {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const c = asObject(card, path, issues);
  if (!c) return undefined;
  const cardOut: CardOut = {
    tpIntegra: cap(() => pattern(c.tpIntegra ?? '2', `${path}.tpIntegra`, /^[12]$/, 'tpIntegra deve ser 1 (integrado) ou 2 (não integrado)')) ?? '2',
    CNPJ: cap(() => (isAbsent(c.CNPJ) ? undefined : assertCnpj(c.CNPJ, `${path}.CNPJ`, issues))),
    tBand: cap(() => (isAbsent(c.tBand) ? undefined : pattern(c.tBand, `${path}.tBand`, /^[0-9]{2}$/, 'bandeira deve ter 2 dígitos'))),
    cAut: cap(() => optTString(c.cAut, `${path}.cAut`, 1, 128)),
    CNPJReceb: cap(() => (isAbsent(c.CNPJReceb) ? undefined : assertCnpj(c.CNPJReceb, `${path}.CNPJReceb`, issues))),
    idTermPag: cap(() => optTString(c.idTermPag, `${path}.idTermPag`, 1, 40)),
  };
  return cardOut;
}

/**
 * The change (vTroco) of sound payments against vNF (see the header); undefined when there is
 * none or it was reported. `itemsOk`: vNF is only meaningful when every item is sound.
 */
export function checkChange(input: NfceRequest, pags: readonly PagOut[], vNF: bigint, itemsOk: boolean, issues: IssueCollector): bigint | undefined {
  const givenTroco = isAbsent(input.vTroco) ? undefined : issues.capture(() => decimal(input.vTroco, 'vTroco', DEC.v).units);
  if (!itemsOk || !Array.isArray(input.pag) || pags.length !== input.pag.length) return undefined;
  const paid = pags.reduce((a, p) => a + p.vPag.units, 0n);
  if (paid < vNF) {
    issues.add('pag', `soma dos pagamentos (${fromCents(paid)}) menor que o total da nota (${fromCents(vNF)})`);
  } else if (givenTroco !== undefined) {
    if (givenTroco !== paid - vNF) issues.add('vTroco', `troco deve ser pagamentos − total = ${fromCents(paid - vNF)} (rejeição 869)`);
    else return givenTroco;
  } else if (paid > vNF) {
    return paid - vNF;
  }
  return undefined;
}

export function pagXml(pags: readonly PagOut[], vTroco: bigint | undefined): string {
  return el(
    'pag',
    undefined,
    pags.map((p) =>
      el(
        'detPag',
        undefined,
        text('indPag', p.indPag),
        text('tPag', p.tPag),
        text('xPag', p.xPag),
        text('vPag', p.vPag.text),
        text('dPag', p.dPag),
        p.card &&
          el(
            'card',
            undefined,
            text('tpIntegra', p.card.tpIntegra),
            text('CNPJ', p.card.CNPJ),
            text('tBand', p.card.tBand),
            text('cAut', p.card.cAut),
            text('CNPJReceb', p.card.CNPJReceb),
            text('idTermPag', p.card.idTermPag),
          ),
      ),
    ),
    vTroco !== undefined && text('vTroco', fromCents(vTroco)),
  );
}
