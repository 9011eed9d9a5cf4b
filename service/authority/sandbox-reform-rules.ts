// The sandbox authority's rules of the tax reform (IBS/CBS, NT 2025.002) and of NT 2026.002 for
// the NFC-e, as SEFAZ applies them to a document that passed the schema: read from the signed
// XML with string scanners, judged with the document's own values.
//
// What is checked, first broken rule wins, in this order:
// - NT 2026.002: 715 an NFC-e with finNFe other than 1; 750 an NFC-e above R$ 10.000,00 (or the
//   UF's limit) whose dest has no CPF or CNPJ.
// - 1115 (UB12-10): an item without IBSCBS, emitter CRT 3, not a return (finNFe 4), where the law
//   table has the rule in force (homologação from 2026-07-01; in produção it is "implementação
//   futura"). Elsewhere the NFC-e is authorized with an alert instead (cStat 120, cMsg 1115; see
//   reformAlert).
// - per item with IBSCBS, in document order: 1020 CST unknown; 1023 cClassTrib unknown (the
//   sandbox knows fiscal/ibscbs/classification.ts's table, which is not the whole official one);
//   1024 cClassTrib of another CST; 1021 gIBSCBS with a CST that has none; 1022 gIBSCBS missing
//   where the CST has it; 1026 / 1036 / 1037 pIBSUF / pIBSMun / pCBS other than the published rate
//   of dhEmi's period in the law table (not for returns; a rate not published yet, the CBS of 2027,
//   is not checked); 1041 / 1052 / 1069 vIBSUF / vIBSMun / vCBS more than 0.01 off vBC × rate (the
//   effective rate when gRed is present); 1150 vIBS more than 0.01 off vIBSUF + vIBSMun;
// - totals: 1118 IBSCBSTot without any item with IBSCBS; 1119 items with IBSCBS and no
//   IBSCBSTot; 1085 gIBS/vIBS other than the sum of the items' vIBS; 1091 gCBS/vCBS other than
//   the sum of the items' vCBS.
// Rules the NT marks "implementação futura" (1104 base, 1105 vItem, 1004 / 1094 vNFTot) are not
// applied. The arithmetic is written here on its own, not borrowed from the builder, so that the
// sandbox checks the builder instead of agreeing with it. The texts are ours where the official
// wording is not known to us (docs/fiscal.md).

import { ufOfCUF } from '../../fiscal/br/uf.ts';
import { CCLASSTRIB, IBSCBS_CST } from '../../fiscal/ibscbs/classification.ts';
import { ratesAt, type RateName } from '../../fiscal/ibscbs/rates.ts';
import { environmentOfTpAmb, reformGroupsExist, rejection1115Applies } from '../../fiscal/law/in-force.ts';
import { parseDecimal } from '../../fiscal/money.ts';
import { consumerIdentificationRequired } from '../../fiscal/nfce/consumer-identification.ts';
import type { VerdictMessage } from '../../fiscal/protocol.ts';
import { firstText } from '../../fiscal/xml.ts';
import { section, sections } from './xml-scan.ts';

export type Rejection = { cStat: string; xMotivo: string };

const reject = (cStat: string, xMotivo: string): Rejection => ({ cStat, xMotivo });

