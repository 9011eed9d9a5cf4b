// The totals of the NFC-e (docs/fiscal.md, "NFC-e layout", "total, transp, infAdic", and the
// decisions below it): ICMSTot computed from the items and compared with what the request
// states, each item's approximate tax burden (vTotTrib, Lei 12.741/2012), and the reform's
// IBSCBSTot and vNFTot.
//
// Decisions:
// - total.vProd must equal the sum of the items with indTot 1 (564); total.vNF the computed
//   vProd − vDesc − vICMSDeson (deduzido) + vST + vFCPST (610); total.vDesc, when sent, the
//   items' discounts.
// - vTotTrib: an item's own imposto.vTotTrib is kept. When the body's vTotTrib is given, what the
//   items did not declare is spread over the other items in proportion to their net value
//   (largest remainder, to the cent), so ICMSTot/vTotTrib always equals the sum of the items
//   (rejection 685). When it is absent, each undeclared item gets net value × an approximate
//   rate: the IBPT table of the store's UF in force on dhEmi's day (fiscal/ibpt/table.ts), by
//   the item's NCM (and its origin: foreign goods take the imported federal rate); for an NCM
//   the table lacks, or without a table, the flat fallback: the context's vTotTribRate, else
//   DEFAULT_VTOTTRIB_RATES by CRT (rough national averages). The NCMs that fell back are reported
//   so the manager can see them.

import type { IssueCollector } from '../errors.ts';
import { ibptItemTotTrib, ibptRatesOf, ibptSourceText, ibptTableAt, type IbptTable } from '../ibpt/table.ts';
import { ibsCbsTotals, ibsCbsTotXml, vNFTotXml } from '../ibscbs/document.ts';
import { allocate, asObject, DEC, decimal, isAbsent } from '../layout-fields.ts';
import { fromCents, toCents } from '../money.ts';
import { icmsTot, itemValue, totalXml as writeTotal, type IcmsTot } from '../tax-groups.ts';
import type { CheckedItems, ItemOut } from './det.ts';
import type { NfceRequest } from './types.ts';

/**
 * Approximate tax burden (percent of the item's net value) used for vTotTrib when the request
 * gives none. Simples Nacional and MEI: 4.00, the nominal rate of the first bracket of Anexo I
 * (comércio). Regime normal (and Simples above the sub-limit, which pays ICMS outside the DAS):
 * 31.45, i.e. 13.45 federal + 18.00 ICMS, the usual IBPT figures for a national good.
 */
export const DEFAULT_VTOTTRIB_RATES: Readonly<Record<1 | 2 | 3 | 4, string>> = Object.freeze({
  1: '4.00',
  2: '31.45',
  3: '31.45',
  4: '4.00',
});

/**
 * ICMSTot of the items, with the request's `total` compared to it. The comparisons are only
 * meaningful when every item is sound: otherwise they would only echo the items' issues.
 */
export function checkTotals(input: NfceRequest, checked: CheckedItems, issues: IssueCollector): IcmsTot {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const tot = icmsTot(checked.items);
  const vNF = tot.vNF;
  const total = asObject(input.total, 'total', issues);
  const totalVProd = total && cap(() => decimal(total.vProd, 'total.vProd', DEC.v));
  const totalVNF = total && cap(() => decimal(total.vNF, 'total.vNF', DEC.v));
  const totalVDesc = total && !isAbsent(total.vDesc) ? cap(() => decimal(total.vDesc, 'total.vDesc', DEC.v)) : undefined;
  if (checked.ok) {
    if (vNF < 0n) issues.add('total.vNF', 'valor total negativo: descontos maiores que os produtos');
    if (totalVProd && totalVProd.units !== tot.vProd) {
      issues.add('total.vProd', `difere da soma dos itens: esperado ${fromCents(tot.vProd)} (rejeição 564)`);
    }
    if (totalVDesc && totalVDesc.units !== tot.vDesc) {
      issues.add('total.vDesc', `difere da soma dos descontos dos itens: esperado ${fromCents(tot.vDesc)}`);
    }
    if (totalVNF && totalVNF.units !== vNF) {
      issues.add('total.vNF', `difere do total calculado: esperado ${fromCents(vNF)} (rejeição 610)`);
    }
  }
  return tot;
}

/** The IBPT tables the document may use: those of the store, its UF and dhEmi's day. */
export type IbptContext = { tables: readonly IbptTable[]; uf: string; date: string };

export type TaxBurden = {
  /** Each item's vTotTrib in cents. */
  cents: bigint[];
  /** The IBPT table used for at least one item, and whether it had expired on the day. */
  ibpt?: { table: IbptTable; expired: boolean };
  /** The NCMs estimated with the flat fallback rate (the table lacks them, or there is none). */
  fallbackNcms: string[];
};

