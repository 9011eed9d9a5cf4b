// The NF-e de devolução: the inbound NF-e (model 55, layout 4.00, tpNF 0, finNFe 4) a store
// issues when a consumer brings back goods bought with an NFC-e, after the NFC-e's cancellation
// window. Built from the authorized NFC-e itself (its nfeProc) and the items and quantities that
// come back, checked, written in schema order and signed with the company's certificate.
//
// Every problem of the request is collected and thrown at once as a FieldError naming the
// request's field (`itens[0].quantidade`); nothing is returned then. Money is bigint cents.
//
// Decisions (docs/fiscal.md, "NF-e de devolução"):
// - Values are proportional to the quantity returned, per item, with CUMULATIVE half-up
//   rounding: a return of q units when r were already returned (authorized or in flight) gets
//   round(v × (r + q) / Q) − round(v × r / Q) of each value v of the sold line (Q units). So the
//   return that brings the last unit back takes the remainder, and the returns of a whole line
//   add up to its values exactly (a returned 1/3 of 10.00 is 3.33, the next 3.33, the last 3.34).
//   This applies to vProd, vDesc, vTotTrib, every money field of the tax groups (vBC, vICMS,
//   vBCSTRet, vPIS, …) and the quantities qTrib and qBCProd; unit prices and rates are kept.
//   vProd may then differ from qCom × vUnCom by one cent, within SEFAZ's 629 tolerance.
// - CFOP: 5101/5103 → 1201, 5102/5104 → 1202 (devolução de venda), 5401/5402 → 1410, 5403/5405
//   → 1411 (devolução de venda com substituição tributária); 2xxx instead of 1xxx when the
//   person returning the goods has an address in another UF (idDest 2). Any other CFOP has no
//   return here and is refused naming the item.
// - idDest: 2 when destinatario.endereco.uf differs from the emitter's UF, else 1. Without an
//   address the goods came back over the counter, in the store's UF: 1, and no enderDest.
// - dest: the NFC-e's consumer when it had one (the request may repeat the document, add a name
//   and an address, never name someone else); otherwise the request's destinatario, required.
//   xNome defaults to the NFC-e's, else "CONSUMIDOR" (homologação: the mandatory text, 598).
//   indIEDest 9: a consumer returning goods is treated as a non-contributor, as on the NFC-e.
// - indFinal 1, indPres 1 (the consumer brings the goods to the counter; no indIntermed then),
//   tpImp 1 (DANFE retrato), natOp "DEVOLUÇÃO DE VENDA", NFref/refNFe = the NFC-e's key.
// - Tax groups are carried from the NFC-e item (scaled as above). NF-e model 55 requires PIS and
//   COFINS, which an NFC-e of the Simples Nacional usually omits: such an item gets
//   PISOutr/COFINSOutr CST 99 with zero base, rate and value.
// - pag: one detPag with tPag 90 (sem pagamento) and vPag 0.00, as NT 2016.002 requires for
//   finNFe 3 and 4. transp/modFrete 9. infAdic/infCpl: the NFC-e referred to and the reason.
// - Tax reform (IBS/CBS): an item whose NFC-e line carried det/imposto/IBSCBS comes back with
//   the same classification and rates (the NFC-e's, whatever the return's date: the return
//   reverses that sale), its base vBC scaled as above and its amounts recomputed from that base
//   (vBC × rate, half-up), so every return is consistent in itself (±0.01 rules) even if the
//   returns of a line may differ from the NFC-e's amounts by a cent. With them: vItem on every
//   item, IBSCBSTot and vNFTot, as in the NFC-e. An NFC-e without the groups gives a return
//   without them (rule UB12-10 does not apply to returns). Every item also names the NFC-e
//   line it returns in det/DFeReferenciado (chaveAcesso, nItem): NT 2025.002 v1.52 moves the
//   reference of a return there (UNVERIFIED whether NFref/refNFe is then refused; it is kept).
// - justificativa (why the goods came back): 15 to 255 characters, like the justifications of
//   the events; `motivo` stays, as everywhere in the API, the authority's text.

