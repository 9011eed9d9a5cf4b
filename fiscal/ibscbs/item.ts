// The IBS/CBS of one item: its classification, its base and the amounts, computed from the
// rates in force, and the values an integrator sent checked against them (never taken on trust).
//
// The arithmetic, in integer units (money in cents, rates in percent at scale 4):
// - effective rate, when the classification reduces it (gRed): rate × (1 − pRedAliq/100), to 4
//   decimals, half-up (NT 2025.002, UB28-10 / UB47-10 / UB66-10);
// - base vBC: the item's value net of its discount, vProd − vDesc. When the price contains the
//   taxes (from 2027, NT 2026.008), the IBS and CBS are taken out of it:
//   vBC = (vProd − vDesc) / (1 + (IBS-UF + IBS-Mun + CBS effective rates)/100). Why this base:
//   docs/fiscal.md, "Tax reform (IBS/CBS)";
// - each amount: vBC × rate / 100, half-up to the cent (within SEFAZ's ±0.01 of the exact
//   product, rejections 1041 / 1052 / 1069); vIBS = vIBSUF + vIBSMun exactly (1150).
// A value the integrator sends is checked: rates exactly the ones in force (1026 / 1036 / 1037),
// the base exactly ours, amounts within the ±0.01 SEFAZ applies; a value that passes is written
// as sent, so the document's totals are the sums of what it says.

import type { IssueCollector } from '../errors.ts';
import type { NfceItem } from '../nfce/types.ts';
import { DEC, decimal, isAbsent } from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { checkClassification, type CheckedClassification, type Classification } from './classification.ts';
import { formatRate, HUNDRED_PERCENT, parseRate, type Rate } from './rates.ts';

/** A rate reduction (gRed): the reduction in percent and the effective rate. */
export type Reduction = { pRedAliq: Rate; pAliqEfet: Rate };

/** gIBSUF, gIBSMun or gCBS: the (full) rate, its reduction, the amount in cents. */
export type IbsCbsPart = { p: Rate; red?: Reduction; v: bigint };

export type IbsCbsGroup = { vBC: bigint; uf: IbsCbsPart; mun: IbsCbsPart; vIBS: bigint; cbs: IbsCbsPart };

/** An item's IBSCBS as written: the classification, and gIBSCBS when its CST has one. */
export type IbsCbsItem = { CST: string; cClassTrib: string; group?: IbsCbsGroup };

/** What the request may carry in det[].imposto.IBSCBS: the classification, optionally values (its schema: base/common/api/nfce.ts). */
export type IbsCbsInput = NonNullable<NfceItem['imposto']['IBSCBS']>;

/** The rates and rules an NFC-e's items are computed with (one per document: by its dhEmi). */
export type ReformRates = {
  /** Brasília date of dhEmi, for messages. */
  date: string;
  pIBSUF: Rate;
  pIBSMun: Rate;
  pCBS: Rate;
  /** The price contains the taxes (from 2027). */
  inPrice: boolean;
};

/** Half-up division of non-negative integers. */
export const roundDiv = (n: bigint, d: bigint): bigint => (2n * n + d) / (2n * d);

/** rate × (1 − reduction/100), to 4 decimals, half-up. */
export const effectiveRate = (rate: Rate, reduction: Rate): Rate => roundDiv(rate * (HUNDRED_PERCENT - reduction), HUNDRED_PERCENT);

/** vBC × rate / 100 in cents, half-up. */
export const amountOf = (vBC: bigint, rate: Rate): bigint => roundDiv(vBC * rate, HUNDRED_PERCENT);

/** Whether `amount` (cents) is within one cent of the exact vBC × rate / 100 (SEFAZ's tolerance). */
export const withinCent = (amount: bigint, vBC: bigint, rate: Rate): boolean => {
  const diff = amount * HUNDRED_PERCENT - vBC * rate;
  return (diff < 0n ? -diff : diff) <= HUNDRED_PERCENT;
};