export const REFORM = {
  finalidade: reject('715', 'Rejeição: NFC-e com finalidade inválida'),
  semDestinatario: reject('750', 'Rejeição: NFC-e com valor total superior ao permitido para destinatário não identificado (CPF ou CNPJ)'),
  naoInformado: reject('1115', 'Rejeição: IBS/CBS não informado'),
  cstInexistente: reject('1020', 'Rejeição: CST do IBS/CBS inexistente'),
  grupoIndevido: reject('1021', 'Rejeição: Grupo de tributação do IBS/CBS (gIBSCBS) informado indevidamente para o CST'),
  grupoAusente: reject('1022', 'Rejeição: Grupo IBS/CBS não informado'),
  classTribInexistente: reject('1023', 'Rejeição: Código de Classificação Tributária do IBS/CBS inexistente'),
  classTribIncompativel: reject('1024', 'Rejeição: Código de Classificação Tributária do IBS/CBS incompatível com o CST'),
  aliquotaIbsUf: reject('1026', 'Rejeição: Alíquota do IBS de competência da UF difere da alíquota vigente'),
  aliquotaIbsMun: reject('1036', 'Rejeição: Alíquota do IBS de competência do Município difere da alíquota vigente'),
  aliquotaCbs: reject('1037', 'Rejeição: Alíquota da CBS difere da alíquota vigente'),
  valorIbsUf: reject('1041', 'Rejeição: Valor do IBS de competência da UF difere do calculado'),
  valorIbsMun: reject('1052', 'Rejeição: Valor do IBS de competência do Município difere do calculado'),
  valorCbs: reject('1069', 'Rejeição: Valor da CBS difere do calculado'),
  valorIbs: reject('1150', 'Rejeição: Valor do IBS difere da soma do IBS da UF e do IBS do Município'),
  totalIndevido: reject('1118', 'Rejeição: Grupo de totais do IBS/CBS (IBSCBSTot) informado indevidamente'),
  totalAusente: reject('1119', 'Rejeição: Grupo de totais do IBS/CBS (IBSCBSTot) não informado'),
  totalIbs: reject('1085', 'Rejeição: Total do IBS difere do somatório dos itens'),
  totalCbs: reject('1091', 'Rejeição: Total da CBS difere do somatório dos itens'),
} as const satisfies Record<string, Rejection>;

/** cStat 120 (NT 2026.002): authorized, with the alert in infProt/cMsg and xMsg. */
export const AUTHORIZED_WITH_ALERT = reject('120', 'Autorizado o uso da NF-e com alerta');

const ofItem = (r: Rejection, nItem: string): Rejection => ({ cStat: r.cStat, xMotivo: `${r.xMotivo} [nItem:${nItem}]` });

export type ReformPartFacts = { p?: string; pAliqEfet?: string; v?: string };

export type ReformItemFacts = {
  nItem: string;
  ibsCbs?: {
    CST?: string;
    cClassTrib?: string;
    group?: { vBC?: string; uf: ReformPartFacts; mun: ReformPartFacts; vIBS?: string; cbs: ReformPartFacts };
  };
};

export type ReformFacts = {
  mod?: string;
  finNFe?: string;
  /** emit/CRT */
  crt?: string;
  tpAmb?: string;
  dhEmi?: string;
  cUF?: string;
  vNF?: string;
  /** The identification dest carries, if any. */
  destId?: 'CPF' | 'CNPJ' | 'idEstrangeiro';
  items: ReformItemFacts[];
  /** total/IBSCBSTot, when present. */
  tot?: { vBC?: string; vIBS?: string; vCBS?: string };
};

function partFacts(group: string, name: string, rate: string, amount: string): ReformPartFacts {
  const inner = section(group, name)?.inner ?? '';
  const red = section(inner, 'gRed')?.inner;
  return { p: firstText(inner, rate), pAliqEfet: red === undefined ? undefined : firstText(red, 'pAliqEfet'), v: firstText(inner, amount) };
}

