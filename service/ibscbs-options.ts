// A company's IBS/CBS settings as `balcao company create|update` takes them, in text:
//   --ibscbs sim|nao                    CRT 1, 2, 4: write the reform groups (default nao)
//   --ibscbs-cst 000 --ibscbs-cclasstrib 000001
//                                       classification of items that state none
//   --ibscbs-aliquotas "2027-01-01..2027-12-31 cbs=8.80; 2028-01-01.. cbs=9.00 ibs-uf=0.05"
//                                       the company's rates for periods ("" removes them)
// Each problem is reported on the option that carries it.

import { FieldError, IssueCollector } from '../fiscal/errors.ts';
import { checkClassification } from '../fiscal/ibscbs/classification.ts';
import { checkRateOverrides, type RateName, type RateOverride } from '../fiscal/ibscbs/rates.ts';
import type { IbsCbsSettings } from '../fiscal/ibscbs/settings.ts';
import { DEFAULT_IBSCBS_SETTINGS } from '../fiscal/ibscbs/settings.ts';

export type IbsCbsOptions = { ibscbs?: string; ibscbsCst?: string; ibscbsCclasstrib?: string; ibscbsAliquotas?: string };

const KEYS: Readonly<Record<string, RateName>> = { 'ibs-uf': 'pIBSUF', 'ibs-mun': 'pIBSMun', cbs: 'pCBS' };
const NAMES = Object.fromEntries(Object.entries(KEYS).map(([k, v]) => [v, k])) as Record<RateName, string>;

const SYNTAX =
  'cada período como INICIO..FIM chave=valor, separados por ";" (ex.: "2027-01-01..2027-12-31 cbs=8.80"; FIM pode ficar em branco; chaves: ibs-uf, ibs-mun, cbs)';

/** "2027-01-01..2027-12-31 cbs=8.80; 2028-01-01.. cbs=9" → the overrides, unchecked. */
export function parseRatePeriods(text: string, field = 'ibscbs-aliquotas'): Record<string, string>[] {
  const periods = text
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return periods.map((period, i) => {
    const [dates, ...pairs] = period.split(/\s+/);
    const m = /^([0-9-]+)\.\.([0-9-]*)$/.exec(dates ?? '');
    if (!m) throw new FieldError(field, `período ${i + 1} ("${period}"): ${SYNTAX}`);
    const out: Record<string, string> = { from: m[1]! };
    if (m[2]) out.to = m[2];
    for (const pair of pairs) {
      const [key, value] = pair.split('=');
      const name = key === undefined ? undefined : KEYS[key];
      if (!name || value === undefined || value === '')
        throw new FieldError(field, `período ${i + 1}: "${pair}" não é chave=valor com chave ibs-uf, ibs-mun ou cbs`);
      out[name] = value.replace(',', '.');
    }
    return out;
  });
}

/** The overrides as the option writes them (for the settings view and for updates). */
export function formatRatePeriods(rates: readonly RateOverride[]): string {
  return rates
    .map((r) =>
      [`${r.from}..${r.to ?? ''}`, ...(['pIBSUF', 'pIBSMun', 'pCBS'] as const).flatMap((n) => (r[n] === undefined ? [] : [`${NAMES[n]}=${r[n]}`]))].join(' '),
    )
    .join('; ');
}

/** The options as the company has them, for an update to start from. */
export function optionsOf(s: IbsCbsSettings): Required<IbsCbsOptions> {
  return {
    ibscbs: s.optIn ? 'sim' : 'nao',
    ibscbsCst: s.defaultClassification.CST,
    ibscbsCclasstrib: s.defaultClassification.cClassTrib,
    ibscbsAliquotas: formatRatePeriods(s.rates),
  };
}

/** Checks the options; issues go to `issues` under the option names. */
export function checkIbsCbsOptions(o: IbsCbsOptions, issues: IssueCollector): IbsCbsSettings | undefined {
  const before = issues.issues.length;
  let optIn = DEFAULT_IBSCBS_SETTINGS.optIn;
  if (o.ibscbs !== undefined) {
    if (o.ibscbs === 'sim' || o.ibscbs === 'nao') optIn = o.ibscbs === 'sim';
    else issues.add('ibscbs', 'deve ser sim ou nao (empresas do Simples Nacional que informam IBS/CBS na NFC-e)');
  }

  let defaultClassification = DEFAULT_IBSCBS_SETTINGS.defaultClassification;
  if ((o.ibscbsCst === undefined) !== (o.ibscbsCclasstrib === undefined)) {
    issues.add(
      o.ibscbsCst === undefined ? 'ibscbs-cst' : 'ibscbs-cclasstrib',
      `obrigatório junto com --${o.ibscbsCst === undefined ? 'ibscbs-cclasstrib' : 'ibscbs-cst'}`,
    );
  } else if (o.ibscbsCst !== undefined) {
    const local = new IssueCollector();
    const checked = checkClassification({ CST: o.ibscbsCst, cClassTrib: o.ibscbsCclasstrib }, 'c', local);
    for (const i of local.issues) issues.add(i.field === 'c.CST' ? 'ibscbs-cst' : 'ibscbs-cclasstrib', i.message);
    if (checked) defaultClassification = { CST: checked.CST, cClassTrib: checked.cClassTrib };
  }

  const rates = o.ibscbsAliquotas === undefined ? [] : (checkRatePeriodsText(o.ibscbsAliquotas, 'ibscbs-aliquotas', issues) ?? []);
  return issues.issues.length === before ? { optIn, defaultClassification, rates } : undefined;
}

/**
 * Periods as the options write them ("2027-01-01..2027-12-31 cbs=8.80; ..."), parsed and checked;
 * issues go to `issues` under `field`, naming the period. Undefined when anything was reported.
 */
export function checkRatePeriodsText(text: string, field: string, issues: IssueCollector): RateOverride[] | undefined {
  const parsed = issues.capture(() => parseRatePeriods(text, field));
  if (!parsed) return undefined;
  const local = new IssueCollector();
  const checked = checkRateOverrides(parsed, 'p', local);
  for (const i of local.issues) {
    const n = /^p\[([0-9]+)\]/.exec(i.field)?.[1];
    issues.add(field, n === undefined ? i.message : `período ${Number(n) + 1}: ${i.message}`);
  }
  return checked;
}
