// Events on issued documents, signed and ready to transmit:
// - NF-e / NFC-e 110111 Cancelamento (leiauteEventoCancNFe_v1.00) and 110112 Cancelamento por
//   substituição (leiauteEventoCancSubst_v1.00, NFC-e only; docs/fiscal.md, "Cancellation");
// - MDF-e 110111 Cancelamento (evCancMDFe), 110112 Encerramento (evEncMDFe), 110114 Inclusão de
//   condutor (evIncCondutorMDFe) and 110115 Inclusão de DF-e (evIncDFeMDFe; docs/fiscal.md, "MDF-e").
//
// Each builder returns the single signed event (`<evento>` / `<eventoMDFe>`), not the envEvento
// batch: the event is signed standalone (inclusive C14N would pull a batch's namespace
// declarations into the digest), it is what procEventoNFe/procEventoMDFe wrap (protocol.ts), and
// the batch is a transmission detail added by `envEventoNFe` at send time. MDF-e events are sent
// one by one (eventoMDFe is the message itself), so they have no batch.
//
// Id = "ID" + tpEvento + key + nSeqEvento with 2 digits (rejection 628 when it does not match).

import { JUSTIFICATION_PATTERN } from '../base/common/api/schema.ts';
import { CNPJ_FORMAT } from '../base/common/tax-ids.ts';
import { parseAccessKey, type DocumentModel } from './access-key.ts';
import { assertMunicipality } from './br/catalogs.ts';
import { assertCpf } from './br/documents.ts';
import { cUFOf, isUF } from './br/uf.ts';
import { tpAmbOf, type Environment } from './company.ts';
import { FieldError, IssueCollector } from './errors.ts';
import { brasiliaDate, brasiliaDateTime, NS_MDFE, NS_NFE, type DateInput } from './protocol.ts';
import { signXml, type SigningCredentials } from './signature.ts';
import { el, text } from './xml.ts';

/** Who signs the event: the emitter of the document (an Emitter satisfies it). */
export type EventAuthor = { cnpj: string; environment: Environment };

type EventBase = {
  author: EventAuthor;
  /** When the event happened; default now. Written in the Brasília offset. */
  dhEvento?: DateInput;
  /** 1 for the first event of this type on the document; default 1. */
  nSeqEvento?: number;
};

export const TP_EVENTO = {
  cancelamento: '110111',
  cancelamentoPorSubstituicao: '110112',
  encerramentoMdfe: '110112',
  inclusaoCondutorMdfe: '110114',
  inclusaoDfeMdfe: '110115',
} as const;