export function readReformFacts(xml: string): ReformFacts {
  const ide = section(xml, 'ide')?.inner ?? '';
  const emit = section(xml, 'emit')?.inner ?? '';
  const dest = section(xml, 'dest')?.inner;
  const numbers = [...xml.matchAll(/<det nItem="([0-9]+)">/g)].map((m) => m[1]!);
  const items = sections(xml, 'det').map((det, i): ReformItemFacts => {
    const ibscbs = section(det, 'IBSCBS')?.inner;
    if (ibscbs === undefined) return { nItem: numbers[i] ?? String(i + 1) };
    const g = section(ibscbs, 'gIBSCBS')?.inner;
    return {
      nItem: numbers[i] ?? String(i + 1),
      ibsCbs: {
        CST: firstText(ibscbs, 'CST'),
        cClassTrib: firstText(ibscbs, 'cClassTrib'),
        group:
          g === undefined
            ? undefined
            : {
                vBC: firstText(g, 'vBC'),
                uf: partFacts(g, 'gIBSUF', 'pIBSUF', 'vIBSUF'),
                mun: partFacts(g, 'gIBSMun', 'pIBSMun', 'vIBSMun'),
                vIBS: firstText(g, 'vIBS'),
                cbs: partFacts(g, 'gCBS', 'pCBS', 'vCBS'),
              },
      },
    };
  });
  const tot = section(xml, 'IBSCBSTot')?.inner;
  return {
    mod: firstText(ide, 'mod'),
    finNFe: firstText(ide, 'finNFe'),
    crt: firstText(emit, 'CRT'),
    tpAmb: firstText(ide, 'tpAmb'),
    dhEmi: firstText(ide, 'dhEmi'),
    cUF: firstText(ide, 'cUF'),
    vNF: firstText(section(xml, 'ICMSTot')?.inner ?? '', 'vNF'),
    destId: dest === undefined ? undefined : (['CPF', 'CNPJ', 'idEstrangeiro'] as const).find((t) => firstText(dest, t) !== undefined),
    items,
    tot:
      tot === undefined
        ? undefined
        : {
            vBC: firstText(tot, 'vBCIBSCBS'),
            vIBS: firstText(section(tot, 'gIBS')?.inner ?? '', 'vIBS'),
            vCBS: firstText(section(tot, 'gCBS')?.inner ?? '', 'vCBS'),
          },
  };
}

// ---------------------------------------------------------------------------------------------
// Arithmetic: money in cents, rates in percent at scale 4 (0.10 % = 1000)

const cents = (v: string | undefined): bigint | undefined => {
  if (v === undefined) return undefined;
  try {
    return parseDecimal(v, 2, 'valor');
  } catch {
    return undefined;
  }
};

const rate = (v: string | undefined): bigint | undefined => {
  if (v === undefined) return undefined;
  try {
    return parseDecimal(v, 4, 'aliquota');
  } catch {
    return undefined;
  }
};

/** |amount − vBC × rate / 100| ≤ 0.01, exactly: amount and vBC in cents, rate at scale 4. */
function withinTolerance(amount: bigint, vBC: bigint, r: bigint): boolean {
  const exact = vBC * r; // cents × 10^6
  const written = amount * 1_000_000n;
  const diff = written > exact ? written - exact : exact - written;
  return diff <= 1_000_000n;
}

const dateOf = (f: ReformFacts): string => (f.dhEmi ?? '').slice(0, 10);

// ---------------------------------------------------------------------------------------------
// The rules

/** NT 2026.002 for the NFC-e: 715 (finNFe) and 750 (consumer identification above the limit). */
export function nfceRuleRejection(f: ReformFacts): Rejection | undefined {
  if (f.mod !== '65') return undefined;
  if (f.finNFe !== '1') return REFORM.finalidade;
  const vNF = cents(f.vNF);
  const identified = f.destId === 'CPF' || f.destId === 'CNPJ';
  if (!identified && vNF !== undefined && consumerIdentificationRequired(ufOfCUF(f.cUF ?? ''), vNF)) return REFORM.semDestinatario;
  return undefined;
}

/** The first item without IBSCBS of a CRT 3 document that rule UB12-10 covers, if any. */
function itemWithoutGroup(f: ReformFacts): ReformItemFacts | undefined {
  if (f.crt !== '3' || f.finNFe === '4' || !reformGroupsExist(dateOf(f))) return undefined;
  return f.items.find((i) => !i.ibsCbs);
}

