// The tax authority's answers and the "processed" wrappers that pair a signed document with its
// answer: protNFe / nfeProc, protMDFe / mdfeProc, retEvento / procEventoNFe, retEventoMDFe /
// procEventoMDFe, retInutNFe / ProcInutNFe. The sandbox authority builds the answers; the
// service stores the wrappers (they are what GET …/xml returns and what the schemas
// procNFe_v4.00, procMDFe_v3.00, procEvento*, procInutNFe_v4.00 validate).
//
// The signed documents are embedded byte for byte (only an XML declaration / BOM is dropped):
// re-serialising them would risk the digest. The answers are written without an xmlns of their
// own because they only ever travel inside an element of the same namespace.
//
// Datetimes are written in the Brasília offset, the form the authorities use (and the NF-e event
// answer's dhRegEvento only admits negative offsets -01:00..-04:00).

import { keyInSignedXml, parseAccessKey } from './access-key.ts';
import { wallClock } from '../base/common/brasilia.ts';
import { CNPJ_FORMAT } from '../base/common/tax-ids.ts';
import { FieldError } from './errors.ts';
import { digestValueOf } from './signature.ts';
import { el, firstText, text } from './xml.ts';

export const NS_NFE = 'http://www.portalfiscal.inf.br/nfe';
export const NS_MDFE = 'http://www.portalfiscal.inf.br/mdfe';

/**
 * cStat values that mean an NF-e/NFC-e is authorized for use: 100, 150 (fora de prazo) and 120
 * (autorizado com alerta, NT 2026.002: the alert is in protNFe's cMsg/xMsg, the NFC-e is valid).
 */
export const AUTHORIZED_CSTAT: ReadonlySet<string> = new Set(['100', '120', '150']);

// ---------------------------------------------------------------------------------------------
// Dates in Brasília

export type DateInput = Date | string;

function toDate(value: DateInput, field: string): Date {
  const d = typeof value === 'string' ? new Date(value) : value;
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) {
    throw new FieldError(field, 'data/hora inválida (use ISO 8601, ex.: 2026-11-22T14:03:05-03:00)');
  }
  // A string without an offset would be read in the process's zone: ambiguous for a fiscal date.
  if (typeof value === 'string' && !/(Z|[+-][0-9]{2}:?[0-9]{2})$/.test(value.trim())) {
    throw new FieldError(field, 'data/hora deve informar o fuso (ex.: -03:00)');
  }
  return d;
}

