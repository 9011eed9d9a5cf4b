// A company's IBS/CBS settings: whether a Simples Nacional company (CRT 1, 2, 4) writes the
// reform groups, the classification of items that state none, and its own rates for periods.
// The service keeps them with the company, the terminal with its company profile; both check
// them here, and the NFC-e builder reads them from the emitter.
//
// Who writes the groups: CRT 3 (regime normal) always, from the day the groups exist (2026-01-01,
// fiscal/law/table.ts), because the law has required it since then and SEFAZ homologação rejects
// their absence (1115) since 2026-07-01.
// CRT 1, 2 and 4 only when the company opts in: they are exempt in 2026 (LC 214/2025, art. 348)
// and the technical note with their rules for 2027 is not published; off by default.

import { IssueCollector } from '../errors.ts';
import { reformGroupsExist } from '../law/in-force.ts';
import { isAbsent } from '../layout-fields.ts';
import { checkClassification, DEFAULT_CLASSIFICATION, type Classification } from './classification.ts';
import { checkRateOverrides, type RateOverride } from './rates.ts';

export type IbsCbsSettings = {
  /** CRT 1, 2 and 4: write the reform groups. Ignored for CRT 3, which always does. */
  optIn: boolean;
  /** The classification of items that state none (CST 000 / cClassTrib 000001 by default). */
  defaultClassification: Classification;
  /** The company's rates for periods, over the published ones (see rates.ts). */
  rates: RateOverride[];
};

export const DEFAULT_IBSCBS_SETTINGS: Readonly<IbsCbsSettings> = Object.freeze({
  optIn: false,
  defaultClassification: DEFAULT_CLASSIFICATION,
  rates: [],
});

/**
 * Checks settings as stored or typed; absent parts take the defaults. Issues are reported under
 * `field` (`ibsCbs.optIn`, `ibsCbs.defaultClassification.CST`, `ibsCbs.rates[0].pCBS`...).
 */
export function checkIbsCbsSettings(value: unknown, field: string, issues: IssueCollector): IbsCbsSettings | undefined {
  if (isAbsent(value)) return { ...DEFAULT_IBSCBS_SETTINGS, rates: [] };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.add(field, 'deve ser um objeto { optIn, defaultClassification, rates }');
    return undefined;
  }
  const before = issues.issues.length;
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) if (!['optIn', 'defaultClassification', 'rates'].includes(k)) issues.add(`${field}.${k}`, 'campo não previsto');
  if (v.optIn !== undefined && typeof v.optIn !== 'boolean') issues.add(`${field}.optIn`, 'deve ser verdadeiro ou falso');
  let classification: Classification = DEFAULT_CLASSIFICATION;
  if (!isAbsent(v.defaultClassification)) {
    const c = v.defaultClassification as Record<string, unknown>;
    const checked = typeof c === 'object' ? checkClassification(c, `${field}.defaultClassification`, issues) : undefined;
    if (typeof c !== 'object') issues.add(`${field}.defaultClassification`, 'deve ser um objeto { CST, cClassTrib }');
    if (checked) classification = { CST: checked.CST, cClassTrib: checked.cClassTrib };
  }
  const rates = checkRateOverrides(v.rates, `${field}.rates`, issues);
  if (issues.issues.length !== before || !rates) return undefined;
  return { optIn: v.optIn === true, defaultClassification: classification, rates };
}

/** checkIbsCbsSettings that throws a FieldError with every issue. */
export function assertIbsCbsSettings(value: unknown, field: string): IbsCbsSettings {
  const issues = new IssueCollector();
  const settings = checkIbsCbsSettings(value, field, issues);
  issues.throwIfAny();
  return settings!;
}

/** Whether an NFC-e of this company dated `date` (YYYY-MM-DD) carries the reform groups. */
export function reformApplies(crt: number | undefined, settings: Pick<IbsCbsSettings, 'optIn'> | undefined, date: string): boolean {
  if (!reformGroupsExist(date)) return false;
  return crt === 3 || ((crt === 1 || crt === 2 || crt === 4) && settings?.optIn === true);
}