/** Each item's vTotTrib in cents (see the header for the rule); empty unless every item is sound. */
export function itemTaxBurden(
  input: NfceRequest,
  checked: CheckedItems,
  crt: 1 | 2 | 3 | 4 | undefined,
  vTotTribRate: string | undefined,
  issues: IssueCollector,
  ibpt?: IbptContext,
): TaxBurden {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const { items } = checked;
  let itemTotTrib: bigint[] = [];
  const out: TaxBurden = { cents: itemTotTrib, fallbackNcms: [] };
  const givenTotTrib = isAbsent(input.vTotTrib) ? undefined : cap(() => decimal(input.vTotTrib, 'vTotTrib', DEC.v).units);
  if (!checked.ok) return out;
  const net = items.map((it) => it.vProd - it.vDesc);
  const missing = items.flatMap((it, i) => (it.vTotTribOwn === undefined ? [i] : []));
  const own = items.reduce((a, it) => a + (it.vTotTribOwn ?? 0n), 0n);
  itemTotTrib = items.map((it) => it.vTotTribOwn ?? 0n);
  out.cents = itemTotTrib;
  if (givenTotTrib !== undefined) {
    const rest = givenTotTrib - own;
    if (rest < 0n || (missing.length === 0 && rest !== 0n)) {
      issues.add('vTotTrib', `difere da soma dos valores aproximados dos itens (${fromCents(own)}) (rejeição 685)`);
    } else {
      const shares = allocate(
        rest,
        missing.map((i) => (net[i]! > 0n ? net[i]! : 0n)),
      );
      missing.forEach((i, k) => (itemTotTrib[i] = shares[k]!));
    }
  } else {
    const rate = cap(() => {
      const r = vTotTribRate ?? (crt ? DEFAULT_VTOTTRIB_RATES[crt] : '0');
      return decimal(r, 'vTotTribRate', { scale: 4, intDigits: 3, minScale: 2, max: 1_000_000n }).units;
    });
    const found = ibpt && ibptTableAt(ibpt.tables, ibpt.uf, ibpt.date);
    for (const i of missing) {
      const n = net[i]! > 0n ? net[i]! : 0n;
      const ncm = items[i]!.prod.find(([name]) => name === 'NCM')?.[1] ?? '';
      const ofNcm = found && ibptRatesOf(found.table, ncm, extipiOf(input, i));
      if (ofNcm) {
        out.ibpt = found;
        itemTotTrib[i] = ibptItemTotTrib(ofNcm, origOf(input, i), n);
      } else if (rate !== undefined) {
        if (!out.fallbackNcms.includes(ncm)) out.fallbackNcms.push(ncm);
        itemTotTrib[i] = (n * rate + 500_000n) / 1_000_000n; // percent at scale 4 → half-up cents
      }
    }
  }
  return out;
}

/**
 * The request with each item's vTotTrib from the IBPT table of `ibpt` (what a terminal sends,
 * so that the estimate is its store's table whoever builds the XML), and the table's source
 * appended to infCpl when it served an item. An item that declares its own vTotTrib keeps it; an
 * NCM the table lacks is left without one, for the builder's flat fallback, and listed. A
 * request that states the document's vTotTrib is left as it is: its sender chose the total.
 */
export function withIbptEstimate(request: NfceRequest, ibpt: IbptContext): { request: NfceRequest; used?: IbptTable; fallbackNcms: string[] } {
  if (request.vTotTrib !== undefined) return { request, fallbackNcms: [] };
  const found = ibptTableAt(ibpt.tables, ibpt.uf, ibpt.date);
  const fallbackNcms: string[] = [];
  let used: IbptTable | undefined;
  const det = request.det.map((item, i) => {
    if (item.imposto.vTotTrib !== undefined) return item;
    const rates = found && ibptRatesOf(found.table, item.prod.NCM, extipiOf(request, i));
    if (!rates) {
      if (!fallbackNcms.includes(item.prod.NCM)) fallbackNcms.push(item.prod.NCM);
      return item;
    }
    // A value that does not parse is the builder's to report, with its field: left alone here.
    const [vProd, vDesc] = [centsOrUndefined(item.prod.vProd), centsOrUndefined(item.prod.vDesc ?? '0')];
    if (vProd === undefined || vDesc === undefined) return item;
    const net = vProd - vDesc;
    used = found!.table;
    return { ...item, imposto: { ...item.imposto, vTotTrib: fromCents(ibptItemTotTrib(rates, origOf(request, i), net > 0n ? net : 0n)) } };
  });
  if (!used) return { request, fallbackNcms };
  // Once: the terminal may have named the same table for the items it estimated.
  const source = ibptSourceText(used);
  const infCpl = [
    request.infCpl,
    ...(String(request.infCpl ?? '')
      .split(';')
      .includes(source)
      ? []
      : [source]),
  ]
    .filter((t) => t !== undefined && t !== '')
    .join(';');
  return { request: { ...request, det, infCpl }, used, fallbackNcms };
}

function centsOrUndefined(value: unknown): bigint | undefined {
  try {
    return toCents(value, 'valor');
  } catch {
    return undefined;
  }
}

/** The origin (Torig) the item's ICMS group states, if any. */
export function origOf(input: NfceRequest, i: number): string | undefined {
  const icms = input.det[i]?.imposto?.ICMS as Record<string, { orig?: unknown }> | undefined;
  const orig = icms && Object.values(icms)[0]?.orig;
  return typeof orig === 'string' ? orig : undefined;
}

/** The item's EX of the TIPI (`prod.EXTIPI`), which the IBPT table's `ex` matches. */
export function extipiOf(input: NfceRequest, i: number): string {
  const ex = (input.det[i]?.prod as { EXTIPI?: unknown } | undefined)?.EXTIPI;
  return typeof ex === 'string' ? ex : '';
}

/** `<total>`: ICMSTot and, with the reform groups, IBSCBSTot and vNFTot. */
export function totalXml(tot: IcmsTot, vTotTrib: bigint, items: readonly ItemOut[], withReform: boolean): string {
  if (!withReform) return writeTotal(tot, vTotTrib, []);
  const vNFTot = items.reduce((a, it) => a + (it.indTot === '1' ? itemValue(it) : 0n), 0n);
  return writeTotal(tot, vTotTrib, [ibsCbsTotXml(ibsCbsTotals(items.map((it) => it.ibsCbs))), vNFTotXml(vNFTot)]);
}