function brasiliaParts(d: Date): { date: string; time: string; offset: string } {
  const p = wallClock(d);
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}:${p.second}`, offset: p.offset };
}

/** `2026-11-22T14:03:05-03:00`: the instant in the Brasília zone, as TDateTimeUTC wants it. */
export function brasiliaDateTime(value: DateInput = new Date(), field = 'dataHora'): string {
  const { date, time, offset } = brasiliaParts(toDate(value, field));
  return `${date}T${time}${offset}`;
}

/** `2026-11-22`: the calendar day of the instant in Brasília. */
export function brasiliaDate(value: DateInput = new Date(), field = 'data'): string {
  return brasiliaParts(toDate(value, field)).date;
}

// ---------------------------------------------------------------------------------------------
// Field checks shared by the answers

const TSTRING = /^[!-\u00ff](?:[ -\u00ff]*[!-\u00ff])?$/;

function tString(value: unknown, field: string, min: number, max: number): string {
  if (typeof value !== 'string') throw new FieldError(field, 'obrigatório');
  const v = value.trim();
  const len = [...v].length;
  if (len < min || len > max) throw new FieldError(field, `deve ter de ${min} a ${max} caracteres`);
  if (!TSTRING.test(v)) throw new FieldError(field, 'contém caracteres não permitidos (quebras de linha, tabulações ou símbolos fora do Latin-1)');
  return v;
}

function stat(value: string | number, field: string, digits: '3' | '3-4'): string {
  const v = String(value);
  const ok = digits === '3' ? /^[0-9]{3}$/.test(v) : /^[0-9]{3,4}$/.test(v);
  if (!ok) throw new FieldError(field, digits === '3' ? 'deve ter 3 dígitos' : 'deve ter 3 ou 4 dígitos');
  return v;
}

function prot(value: string | undefined, field: string, allow17: boolean): string | undefined {
  if (value === undefined) return undefined;
  const ok = allow17 ? /^([0-9]{15}|[0-9]{17})$/.test(value) : /^[0-9]{15}$/.test(value);
  if (!ok) throw new FieldError(field, allow17 ? 'protocolo deve ter 15 ou 17 dígitos' : 'protocolo deve ter 15 dígitos');
  return value;
}

function tpAmbOf(value: unknown, field = 'tpAmb'): '1' | '2' {
  const v = String(value);
  if (v !== '1' && v !== '2') throw new FieldError(field, 'deve ser 1 (produção) ou 2 (homologação)');
  return v;
}

function digVal(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new FieldError('digVal', 'DigestValue deve ser base64');
  return value;
}

/** The document as it goes inside a wrapper: no XML declaration, no BOM, no surrounding blanks. */
function bare(xml: string, root: string, field: string): string {
  const body = xml.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '').trimEnd();
  if (!new RegExp(`^<${root}[\\s>]`).test(body)) throw new FieldError(field, `esperado um elemento <${root}>`);
  return body;
}

function keyOfSigned(xml: string, prefix: 'NFe' | 'MDFe'): string {
  const key = keyInSignedXml(xml, prefix);
  if (!key) throw new FieldError('xml', `documento sem inf${prefix}/@Id`);
  return key;
}

// ---------------------------------------------------------------------------------------------
// NF-e / NFC-e authorization

/** What the authority says about one document (authorization, rejection, inutilização). */
export type Verdict = {
  cStat: string | number;
  xMotivo: string;
  verAplic: string;
  dhRecbto: DateInput;
  /** Only when the verdict is an authorization / homologation. */
  nProt?: string;
  /** NF-e / NFC-e only: infProt/cMsg and xMsg (PL_010). */
  message?: VerdictMessage;
};

export type ProtocolParams = Verdict & {
  key: string;
  tpAmb: 1 | 2 | '1' | '2';
  /** DigestValue of the signed document (base64). */
  digVal?: string;
};

/**
 * The message an authority attaches to a verdict (infProt/cMsg, xMsg): the alert of a cStat 120
 * "autorizado com alerta" (NT 2026.002), for instance.
 */
export type VerdictMessage = { cMsg: string | number; xMsg: string };

/** `<protNFe versao="4.00">` (TProtNFe), to be embedded in nfeProc or retEnviNFe. */
export function nfeProtocol(p: ProtocolParams): string {
  const key = parseAccessKey(p.key, 'chNFe').key;
  return el(
    'protNFe',
    { versao: '4.00' },
    el(
      'infProt',
      undefined,
      text('tpAmb', tpAmbOf(p.tpAmb)),
      text('verAplic', tString(p.verAplic, 'verAplic', 1, 20)),
      text('chNFe', key),
      text('dhRecbto', brasiliaDateTime(p.dhRecbto, 'dhRecbto')),
      // 17 digits: the longer protocol of NT 2025.002 (PL_010 accepts it; SP issues it).
      text('nProt', prot(p.nProt, 'nProt', true)),
      text('digVal', digVal(p.digVal)),
      // PL_010 widened TStat to 4 digits: the tax reform's rejections are 1xxx.
      text('cStat', stat(p.cStat, 'cStat', '3-4')),
      text('xMotivo', tString(p.xMotivo, 'xMotivo', 1, 255)),
      p.message && text('cMsg', /^[0-9]{1,4}$/.test(String(p.message.cMsg)) ? String(p.message.cMsg) : badField('cMsg')),
      p.message && text('xMsg', tString(p.message.xMsg, 'xMsg', 1, 200)),
    ),
  );
}

/** protNFe for a signed NFe: key, tpAmb and digVal are read from the document. */
export function nfeProtocolFor(signedNfe: string, verdict: Verdict): string {
  return nfeProtocol({
    ...verdict,
    key: keyOfSigned(signedNfe, 'NFe'),
    tpAmb: tpAmbOf(firstText(signedNfe, 'tpAmb')),
    digVal: digestValueOf(signedNfe),
  });
}

/** `<nfeProc versao="4.00">`: the signed NFe followed by its protNFe (procNFe_v4.00.xsd). */
export function wrapNfeProc(signedNfe: string, protNFe: string): string {
  const nfe = bare(signedNfe, 'NFe', 'NFe');
  const protocol = bare(protNFe, 'protNFe', 'protNFe');
  if (firstText(protocol, 'chNFe') !== keyOfSigned(nfe, 'NFe')) {
    throw new FieldError('protNFe', 'o protocolo é de outra chave de acesso');
  }
  return `<nfeProc xmlns="${NS_NFE}" versao="4.00">${nfe}${protocol}</nfeProc>`;
}

// ---------------------------------------------------------------------------------------------
// MDF-e authorization

export type MdfeProtocolParams = ProtocolParams & { infFisco?: { cMsg: string | number; xMsg: string } };

/** `<protMDFe versao="3.00">` (TProtMDFe). */
export function mdfeProtocol(p: MdfeProtocolParams): string {
  const key = parseAccessKey(p.key, 'chMDFe').key;
  return el(
    'protMDFe',
    { versao: '3.00' },
    el(
      'infProt',
      undefined,
      text('tpAmb', tpAmbOf(p.tpAmb)),
      text('verAplic', tString(p.verAplic, 'verAplic', 1, 20)),
      text('chMDFe', key),
      text('dhRecbto', brasiliaDateTime(p.dhRecbto, 'dhRecbto')),
      text('nProt', prot(p.nProt, 'nProt', false)),
      text('digVal', digVal(p.digVal)),
      text('cStat', stat(p.cStat, 'cStat', '3-4')),
      text('xMotivo', tString(p.xMotivo, 'xMotivo', 1, 255)),
    ),
    p.infFisco &&
      el('infFisco', undefined, text('cMsg', stat(p.infFisco.cMsg, 'infFisco.cMsg', '3-4')), text('xMsg', tString(p.infFisco.xMsg, 'infFisco.xMsg', 1, 255))),
  );
}

/** protMDFe for a signed MDFe: key, tpAmb and digVal are read from the document. */
export function mdfeProtocolFor(signedMdfe: string, verdict: Verdict): string {
  return mdfeProtocol({
    ...verdict,
    key: keyOfSigned(signedMdfe, 'MDFe'),
    tpAmb: tpAmbOf(firstText(signedMdfe, 'tpAmb')),
    digVal: digestValueOf(signedMdfe),
  });
}

/** `<mdfeProc versao="3.00">`: the signed MDFe followed by its protMDFe (procMDFe_v3.00.xsd). */
export function wrapMdfeProc(signedMdfe: string, protMDFe: string): string {
  const mdfe = bare(signedMdfe, 'MDFe', 'MDFe');
  const protocol = bare(protMDFe, 'protMDFe', 'protMDFe');
  if (firstText(protocol, 'chMDFe') !== keyOfSigned(mdfe, 'MDFe')) {
    throw new FieldError('protMDFe', 'o protocolo é de outra chave de acesso');
  }
  return `<mdfeProc xmlns="${NS_MDFE}" versao="3.00">${mdfe}${protocol}</mdfeProc>`;
}

// ---------------------------------------------------------------------------------------------
// Events

export type EventFamily = 'nfe' | 'mdfe';

export type RetEventoParams = {
  tpAmb: 1 | 2 | '1' | '2';
  verAplic: string;
  cOrgao: string;
  cStat: string | number;
  xMotivo: string;
  /** chNFe / chMDFe of the event. */
  chave?: string;
  tpEvento?: string;
  xEvento?: string;
  nSeqEvento?: number | string;
  dhRegEvento: DateInput;
  nProt?: string;
  /** NF-e 110112 only: the author's UF code, echoed by the authority. */
  cOrgaoAutor?: string;
};

function orgao(value: string, field: string): string {
  if (!/^[0-9]{2}$/.test(value)) throw new FieldError(field, 'código do órgão deve ter 2 dígitos');
  return value;
}

function seq(value: number | string | undefined, family: EventFamily): string | undefined {
  if (value === undefined) return undefined;
  const v = String(value);
  const ok = family === 'nfe' ? /^[1-9][0-9]?$/.test(v) : /^[0-9]{1,3}$/.test(v);
  if (!ok) throw new FieldError('nSeqEvento', 'sequencial do evento inválido');
  return v;
}

/** `<retEvento versao="1.00">` (NF-e/NFC-e) or `<retEventoMDFe versao="3.00">` (MDF-e). */
export function eventAnswer(family: EventFamily, p: RetEventoParams): string {
  const nfe = family === 'nfe';
  return el(
    nfe ? 'retEvento' : 'retEventoMDFe',
    { versao: nfe ? '1.00' : '3.00' },
    el(
      'infEvento',
      undefined,
      text('tpAmb', tpAmbOf(p.tpAmb)),
      text('verAplic', tString(p.verAplic, 'verAplic', 1, 20)),
      text('cOrgao', orgao(p.cOrgao, 'cOrgao')),
      text('cStat', stat(p.cStat, 'cStat', nfe ? '3' : '3-4')),
      text('xMotivo', tString(p.xMotivo, 'xMotivo', 1, 255)),
      text(nfe ? 'chNFe' : 'chMDFe', p.chave === undefined ? undefined : parseAccessKey(p.chave, 'chave').key),
      text('tpEvento', p.tpEvento === undefined ? undefined : /^[0-9]{6}$/.test(p.tpEvento) ? p.tpEvento : badField('tpEvento')),
      text('xEvento', p.xEvento === undefined ? undefined : tString(p.xEvento, 'xEvento', 5, 60)),
      text('nSeqEvento', seq(p.nSeqEvento, family)),
      nfe && p.cOrgaoAutor !== undefined ? text('cOrgaoAutor', orgao(p.cOrgaoAutor, 'cOrgaoAutor')) : undefined,
      text('dhRegEvento', brasiliaDateTime(p.dhRegEvento, 'dhRegEvento')),
      text('nProt', prot(p.nProt, 'nProt', nfe)),
    ),
  );
}

function badField(field: string): never {
  throw new FieldError(field, 'inválido');
}

export type EventVerdict = {
  cStat: string | number;
  xMotivo: string;
  verAplic: string;
  dhRegEvento: DateInput;
  /** Only when the event is registered (135, 136, 155…). */
  nProt?: string;
};

/** The family of a signed event, from its root element. */
export function eventFamilyOf(signedEvento: string): EventFamily {
  const body = signedEvento.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '');
  if (/^<evento[\s>]/.test(body)) return 'nfe';
  if (/^<eventoMDFe[\s>]/.test(body)) return 'mdfe';
  throw new FieldError('evento', 'esperado um elemento <evento> ou <eventoMDFe>');
}

/**
 * The answer to a signed event (what the sandbox authority returns): key, type, sequence, organ
 * and environment are read from the event itself; the verdict says the rest.
 */
export function retEvento(signedEvento: string, verdict: EventVerdict): string {
  const family = eventFamilyOf(signedEvento);
  const tpEvento = firstText(signedEvento, 'tpEvento');
  const descEvento = firstText(signedEvento, 'descEvento');
  return eventAnswer(family, {
    ...verdict,
    tpAmb: tpAmbOf(firstText(signedEvento, 'tpAmb')),
    cOrgao: firstText(signedEvento, 'cOrgao') ?? badField('cOrgao'),
    chave: firstText(signedEvento, family === 'nfe' ? 'chNFe' : 'chMDFe'),
    tpEvento,
    xEvento: descEvento && [...descEvento].length >= 5 ? descEvento : undefined,
    nSeqEvento: firstText(signedEvento, 'nSeqEvento'),
    cOrgaoAutor: family === 'nfe' && tpEvento === '110112' ? firstText(signedEvento, 'cOrgaoAutor') : undefined,
  });
}

/** `<procEventoNFe versao="1.00">`: the signed evento and its retEvento (procEventoCancNFe / CancSubst). */
export function wrapProcEventoNFe(signedEvento: string, retEventoXml: string): string {
  const evento = bare(signedEvento, 'evento', 'evento');
  const answer = bare(retEventoXml, 'retEvento', 'retEvento');
  return `<procEventoNFe xmlns="${NS_NFE}" versao="1.00">${evento}${answer}</procEventoNFe>`;
}

/** `<procEventoMDFe versao="3.00">`: the signed eventoMDFe and its retEventoMDFe. */
export function wrapProcEventoMDFe(signedEvento: string, retEventoXml: string): string {
  const evento = bare(signedEvento, 'eventoMDFe', 'eventoMDFe');
  const answer = bare(retEventoXml, 'retEventoMDFe', 'retEventoMDFe');
  return `<procEventoMDFe xmlns="${NS_MDFE}" versao="3.00">${evento}${answer}</procEventoMDFe>`;
}

// ---------------------------------------------------------------------------------------------
// Inutilização

export type RetInutParams = Verdict & {
  tpAmb: 1 | 2 | '1' | '2';
  cUF: string;
  ano?: string;
  CNPJ?: string;
  mod?: string;
  serie?: number | string;
  nNFIni?: number | string;
  nNFFin?: number | string;
};

function optPattern(value: number | string | undefined, pattern: RegExp, field: string): string | undefined {
  if (value === undefined) return undefined;
  const v = String(value);
  if (!pattern.test(v)) throw new FieldError(field, 'inválido');
  return v;
}

/** `<retInutNFe versao="4.00">` (TRetInutNFe). */
export function retInutNFe(p: RetInutParams): string {
  return el(
    'retInutNFe',
    { versao: '4.00' },
    el(
      'infInut',
      undefined,
      text('tpAmb', tpAmbOf(p.tpAmb)),
      text('verAplic', tString(p.verAplic, 'verAplic', 1, 20)),
      text('cStat', stat(p.cStat, 'cStat', '3')),
      text('xMotivo', tString(p.xMotivo, 'xMotivo', 1, 255)),
      text('cUF', orgao(p.cUF, 'cUF')),
      text('ano', optPattern(p.ano, /^[0-9]{2}$/, 'ano')),
      text('CNPJ', optPattern(p.CNPJ, CNPJ_FORMAT, 'CNPJ')),
      text('mod', optPattern(p.mod, /^(55|65)$/, 'mod')),
      text('serie', optPattern(p.serie, /^(0|[1-9][0-9]{0,2})$/, 'serie')),
      text('nNFIni', optPattern(p.nNFIni, /^[1-9][0-9]{0,8}$/, 'nNFIni')),
      text('nNFFin', optPattern(p.nNFFin, /^[1-9][0-9]{0,8}$/, 'nNFFin')),
      text('dhRecbto', brasiliaDateTime(p.dhRecbto, 'dhRecbto')),
      text('nProt', prot(p.nProt, 'nProt', false)),
    ),
  );
}

/** The answer to a signed inutNFe: the range and identification are echoed from the request. */
export function retInutNFeFor(signedInut: string, verdict: Verdict): string {
  const field = (name: string) => firstText(signedInut, name) ?? badField(name);
  return retInutNFe({
    ...verdict,
    tpAmb: tpAmbOf(field('tpAmb')),
    cUF: field('cUF'),
    ano: field('ano'),
    CNPJ: field('CNPJ'),
    mod: field('mod'),
    serie: field('serie'),
    nNFIni: field('nNFIni'),
    nNFFin: field('nNFFin'),
  });
}

/** `<ProcInutNFe versao="4.00">` (root capitalised as in procInutNFe_v4.00.xsd). */
export function wrapProcInutNFe(signedInut: string, retInut: string): string {
  const inut = bare(signedInut, 'inutNFe', 'inutNFe');
  const answer = bare(retInut, 'retInutNFe', 'retInutNFe');
  return `<ProcInutNFe xmlns="${NS_NFE}" versao="4.00">${inut}${answer}</ProcInutNFe>`;
}