/** The rate an amount is computed with: the effective one when reduced. */
export const rateOf = (part: Omit<IbsCbsPart, 'v'>): Rate => part.red?.pAliqEfet ?? part.p;

const part = (p: Rate, reduced: boolean, reduction: Rate): Omit<IbsCbsPart, 'v'> =>
  reduced ? { p, red: { pRedAliq: reduction, pAliqEfet: effectiveRate(p, reduction) } } : { p };

/** The group computed for a net value (vProd − vDesc, cents) and a classification. */
export function computeGroup(c: CheckedClassification, net: bigint, rates: ReformRates): IbsCbsGroup | undefined {
  if (!c.cst.gIBSCBS) return undefined;
  const uf = part(rates.pIBSUF, c.cst.gRed, c.pRedIBS);
  const mun = part(rates.pIBSMun, c.cst.gRed, c.pRedIBS);
  const cbs = part(rates.pCBS, c.cst.gRed, c.pRedCBS);
  const sum = rateOf(uf) + rateOf(mun) + rateOf(cbs);
  const vBC = rates.inPrice ? roundDiv(net * HUNDRED_PERCENT, HUNDRED_PERCENT + sum) : net;
  const withAmount = (x: Omit<IbsCbsPart, 'v'>): IbsCbsPart => {
    const v = amountOf(vBC, rateOf(x));
    return x.red ? { p: x.p, red: x.red, v } : { p: x.p, v };
  };
  const ufOut = withAmount(uf);
  const munOut = withAmount(mun);
  return { vBC, uf: ufOut, mun: munOut, vIBS: ufOut.v + munOut.v, cbs: withAmount(cbs) };
}

type Obj = Record<string, unknown>;

function objectAt(value: unknown, path: string, known: readonly string[], issues: IssueCollector): Obj | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.add(path, 'deve ser um objeto');
    return undefined;
  }
  for (const k of Object.keys(value)) if (!known.includes(k)) issues.add(`${path}.${k}`, 'campo não previsto no grupo');
  return value as Obj;
}

const PARTS = [
  { key: 'gIBSUF', rate: 'pIBSUF', amount: 'vIBSUF', pick: (g: IbsCbsGroup) => g.uf, rateRejection: 1026, amountRejection: 1041, what: 'IBS da UF' },
  { key: 'gIBSMun', rate: 'pIBSMun', amount: 'vIBSMun', pick: (g: IbsCbsGroup) => g.mun, rateRejection: 1036, amountRejection: 1052, what: 'IBS do município' },
  { key: 'gCBS', rate: 'pCBS', amount: 'vCBS', pick: (g: IbsCbsGroup) => g.cbs, rateRejection: 1037, amountRejection: 1069, what: 'CBS' },
] as const;

/**
 * Checks the values the request sent against `computed` and returns the group to write: the
 * computed one with each value that passed replaced by the one sent. Reports what fails.
 */
