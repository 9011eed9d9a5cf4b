// Whether an NFC-e carries the tax reform groups (IBS/CBS) and with which rates: decided once per
// document, from the company's settings, its CRT and the Brasília date of dhEmi (docs/fiscal.md,
// "Tax reform (IBS/CBS)", "Who writes the groups" and "Rates by date"). Each item then follows
// it (fiscal/nfce/det.ts, with fiscal/ibscbs/item.ts).

import type { IssueCollector } from '../errors.ts';
import type { ReformRates } from '../ibscbs/item.ts';
import { RATE_NAMES, ratesAt, REFORM_START } from '../ibscbs/rates.ts';
import { checkIbsCbsSettings, reformApplies, type IbsCbsSettings } from '../ibscbs/settings.ts';
import type { Emitter } from '../company.ts';
import { reformGroupsExist } from '../law/in-force.ts';

const RATE_LABELS = { pIBSUF: 'do IBS da UF', pIBSMun: 'do IBS do município', pCBS: 'da CBS' } as const;

export type DocumentReform = {
  /** The company's settings as checked; undefined when they were reported. */
  settings?: IbsCbsSettings;
  /** The rates the items are computed with; undefined when the document carries no groups. */
  rates?: ReformRates;
  /** Whether the items can be checked against the reform at all (settings and date sound, rates known). */
  ok: boolean;
  /** Why a document without the groups has none: the message for values an item sends anyway. */
  absent: string;
};

export function documentReform(emitter: Emitter, crt: number | undefined, dhEmi: string | undefined, issues: IssueCollector): DocumentReform {
  const settings = checkIbsCbsSettings(emitter.ibsCbs, 'emit.ibsCbs', issues);
  const date = dhEmi?.slice(0, 10);
  let rates: ReformRates | undefined;
  let ok = settings !== undefined && date !== undefined;
  if (date && settings && reformApplies(crt, settings, date)) {
    const r = ratesAt(date, settings.rates, emitter.operatorRates);
    const missing = RATE_NAMES.filter((name) => r[name] === undefined);
    for (const name of missing) {
      issues.add(
        'emit.ibsCbs.rates',
        `alíquota ${RATE_LABELS[name]} vigente em ${date} ainda não publicada: informe-a nas alíquotas do IBS/CBS por período da empresa (ou o operador do serviço, para todas, com balcao ibscbs aliquotas)`,
      );
    }
    if (missing.length === 0) rates = { date, pIBSUF: r.pIBSUF!, pIBSMun: r.pIBSMun!, pCBS: r.pCBS!, inPrice: r.inPrice };
    else ok = false;
  }
  const absent =
    date !== undefined && !reformGroupsExist(date)
      ? `o IBS e a CBS começam em ${REFORM_START}; esta NFC-e é de ${date}`
      : `emitente com CRT ${crt} não informa IBS/CBS: a opção está desativada nas configurações da empresa`;
  return { settings, rates, ok, absent };
}
