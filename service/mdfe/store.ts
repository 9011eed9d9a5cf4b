// The MDF-e part of the service store (store.ts `ServiceStore.mdfe`): manifests, their linked
// CT-e/NF-e keys and their events. Like the rest of the store, every operation is one atomic
// transaction behind a Promise, so another database can implement it; the ones that end an
// issuance attempt settle its idempotency key in the same transaction, so a key never says
// "authorized" for a manifest that is not, or the reverse.

import type { KeyAttempt } from '../idempotency-rules.ts';
import type { Page, PageRequest } from '../paging.ts';

import type { Keyset, Page as ExportPage } from '../export/pages.ts';

/**
 * processando: sent (or about to be) to the tax authority, outcome not recorded yet; internal
 * and transient (a crash leaves it, the restart recovery settles it). The other four are the
 * contract's `situacao`.
 */
export type MdfeSituacao = 'processando' | 'autorizado' | 'rejeitado' | 'encerrado' | 'cancelado';

export const MDFE_SITUACOES: readonly MdfeSituacao[] = ['processando', 'autorizado', 'rejeitado', 'encerrado', 'cancelado'];

/** A manifest as listed and shown (without its XML, which only the xml/damdfe routes read). */
export type MdfeRecord = {
  id: string;
  companyId: string;
  chave: string;
  serie: number;
  numero: number;
  /** cMDF of the key: reused by the next attempt at the same number, so the key stays the same. */
  cMdf: string;
  ambiente: 'homologacao' | 'producao';
  placa: string;
  ufInicio: string;
  ufFim: string;
  situacao: MdfeSituacao;
  /** The authorization's cStat (100), or the rejection's; null while processing. */
  status: string | null;
  motivo: string | null;
  protocolo: string | null;
  /** dhEmi from the company clock; UTC ISO with milliseconds (text order is time order). */
  emitidoEm: string;
  autorizadoEm: string | null;
  encerradoEm: string | null;
  canceladoEm: string | null;
  /** Idempotency-Key / referencia_externa of the request, if any. */
  referenciaExterna: string | null;
  qrcode: string;
  /** tot/vCarga as written in the XML (decimal string). */
  valorCarga: string;
  createdAt: string;
  updatedAt: string;
};

export type NewMdfe = Omit<MdfeRecord, 'situacao' | 'status' | 'motivo' | 'protocolo' | 'autorizadoEm' | 'encerradoEm' | 'canceladoEm' | 'updatedAt'> & {
  /** The signed <MDFe>, committed before it is sent. */
  xml: string;
};

export type MdfeDocument = { tipo: 'CTe' | 'NFe'; chave: string; codigoMunicipioDescarga: string };

export type MdfeEventRecord = {
  tpEvento: string;
  nSeq: number;
  status: string;
  motivo: string;
  protocolo: string | null;
  /** UTC ISO with milliseconds. */
  registradoEm: string;
  /**
   * What the caller sent: `{ uf, codigo_municipio, data }` (110112), `{ justificativa }` (110111),
   * `{ nome, cpf }` (110114), `{ codigo_municipio_carregamento, municipio_carregamento, chaves }` (110115).
   */
  dados: Record<string, string>;
  /** procEventoMDFe: the signed event and the authority's answer. */
  xml: string;
};

export type MdfeVerdictRecord = {
  /** Authorized (the manifest becomes `autorizado`) or rejected (`rejeitado`, key freed). */
  authorized: boolean;
  status: string;
  motivo: string;
  protocolo: string | null;
  /** UTC ISO; the authorization instant (dhRecbto) when authorized. */
  at: string;
  /** The protMDFe element ('' when the authority could not produce one). */
  protXml: string;
};

export type MdfeFilters = {
  status?: string;
  situacao?: MdfeSituacao;
  ufInicio?: string;
  ufFim?: string;
  /** Issued at or after (UTC ISO). */
  from?: string;
  /** Issued before (UTC ISO, exclusive). */
  until?: string;
};

export type MdfeXml = { situacao: MdfeSituacao; xml: string; protXml: string | null };

export interface MdfeStore {
  /** The cMDF of the latest attempt at this number (a rejected one): reusing it keeps the key. */
  codeOfLastAttempt(companyId: string, serie: number, numero: number): Promise<string | undefined>;
  /** Records a manifest about to be sent, `processando`, with its linked documents. */
  insertProcessing(mdfe: NewMdfe, documents: readonly MdfeDocument[]): Promise<void>;
  /** Records the verdict of a `processando` manifest and settles its key, if any. */
  recordVerdict(id: string, verdict: MdfeVerdictRecord, attempt?: KeyAttempt): Promise<MdfeRecord | undefined>;
  /**
   * Removes an attempt that never reached the tax authority (or that it does not know), and
   * frees its key: as if it had never been made.
   */
  discardAttempt(id: string, attempt?: KeyAttempt): Promise<void>;
  /** Frees a key whose attempt left no manifest (the process stopped before recording it). */
  releaseKey(attempt: KeyAttempt): Promise<void>;
  get(companyId: string, id: string): Promise<MdfeRecord | undefined>;
  /** The company's manifest with this access key: the latest authorized one (closed, cancelled), else the latest attempt. */
  findByKey(companyId: string, chave: string): Promise<MdfeRecord | undefined>;
  /** Any company's manifest by id (restart recovery). */
  getById(id: string): Promise<MdfeRecord | undefined>;
  documents(id: string): Promise<MdfeDocument[]>;
  events(id: string): Promise<MdfeEventRecord[]>;
  xml(companyId: string, id: string): Promise<MdfeXml | undefined>;
  /**
   * A page of the company's manifests the authority authorized (autorizado, encerrado or
   * cancelado now) issued in [from, until) (ISO instants), in order of issuance, starting after
   * `after` (null: the first page), for the accountant's export (service/export/pages.ts).
   */
  exportPage(companyId: string, from: string, until: string, after: Keyset | null, limit: number): Promise<ExportPage<MdfeRecord>>;
  /** Newest first (issuance instant, then insertion order): service/paging.ts. */
  list(companyId: string, filters: MdfeFilters, page: PageRequest): Promise<Page<MdfeRecord>>;
  /**
   * Runs `change` (an event: the manifest read, the event sent to the authority, the outcome
   * recorded) as the only change of manifest `id` at a time among every process sharing the
   * store, as NfceStore.changeTurn.
   */
  changeTurn<T>(id: string, change: () => Promise<T>): Promise<T>;
  /**
   * Records a registered event and moves the manifest from `autorizado` to `to` (null: it stays
   * `autorizado`, a driver or documents added), appending `added` to its linked documents.
   * Undefined (and nothing recorded) when the manifest is no longer `autorizado`.
   */
  recordEvent(id: string, event: MdfeEventRecord, to: 'encerrado' | 'cancelado' | null, added?: readonly MdfeDocument[]): Promise<MdfeRecord | undefined>;
  /**
   * Manifests left `processando` by a stopped process, oldest first: on SQLite every one (read
   * at start, the process owns the file); on PostgreSQL those whose issuing process no longer
   * holds its lease (pg-db.ts).
   */
  processing(): Promise<MdfeRecord[]>;
}