/** The IBS/CBS rules (see the header), first broken one wins. */
export function reformRejection(f: ReformFacts): Rejection | undefined {
  const date = dateOf(f);
  const devolution = f.finNFe === '4';
  const missing = itemWithoutGroup(f);
  const environment = environmentOfTpAmb(f.tpAmb);
  if (missing && environment && rejection1115Applies(date, environment)) return ofItem(REFORM.naoInformado, missing.nItem);

  const published = reformGroupsExist(date) ? ratesAt(date) : undefined;
  let sumIBS = 0n;
  let sumCBS = 0n;
  for (const item of f.items) {
    const t = item.ibsCbs;
    if (!t) continue;
    const n = item.nItem;
    const cst = t.CST === undefined ? undefined : IBSCBS_CST[t.CST];
    if (!cst) return ofItem(REFORM.cstInexistente, n);
    const classTrib = t.cClassTrib === undefined ? undefined : CCLASSTRIB[t.cClassTrib];
    if (!classTrib) return ofItem(REFORM.classTribInexistente, n);
    if (classTrib.CST !== t.CST) return ofItem(REFORM.classTribIncompativel, n);
    const g = t.group;
    if (g && !cst.gIBSCBS) return ofItem(REFORM.grupoIndevido, n);
    if (!g && cst.gIBSCBS) return ofItem(REFORM.grupoAusente, n);
    if (!g) continue;

    if (published && !devolution) {
      // Only a published rate is the authority's: Balcão's provisional one is not.
      const official = (name: RateName) => (published.origin[name] === 'publicada' ? published[name] : undefined);
      const checks = [
        [g.uf.p, official('pIBSUF'), REFORM.aliquotaIbsUf],
        [g.mun.p, official('pIBSMun'), REFORM.aliquotaIbsMun],
        [g.cbs.p, official('pCBS'), REFORM.aliquotaCbs],
      ] as const;
      for (const [written, expected, rejection] of checks) {
        if (expected !== undefined && rate(written) !== expected) return ofItem(rejection, n);
      }
    }
    const vBC = cents(g.vBC) ?? 0n;
    const parts = [
      [g.uf, REFORM.valorIbsUf],
      [g.mun, REFORM.valorIbsMun],
      [g.cbs, REFORM.valorCbs],
    ] as const;
    for (const [part, rejection] of parts) {
      const amount = cents(part.v);
      const r = rate(part.pAliqEfet ?? part.p);
      if (amount === undefined || r === undefined || !withinTolerance(amount, vBC, r)) return ofItem(rejection, n);
    }
    const vIBS = cents(g.vIBS) ?? 0n;
    const expectedIBS = (cents(g.uf.v) ?? 0n) + (cents(g.mun.v) ?? 0n);
    const diff = vIBS - expectedIBS;
    if (diff > 1n || diff < -1n) return ofItem(REFORM.valorIbs, n);
    sumIBS += vIBS;
    sumCBS += cents(g.cbs.v) ?? 0n;
  }

  const withGroup = f.items.some((i) => i.ibsCbs);
  if (f.tot && !withGroup) return REFORM.totalIndevido;
  if (!f.tot && withGroup) return REFORM.totalAusente;
  if (f.tot) {
    if ((cents(f.tot.vIBS) ?? 0n) !== sumIBS) return REFORM.totalIbs;
    if ((cents(f.tot.vCBS) ?? 0n) !== sumCBS) return REFORM.totalCbs;
  }
  return undefined;
}

/**
 * The alert of an NFC-e authorized with cStat 120: a CRT 3 item without IBSCBS where rule
 * UB12-10 is not in force (see the law table: produção; homologação before 2026-07-01). A sandbox decision:
 * SEFAZ's alerts are not documented to us (docs/fiscal.md).
 */
export function reformAlert(f: ReformFacts): VerdictMessage | undefined {
  if (f.mod !== '65') return undefined;
  const missing = itemWithoutGroup(f);
  if (!missing) return undefined;
  return { cMsg: REFORM.naoInformado.cStat, xMsg: `IBS/CBS não informado [nItem:${missing.nItem}]` };
}