function reconcile(given: Obj, path: string, computed: IbsCbsGroup, rates: ReformRates, issues: IssueCollector): IbsCbsGroup {
  const out: IbsCbsGroup = { ...computed, uf: { ...computed.uf }, mun: { ...computed.mun }, cbs: { ...computed.cbs } };
  const money = (value: unknown, field: string) => issues.capture(() => decimal(value, field, DEC.v).units);
  if (!isAbsent(given.vBC)) {
    const vBC = money(given.vBC, `${path}.vBC`);
    if (vBC !== undefined && vBC !== computed.vBC) {
      issues.add(
        `${path}.vBC`,
        `base do IBS/CBS deve ser ${fromCents(computed.vBC)} (valor do item menos o desconto${rates.inPrice ? ', sem o IBS e a CBS contidos no preço' : ''})`,
      );
    }
  }
  for (const p of PARTS) {
    const g = objectAt(given[p.key], `${path}.${p.key}`, [p.rate, 'gRed', p.amount], issues);
    if (!g) continue;
    const base = `${path}.${p.key}`;
    const mine = p.pick(out);
    if (!isAbsent(g[p.rate])) {
      const rate = issues.capture(() => parseRate(g[p.rate], `${base}.${p.rate}`));
      if (rate !== undefined && rate !== mine.p) {
        issues.add(`${base}.${p.rate}`, `alíquota do ${p.what} em ${rates.date}: ${formatRate(mine.p)} (rejeição ${p.rateRejection})`);
      }
    }
    const red = objectAt(g.gRed, `${base}.gRed`, ['pRedAliq', 'pAliqEfet'], issues);
    if (red && !mine.red) issues.add(`${base}.gRed`, 'a classificação do item não reduz a alíquota: gRed não se informa');
    if (red && mine.red) {
      for (const [field, expected] of [
        ['pRedAliq', mine.red.pRedAliq],
        ['pAliqEfet', mine.red.pAliqEfet],
      ] as const) {
        if (isAbsent(red[field])) continue;
        const rate = issues.capture(() => parseRate(red[field], `${base}.gRed.${field}`));
        if (rate !== undefined && rate !== expected) issues.add(`${base}.gRed.${field}`, `deve ser ${formatRate(expected)}`);
      }
    }
    if (!isAbsent(g[p.amount])) {
      const amount = money(g[p.amount], `${base}.${p.amount}`);
      if (amount !== undefined) {
        if (withinCent(amount, out.vBC, rateOf(mine))) mine.v = amount;
        else {
          issues.add(
            `${base}.${p.amount}`,
            `${p.what} deve ser vBC × alíquota = ${fromCents(amountOf(out.vBC, rateOf(mine)))}, com tolerância de 0,01 (rejeição ${p.amountRejection})`,
          );
        }
      }
    }
  }
  out.vIBS = out.uf.v + out.mun.v;
  if (!isAbsent(given.vIBS)) {
    const vIBS = money(given.vIBS, `${path}.vIBS`);
    if (vIBS !== undefined) {
      const diff = vIBS - out.vIBS;
      if (diff >= -1n && diff <= 1n) out.vIBS = vIBS;
      else issues.add(`${path}.vIBS`, `deve ser vIBSUF + vIBSMun = ${fromCents(out.vIBS)}, com tolerância de 0,01 (rejeição 1150)`);
    }
  }
  return out;
}

/**
 * The IBSCBS of one item. `rates` undefined: the company does not write the reform groups on
 * this document; a classification sent is then checked and left out, values sent are refused.
 * Returns null when nothing is written, undefined when something was reported.
 */
export function itemIbsCbs(
  raw: unknown,
  path: string,
  net: bigint,
  rates: ReformRates | undefined,
  defaultClassification: Classification,
  issues: IssueCollector,
  notApplicable = 'o emitente não informa IBS/CBS nesta NFC-e',
): IbsCbsItem | null | undefined {
  const before = issues.issues.length;
  const given = objectAt(raw, path, ['CST', 'cClassTrib', 'gIBSCBS'], issues);
  if (issues.issues.length !== before) return undefined;
  // Without a classification of its own the item takes the company's (already checked with the
  // company's settings; reported under their name should it be wrong).
  const classification = checkClassification(given ?? defaultClassification, given ? path : 'emit.ibsCbs.defaultClassification', issues);
  const values = given && objectAt(given.gIBSCBS, `${path}.gIBSCBS`, ['vBC', 'gIBSUF', 'gIBSMun', 'vIBS', 'gCBS'], issues);
  if (!rates) {
    if (values) issues.add(`${path}.gIBSCBS`, notApplicable);
    return issues.issues.length !== before ? undefined : null;
  }
  if (!classification) return undefined;
  if (values && !classification.cst.gIBSCBS) {
    issues.add(`${path}.gIBSCBS`, `o CST ${classification.CST} não tem o grupo gIBSCBS (rejeição 1021)`);
    return undefined;
  }
  const computed = computeGroup(classification, net, rates);
  const group = computed && values ? reconcile(values, `${path}.gIBSCBS`, computed, rates, issues) : computed;
  if (issues.issues.length !== before) return undefined;
  return { CST: classification.CST, cClassTrib: classification.cClassTrib, ...(group && { group }) };
}
