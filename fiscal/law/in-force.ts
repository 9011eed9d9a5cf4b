// Which rows of the law table (fiscal/law/table.ts) hold for a document: the questions the builders,
// the terminal and the sandbox authority ask, each answered from the table alone.
//
// The date is the calendar day of the document's dhEmi as written (`2026-05-04T09:00:00-03:00` →
// `2026-05-04`): the day the emitter states, the same one the access key's AAMM and the rates are
// taken from. A row restricted to one environment holds only when the question names it.

import { paymentMethod } from '../../base/common/payment-methods.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { LAW_TABLE, type Environment, type LawRow, type LawRule, type PublishedRates, type RateRow } from './table.ts';

export type LawAt = { date: string; environment?: Environment };

const DAY = /^(20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

/** The law's day of a dhEmi (or of a day already): `YYYY-MM-DD`, or a FieldError on `field`. */
export function lawDate(dhEmi: string, field = 'dhEmi'): string {
  const day = typeof dhEmi === 'string' ? dhEmi.slice(0, 10) : '';
  if (!DAY.test(day)) throw new FieldError(field, `data inválida: ${String(dhEmi)}`);
  return day;
}

/** The environment a document's tpAmb names (1 produção, 2 homologação); undefined for anything else. */
export const environmentOfTpAmb = (tpAmb: string | number | undefined): Environment | undefined =>
  String(tpAmb) === '1' ? 'producao' : String(tpAmb) === '2' ? 'homologacao' : undefined;

const holds = (row: LawRow, at: LawAt): boolean =>
  (row.from === undefined || row.from <= at.date) &&
  (row.until === undefined || at.date <= row.until) &&
  (row.environment === undefined || row.environment === at.environment);

/** The rows of a rule (for a payment rule, of one tPag). */
export function rowsOf(rule: LawRule, tPag?: string): LawRow[] {
  return LAW_TABLE.filter((r) => r.rule === rule && (tPag === undefined || ('tPag' in r && r.tPag === tPag)));
}

/** Whether a row of `rule` (of `tPag`, for a payment rule) holds at `at`. */
export function inForce(rule: LawRule, at: LawAt, tPag?: string): boolean {
  return rowsOf(rule, tPag).some((r) => holds(r, at));
}

/** The first day of a rule that starts on a date (its earliest row). */
export function firstDayOf(rule: LawRule): string {
  const days = rowsOf(rule).map((r) => r.from);
  if (days.length === 0 || days.some((d) => d === undefined)) throw new Error(`regra ${rule} sem data de início na tabela`);
  return (days as string[]).sort()[0]!;
}

// ---------------------------------------------------------------------------------------------
// The questions asked

/** Whether a document of `environment` dated `date` may carry an alphanumeric CNPJ (NT 2026.004). */
export function alphanumericCnpjAccepted(date: string, environment: Environment): boolean {
  return inForce('cnpj-alfanumerico', { date, environment });
}

const ENVIRONMENT_NAME: Record<Environment, string> = { homologacao: 'homologação', producao: 'produção' };

/**
 * Refuses, on its own field, each CNPJ with letters of a document (those its checks recorded in
 * `issues.cnpjs`) when the document's day comes before the alphanumeric CNPJ's first day in its
 * environment. Without a sound dhEmi or environment there is nothing to compare (their own checks
 * report them).
 */
export function refuseCnpjsNotYetInForce(issues: IssueCollector, dhEmi: string | undefined, environment: Environment | undefined): void {
  if (dhEmi === undefined || environment === undefined) return;
  const date = lawDate(dhEmi);
  if (alphanumericCnpjAccepted(date, environment)) return;
  const row = rowsOf('cnpj-alfanumerico').find((r) => r.environment === environment && r.from !== undefined && r.from > date);
  const where = `em ${ENVIRONMENT_NAME[environment]}`;
  const message = row
    ? `CNPJ alfanumérico só é aceito ${where} a partir de ${dayBR(row.from!)}, não em ${dayBR(date)} — ${row.source}`
    : `CNPJ alfanumérico não é aceito ${where} em ${dayBR(date)}`;
  for (const { field, value } of issues.cnpjs) {
    if (/[A-Z]/.test(value)) issues.add(field, message);
  }
}

/**
 * Whether the NF-e/NFC-e of an emitter in `uf`, of `environment`, dated `date`, must carry the
 * technical responsible (ZD01-10: the authority rejects it 972 without).
 */
export function technicalResponsibleRequired(uf: string, date: string, environment: Environment): boolean {
  return rowsOf('resp-tec-obrigatorio').some((r) => 'ufs' in r && r.ufs.includes(uf) && holds(r, { date, environment }));
}

/** Whether the IBS/CBS groups exist on `date` (before it no document carries them). */
export const reformGroupsExist = (date: string): boolean => inForce('ibscbs-grupos', { date });

/** Whether the authority rejects a CRT 3 item without IBSCBS with 1115 (else: 120 with the alert). */
export const rejection1115Applies = (date: string, environment: Environment): boolean => inForce('ibscbs-rejeicao-1115', { date, environment });

/** Whether vProd contains the IBS and CBS on `date`. */
export const taxesInPrice = (date: string): boolean => inForce('ibscbs-no-preco', { date });

type DatedRates = PublishedRates & Pick<RateRow, 'from' | 'until' | 'source'>;

function ratesOfRule(rule: RateRow['rule'], date: string): DatedRates | undefined {
  const row = rowsOf(rule).find((r): r is RateRow => r.rule === rule && holds(r, { date }));
  return row && { ...row.rates, from: row.from, until: row.until, source: row.source };
}

/** The published rates of `date`'s period, if a period covers it. */
export const publishedRates = (date: string): DatedRates | undefined => ratesOfRule('ibscbs-aliquotas', date);

/**
 * The provisional rates of `date`'s period (Balcão's decision): what a document carries for a rate
 * the law fixes but nobody has published, stated or set.
 */
export const provisionalRates = (date: string): DatedRates | undefined => ratesOfRule('ibscbs-aliquotas-provisorias', date);

/**
 * Whether a payment code is in force on `date`: it exists (base/common/payment-methods.ts) and,
 * when it has dates, they cover the day.
 */
export function paymentMethodInForce(tPag: string, date: string): boolean {
  if (!paymentMethod(tPag)) return false;
  const rows = rowsOf('tpag', tPag);
  return rows.length === 0 || rows.some((r) => holds(r, { date }));
}

/**
 * Whether a payment by `tPag` on `date` needs the card group (YA04-10, rejection 391): the method
 * names it, since the day a row of the table says the rule began to cover it, if any.
 */
export function cardGroupRequired(tPag: string, date: string): boolean {
  const card = paymentMethod(tPag)?.card;
  if (card !== 'required' && card !== 'required-uf') return false;
  const rows = rowsOf('tpag-grupo-cartao', tPag);
  return rows.length === 0 || rows.some((r) => holds(r, { date }));
}

/** "04/05/2026" from "2026-05-04", for messages. */
export const dayBR = (date: string): string => `${date.slice(8, 10)}/${date.slice(5, 7)}/${date.slice(0, 4)}`;

/** Why a payment code is not in force on `date`, in the words of a field error. */
export function paymentMethodOutOfForce(tPag: string, date: string): string {
  const method = paymentMethod(tPag);
  if (!method) return `meio de pagamento ${tPag} inexistente`;
  const when = method.from && date < method.from ? `só vale a partir de ${dayBR(method.from)}` : method.until ? `valeu até ${dayBR(method.until)}` : 'não vale';
  return `meio de pagamento ${tPag} (${method.label}) ${when}, não em ${dayBR(date)} (${method.source})`;
}