import { buildAccessKey, generateNumericCode, isValidNumericCode } from '../access-key.ts';
import { assertMunicipality } from '../br/catalogs.ts';
import { formatTaxId, unmaskTaxId } from '../../base/common/tax-ids.ts';
import { assertCnpj, assertCpf } from '../br/documents.ts';
import { cUFOf } from '../br/uf.ts';
import type { Emitter } from '../company.ts';
import { checkEmitter, type CheckedEmitter } from '../emit-block.ts';
import { FieldError, IssueCollector } from '../errors.ts';
import { environmentOfTpAmb, refuseCnpjsNotYetInForce } from '../law/in-force.ts';
import { infRespTecXml } from '../resp-tec.ts';
import { asObject, DEC, decimal, instant, integer, isAbsent, optTString, pattern, trimZeros, tString, type Dec } from '../layout-fields.ts';
import { formatDecimal, fromCents, parseDecimal } from '../money.ts';
import { HOMOLOGACAO_DEST_XNOME } from '../nfce/dest.ts';
import { DEFAULT_VERPROC } from '../nfce/ide.ts';
import { NS_NFE } from '../protocol.ts';
import { signXml, type SigningCredentials } from '../signature.ts';
import {
  COFINS_VARIANTS,
  fieldKindsOf,
  ICMS_VARIANTS,
  icmsTot,
  itemValue,
  PIS_VARIANTS,
  taxGroup,
  totalXml,
  writeTax,
  type TaxedItem,
  type TaxOut,
  type VariantTable,
} from '../tax-groups.ts';
import { el, text } from '../xml.ts';
import { ibsCbsTotals, ibsCbsTotXml, ibsCbsXml, vNFTotXml } from '../ibscbs/document.ts';
import { amountOf, type IbsCbsItem, type IbsCbsPart } from '../ibscbs/item.ts';
import { parseRate } from '../ibscbs/rates.ts';
import { readOriginalNfce, type OriginalItem, type OriginalNfce, type WrittenIbsCbs, type WrittenIbsCbsPart, type WrittenTaxGroup } from './original-nfce.ts';
import type { DevolucaoRequest } from './types.ts';

export const DEVOLUCAO_NATOP = 'DEVOLUÇÃO DE VENDA';
/** xNome of a consumer returning goods whose name nobody gave. */
export const DEFAULT_DEST_XNOME = 'CONSUMIDOR';

/** The last three digits of the return CFOP, by the CFOP of the sale (see the header). */
const RETURN_CFOP: Readonly<Record<string, string>> = Object.freeze({
  '5101': '201',
  '5103': '201',
  '5102': '202',
  '5104': '202',
  '5401': '410',
  '5402': '410',
  '5403': '411',
  '5405': '411',
});

/** CFOP of the return of an item sold with `saleCfop`; undefined when there is none here. */
export function returnCfop(saleCfop: string, idDest: '1' | '2'): string | undefined {
  const tail = RETURN_CFOP[saleCfop];
  return tail === undefined ? undefined : (idDest === '1' ? '1' : '2') + tail;
}

/**
 * The share of `whole` that returning `quantity` more units brings back when `before` of `sold`
 * units already came back: cumulative half-up rounding (see the header), so the shares of all
 * the returns of a line add up to `whole`.
 */
export function proportionalShare(whole: bigint, sold: bigint, before: bigint, quantity: bigint): bigint {
  if (sold <= 0n) throw new RangeError('quantidade vendida deve ser positiva');
  const upTo = (x: bigint): bigint => (2n * whole * x + sold) / (2n * sold);
  return upTo(before + quantity) - upTo(before);
}

export type BuildDevolucaoContext = {
  emitter: Emitter;
  /** The NFC-e the goods were sold with, as authorized: its nfeProc. */
  nfceXml: string;
  /** Model 55 series and number, allocated by the caller. */
  serie: number;
  nNF: number;
  /** Issue instant: a Date or ISO 8601 with offset; written in the Brasília offset. */
  dhEmi: Date | string;
  /** cNF of the key; generated (NT 2019.001 rules) when absent. */
  cNF?: string;
  /**
   * Quantities of the NFC-e's items already returned by other returns (authorized or still in
   * flight), by nItem, in ten-thousandths of the unit. A return may bring back at most what was
   * sold minus these.
   */
  returned?: ReadonlyMap<number, bigint>;
  verProc?: string;
};

