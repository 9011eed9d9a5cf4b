// The reform groups of a document: det/imposto/IBSCBS of each item, det/vItem, total/IBSCBSTot
// and total/vNFTot, written in schema order (DFeTiposBasicos_v1.00.xsd TTribNFe, TCIBS,
// TIBSCBSMonoTot; leiauteNFe_v4.00.xsd det and total), and the rules that tie them together:
// - every total of IBSCBSTot is the exact sum of the items' written (rounded) values, never a
//   recomputation (W47-10 / W56-10 compare sums: rejections 1085, 1091);
// - vItem is what the item adds to the note: vProd − vDesc − ICMS deducted + ST. In 2026 the
//   IBS and CBS are informative and are not added (VB01-10, exception); from 2027 they are inside
//   vProd (NT 2026.008) and are not added again. So vNFTot = Σ vItem of the items with indTot 1,
//   which is vNF for our documents;
// - vNFTot is TDec_1302Opc, which refuses zero: a document whose items add up to nothing leaves
//   it out.

import { fromCents } from '../money.ts';
import { el, text } from '../xml.ts';
import type { IbsCbsGroup, IbsCbsItem, IbsCbsPart } from './item.ts';
import { formatRate } from './rates.ts';

export type IbsCbsTotals = { vBC: bigint; vIBSUF: bigint; vIBSMun: bigint; vIBS: bigint; vCBS: bigint; withGroup: boolean };

/** The totals of the items that carry IBSCBS (null items carry none). */
export function ibsCbsTotals(items: readonly (IbsCbsItem | null | undefined)[]): IbsCbsTotals {
  const groups = items.flatMap((it) => (it?.group ? [it.group] : []));
  const sum = (pick: (g: IbsCbsGroup) => bigint) => groups.reduce((a, g) => a + pick(g), 0n);
  return {
    vBC: sum((g) => g.vBC),
    vIBSUF: sum((g) => g.uf.v),
    vIBSMun: sum((g) => g.mun.v),
    vIBS: sum((g) => g.vIBS),
    vCBS: sum((g) => g.cbs.v),
    withGroup: groups.length > 0,
  };
}

const money = (name: string, cents: bigint) => text(name, fromCents(cents));

function partXml(name: string, rateName: string, amountName: string, p: IbsCbsPart): string {
  return el(
    name,
    undefined,
    text(rateName, formatRate(p.p)),
    p.red && el('gRed', undefined, text('pRedAliq', formatRate(p.red.pRedAliq)), text('pAliqEfet', formatRate(p.red.pAliqEfet))),
    money(amountName, p.v),
  );
}

/** `<IBSCBS>` of one item (TTribNFe). */
export function ibsCbsXml(item: IbsCbsItem): string {
  const g = item.group;
  return el(
    'IBSCBS',
    undefined,
    text('CST', item.CST),
    text('cClassTrib', item.cClassTrib),
    g &&
      el(
        'gIBSCBS',
        undefined,
        money('vBC', g.vBC),
        partXml('gIBSUF', 'pIBSUF', 'vIBSUF', g.uf),
        partXml('gIBSMun', 'pIBSMun', 'vIBSMun', g.mun),
        money('vIBS', g.vIBS),
        partXml('gCBS', 'pCBS', 'vCBS', g.cbs),
      ),
  );
}

/**
 * `<IBSCBSTot>` (TIBSCBSMonoTot). The deferral, devolution and presumed-credit totals are
 * required elements of the groups; none of it occurs in our documents, so they are 0.00.
 */
export function ibsCbsTotXml(t: IbsCbsTotals): string {
  const zero = (name: string) => text(name, '0.00');
  return el(
    'IBSCBSTot',
    undefined,
    money('vBCIBSCBS', t.vBC),
    t.withGroup &&
      el(
        'gIBS',
        undefined,
        el('gIBSUF', undefined, zero('vDif'), zero('vDevTrib'), money('vIBSUF', t.vIBSUF)),
        el('gIBSMun', undefined, zero('vDif'), zero('vDevTrib'), money('vIBSMun', t.vIBSMun)),
        money('vIBS', t.vIBS),
        zero('vCredPres'),
        zero('vCredPresCondSus'),
      ),
    t.withGroup && el('gCBS', undefined, zero('vDif'), zero('vDevTrib'), money('vCBS', t.vCBS), zero('vCredPres'), zero('vCredPresCondSus')),
  );
}

/** `<vNFTot>`, or nothing when the items add up to zero (the type refuses 0). */
export function vNFTotXml(vNFTot: bigint): string | undefined {
  return vNFTot > 0n ? money('vNFTot', vNFTot) : undefined;
}
