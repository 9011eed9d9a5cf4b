// The tax groups of an item (imposto/ICMS, PIS, COFINS) as data, and the ICMSTot they add up to,
// shared by the NFC-e and the NF-e de devolução builders.
//
// For each variant: the schema's element order, occurrence and type, transcribed from
// leiauteNFe_v4.00.xsd. The request carries one variant per tax (`{ ICMS40: { orig, CST } }`);
// it is checked and written generically from these tables, so a new variant is a table entry.
// Not supported on purpose: the monophasic fuel groups (ICMS02/15/53/61, which need the qBCMono
// totals), ICMSPart and ICMSST (interstate partition / ST transfer, not NFC-e operations), and
// IPI/II (rejections 742/743 in NFC-e).

import { FieldError, type IssueCollector } from './errors.ts';
import { DEC, decimal, isAbsent } from './layout-fields.ts';
import { fromCents } from './money.ts';
import { el, text } from './xml.ts';

export type Kind =
  | 'orig' // Torig: 0..8
  | 'v' // TDec_1302 / TDec_1302Opc: 13 integer digits, exactly 2 decimals
  | 'p' // TDec_0302a04(Opc): rate, 3 integer digits, 2 to 4 decimals
  | 'pMax100' // TDec_0302a04Max100: rate up to 100
  | 'q' // TDec_1104v: 11 integer digits, written with 4 decimals
  | 'q12' // TDec_1204v: 12 integer digits, written with 4 decimals
  | 'cBenef' // [!-ÿ]{8}|[!-ÿ]{10}
  | readonly string[]; // enumeration

type FieldNode = { field: string; kind: Kind; optional?: boolean };
/** A nested xs:sequence; optional ones (minOccurs="0") are all-or-nothing. */
type SeqNode = { seq: TaxNode[]; optional?: boolean };
/** An xs:choice between sequences: exactly one branch is written. */
type ChoiceNode = { choice: TaxNode[][] };
export type TaxNode = FieldNode | SeqNode | ChoiceNode;
export type VariantTable = Readonly<Record<string, readonly TaxNode[]>>;

const f = (field: string, kind: Kind): FieldNode => ({ field, kind });
const o = (field: string, kind: Kind): FieldNode => ({ field, kind, optional: true });
const g = (...seq: TaxNode[]): SeqNode => ({ seq, optional: true });
const choice = (...branches: TaxNode[][]): ChoiceNode => ({ choice: branches });

const MOD_BC = ['0', '1', '2', '3'];
const MOD_BC_ST = ['0', '1', '2', '3', '4', '5', '6'];
const ORIG = f('orig', 'orig');
const cst = (...values: string[]) => f('CST', values);
const csosn = (...values: string[]) => f('CSOSN', values);
const FCP = g(f('vBCFCP', 'v'), f('pFCP', 'p'), f('vFCP', 'v'));
const FCP_ST = g(f('vBCFCPST', 'v'), f('pFCPST', 'p'), f('vFCPST', 'v'));
const ST: TaxNode[] = [f('modBCST', MOD_BC_ST), o('pMVAST', 'p'), o('pRedBCST', 'p'), f('vBCST', 'v'), f('pICMSST', 'p'), f('vICMSST', 'v'), FCP_ST];
const deson = (motives: string[]): SeqNode => g(f('vICMSDeson', 'v'), f('motDesICMS', motives), o('indDeduzDeson', ['0', '1']));
const ST_DESON = g(f('vICMSSTDeson', 'v'), f('motDesICMSST', ['3', '9', '12']));
const ST_RET: TaxNode[] = [
  g(f('vBCSTRet', 'v'), f('pST', 'p'), o('vICMSSubstituto', 'v'), f('vICMSSTRet', 'v')),
  g(f('vBCFCPSTRet', 'v'), f('pFCPSTRet', 'p'), f('vFCPSTRet', 'v')),
  g(f('pRedBCEfet', 'p'), f('vBCEfet', 'v'), f('pICMSEfet', 'p'), f('vICMSEfet', 'v')),
];

