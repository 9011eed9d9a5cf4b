// Reads what a return needs from the authorized NFC-e it refers to: the key, the emitter, the
// consumer, and every item with its product fields and tax groups exactly as written. The
// document is an nfeProc (the NFe with its authorization protocol): a return refers to a
// receipt that the authority authorized, so a bare NFe, or one whose protocol is not an
// authorization, is refused. Parsed with a real XML parser (xmldom), not the light string
// readers of our own compact documents: the items and tax groups are nested and open-ended.

import { DOMParser } from '@xmldom/xmldom';
import { keyOfId } from '../access-key.ts';
import { FieldError } from '../errors.ts';
import { AUTHORIZED_CSTAT, NS_NFE } from '../protocol.ts';

/** A tax group as written: `{ variant: 'ICMSSN102', fields: { orig: '0', CSOSN: '102' } }`. */
export type WrittenTaxGroup = { variant: string; fields: Record<string, string> };

/** One of gIBSUF / gIBSMun / gCBS as written: the rate and its reduction. */
export type WrittenIbsCbsPart = { p: string; pRedAliq?: string; pAliqEfet?: string };

/** det/imposto/IBSCBS as written (tax reform): the classification and, when present, gIBSCBS. */
export type WrittenIbsCbs = {
  CST: string;
  cClassTrib: string;
  group?: { vBC: string; uf: WrittenIbsCbsPart; mun: WrittenIbsCbsPart; cbs: WrittenIbsCbsPart };
};

export type OriginalItem = {
  nItem: number;
  /** prod's children in document order, as written. */
  prod: [string, string][];
  icms: WrittenTaxGroup;
  pis?: WrittenTaxGroup;
  cofins?: WrittenTaxGroup;
  vTotTrib?: string;
  ibsCbs?: WrittenIbsCbs;
};

export type OriginalDest = { tag: 'CPF' | 'CNPJ' | 'idEstrangeiro'; doc: string; xNome?: string };

export type OriginalNfce = {
  key: string;
  mod: string;
  serie: number;
  nNF: number;
  dhEmi: string;
  tpAmb: number;
  emitCnpj: string;
  /** cStat of the authorization protocol (100, 120 or 150). */
  cStat: string;
  dest?: OriginalDest;
  items: OriginalItem[];
};

// 120: "autorizado com alerta" (NT 2026.002), an authorization like the others.

type El = Element;

function children(parent: El): El[] {
  const out: El[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as El);
  return out;
}

const child = (parent: El | undefined, name: string): El | undefined => (parent ? children(parent).find((c) => c.localName === name) : undefined);
const textOf = (parent: El | undefined, name: string): string | undefined => child(parent, name)?.textContent ?? undefined;

function taxGroupOf(imposto: El, tax: string): WrittenTaxGroup | undefined {
  const group = child(imposto, tax);
  const variant = group && children(group)[0];
  if (!variant) return undefined;
  return { variant: variant.localName, fields: Object.fromEntries(children(variant).map((f) => [f.localName, f.textContent ?? ''])) };
}

function ibsCbsOf(imposto: El): WrittenIbsCbs | undefined {
  const group = child(imposto, 'IBSCBS');
  if (!group) return undefined;
  const g = child(group, 'gIBSCBS');
  const part = (name: string, rate: string): WrittenIbsCbsPart => {
    const el = child(g, name);
    const red = child(el, 'gRed');
    return { p: textOf(el, rate) ?? '', ...(red && { pRedAliq: textOf(red, 'pRedAliq') ?? '', pAliqEfet: textOf(red, 'pAliqEfet') ?? '' }) };
  };
  return {
    CST: textOf(group, 'CST') ?? '',
    cClassTrib: textOf(group, 'cClassTrib') ?? '',
    ...(g && { group: { vBC: textOf(g, 'vBC') ?? '', uf: part('gIBSUF', 'pIBSUF'), mun: part('gIBSMun', 'pIBSMun'), cbs: part('gCBS', 'pCBS') } }),
  };
}

/** Reads the authorized NFC-e. Anything missing or not authorized → FieldError on `field`. */
export function readOriginalNfce(xml: string, field = 'chave_nfce'): OriginalNfce {
  if (typeof xml !== 'string' || xml === '') throw new FieldError(field, 'XML da NFC-e original não disponível');
  let parseError = '';
  const doc = new DOMParser({
    errorHandler: { error: (m: string) => (parseError ||= m), fatalError: (m: string) => (parseError ||= m) },
  }).parseFromString(xml, 'text/xml') as unknown as Document;
  if (parseError || !doc.documentElement) throw new FieldError(field, `XML da NFC-e original ilegível: ${parseError || 'vazio'}`);
  const root = doc.documentElement;
  const fail = (message: string): never => {
    throw new FieldError(field, message);
  };
  if (root.namespaceURI !== NS_NFE || root.localName !== 'nfeProc') {
    fail('a NFC-e original deve ser o XML autorizado (nfeProc, com o protocolo de autorização)');
  }
  const nfe = child(root, 'NFe');
  const inf = child(nfe, 'infNFe');
  const cStat = textOf(child(child(root, 'protNFe'), 'infProt'), 'cStat');
  if (!inf) return fail('nfeProc sem NFe/infNFe');
  if (!cStat || !AUTHORIZED_CSTAT.has(cStat)) return fail(`a NFC-e original não está autorizada (cStat ${cStat ?? 'ausente'})`);
  const key = keyOfId(inf.getAttribute('Id'), 'NFe');
  if (!key) return fail('infNFe sem Id de chave de acesso');
  const ide = child(inf, 'ide');
  const emit = child(inf, 'emit');
  const need = (scope: El | undefined, name: string, where: string): string => textOf(scope, name) ?? fail(`NFC-e original sem ${where}/${name}`);

  const destEl = child(inf, 'dest');
  let dest: OriginalDest | undefined;
  if (destEl) {
    const id = children(destEl)[0];
    if (id && (id.localName === 'CPF' || id.localName === 'CNPJ' || id.localName === 'idEstrangeiro')) {
      dest = { tag: id.localName, doc: id.textContent ?? '', xNome: textOf(destEl, 'xNome') };
    }
  }

  const items: OriginalItem[] = [];
  for (const det of children(inf).filter((c) => c.localName === 'det')) {
    const nItem = Number(det.getAttribute('nItem'));
    const prod = child(det, 'prod');
    const imposto = child(det, 'imposto');
    const icms = imposto && taxGroupOf(imposto, 'ICMS');
    if (!Number.isInteger(nItem) || !prod || !imposto || !icms) fail(`item ${det.getAttribute('nItem')} da NFC-e original incompleto`);
    items.push({
      nItem,
      prod: children(prod!).map((c) => [c.localName, c.textContent ?? '']),
      icms: icms!,
      pis: taxGroupOf(imposto!, 'PIS'),
      cofins: taxGroupOf(imposto!, 'COFINS'),
      vTotTrib: textOf(imposto, 'vTotTrib'),
      ibsCbs: ibsCbsOf(imposto!),
    });
  }
  if (items.length === 0) fail('NFC-e original sem itens');

  return {
    key,
    mod: need(ide, 'mod', 'ide'),
    serie: Number(need(ide, 'serie', 'ide')),
    nNF: Number(need(ide, 'nNF', 'ide')),
    dhEmi: need(ide, 'dhEmi', 'ide'),
    tpAmb: Number(need(ide, 'tpAmb', 'ide')),
    emitCnpj: textOf(emit, 'CNPJ') ?? need(emit, 'CPF', 'emit'),
    cStat,
    dest,
    items,
  };
}
