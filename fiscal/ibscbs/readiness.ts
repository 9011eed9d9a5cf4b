// Whether next year's IBS/CBS rates are known, said in words to the people who can fix it: the
// service's operator (`balcao ibscbs status`, GET /readyz) and a store's manager (the terminal's
// settings screen). From 1 December a year's turn is near enough to warn about; a day already
// covered only by the provisional row (or by nothing) is warned about as long as it lasts.
//
// The warning date is the product's, not the law's: it is not a row of fiscal/law/table.ts.

import { dayBR } from '../law/in-force.ts';
import { formatRate, RATE_NAMES, ratesAt, type RateName, type RateOverride } from './rates.ts';

/** From this day of December on, next year's rates are checked. */
export const WARN_FROM_MONTH_DAY = '12-01';

const LABELS: Readonly<Record<RateName, string>> = { pIBSUF: 'IBS da UF', pIBSMun: 'IBS do município', pCBS: 'CBS' };

export type RatesWarning = {
  /** The first day looked at (today, or 1 January of next year). */
  date: string;
  /** Rates nobody gives: a CRT 3 NFC-e of that day is refused until someone does. */
  missing: RateName[];
  /** Rates only the provisional row gives: the documents carry Balcão's provisional rate. */
  provisional: { name: RateName; rate: string }[];
  /** The warning in words (pt-BR). */
  message: string;
};

/** What the operator or the company can do, as the warning ends. */
export type WarningAudience = 'operador' | 'empresa';

const HOW_TO: Readonly<Record<WarningAudience, string>> = {
  operador:
    'Defina-as para todas as empresas com balcao ibscbs aliquotas --periodos "AAAA-01-01..AAAA-12-31 cbs=X.XX" (ou PUT /api/v1/operador/aliquotas-ibscbs); cada empresa ainda pode ter as suas.',
  empresa:
    'Peça ao operador do serviço de emissão que as defina para todas as empresas (balcao ibscbs aliquotas), ou informe-as nas alíquotas do IBS/CBS por período da empresa.',
};

const percent = (rate: string): string => `${rate.replace('.', ',')} %`;

/**
 * The warning for `today` (YYYY-MM-DD), if any: today's rates, and from 1 December next year's,
 * with the company's overrides and the operator's rates; undefined when every rate is stated.
 */
export function ratesWarning(
  today: string,
  overrides: readonly RateOverride[],
  operator: readonly RateOverride[],
  audience: WarningAudience,
): RatesWarning | undefined {
  const days = [today];
  if (today.slice(5) >= WARN_FROM_MONTH_DAY) days.push(`${Number(today.slice(0, 4)) + 1}-01-01`);
  for (const date of days) {
    const r = ratesAt(date, overrides, operator);
    const missing = RATE_NAMES.filter((n) => r[n] === undefined);
    const provisional = RATE_NAMES.filter((n) => r.origin[n] === 'provisoria').map((name) => ({ name, rate: formatRate(r[name]!) }));
    if (missing.length === 0 && provisional.length === 0) continue;
    const year = date.slice(0, 4);
    const future = date > today;
    const parts: string[] = [];
    if (provisional.length)
      parts.push(
        `${future ? `a partir de ${dayBR(date)} as NFC-e levarão` : 'as NFC-e estão levando'} a alíquota provisória do Balcão (${provisional
          .map((p) => `${LABELS[p.name]} ${percent(p.rate)}`)
          .join(', ')}): nem a publicação oficial, nem o operador do serviço, nem a empresa a${provisional.length > 1 ? 's' : ''} informaram`,
      );
    if (missing.length)
      parts.push(
        `não há alíquota para ${missing.map((n) => LABELS[n]).join(', ')} em ${year}: ${future ? `a partir de ${dayBR(date)}` : 'hoje'} as NFC-e do regime normal são recusadas até que seja informada`,
      );
    const message = `Alíquotas do IBS/CBS de ${year}: ${parts.join('; ')}. ${HOW_TO[audience]}`;
    return { date, missing, provisional, message };
  }
  return undefined;
}