export type IssueDevolucaoContext = BuildDevolucaoContext & { credentials: SigningCredentials };

/** One item as it comes back, for the caller's records. */
export type ReturnedItem = {
  numero_item: number;
  cProd: string;
  xProd: string;
  uCom: string;
  /** As sent in qCom, trimmed: "1", "0.35". */
  quantidade: string;
  /** In ten-thousandths of the unit. */
  units: bigint;
  /** The item's share of vNF (vProd − vDesc + ST), decimal string. */
  valor: string;
};

export type BuiltDevolucao = {
  key: string;
  /** Unsigned `<NFe xmlns="…"><infNFe …>…</infNFe></NFe>`, no XML declaration. */
  xml: string;
  cNF: string;
  /** As written in ide/dhEmi. */
  dhEmi: string;
  tpAmb: 1 | 2;
  idDest: '1' | '2';
  serie: number;
  nNF: number;
  vNF: string;
  items: ReturnedItem[];
  /** The NFC-e referred to. */
  nfce: { key: string; serie: number; nNF: number };
};

export type IssuedDevolucao = BuiltDevolucao;

type ItemOut = TaxedItem & { prod: [string, string][]; vTotTrib?: bigint; ibsCbs: IbsCbsItem | null; nItemNfce: number; returned: ReturnedItem };

/**
 * The IBSCBS of a returned share: the NFC-e line's classification and rates, the base `vBC`
 * (cents, already scaled), the amounts recomputed from it. Throws FieldError when the NFC-e's
 * group cannot be read.
 */
function returnedIbsCbs(written: WrittenIbsCbs, vBC: bigint | undefined, field: string): IbsCbsItem {
  const item: IbsCbsItem = { CST: written.CST, cClassTrib: written.cClassTrib };
  if (!written.group || vBC === undefined) return item;
  const part = (w: WrittenIbsCbsPart, name: string): IbsCbsPart => {
    const p = parseRate(w.p, `${field}.${name}`);
    const red =
      w.pAliqEfet === undefined
        ? undefined
        : { pRedAliq: parseRate(w.pRedAliq, `${field}.${name}.gRed`), pAliqEfet: parseRate(w.pAliqEfet, `${field}.${name}.gRed`) };
    return { p, ...(red && { red }), v: amountOf(vBC, red?.pAliqEfet ?? p) };
  };
  const uf = part(written.group.uf, 'gIBSUF');
  const mun = part(written.group.mun, 'gIBSMun');
  return { ...item, group: { vBC, uf, mun, vIBS: uf.v + mun.v, cbs: part(written.group.cbs, 'gCBS') } };
}

const QTY = (units: bigint): string => trimZeros(formatDecimal(units, 4), 0);

/** PISOutr / COFINSOutr CST 99 with zero base: the group model 55 requires (see the header). */
const zeroContribution = (tax: 'PIS' | 'COFINS'): Record<string, Record<string, string>> => ({
  [`${tax}Outr`]: { CST: '99', vBC: '0.00', [`p${tax}`]: '0.00', [`v${tax}`]: '0.00' },
});

/** The original group with its money fields and quantities scaled by `share` (scale 2 / 4). */
function scaledGroup(group: WrittenTaxGroup, variants: VariantTable, share: (text: string, scale: 2 | 4) => string): Record<string, Record<string, string>> {
  const kinds = fieldKindsOf(variants, group.variant);
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(group.fields)) {
    const kind = kinds?.get(name);
    fields[name] = kind === 'v' ? share(value, 2) : kind === 'q12' ? share(value, 4) : value;
  }
  return { [group.variant]: fields };
}