/** ICMS variants: regime normal (CST) first, Simples Nacional (CSOSN) after. */
export const ICMS_VARIANTS: VariantTable = {
  ICMS00: [ORIG, cst('00'), f('modBC', MOD_BC), f('vBC', 'v'), f('pICMS', 'p'), f('vICMS', 'v'), g(f('pFCP', 'p'), f('vFCP', 'v'))],
  ICMS10: [ORIG, cst('10'), f('modBC', MOD_BC), f('vBC', 'v'), f('pICMS', 'p'), f('vICMS', 'v'), FCP, ...ST, ST_DESON],
  ICMS20: [ORIG, cst('20'), f('modBC', MOD_BC), f('pRedBC', 'p'), f('vBC', 'v'), f('pICMS', 'p'), f('vICMS', 'v'), FCP, deson(['3', '9', '12'])],
  ICMS30: [ORIG, cst('30'), ...ST, deson(['6', '7', '9'])],
  ICMS40: [ORIG, cst('40', '41', '50'), deson(['1', '3', '4', '5', '6', '7', '8', '9', '10', '11', '16', '90'])],
  ICMS51: [
    ORIG,
    cst('51'),
    o('modBC', MOD_BC),
    o('pRedBC', 'p'),
    o('cBenefRBC', 'cBenef'),
    o('vBC', 'v'),
    o('pICMS', 'p'),
    o('vICMSOp', 'v'),
    o('pDif', 'pMax100'),
    o('vICMSDif', 'v'),
    o('vICMS', 'v'),
    FCP,
    g(f('pFCPDif', 'p'), f('vFCPDif', 'v'), o('vFCPEfet', 'v')),
  ],
  ICMS60: [ORIG, cst('60'), ...ST_RET],
  ICMS70: [
    ORIG,
    cst('70'),
    f('modBC', MOD_BC),
    f('pRedBC', 'p'),
    f('vBC', 'v'),
    f('pICMS', 'p'),
    f('vICMS', 'v'),
    FCP,
    ...ST,
    deson(['3', '9', '12']),
    ST_DESON,
  ],
  ICMS90: [
    ORIG,
    cst('90'),
    g(f('modBC', MOD_BC), f('vBC', 'v'), o('pRedBC', 'p'), f('pICMS', 'p'), f('vICMS', 'v'), FCP),
    g(...ST),
    deson(['3', '9', '12']),
    ST_DESON,
  ],
  ICMSSN101: [ORIG, csosn('101'), f('pCredSN', 'p'), f('vCredICMSSN', 'v')],
  ICMSSN102: [o('orig', 'orig'), csosn('102', '103', '300', '400')],
  ICMSSN201: [ORIG, csosn('201'), ...ST, f('pCredSN', 'p'), f('vCredICMSSN', 'v')],
  ICMSSN202: [ORIG, csosn('202', '203'), ...ST],
  ICMSSN500: [ORIG, csosn('500'), ...ST_RET],
  ICMSSN900: [
    o('orig', 'orig'),
    csosn('900'),
    g(f('modBC', MOD_BC), f('vBC', 'v'), o('pRedBC', 'p'), f('pICMS', 'p'), f('vICMS', 'v')),
    g(...ST),
    g(f('pCredSN', 'p'), f('vCredICMSSN', 'v')),
  ],
};

const OUTR_CST = [
  '49',
  '50',
  '51',
  '52',
  '53',
  '54',
  '55',
  '56',
  '60',
  '61',
  '62',
  '63',
  '64',
  '65',
  '66',
  '67',
  '70',
  '71',
  '72',
  '73',
  '74',
  '75',
  '98',
  '99',
];

const contributionVariants = (tax: 'PIS' | 'COFINS'): VariantTable => ({
  [`${tax}Aliq`]: [cst('01', '02'), f('vBC', 'v'), f(`p${tax}`, 'p'), f(`v${tax}`, 'v')],
  [`${tax}Qtde`]: [cst('03'), f('qBCProd', 'q12'), f('vAliqProd', 'q'), f(`v${tax}`, 'v')],
  [`${tax}NT`]: [cst('04', '05', '06', '07', '08', '09')],
  [`${tax}Outr`]: [cst(...OUTR_CST), choice([f('vBC', 'v'), f(`p${tax}`, 'p')], [f('qBCProd', 'q12'), f('vAliqProd', 'q')]), f(`v${tax}`, 'v')],
});

export const PIS_VARIANTS: VariantTable = contributionVariants('PIS');
export const COFINS_VARIANTS: VariantTable = contributionVariants('COFINS');

// ---------------------------------------------------------------------------------------------
// Tax group walker

export type TaxOut = { variant: string; fields: [string, string][]; cents: Record<string, bigint>; raw: Record<string, unknown> };

export function fieldsOf(nodes: readonly TaxNode[]): string[] {
  let fields = fieldLists.get(nodes);
  if (!fields) {
    fields = nodes.flatMap((n) => ('field' in n ? [n.field] : 'seq' in n ? fieldsOf(n.seq) : n.choice.flatMap(fieldsOf)));
    fieldLists.set(nodes, fields);
  }
  return fields;
}

// The tables never change: their field lists (and sets) are computed once per node list, not
// once per item.
const fieldLists = new WeakMap<readonly TaxNode[], string[]>();
const fieldSets = new WeakMap<readonly TaxNode[], ReadonlySet<string>>();

