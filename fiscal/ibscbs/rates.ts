// IBS and CBS rates (tax reform, LC 214/2025) by date, chosen by the issue date (dhEmi). For each
// rate the most specific word wins: the company's own override for a period, then the rates the
// service's operator set for all its companies, then the published ones (rows of the law table,
// fiscal/law/table.ts), and last the provisional ones of the law table, Balcão's decision for a rate
// the law fixes but nobody has published (docs/fiscal.md, "When nobody sets the rate").
//
// Why as data: the rates change by calendar year during the transition (2026 is a test year at
// fixed rates; 2027–2028 other fixed IBS rates and the CBS at its "alíquota vigente", still to be
// published), and SEFAZ rejects a document whose rate differs from the one in force (1026, 1036,
// 1037). A new publication is a new row of the law table; a rate the law fixes but nobody has
// published yet (the CBS of 2027) is `null` there, and the operator (`balcao ibscbs aliquotas`) or
// the company states it; until one does, the provisional row keeps the store selling.
//
// Rates are percent, written with 2 to 4 decimals (TDec_0302_04RTC) and held as bigint at scale 4
// (0.10 % → 1000n). Dates are Brasília calendar dates (`YYYY-MM-DD`), the date part of dhEmi as
// written.

import { FieldError, type IssueCollector } from '../errors.ts';
import { firstDayOf, provisionalRates, publishedRates, taxesInPrice } from '../law/in-force.ts';
import { decimal, isAbsent, trimZeros } from '../layout-fields.ts';
import { formatDecimal } from '../money.ts';

/** A rate in percent at scale 4: 0.10 % is 1000n, 100 % is 1_000_000n. */
export type Rate = bigint;

export const RATE_SCALE = 4;
/** 100 % at scale 4. */
export const HUNDRED_PERCENT: Rate = 1_000_000n;

export type RateName = 'pIBSUF' | 'pIBSMun' | 'pCBS';
export const RATE_NAMES: readonly RateName[] = ['pIBSUF', 'pIBSMun', 'pCBS'];

/** The first day the reform groups exist for (fiscal/law/table.ts): before it an NFC-e never carries them. */
export const REFORM_START: string = firstDayOf('ibscbs-grupos');

/** Own rates for a period (a company's, or the operator's for all): any of the three, the rest from below. */
export type RateOverride = { from: string; to?: string; pIBSUF?: string; pIBSMun?: string; pCBS?: string };

export type RatesAt = {
  date: string;
  /** Undefined: neither published nor overridden for that day. */
  pIBSUF?: Rate;
  pIBSMun?: Rate;
  pCBS?: Rate;
  inPrice: boolean;
  /** Which rates came from the company. */
  overridden: RateName[];
  /** Where each rate present came from. */
  origin: Partial<Record<RateName, RateOrigin>>;
};

/** Who gave a rate: the company, the service's operator, the published table, the provisional row. */
export type RateOrigin = 'empresa' | 'operador' | 'publicada' | 'provisoria';