/** Checks the request against the NFC-e and writes the unsigned return. Throws FieldError with every issue found. */
export function buildDevolucao(input: DevolucaoRequest, ctx: BuildDevolucaoContext): BuiltDevolucao {
  if (typeof input !== 'object' || input === null) throw new FieldError('body', 'corpo da devolução obrigatório');
  if (!ctx?.emitter) throw new FieldError('emit', 'dados do emitente não configurados');
  const issues = new IssueCollector();

  const emit = checkEmitter(ctx.emitter, issues);
  const original = readOriginalNfce(ctx.nfceXml, 'chave_nfce');
  checkReference(input, original, emit, issues);
  const ide = checkIde(ctx, issues);
  const justificativa = issues.capture(() => tString(input.justificativa, 'justificativa', 15, 255));
  const dest = checkDestinatario(input, original, emit.tpAmb === 2, issues);
  const idDest: '1' | '2' = dest.uf !== undefined && emit.uf !== undefined && dest.uf !== emit.uf ? '2' : '1';
  const items = checkReturnedItems(input, original, ctx.returned, idDest, issues);
  refuseCnpjsNotYetInForce(issues, ide.dhEmi?.text, environmentOfTpAmb(emit.tpAmb));

  issues.throwIfAny();

  // Writing (every value below has been checked: the `!` only tell the compiler so)
  const written = ide.dhEmi!.text;
  const key = buildAccessKey({
    cUF: emit.cUF!,
    yearMonth: written.slice(2, 4) + written.slice(5, 7),
    cnpj: emit.cnpj!,
    model: '55',
    serie: ide.serie!,
    number: ide.nNF!,
    tpEmis: 1,
    code: ide.cNF!,
  });
  const tot = icmsTot(items);
  const vTotTrib = items.reduce((a, it) => a + (it.vTotTrib ?? 0n), 0n);
  const withReform = items.some((it) => it.ibsCbs !== null);
  const vNFTot = items.reduce((a, it) => a + (it.indTot === '1' ? itemValue(it) : 0n), 0n);
  const infNFe = el(
    'infNFe',
    { Id: `NFe${key}`, versao: '4.00' },
    ideXml(ide, key, emit, idDest, original.key),
    emit.xml!,
    el('dest', undefined, text(dest.dest!.tag, dest.dest!.doc), text('xNome', dest.xNome), dest.enderDest, text('indIEDest', '9')),
    detXml(items, withReform, original.key),
    totalXml(tot, vTotTrib, withReform ? [ibsCbsTotXml(ibsCbsTotals(items.map((it) => it.ibsCbs))), vNFTotXml(vNFTot)] : []),
    el('transp', undefined, text('modFrete', '9')),
    el('pag', undefined, el('detPag', undefined, text('tPag', '90'), text('vPag', '0.00'))),
    el('infAdic', undefined, text('infCpl', infCplOf(original, justificativa!))),
    ctx.emitter.respTec && infRespTecXml(ctx.emitter.respTec, key, 'nfe'),
  );

  return {
    key,
    xml: el('NFe', { xmlns: NS_NFE }, infNFe),
    cNF: ide.cNF!,
    dhEmi: written,
    tpAmb: emit.tpAmb!,
    idDest,
    serie: ide.serie!,
    nNF: ide.nNF!,
    vNF: fromCents(tot.vNF),
    items: items.map((it) => it.returned),
    nfce: { key: original.key, serie: original.serie, nNF: original.nNF },
  };
}