function fieldSetOf(nodes: readonly TaxNode[]): ReadonlySet<string> {
  let set = fieldSets.get(nodes);
  if (!set) {
    set = new Set(fieldsOf(nodes));
    fieldSets.set(nodes, set);
  }
  return set;
}

function taxValue(kind: Kind, value: unknown, path: string): { text: string; cents?: bigint } {
  if (typeof value !== 'string') throw new FieldError(path, 'deve ser texto');
  if (typeof kind !== 'string') {
    if (!kind.includes(value)) throw new FieldError(path, `valor "${value}" não previsto; aceitos: ${kind.join(', ')}`);
    return { text: value };
  }
  switch (kind) {
    case 'orig':
      if (!/^[0-8]$/.test(value)) throw new FieldError(path, 'origem da mercadoria deve ser de 0 a 8');
      return { text: value };
    case 'cBenef':
      if (!/^([!-\u00ff]{8}|[!-\u00ff]{10})$/.test(value)) throw new FieldError(path, 'deve ter 8 ou 10 caracteres');
      return { text: value };
    case 'v': {
      const d = decimal(value, path, DEC.v);
      return { text: d.text, cents: d.units };
    }
    default:
      return { text: decimal(value, path, DEC[kind]).text };
  }
}

function walkTax(nodes: readonly TaxNode[], data: Record<string, unknown>, base: string, out: TaxOut, issues: IssueCollector): void {
  for (const node of nodes) {
    if ('field' in node) {
      const value = data[node.field];
      if (isAbsent(value)) {
        if (!node.optional) issues.add(`${base}.${node.field}`, 'obrigatório');
        continue;
      }
      const written = issues.capture(() => taxValue(node.kind, value, `${base}.${node.field}`));
      if (!written) continue;
      out.fields.push([node.field, written.text]);
      if (written.cents !== undefined) out.cents[node.field] = written.cents;
    } else if ('seq' in node) {
      // An optional sequence is written whole when any of its fields is given, else not at all.
      if (node.optional && !fieldsOf(node.seq).some((n) => !isAbsent(data[n]))) continue;
      walkTax(node.seq, data, base, out, issues);
    } else {
      const chosen = node.choice.filter((b) => fieldsOf(b).some((n) => !isAbsent(data[n])));
      if (chosen.length !== 1) {
        const options = node.choice.map((b) => fieldsOf(b).join(' e ')).join(', ou ');
        issues.add(`${base}.${fieldsOf(node.choice[0]!)[0]}`, `informe ${options} (um dos dois conjuntos)`);
        continue;
      }
      walkTax(chosen[0]!, data, base, out, issues);
    }
  }
}

/** Checks one tax group (`{ ICMS40: {...} }`) against its table; undefined when it had issues. */
export function taxGroup(group: unknown, variants: VariantTable, path: string, issues: IssueCollector): TaxOut | undefined {
  if (typeof group !== 'object' || group === null || Array.isArray(group)) {
    issues.add(path, 'obrigatório: um objeto com o grupo da tributação (ex.: { "ICMS40": { ... } })');
    return undefined;
  }
  const names = Object.keys(group);
  if (names.length !== 1) {
    issues.add(path, `informe exatamente um grupo (recebidos ${names.length}: ${names.join(', ') || 'nenhum'})`);
    return undefined;
  }
  const variant = names[0]!;
  const nodes = variants[variant];
  const base = `${path}.${variant}`;
  if (!nodes) {
    issues.add(base, `grupo não suportado; aceitos: ${Object.keys(variants).join(', ')}`);
    return undefined;
  }
  const data = (group as Record<string, unknown>)[variant];
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    issues.add(base, 'deve ser um objeto com os campos do grupo');
    return undefined;
  }
  const before = issues.issues.length;
  const known = fieldSetOf(nodes);
  for (const k of Object.keys(data)) if (!known.has(k)) issues.add(`${base}.${k}`, `campo não previsto no grupo ${variant}`);
  const out: TaxOut = { variant, fields: [], cents: {}, raw: data as Record<string, unknown> };
  walkTax(nodes, out.raw, base, out, issues);
  return issues.issues.length === before ? out : undefined;
}

export const writeTax = (t: TaxOut): string =>
  el(
    t.variant,
    undefined,
    t.fields.map(([n, v]) => text(n, v)),
  );

