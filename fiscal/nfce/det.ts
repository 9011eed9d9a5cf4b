// The items (`det`) of the NFC-e (docs/fiscal.md, "NFC-e layout", "det"): each item's product
// (`prod`) and taxes (`imposto`: ICMS, PIS, COFINS as tables in fiscal/tax-groups.ts, the Lei
// 12.741 vTotTrib, and the reform's IBSCBS), checked into the caller's IssueCollector and written
// in schema order once the whole document is sound.
//
// Decision: vProd must equal qCom × vUnCom rounded half-up to the cent, and qTrib × vUnTrib must
// give the same; SEFAZ's rule 629 tolerates a little, Balcão refuses any difference.

import { assertCfop, assertNcm } from '../br/catalogs.ts';
import { assertGtinOrSemGtin } from '../br/documents.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { ibsCbsXml } from '../ibscbs/document.ts';
import { itemIbsCbs, type IbsCbsItem } from '../ibscbs/item.ts';
import { asObject, DEC, decimal, isAbsent, pattern, productCents, tString, type Dec } from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { COFINS_VARIANTS, ICMS_VARIANTS, itemValue, PIS_VARIANTS, taxGroup, writeTax, type TaxOut } from '../tax-groups.ts';
import { el, text } from '../xml.ts';
import type { DocumentReform } from './reform.ts';
import type { NfceRequest } from './types.ts';

/** Rejection 373: item 1's description in homologação. */
export const HOMOLOGACAO_XPROD = 'NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL';

/** The imposto groups an NFC-e item may carry; IPI and II are rejections 742 and 743. */
const IMPOSTO_GROUPS = ['ICMS', 'PIS', 'COFINS', 'vTotTrib', 'IBSCBS'];

export type ItemOut = {
  prod: [string, string | undefined][];
  icms: TaxOut;
  pis?: TaxOut;
  cofins?: TaxOut;
  vTotTribOwn?: bigint;
  /** null: the item carries no IBSCBS. */
  ibsCbs: IbsCbsItem | null;
  vProd: bigint;
  vDesc: bigint;
  indTot: string;
};

/** The sound items; `ok` false when any item (or the list itself) was reported. */
export type CheckedItems = { items: ItemOut[]; ok: boolean };

/** What the items need to know of the document. */
export type ItemRules = { crt?: 1 | 2 | 3 | 4; homolog: boolean; reform: DocumentReform };

export function checkItems(input: NfceRequest, rules: ItemRules, issues: IssueCollector): CheckedItems {
  const items: ItemOut[] = [];
  let ok = true;
  if (!Array.isArray(input.det) || input.det.length === 0) {
    issues.add('det', 'informe ao menos um item');
    ok = false;
  } else if (input.det.length > 990) {
    issues.add('det', 'no máximo 990 itens');
    ok = false;
  }
  for (const [i, item] of (Array.isArray(input.det) ? input.det : []).entries()) {
    const it = checkItem(item, i, rules, issues);
    if (it) items.push(it);
    else ok = false;
  }
  return { items, ok };
}

/** One item; undefined when anything of it was reported. */
function checkItem(item: unknown, i: number, rules: ItemRules, issues: IssueCollector): ItemOut | undefined {
  const base = `det[${i}]`;
  const before = issues.issues.length;
  const it = asObject(item, base, issues);
  const prod = it && asObject(it.prod, `${base}.prod`, issues);
  const imposto = it && asObject(it.imposto, `${base}.imposto`, issues);
  if (!prod || !imposto) return undefined;
  const p = checkProd(prod, `${base}.prod`, rules.homolog && i === 0, issues);
  const { vProd, vDesc } = p;
  const net = vProd && (!vDesc || vDesc.units <= vProd.units) ? vProd.units - (vDesc?.units ?? 0n) : undefined;
  const t = checkImposto(imposto, `${base}.imposto`, net, rules, issues);
  if (issues.issues.length !== before || !t.icms || !vProd || !p.indTot || t.ibsCbs === undefined) return undefined;
  return {
    prod: p.out,
    icms: t.icms,
    pis: t.pis,
    cofins: t.cofins,
    vTotTribOwn: t.vTotTribOwn,
    ibsCbs: t.ibsCbs,
    vProd: vProd.units,
    vDesc: vDesc?.units ?? 0n,
    indTot: p.indTot,
  };
}