/** The NFC-e referred to must be the one named, a model 65 of this emitter and environment. */
function checkReference(input: DevolucaoRequest, original: OriginalNfce, emit: CheckedEmitter, issues: IssueCollector): void {
  if (input.chave_nfce !== original.key) issues.add('chave_nfce', `difere da chave da NFC-e original (${original.key})`);
  if (original.mod !== '65') issues.add('chave_nfce', `o documento referido é do modelo ${original.mod}, não uma NFC-e (65)`);
  if (emit.cnpj && original.emitCnpj !== emit.cnpj) issues.add('chave_nfce', `NFC-e emitida por outro CNPJ (${original.emitCnpj})`);
  if (emit.tpAmb && original.tpAmb !== emit.tpAmb) {
    issues.add(
      'chave_nfce',
      `NFC-e emitida em ${original.tpAmb === 1 ? 'produção' : 'homologação'}, a devolução seria em ${emit.tpAmb === 2 ? 'homologação' : 'produção'}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// ide

type CheckedIde = { serie?: number; nNF?: number; dhEmi?: { text: string; ms: number }; verProc?: string; cNF?: string };

function checkIde(ctx: BuildDevolucaoContext, issues: IssueCollector): CheckedIde {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const serie = cap(() => integer(ctx.serie, 'ide.serie', 0, 999));
  const nNF = cap(() => integer(ctx.nNF, 'ide.nNF', 1, 999_999_999));
  const dhEmi = cap(() => instant(ctx.dhEmi, 'ide.dhEmi'));
  const verProc = cap(() => tString(ctx.verProc ?? DEFAULT_VERPROC, 'ide.verProc', 1, 20));
  const cNF = cap(() => {
    if (ctx.cNF === undefined) return nNF === undefined ? undefined : generateNumericCode(nNF);
    if (!/^[0-9]{8}$/.test(ctx.cNF) || (nNF !== undefined && !isValidNumericCode(ctx.cNF, nNF))) {
      throw new FieldError('ide.cNF', 'código numérico inválido: 8 dígitos, sem repetição ou sequência, diferente de nNF (rejeição 897)');
    }
    return ctx.cNF;
  });
  return { serie, nNF, dhEmi, verProc, cNF };
}

function ideXml(ide: CheckedIde, key: string, emit: CheckedEmitter, idDest: '1' | '2', nfceKey: string): string {
  return el(
    'ide',
    undefined,
    text('cUF', emit.cUF!),
    text('cNF', ide.cNF!),
    text('natOp', DEVOLUCAO_NATOP),
    text('mod', '55'),
    text('serie', ide.serie!),
    text('nNF', ide.nNF!),
    text('dhEmi', ide.dhEmi!.text),
    text('tpNF', '0'),
    text('idDest', idDest),
    text('cMunFG', emit.cMun!),
    text('tpImp', '1'),
    text('tpEmis', '1'),
    text('cDV', key.slice(43)),
    text('tpAmb', emit.tpAmb!),
    text('finNFe', '4'),
    text('indFinal', '1'),
    text('indPres', '1'),
    text('procEmi', '0'),
    text('verProc', ide.verProc!),
    el('NFref', undefined, text('refNFe', nfceKey)),
  );
}

// ---------------------------------------------------------------------------------------------
// dest

type CheckedDestinatario = {
  /** The document; undefined only when something was reported. */
  dest?: { tag: 'CPF' | 'CNPJ' | 'idEstrangeiro'; doc: string };
  xNome: string;
  /** `<enderDest>` and its UF, when the request gave a sound address. */
  enderDest?: string;
  uf?: string;
};

/** Who returns the goods: the NFC-e's consumer, or the one the request names (see the header). */
function checkDestinatario(input: DevolucaoRequest, original: OriginalNfce, homolog: boolean, issues: IssueCollector): CheckedDestinatario {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const given = input.destinatario === undefined || input.destinatario === null ? undefined : asObject(input.destinatario, 'destinatario', issues);
  const givenIds = given ? (['cpf', 'cnpj'] as const).filter((k) => !isAbsent(given[k])) : [];
  let dest: CheckedDestinatario['dest'];
  if (givenIds.length > 1) issues.add('destinatario', 'informe apenas um entre cpf e cnpj');
  const givenDoc = givenIds.length === 1 ? givenIds[0]! : undefined;
  if (original.dest) {
    dest = { tag: original.dest.tag, doc: original.dest.doc };
    if (givenDoc) {
      // Letters are part of an alphanumeric CNPJ: only the mask's punctuation is ignored.
      const value = unmaskTaxId(String(given![givenDoc]));
      if (`${givenDoc.toUpperCase()}` !== original.dest.tag || value !== original.dest.doc) {
        issues.add(
          `destinatario.${givenDoc}`,
          `difere do consumidor identificado na NFC-e (${original.dest.tag} ${formatTaxId(original.dest.doc)}): a devolução é de quem comprou`,
        );
      }
    }
  } else if (givenDoc === 'cpf') {
    const doc = cap(() => assertCpf(given!.cpf, 'destinatario.cpf'));
    if (doc) dest = { tag: 'CPF', doc };
  } else if (givenDoc === 'cnpj') {
    const doc = cap(() => assertCnpj(given!.cnpj, 'destinatario.cnpj', issues));
    if (doc) dest = { tag: 'CNPJ', doc };
  } else if (givenIds.length === 0) {
    issues.add('destinatario', 'obrigatório: a NFC-e não identificou o consumidor; informe o cpf ou o cnpj e o nome de quem devolve');
  }
  const givenName = given ? cap(() => optTString(given.nome, 'destinatario.nome', 2, 60)) : undefined;
  const xNome = homolog ? HOMOLOGACAO_DEST_XNOME : (givenName ?? original.dest?.xNome ?? DEFAULT_DEST_XNOME);
  const address = given && given.endereco !== undefined && given.endereco !== null ? checkAddress(given.endereco, issues) : undefined;
  return { dest, xNome, enderDest: address?.xml, uf: address?.uf };
}

/** destinatario.endereco: `<enderDest>` and its UF, or undefined when anything was reported. */
function checkAddress(endereco: unknown, issues: IssueCollector): { xml: string; uf: string } | undefined {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const a = asObject(endereco, 'destinatario.endereco', issues);
  if (!a) return undefined;
  const p = 'destinatario.endereco';
  const uf = cap(() => {
    const value = typeof a.uf === 'string' ? a.uf : '';
    cUFOf(value, `${p}.uf`);
    return value;
  });
  const f = {
    xLgr: cap(() => tString(a.logradouro, `${p}.logradouro`, 2, 60)),
    nro: cap(() => tString(a.numero, `${p}.numero`, 1, 60)),
    xCpl: cap(() => optTString(a.complemento, `${p}.complemento`, 1, 60)),
    xBairro: cap(() => tString(a.bairro, `${p}.bairro`, 2, 60)),
    cMun: cap(() => assertMunicipality(a.codigo_municipio, uf, `${p}.codigo_municipio`).code),
    xMun: cap(() => tString(a.municipio, `${p}.municipio`, 2, 60)),
    CEP: cap(() => (isAbsent(a.cep) ? undefined : pattern(a.cep, `${p}.cep`, /^[0-9]{8}$/, 'CEP deve ter 8 dígitos, sem hífen'))),
    fone: cap(() => (isAbsent(a.telefone) ? undefined : pattern(a.telefone, `${p}.telefone`, /^[0-9]{6,14}$/, 'telefone deve ter de 6 a 14 dígitos'))),
  };
  if (!(uf && f.xLgr && f.nro && f.xBairro && f.cMun && f.xMun)) return undefined;
  const xml = el(
    'enderDest',
    undefined,
    text('xLgr', f.xLgr),
    text('nro', f.nro),
    text('xCpl', f.xCpl),
    text('xBairro', f.xBairro),
    text('cMun', f.cMun),
    text('xMun', f.xMun),
    text('UF', uf),
    text('CEP', f.CEP),
    text('cPais', '1058'),
    text('xPais', 'BRASIL'),
    text('fone', f.fone),
  );
  return { xml, uf };
}

// ---------------------------------------------------------------------------------------------
// det

/** The items that come back, each checked against its NFC-e line; only the sound ones. */
function checkReturnedItems(
  input: DevolucaoRequest,
  original: OriginalNfce,
  returned: ReadonlyMap<number, bigint> | undefined,
  idDest: '1' | '2',
  issues: IssueCollector,
): ItemOut[] {
  const byNumber = new Map<number, OriginalItem>(original.items.map((it) => [it.nItem, it]));
  const lastItem = Math.max(...original.items.map((it) => it.nItem));
  const items: ItemOut[] = [];
  if (!Array.isArray(input.itens) || input.itens.length === 0) issues.add('itens', 'informe ao menos um item devolvido');
  const seen = new Set<number>();
  for (const [i, raw] of (Array.isArray(input.itens) ? input.itens : []).entries()) {
    const base = `itens[${i}]`;
    const obj = asObject(raw, base, issues);
    if (!obj) continue;
    const n = issues.capture(() => integer(obj.numero_item, `${base}.numero_item`, 1, 990));
    const orig = n === undefined ? undefined : byNumber.get(n);
    if (n !== undefined && !orig) issues.add(`${base}.numero_item`, `a NFC-e não tem o item ${n} (itens de 1 a ${lastItem})`);
    if (n !== undefined && seen.has(n)) issues.add(`${base}.numero_item`, `item ${n} repetido: informe cada item uma vez, com a quantidade total`);
    if (n !== undefined) seen.add(n);
    const q = issues.capture(() => decimal(obj.quantidade, `${base}.quantidade`, DEC.q));
    if (q && q.units === 0n) issues.add(`${base}.quantidade`, 'deve ser maior que zero');
    if (!orig || !q || q.units === 0n) continue;
    const item = checkReturnedItem(orig, q, base, returned?.get(orig.nItem) ?? 0n, idDest, issues);
    if (item) items.push(item);
  }
  return items;
}

/** Where a problem of the NFC-e's own content is reported: the request names it by its key. */
const ORIGINAL = 'chave_nfce';

/**
 * `q` more units of the NFC-e line `orig`, of which `before` already came back: its prod and
 * taxes scaled by the share returned; undefined when anything was reported.
 */
function checkReturnedItem(orig: OriginalItem, q: Dec, base: string, before: bigint, idDest: '1' | '2', issues: IssueCollector): ItemOut | undefined {
  const prod = new Map(orig.prod);
  const sold = issues.capture(() => parseDecimal(prod.get('qCom'), 4, ORIGINAL));
  if (sold === undefined || sold === 0n) return undefined;
  const available = sold > before ? sold - before : 0n;
  const uCom = prod.get('uCom') ?? '';
  if (q.units > available) {
    issues.add(
      `${base}.quantidade`,
      `maior que o disponível para devolução do item ${orig.nItem}: vendido ${QTY(sold)} ${uCom}, já devolvido ${QTY(before)}, disponível ${QTY(available)}`,
    );
    return undefined;
  }
  const share = (value: string, scale: 2 | 4): string => {
    const units = parseDecimal(value, scale, ORIGINAL);
    return formatDecimal(proportionalShare(units, sold, before, q.units), scale);
  };
  const cfop = returnCfop(prod.get('CFOP') ?? '', idDest);
  if (!cfop) issues.add(`${base}.numero_item`, `o item ${orig.nItem} foi vendido com CFOP ${prod.get('CFOP')}, sem CFOP de devolução previsto aqui`);
  const unsupported = orig.prod.map(([name]) => name).filter((name) => ['vFrete', 'vSeg', 'vOutro'].includes(name));
  if (unsupported.length) issues.add(`${base}.numero_item`, `o item ${orig.nItem} tem ${unsupported.join(', ')}: não suportado na devolução`);
  const p = returnedProd(orig, q, cfop, share);
  const taxes = returnedTaxes(orig, share, issues);
  if (!taxes) return undefined;
  const taxed: TaxedItem = { icms: taxes.icms, pis: taxes.pis, cofins: taxes.cofins, vProd: p.vProd, vDesc: p.vDesc, indTot: prod.get('indTot') ?? '1' };
  return {
    ...taxed,
    prod: p.out,
    vTotTrib: taxes.vTotTrib,
    ibsCbs: taxes.ibsCbs,
    nItemNfce: orig.nItem,
    returned: {
      numero_item: orig.nItem,
      cProd: prod.get('cProd') ?? '',
      xProd: prod.get('xProd') ?? '',
      uCom,
      quantidade: QTY(q.units),
      units: q.units,
      valor: fromCents(icmsTot([taxed]).vNF),
    },
  };
}

type Share = (value: string, scale: 2 | 4) => string;

/** The NFC-e line's prod as it comes back: the return CFOP, the quantity returned, values scaled. */
function returnedProd(orig: OriginalItem, q: Dec, cfop: string | undefined, share: Share): { out: [string, string][]; vProd: bigint; vDesc: bigint } {
  const out: [string, string][] = [];
  let vProd = 0n;
  let vDesc = 0n;
  for (const [name, value] of orig.prod) {
    switch (name) {
      case 'CFOP':
        out.push([name, cfop ?? value]);
        break;
      case 'qCom':
        out.push([name, q.text]);
        break;
      case 'qTrib':
        out.push([name, trimZeros(share(value, 4), 4)]);
        break;
      case 'vProd':
        vProd = parseDecimal(share(value, 2), 2, ORIGINAL);
        out.push([name, fromCents(vProd)]);
        break;
      case 'vDesc':
        // TDec_1302Opc: a zero discount is left out.
        vDesc = parseDecimal(share(value, 2), 2, ORIGINAL);
        if (vDesc > 0n) out.push([name, fromCents(vDesc)]);
        break;
      default:
        out.push([name, value]);
    }
  }
  return { out, vProd, vDesc };
}

/** The NFC-e line's taxes scaled by the share returned; undefined when anything was reported. */
function returnedTaxes(
  orig: OriginalItem,
  share: Share,
  issues: IssueCollector,
): { icms: TaxOut; pis: TaxOut; cofins: TaxOut; vTotTrib?: bigint; ibsCbs: IbsCbsItem | null } | undefined {
  const tax = `nfce.det[${orig.nItem}].imposto`;
  const icms = taxGroup(scaledGroup(orig.icms, ICMS_VARIANTS, share), ICMS_VARIANTS, `${tax}.ICMS`, issues);
  const pis = taxGroup(orig.pis ? scaledGroup(orig.pis, PIS_VARIANTS, share) : zeroContribution('PIS'), PIS_VARIANTS, `${tax}.PIS`, issues);
  const cofins = taxGroup(
    orig.cofins ? scaledGroup(orig.cofins, COFINS_VARIANTS, share) : zeroContribution('COFINS'),
    COFINS_VARIANTS,
    `${tax}.COFINS`,
    issues,
  );
  const vTotTrib = orig.vTotTrib === undefined ? undefined : parseDecimal(share(orig.vTotTrib, 2), 2, ORIGINAL);
  const ibsCbs = orig.ibsCbs
    ? issues.capture(() => {
        const vBC = orig.ibsCbs!.group ? parseDecimal(share(orig.ibsCbs!.group.vBC, 2), 2, ORIGINAL) : undefined;
        return returnedIbsCbs(orig.ibsCbs!, vBC, `${tax}.IBSCBS`);
      })
    : null;
  if (!icms || !pis || !cofins || ibsCbs === undefined) return undefined;
  return { icms, pis, cofins, vTotTrib, ibsCbs };
}

function detXml(items: readonly ItemOut[], withReform: boolean, nfceKey: string): string[] {
  return items.map((it, k) =>
    el(
      'det',
      { nItem: k + 1 },
      el(
        'prod',
        undefined,
        it.prod.map(([n, v]) => text(n, v)),
      ),
      el(
        'imposto',
        undefined,
        it.vTotTrib !== undefined && text('vTotTrib', fromCents(it.vTotTrib)),
        el('ICMS', undefined, writeTax(it.icms)),
        el('PIS', undefined, writeTax(it.pis!)),
        el('COFINS', undefined, writeTax(it.cofins!)),
        it.ibsCbs && ibsCbsXml(it.ibsCbs),
      ),
      withReform && text('vItem', fromCents(itemValue(it))),
      el('DFeReferenciado', undefined, text('chaveAcesso', nfceKey), text('nItem', it.nItemNfce)),
    ),
  );
}

/** infAdic/infCpl: the NFC-e referred to and why the goods came back. */
function infCplOf(original: OriginalNfce, justificativa: string): string {
  return (
    `Devolução de mercadoria da NFC-e série ${original.serie} nº ${original.nNF}, chave ${original.key}, ` +
    `emitida em ${original.dhEmi.slice(8, 10)}/${original.dhEmi.slice(5, 7)}/${original.dhEmi.slice(0, 4)}. Motivo: ${justificativa}`
  );
}

/** Builds and signs the return (Signature last in `<NFe>`; model 55 has no infNFeSupl). */
export function issueDevolucao(input: DevolucaoRequest, ctx: IssueDevolucaoContext): IssuedDevolucao {
  if (!ctx?.credentials || isAbsent(ctx.credentials.privateKeyPem) || isAbsent(ctx.credentials.certificatePem)) {
    throw new FieldError('certificado', 'certificado digital (chave privada e certificado) obrigatório para assinar');
  }
  const built = buildDevolucao(input, ctx);
  return { ...built, xml: signXml(built.xml, ctx.credentials) };
}