/** Each field of a variant with its kind (e.g. to scale the money fields of a carried group). */
export function fieldKindsOf(variants: VariantTable, variant: string): ReadonlyMap<string, Kind> | undefined {
  const nodes = variants[variant];
  if (!nodes) return undefined;
  const kinds = new Map<string, Kind>();
  const walk = (list: readonly TaxNode[]): void => {
    for (const n of list) {
      if ('field' in n) kinds.set(n.field, n.kind);
      else if ('seq' in n) walk(n.seq);
      else n.choice.forEach(walk);
    }
  };
  walk(nodes);
  return kinds;
}

// ---------------------------------------------------------------------------------------------
// ICMSTot

/** What an item contributes to the totals: its checked tax groups and its values in cents. */
export type TaxedItem = { icms: TaxOut; pis?: TaxOut; cofins?: TaxOut; vProd: bigint; vDesc: bigint; indTot: string };

export type IcmsTot = {
  vBC: bigint;
  vICMS: bigint;
  vICMSDeson: bigint;
  vFCP: bigint;
  vBCST: bigint;
  vST: bigint;
  vFCPST: bigint;
  vFCPSTRet: bigint;
  vProd: bigint;
  vDesc: bigint;
  vPIS: bigint;
  vCOFINS: bigint;
  vNF: bigint;
};

/**
 * The totals of the items. vNF = vProd − vDesc − vICMSDeson deducted (NT 2023.004,
 * indDeduzDeson 1) + vST + vFCPST: frete, seguro, outras, II and IPI do not occur in our documents.
 */
export function icmsTot(items: readonly TaxedItem[]): IcmsTot {
  const sum = (pick: (it: TaxedItem) => bigint): bigint => items.reduce((a, it) => a + pick(it), 0n);
  const icmsSum = (name: string): bigint => sum((it) => it.icms.cents[name] ?? 0n);
  const tot = {
    vBC: icmsSum('vBC'),
    vICMS: icmsSum('vICMS'),
    vICMSDeson: icmsSum('vICMSDeson'),
    vFCP: icmsSum('vFCP'),
    vBCST: icmsSum('vBCST'),
    vST: icmsSum('vICMSST'),
    vFCPST: icmsSum('vFCPST'),
    vFCPSTRet: icmsSum('vFCPSTRet'),
    vProd: sum((it) => (it.indTot === '1' ? it.vProd : 0n)),
    vDesc: sum((it) => it.vDesc),
    vPIS: sum((it) => it.pis?.cents.vPIS ?? 0n),
    vCOFINS: sum((it) => it.cofins?.cents.vCOFINS ?? 0n),
  };
  const deducted = sum((it) => (it.icms.raw.indDeduzDeson === '1' ? (it.icms.cents.vICMSDeson ?? 0n) : 0n));
  return { ...tot, vNF: tot.vProd - tot.vDesc - deducted + tot.vST + tot.vFCPST };
}

/**
 * What one item adds to the note (its vItem, NT 2025.002 VB01-10 as it applies to our items):
 * vProd − vDesc − vICMSDeson deducted + vICMSST + vFCPST. The IBS and CBS are not added: in 2026
 * they are informative, from 2027 they are inside vProd.
 */
export function itemValue(it: TaxedItem): bigint {
  const c = it.icms.cents;
  const deducted = it.icms.raw.indDeduzDeson === '1' ? (c.vICMSDeson ?? 0n) : 0n;
  return it.vProd - it.vDesc - deducted + (c.vICMSST ?? 0n) + (c.vFCPST ?? 0n);
}

/**
 * `<total><ICMSTot>…</ICMSTot>…</total>` in schema order; `after` are the groups that follow
 * ICMSTot (IBSCBSTot, vNFTot), already written.
 */
export function totalXml(t: IcmsTot, vTotTrib: bigint, after: (string | undefined)[] = []): string {
  const v = (name: string, cents: bigint) => text(name, fromCents(cents));
  return el(
    'total',
    undefined,
    el(
      'ICMSTot',
      undefined,
      v('vBC', t.vBC),
      v('vICMS', t.vICMS),
      v('vICMSDeson', t.vICMSDeson),
      v('vFCP', t.vFCP),
      v('vBCST', t.vBCST),
      v('vST', t.vST),
      v('vFCPST', t.vFCPST),
      v('vFCPSTRet', t.vFCPSTRet),
      v('vProd', t.vProd),
      text('vFrete', '0.00'),
      text('vSeg', '0.00'),
      v('vDesc', t.vDesc),
      text('vII', '0.00'),
      text('vIPI', '0.00'),
      text('vIPIDevol', '0.00'),
      v('vPIS', t.vPIS),
      v('vCOFINS', t.vCOFINS),
      text('vOutro', '0.00'),
      v('vNF', t.vNF),
      v('vTotTrib', vTotTrib),
    ),
    after,
  );
}