/** The fields of `prod`, as `out` writes them in checkProd (a set built once, not per item). */
const PROD_FIELDS: ReadonlySet<string> = new Set([
  'cProd',
  'cEAN',
  'xProd',
  'NCM',
  'CFOP',
  'uCom',
  'qCom',
  'vUnCom',
  'vProd',
  'cEANTrib',
  'uTrib',
  'qTrib',
  'vUnTrib',
  'vDesc',
  'indTot',
]);

type CheckedProd = { out: [string, string | undefined][]; vProd?: Dec; vDesc?: Dec; indTot?: string };

/** `prod`, its fields in schema order; `homologacaoText`: item 1 in homologação (rejection 373). */
function checkProd(prod: Record<string, unknown>, p: string, homologacaoText: boolean, issues: IssueCollector): CheckedProd {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const xProd = homologacaoText ? HOMOLOGACAO_XPROD : cap(() => tString(prod.xProd, `${p}.xProd`, 1, 120));
  const qCom = cap(() => decimal(prod.qCom, `${p}.qCom`, DEC.q));
  const vUnCom = cap(() => decimal(prod.vUnCom, `${p}.vUnCom`, DEC.vUn));
  const vProd = cap(() => decimal(prod.vProd, `${p}.vProd`, DEC.v));
  const qTrib = cap(() => decimal(prod.qTrib, `${p}.qTrib`, DEC.q));
  const vUnTrib = cap(() => decimal(prod.vUnTrib, `${p}.vUnTrib`, DEC.vUn));
  const vDesc = isAbsent(prod.vDesc) ? undefined : cap(() => decimal(prod.vDesc, `${p}.vDesc`, DEC.vOpc));
  if (qCom && vUnCom && vProd) {
    const expected = productCents(qCom.units, vUnCom.units);
    if (expected !== vProd.units) {
      issues.add(`${p}.vProd`, `deve ser qCom × vUnCom arredondado ao centavo: esperado ${fromCents(expected)} (rejeição 629)`);
    }
  }
  if (qTrib && vUnTrib && vProd) {
    const expected = productCents(qTrib.units, vUnTrib.units);
    if (expected !== vProd.units) {
      issues.add(`${p}.vUnTrib`, `qTrib × vUnTrib deve resultar em vProd (${vProd.text}); resultou ${fromCents(expected)}`);
    }
  }
  if (vDesc && vProd && vDesc.units > vProd.units) issues.add(`${p}.vDesc`, 'desconto maior que o valor do item');
  const cfop = cap(() => {
    const v = assertCfop(prod.CFOP, `${p}.CFOP`);
    // NFC-e is always an internal operation (idDest 1): only 5xxx output CFOPs apply.
    if (!v.startsWith('5')) throw new FieldError(`${p}.CFOP`, 'NFC-e só admite CFOP de saída interna (5xxx)');
    return v;
  });
  const indTot = cap(() => pattern(prod.indTot, `${p}.indTot`, /^[01]$/, 'indTot deve ser 0 ou 1'));
  const out: [string, string | undefined][] = [
    ['cProd', cap(() => tString(prod.cProd, `${p}.cProd`, 1, 60))],
    ['cEAN', cap(() => assertGtinOrSemGtin(prod.cEAN, `${p}.cEAN`))],
    ['xProd', xProd],
    ['NCM', cap(() => assertNcm(prod.NCM, `${p}.NCM`))],
    ['CFOP', cfop],
    ['uCom', cap(() => tString(prod.uCom, `${p}.uCom`, 1, 6))],
    ['qCom', qCom?.text],
    ['vUnCom', vUnCom?.text],
    ['vProd', vProd?.text],
    ['cEANTrib', cap(() => assertGtinOrSemGtin(prod.cEANTrib, `${p}.cEANTrib`))],
    ['uTrib', cap(() => tString(prod.uTrib, `${p}.uTrib`, 1, 6))],
    ['qTrib', qTrib?.text],
    ['vUnTrib', vUnTrib?.text],
    ['vDesc', vDesc?.text],
    ['indTot', indTot],
  ];
  for (const k of Object.keys(prod)) if (!PROD_FIELDS.has(k)) issues.add(`${p}.${k}`, 'campo não suportado no item da NFC-e');
  return { out, vProd, vDesc, indTot };
}