const DATE = /^(20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

function isCalendarDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/** A rate as the layout writes it (TDec_0302_04RTC, at most 100 %): units at scale 4. */
export function parseRate(value: unknown, field: string): Rate {
  return decimal(value, field, { scale: RATE_SCALE, intDigits: 3, minScale: 2, max: HUNDRED_PERCENT }).units;
}

/** "0.10", "8.80", "0.0575": 2 to 4 decimals, as TDec_0302_04RTC takes them. */
export function formatRate(rate: Rate): string {
  let text = rateTexts.get(rate);
  if (text === undefined) {
    text = trimZeros(formatDecimal(rate, RATE_SCALE), 2);
    if (rateTexts.size >= 1024) rateTexts.clear(); // a handful of rates in use; never unbounded
    rateTexts.set(rate, text);
  }
  return text;
}

// Every item of a document writes the same few rates.
const rateTexts = new Map<Rate, string>();

/**
 * Checks a company's overrides: dates real and from 2026 on, `to` (when given) not before `from`,
 * at least one rate each, periods not overlapping. Returns them normalised and sorted by `from`;
 * undefined when anything was reported (under `field[i].…`).
 */
export function checkRateOverrides(value: unknown, field: string, issues: IssueCollector): RateOverride[] | undefined {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) {
    issues.add(field, 'deve ser uma lista de períodos');
    return undefined;
  }
  const before = issues.issues.length;
  const out: RateOverride[] = [];
  value.forEach((raw, i) => {
    const base = `${field}[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      issues.add(base, 'deve ser um objeto { from, to?, pIBSUF?, pIBSMun?, pCBS? }');
      return;
    }
    const r = raw as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!['from', 'to', ...RATE_NAMES].includes(k)) issues.add(`${base}.${k}`, 'campo não previsto');
    const from = typeof r.from === 'string' && isCalendarDate(r.from) ? r.from : undefined;
    if (!from) issues.add(`${base}.from`, 'data inicial obrigatória, AAAA-MM-DD');
    else if (from < REFORM_START) issues.add(`${base}.from`, `o IBS e a CBS começam em ${REFORM_START}`);
    let to: string | undefined;
    if (!isAbsent(r.to)) {
      to = typeof r.to === 'string' && isCalendarDate(r.to) ? r.to : undefined;
      if (!to) issues.add(`${base}.to`, 'data final deve ser AAAA-MM-DD');
      else if (from && to < from) issues.add(`${base}.to`, 'data final anterior à inicial');
    }
    const override: RateOverride = { from: from ?? '', ...(to && { to }) };
    for (const name of RATE_NAMES) {
      if (isAbsent(r[name])) continue;
      const rate = issues.capture(() => parseRate(r[name], `${base}.${name}`));
      if (rate !== undefined) override[name] = formatRate(rate);
    }
    if (!RATE_NAMES.some((n) => !isAbsent(r[n]))) issues.add(base, 'informe ao menos uma alíquota (pIBSUF, pIBSMun ou pCBS)');
    out.push(override);
  });
  if (issues.issues.length !== before) return undefined;
  out.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  for (let i = 1; i < out.length; i++) {
    const prev = out[i - 1]!;
    if (prev.to === undefined || prev.to >= out[i]!.from) {
      issues.add(field, `períodos sobrepostos: o que começa em ${prev.from} e o que começa em ${out[i]!.from}`);
      return undefined;
    }
  }
  return out;
}

const coveringDay = (periods: readonly RateOverride[], date: string): RateOverride | undefined =>
  periods.find((o) => o.from <= date && (o.to === undefined || date <= o.to));

/**
 * The rates in force on `date` (`YYYY-MM-DD`): for each, the company's override for a period
 * covering the day, else the operator's, else the published one, else the provisional one.
 * `overrides` and `operator` must have passed checkRateOverrides.
 */
export function ratesAt(date: string, overrides: readonly RateOverride[] = [], operator: readonly RateOverride[] = []): RatesAt {
  if (!isCalendarDate(date)) throw new FieldError('dhEmi', `data inválida: ${date}`);
  const sources: [RateOrigin, Partial<Record<RateName, string | null>> | undefined][] = [
    ['empresa', coveringDay(overrides, date)],
    ['operador', coveringDay(operator, date)],
    ['publicada', publishedRates(date)],
    ['provisoria', provisionalRates(date)],
  ];
  const out: RatesAt = { date, inPrice: taxesInPrice(date), overridden: [], origin: {} };
  for (const name of RATE_NAMES) {
    for (const [origin, rates] of sources) {
      const value = rates?.[name];
      if (value === undefined || value === null) continue;
      out[name] = parseRate(value, name);
      out.origin[name] = origin;
      if (origin === 'empresa') out.overridden.push(name);
      break;
    }
  }
  return out;
}
