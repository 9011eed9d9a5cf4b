// The payments (`pag`) of the NFC-e (docs/fiscal.md, "Payments"): one detPag per payment, with its
// card group, and the change (vTroco). Checked into the caller's IssueCollector and written once
// the whole document is sound.
//
// Decisions:
// - The sum of the payments may exceed vNF only by the change. Without vTroco the difference is
//   written as vTroco; with it, it must match (869).
// - Card data is NOT required by the builder: a card payment without `card` is written without
//   the group, so the (sandbox) authority can reject it with 391. `paymentRuleViolation` tells
//   the caller in advance.

import { assertCnpj } from '../br/documents.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { asObject, DEC, decimal, isAbsent, optTString, pattern, tString, type Dec } from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { el, text } from '../xml.ts';
import type { NfceCard, NfceRequest } from './types.ts';

/** tPag codes after NT 2020.006 / NT 2023.004 (docs/fiscal.md, "Payments"). */
export const TPAG_CODES: readonly string[] = [
  '01',
  '02',
  '03',
  '04',
  '05',
  '10',
  '11',
  '12',
  '13',
  '14',
  '15',
  '16',
  '17',
  '18',
  '19',
  '20',
  '21',
  '22',
  '90',
  '91',
  '99',
];

/** Payments for which the body's top-level `card` applies and whose missing card is rejection 391. */
export const CARD_TPAG: readonly string[] = ['03', '04'];

export const REJECTION_TEXTS = {
  391: 'Não informados os dados do cartão de crédito / débito nas Formas de Pagamento da Nota Fiscal',
  392: 'Não informados os dados da operação de pagamento por cartão de crédito / débito',
} as const;

export type PaymentRuleViolation = { cStat: 391 | 392; xMotivo: string };

type CardOut = { tpIntegra: string; CNPJ?: string; tBand?: string; cAut?: string; CNPJReceb?: string; idTermPag?: string };
export type PagOut = { indPag?: string; tPag: string; xPag?: string; vPag: Dec; dPag?: string; card?: CardOut };

/** The card group that applies to a payment: its own, or the body's for a card tPag. */
function cardOf(input: NfceRequest, pag: { tPag?: unknown; card?: NfceCard }, i: number): { card?: NfceCard; path: string } {
  if (pag.card !== undefined && pag.card !== null) return { card: pag.card, path: `pag[${i}].card` };
  if (typeof pag.tPag === 'string' && CARD_TPAG.includes(pag.tPag) && input.card) return { card: input.card, path: 'card' };
  return { path: `pag[${i}].card` };
}

/**
 * Rules 391/392 of the payment group (docs/fiscal.md, "Payments"), for the (sandbox) authority and for
 * callers who want to warn before sending. The builder itself does not enforce them.
 */
export function paymentRuleViolation(input: NfceRequest): PaymentRuleViolation | undefined {
  if (!input || !Array.isArray(input.pag)) return undefined;
  for (const [i, pag] of input.pag.entries()) {
    if (!pag || typeof pag !== 'object') continue;
    const { card } = cardOf(input, pag, i);
    if (!card) {
      if (CARD_TPAG.includes(pag.tPag)) return { cStat: 391, xMotivo: REJECTION_TEXTS[391] };
      continue;
    }
    const tpIntegra = card.tpIntegra ?? '2';
    if (tpIntegra === '1' && (isAbsent(card.CNPJ) || isAbsent(card.cAut))) {
      return { cStat: 392, xMotivo: REJECTION_TEXTS[392] };
    }
  }
  return undefined;
}

/** The payments that are sound, in order. */
export function checkPayments(input: NfceRequest, issues: IssueCollector): PagOut[] {
  const pags: PagOut[] = [];
  if (!Array.isArray(input.pag) || input.pag.length === 0) issues.add('pag', 'informe ao menos uma forma de pagamento');
  else if (input.pag.length > 100) issues.add('pag', 'no máximo 100 formas de pagamento');
  for (const [i, raw] of (Array.isArray(input.pag) ? input.pag : []).entries()) {
    const pag = checkPayment(input, raw, i, issues);
    if (pag) pags.push(pag);
  }
  return pags;
}

function checkPayment(input: NfceRequest, raw: unknown, i: number, issues: IssueCollector): PagOut | undefined {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const base = `pag[${i}]`;
  const pag = asObject(raw, base, issues);
  if (!pag) return undefined;
  const tPag = cap(() => {
    const v = pattern(pag.tPag, `${base}.tPag`, /^[0-9]{2}$/, 'tPag deve ter 2 dígitos');
    if (!TPAG_CODES.includes(v)) throw new FieldError(`${base}.tPag`, `meio de pagamento ${v} inexistente`);
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
  return tPag && vPag ? { indPag, tPag, xPag, vPag, dPag, card: cardOut } : undefined;
}

function checkCard(card: NfceCard, path: string, issues: IssueCollector): CardOut | undefined {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const c = asObject(card, path, issues);
  if (!c) return undefined;
  const cardOut: CardOut = {
    tpIntegra: cap(() => pattern(c.tpIntegra ?? '2', `${path}.tpIntegra`, /^[12]$/, 'tpIntegra deve ser 1 (integrado) ou 2 (não integrado)')) ?? '2',
    CNPJ: cap(() => (isAbsent(c.CNPJ) ? undefined : assertCnpj(c.CNPJ, `${path}.CNPJ`))),
    tBand: cap(() => (isAbsent(c.tBand) ? undefined : pattern(c.tBand, `${path}.tBand`, /^[0-9]{2}$/, 'bandeira deve ter 2 dígitos'))),
    cAut: cap(() => optTString(c.cAut, `${path}.cAut`, 1, 128)),
    CNPJReceb: cap(() => (isAbsent(c.CNPJReceb) ? undefined : assertCnpj(c.CNPJReceb, `${path}.CNPJReceb`))),
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