/** `ID` + tpEvento + key + nSeqEvento (2 digits): the Id the Reference of the signature points to. */
export function eventId(tpEvento: string, key: string, nSeqEvento: number): string {
  return `ID${tpEvento}${key}${String(nSeqEvento).padStart(2, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// Checks

const TSTRING = /^[!-\u00ff](?:[ -\u00ff]*[!-\u00ff])?$/;
/** The API's rule for a justification's characters (the schemas declare it): folded, it is TString. */
const JUSTIFICATION_CHARACTERS = new RegExp(JUSTIFICATION_PATTERN, 'u');

/**
 * xJust (TJust): 15..255 characters of TString. Runs of blanks (a newline typed in a text box)
 * become one space, because TString forbids control characters and edge blanks; anything else
 * outside Latin-1 (emoji, typographic quotes) is refused rather than silently replaced.
 */
export function justification(value: unknown, field = 'justificativa'): string {
  if (typeof value !== 'string' || value.trim() === '') throw new FieldError(field, 'justificativa obrigatória');
  const v = value.replace(/\s+/g, ' ').trim();
  const len = [...v].length;
  if (len < 15) throw new FieldError(field, `a justificativa deve ter ao menos 15 caracteres (recebidos ${len})`);
  if (len > 255) throw new FieldError(field, `a justificativa deve ter no máximo 255 caracteres (recebidos ${len})`);
  if (!JUSTIFICATION_CHARACTERS.test(v)) {
    throw new FieldError(field, 'a justificativa contém caracteres não permitidos (use letras, números e pontuação comuns)');
  }
  return v;
}

function protocolNumber(value: unknown, allow17: boolean, field = 'nProt'): string {
  if (typeof value !== 'string' || !(allow17 ? /^([0-9]{15}|[0-9]{17})$/ : /^[0-9]{15}$/).test(value)) {
    throw new FieldError(field, allow17 ? 'protocolo deve ter 15 ou 17 dígitos' : 'protocolo deve ter 15 dígitos');
  }
  return value;
}

function sequence(value: number | undefined, max: number): number {
  const n = value ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > max) throw new FieldError('nSeqEvento', `deve ser um inteiro de 1 a ${max}`);
  return n;
}

function keyOf(value: unknown, models: readonly DocumentModel[], field: string): string {
  const parsed = parseAccessKey(value, field);
  if (!models.includes(parsed.model)) {
    throw new FieldError(field, `a chave é de modelo ${parsed.model}; esperado ${models.join(' ou ')}`);
  }
  return parsed.key;
}

/** The author's id element: CNPJ (14) or, for an individual emitter, CPF (11). */
function authorId(author: EventAuthor): string {
  const id = author.cnpj;
  if (typeof id === 'string' && /^[0-9]{11}$/.test(id)) return text('CPF', id)!;
  if (typeof id === 'string' && CNPJ_FORMAT.test(id)) return text('CNPJ', id)!;
  throw new FieldError('CNPJ', 'CNPJ do emitente inválido');
}

type Common = { key: string; cOrgao: string; tpAmb: 1 | 2; dhEvento: string; nSeq: number };

function common(p: EventBase, key: string, maxSeq: number, c: IssueCollector): Common | undefined {
  const nSeq = c.capture(() => sequence(p.nSeqEvento, maxSeq));
  const dhEvento = c.capture(() => brasiliaDateTime(p.dhEvento ?? new Date(), 'dhEvento'));
  if (nSeq === undefined || dhEvento === undefined) return undefined;
  // The event goes to the authority of the document: the key's UF.
  return { key, cOrgao: key.slice(0, 2), tpAmb: tpAmbOf(p.author.environment), dhEvento, nSeq };
}

// ---------------------------------------------------------------------------------------------
// NF-e / NFC-e

function nfeEvent(c: Common, author: EventAuthor, tpEvento: string, detEvento: string, credentials: SigningCredentials): string {
  const xml = el(
    'evento',
    { xmlns: NS_NFE, versao: '1.00' },
    el(
      'infEvento',
      { Id: eventId(tpEvento, c.key, c.nSeq) },
      text('cOrgao', c.cOrgao),
      text('tpAmb', c.tpAmb),
      authorId(author),
      text('chNFe', c.key),
      text('dhEvento', c.dhEvento),
      text('tpEvento', tpEvento),
      text('nSeqEvento', c.nSeq),
      text('verEvento', '1.00'),
      detEvento,
    ),
  );
  return signXml(xml, credentials);
}

export type NfeCancellationParams = EventBase & {
  /** Key of the NF-e (55) or NFC-e (65) being cancelled. */
  chNFe: string;
  /** Authorization protocol of that document (15 digits, or 17 in SP since NT 2025.002). */
  nProt: string;
  xJust: string;
};

/** Event 110111 "Cancelamento" of an NF-e/NFC-e: the signed `<evento versao="1.00">`. */
export function nfeCancellationEvent(p: NfeCancellationParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chNFe, ['55', '65'], 'chave'));
  const nProt = c.capture(() => protocolNumber(p.nProt, true));
  const xJust = c.capture(() => justification(p.xJust));
  const base = key === undefined ? undefined : common(p, key, 20, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const detEvento = el('detEvento', { versao: '1.00' }, text('descEvento', 'Cancelamento'), text('nProt', nProt!), text('xJust', xJust!));
  return nfeEvent(base!, p.author, TP_EVENTO.cancelamento, detEvento, credentials);
}

export type NfeSubstitutionCancellationParams = NfeCancellationParams & {
  /** Key of the contingency NFC-e that replaced the one being cancelled. */
  chNFeRef: string;
  /** Version of the issuing application (verAplic, 1..20 characters). */
  verAplic: string;
};

/**
 * Event 110112 "Cancelamento por substituição" of an NFC-e (model 65 only): cancels an NFC-e
 * that came back authorized after the sale was re-issued offline (`chNFeRef`). Window 168 h.
 */
export function nfeSubstitutionCancellationEvent(p: NfeSubstitutionCancellationParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chNFe, ['65'], 'chave'));
  const ref = c.capture(() => keyOf(p.chNFeRef, ['65'], 'chave_substituta'));
  if (key !== undefined && ref === key) c.add('chave_substituta', 'a NFC-e substituta deve ter chave diferente da cancelada');
  const nProt = c.capture(() => protocolNumber(p.nProt, true));
  const xJust = c.capture(() => justification(p.xJust));
  const verAplic = c.capture(() => {
    const v = typeof p.verAplic === 'string' ? p.verAplic.trim() : '';
    if (!v || v.length > 20 || !TSTRING.test(v)) throw new FieldError('verAplic', 'versão do aplicativo: 1 a 20 caracteres');
    return v;
  });
  const base = key === undefined ? undefined : common(p, key, 20, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const detEvento = el(
    'detEvento',
    { versao: '1.00' },
    text('descEvento', 'Cancelamento por substituicao'),
    // The author is the emitter, in the UF of the document.
    text('cOrgaoAutor', base!.cOrgao),
    text('tpAutor', '1'),
    text('verAplic', verAplic!),
    text('nProt', nProt!),
    text('xJust', xJust!),
    text('chNFeRef', ref!),
  );
  return nfeEvent(base!, p.author, TP_EVENTO.cancelamentoPorSubstituicao, detEvento, credentials);
}

/**
 * The envEvento batch (NFeRecepcaoEvento4) around already signed events, for transmission.
 * `idLote` is 1..15 digits; at most 20 events.
 */
export function envEventoNFe(signedEventos: readonly string[], idLote: number | string): string {
  const lote = String(idLote);
  if (!/^[0-9]{1,15}$/.test(lote)) throw new FieldError('idLote', 'deve ter de 1 a 15 dígitos');
  if (signedEventos.length < 1 || signedEventos.length > 20) throw new FieldError('evento', 'de 1 a 20 eventos por lote');
  const body = signedEventos.map((e) => e.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '').trimEnd());
  for (const e of body) if (!/^<evento[\s>]/.test(e)) throw new FieldError('evento', 'esperado um elemento <evento>');
  return `<envEvento xmlns="${NS_NFE}" versao="1.00"><idLote>${lote}</idLote>${body.join('')}</envEvento>`;
}

// ---------------------------------------------------------------------------------------------
// MDF-e

function mdfeEvent(c: Common, author: EventAuthor, tpEvento: string, content: string, credentials: SigningCredentials): string {
  const xml = el(
    'eventoMDFe',
    { xmlns: NS_MDFE, versao: '3.00' },
    el(
      'infEvento',
      { Id: eventId(tpEvento, c.key, c.nSeq) },
      text('cOrgao', c.cOrgao),
      text('tpAmb', c.tpAmb),
      authorId(author),
      text('chMDFe', c.key),
      text('dhEvento', c.dhEvento),
      text('tpEvento', tpEvento),
      text('nSeqEvento', c.nSeq),
      el('detEvento', { versaoEvento: '3.00' }, content),
    ),
  );
  return signXml(xml, credentials);
}

export type MdfeCancellationParams = EventBase & {
  chMDFe: string;
  /** Authorization protocol of the MDF-e (15 digits: TProt of the MDF-e package). */
  nProt: string;
  xJust: string;
};

/** Event 110111 "Cancelamento" of an MDF-e: the signed `<eventoMDFe versao="3.00">`. */
export function mdfeCancellationEvent(p: MdfeCancellationParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chMDFe, ['58'], 'chave'));
  const nProt = c.capture(() => protocolNumber(p.nProt, false));
  const xJust = c.capture(() => justification(p.xJust));
  const base = key === undefined ? undefined : common(p, key, 99, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const content = el('evCancMDFe', undefined, text('descEvento', 'Cancelamento'), text('nProt', nProt!), text('xJust', xJust!));
  return mdfeEvent(base!, p.author, TP_EVENTO.cancelamento, content, credentials);
}

export type MdfeClosingParams = EventBase & {
  chMDFe: string;
  nProt: string;
  /** UF where the trip ended (two letters). */
  UF: string;
  /** IBGE code of the municipality where the trip ended; must belong to `UF`. */
  cMun: string;
  /** Day of closing, YYYY-MM-DD; default the day of dhEvento in Brasília. */
  dtEnc?: string;
  /** Closed by a third party (e.g. the contractor) rather than the emitter. */
  encPorTerceiro?: boolean;
};

const TDATA = /^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

/**
 * Event 110112 "Encerramento" of an MDF-e. Field names in errors follow the encerrar call of the
 * API (`uf`, `codigo_municipio`, `data`).
 */
export function mdfeClosingEvent(p: MdfeClosingParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chMDFe, ['58'], 'chave'));
  const nProt = c.capture(() => protocolNumber(p.nProt, false));
  const cUF = c.capture(() => {
    if (!isUF(p.UF)) throw new FieldError('uf', `UF inexistente: "${String(p.UF)}"`);
    return cUFOf(p.UF, 'uf');
  });
  const cMun = c.capture(() => assertMunicipality(p.cMun, isUF(p.UF) ? p.UF : undefined, 'codigo_municipio').code);
  const dtEnc = c.capture(() => {
    if (p.dtEnc === undefined) return brasiliaDate(p.dhEvento ?? new Date(), 'dhEvento');
    const d = p.dtEnc;
    if (typeof d !== 'string' || !TDATA.test(d) || Number.isNaN(Date.parse(`${d}T12:00:00Z`)) || new Date(`${d}T12:00:00Z`).toISOString().slice(0, 10) !== d) {
      throw new FieldError('data', 'data de encerramento inválida (use AAAA-MM-DD)');
    }
    return d;
  });
  const base = key === undefined ? undefined : common(p, key, 99, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const content = el(
    'evEncMDFe',
    undefined,
    text('descEvento', 'Encerramento'),
    text('nProt', nProt!),
    text('dtEnc', dtEnc!),
    text('cUF', cUF!),
    text('cMun', cMun!),
    p.encPorTerceiro ? text('indEncPorTerceiro', '1') : undefined,
  );
  return mdfeEvent(base!, p.author, TP_EVENTO.encerramentoMdfe, content, credentials);
}

/** A TString of 2 to 60 characters (a driver's or a municipality's name), blanks folded. */
function name60(value: unknown, field: string): string {
  const v = typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  if ([...v].length < 2 || [...v].length > 60) throw new FieldError(field, 'deve ter de 2 a 60 caracteres');
  if (!TSTRING.test(v)) throw new FieldError(field, 'contém caracteres não permitidos (use letras, números e pontuação comuns)');
  return v;
}

export type MdfeDriverInclusionParams = EventBase & {
  chMDFe: string;
  /** The driver joining the trip. Field names in errors follow the API (`nome`, `cpf`). */
  xNome: string;
  CPF: string;
};

/**
 * Event 110114 "Inclusão de condutor" of an MDF-e: a driver who joins an authorized manifest on
 * the road. `nSeqEvento` counts this manifest's 110114 events (1 for the first).
 */
export function mdfeDriverInclusionEvent(p: MdfeDriverInclusionParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chMDFe, ['58'], 'chave'));
  const xNome = c.capture(() => name60(p.xNome, 'nome'));
  const cpf = c.capture(() => assertCpf(p.CPF, 'cpf'));
  const base = key === undefined ? undefined : common(p, key, 99, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const content = el(
    'evIncCondutorMDFe',
    undefined,
    text('descEvento', 'Inclusao Condutor'),
    el('condutor', undefined, text('xNome', xNome!), text('CPF', cpf!)),
  );
  return mdfeEvent(base!, p.author, TP_EVENTO.inclusaoCondutorMdfe, content, credentials);
}

export type MdfeDfeInclusionParams = EventBase & {
  chMDFe: string;
  nProt: string;
  /** Where the added NF-e are loaded (field names in errors follow the API). */
  cMunCarrega: string;
  xMunCarrega: string;
  /** Each NF-e added, with where it is unloaded. */
  infDoc: readonly { cMunDescarga: string; xMunDescarga: string; chNFe: string }[];
};

/**
 * Event 110115 "Inclusão de DF-e" of an MDF-e: NF-e loaded on the way, added to an authorized
 * manifest with where they are loaded and unloaded. `nSeqEvento` counts this manifest's 110115
 * events.
 */
export function mdfeDfeInclusionEvent(p: MdfeDfeInclusionParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const key = c.capture(() => keyOf(p.chMDFe, ['58'], 'chave'));
  const nProt = c.capture(() => protocolNumber(p.nProt, false));
  const cMunCarrega = c.capture(() => assertMunicipality(p.cMunCarrega, undefined, 'codigo_municipio_carregamento').code);
  const xMunCarrega = c.capture(() => name60(p.xMunCarrega, 'municipio_carregamento'));
  if (!Array.isArray(p.infDoc) || p.infDoc.length === 0) c.add('documentos', 'informe ao menos um documento');
  const docs = (Array.isArray(p.infDoc) ? p.infDoc : []).map((d, i) => ({
    cMunDescarga: c.capture(() => assertMunicipality(d.cMunDescarga, undefined, `documentos[${i}].codigo_municipio_descarga`).code),
    xMunDescarga: c.capture(() => name60(d.xMunDescarga, `documentos[${i}].municipio_descarga`)),
    chNFe: c.capture(() => keyOf(d.chNFe, ['55'], `documentos[${i}].chave`)),
  }));
  const base = key === undefined ? undefined : common(p, key, 99, c);
  c.capture(() => authorId(p.author));
  c.throwIfAny();
  const content = el(
    'evIncDFeMDFe',
    undefined,
    text('descEvento', 'Inclusao DF-e'),
    text('nProt', nProt!),
    text('cMunCarrega', cMunCarrega!),
    text('xMunCarrega', xMunCarrega!),
    ...docs.map((d) => el('infDoc', undefined, text('cMunDescarga', d.cMunDescarga!), text('xMunDescarga', d.xMunDescarga!), text('chNFe', d.chNFe!))),
  );
  return mdfeEvent(base!, p.author, TP_EVENTO.inclusaoDfeMdfe, content, credentials);
}