type CheckedImposto = { icms?: TaxOut; pis?: TaxOut; cofins?: TaxOut; vTotTribOwn?: bigint; ibsCbs: IbsCbsItem | null | undefined };

/** `imposto`; `net` is the item's value net of its discount, when that is sound. */
function checkImposto(imposto: Record<string, unknown>, t: string, net: bigint | undefined, rules: ItemRules, issues: IssueCollector): CheckedImposto {
  const { crt, reform } = rules;
  const icms = taxGroup(imposto.ICMS, ICMS_VARIANTS, `${t}.ICMS`, issues);
  // The regime check needs only the variant's name, so it is reported even when its fields are wrong.
  const icmsVariant = typeof imposto.ICMS === 'object' && imposto.ICMS ? Object.keys(imposto.ICMS) : [];
  if (icmsVariant.length === 1 && icmsVariant[0]! in ICMS_VARIANTS && crt !== undefined) {
    const simples = crt === 1 || crt === 4;
    const isSn = icmsVariant[0]!.startsWith('ICMSSN');
    if (simples && !isSn) issues.add(`${t}.ICMS`, `emitente do Simples Nacional (CRT ${crt}) informa CSOSN, grupo ICMSSNxxx (rejeição 590)`);
    if (!simples && isSn) issues.add(`${t}.ICMS`, `emitente com CRT ${crt} informa CST, não CSOSN (rejeição 591)`);
  }
  const pis = isAbsent(imposto.PIS) ? undefined : taxGroup(imposto.PIS, PIS_VARIANTS, `${t}.PIS`, issues);
  const cofins = isAbsent(imposto.COFINS) ? undefined : taxGroup(imposto.COFINS, COFINS_VARIANTS, `${t}.COFINS`, issues);
  for (const k of Object.keys(imposto)) {
    if (!IMPOSTO_GROUPS.includes(k)) {
      issues.add(
        `${t}.${k}`,
        k === 'IPI' || k === 'II' ? `NFC-e não admite o grupo ${k} (rejeição ${k === 'IPI' ? 742 : 743})` : 'grupo não suportado na NFC-e',
      );
    }
  }
  const vTotTribOwn = isAbsent(imposto.vTotTrib) ? undefined : issues.capture(() => decimal(imposto.vTotTrib, `${t}.vTotTrib`, DEC.v).units);
  const ibsCbs =
    net !== undefined && reform.ok
      ? itemIbsCbs(imposto.IBSCBS, `${t}.IBSCBS`, net, reform.rates, reform.settings!.defaultClassification, issues, reform.absent)
      : undefined;
  return { icms, pis, cofins, vTotTribOwn, ibsCbs };
}

/**
 * The `<det>` elements. `itemTotTrib`: each item's vTotTrib (fiscal/nfce/total.ts);
 * `withReform`: the reform groups go on every item, with vItem, or on none.
 */
export function detXml(items: readonly ItemOut[], itemTotTrib: readonly bigint[], withReform: boolean): string[] {
  return items.map((it, i) =>
    el(
      'det',
      { nItem: i + 1 },
      el(
        'prod',
        undefined,
        it.prod.map(([n, v]) => text(n, v)),
      ),
      el(
        'imposto',
        undefined,
        text('vTotTrib', fromCents(itemTotTrib[i]!)),
        el('ICMS', undefined, writeTax(it.icms)),
        it.pis && el('PIS', undefined, writeTax(it.pis)),
        it.cofins && el('COFINS', undefined, writeTax(it.cofins)),
        it.ibsCbs && ibsCbsXml(it.ibsCbs),
      ),
      withReform && text('vItem', fromCents(itemValue(it))),
    ),
  );
}
