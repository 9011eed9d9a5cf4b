// The NFC-e part of the service store (ServiceStore.nfce): documents and inutilizações. Every
// operation is one transaction; the ones that change a document together with its idempotency
// key or a webhook event do all of it in that same transaction, so a crash never leaves a key
// claimed without its document, or a verdict recorded without its key settled and its event
// queued.

import type { Environment } from '../../fiscal/company.ts';
import type { ClaimRequest, ClaimResult } from '../idempotency-rules.ts';
import type { Keyset, Page as ExportPage } from '../export/pages.ts';
import type { Page, PageRequest } from '../paging.ts';
import type { WebhookEvent } from '../webhooks/store.ts';

export type NfceStatus = 'processando' | 'autorizado' | 'rejeitado' | 'cancelado';

/** A document as the API shows it and the routes decide on it (the big XML texts left out). */
export type NfceRecord = {
  id: string;
  companyId: string;
  idempotencyKey: string | null;
  serie: number;
  numero: number;
  chave: string;
  cNF: string;
  /** As written in ide/dhEmi (Brasília offset). */
  dhEmi: string;
  tpEmis: 1 | 9;
  contingencia: boolean;
  ambiente: Environment;
  qrcode: string | null;
  urlConsulta: string;
  valorTotal: string;
  status: NfceStatus;
  codigoStatus: string | null;
  motivo: string | null;
  protocolo: string | null;
  /** dhRecbto of the authorization, as the authority wrote it. */
  autorizadoEm: string | null;
  canceladoEm: string | null;
  protocoloCancelamento: string | null;
  /** The cancellation event's cStat (135) and xMotivo; null without a stored event. */
  cancelamentoCodigoStatus: string | null;
  cancelamentoMotivo: string | null;
  /** Whether the signed NFe exists yet (the XML and DANFE need it). */
  signed: boolean;
  attempts: number;
  createdAt: string;
};

/** What the POST stores: the document in `processando`, key already computed. */
export type NewNfceDocument = Omit<
  NfceRecord,
  | 'status'
  | 'codigoStatus'
  | 'motivo'
  | 'protocolo'
  | 'autorizadoEm'
  | 'canceladoEm'
  | 'protocoloCancelamento'
  | 'cancelamentoCodigoStatus'
  | 'cancelamentoMotivo'
  | 'signed'
  | 'attempts'
  | 'createdAt'
> & {
  /** Exactly one of the two: the JSON request (issued here) or the signed contingency XML. */
  requestJson?: string;
  receivedXml?: string;
  createdAt: Date;
};

export type InsertResult =
  | ClaimResult
  /** A live (not rejected) document of the company already has this access key. */
  | { kind: 'same_key'; documentId: string; status: NfceStatus };

/** A queued document as the worker needs it. */
export type NfceWork = {
  id: string;
  companyId: string;
  chave: string;
  cNF: string;
  dhEmi: string;
  tpEmis: 1 | 9;
  /** The environment the receipt was accepted in; it is signed in no other. */
  ambiente: Environment;
  requestJson: string | null;
  signedXml: string | null;
  attempts: number;
  createdAt: string;
};

/** The sends the worker is about to make: each committed (signed XML, attempt) before it starts. */
export type NfceSend = { id: string; signed?: { xml: string; qrcode: string } };

export type NfceVerdict =
  | {
      status: 'autorizado';
      codigoStatus: string;
      motivo: string;
      protocolo: string | null;
      autorizadoEm: string;
      nfeProc: string;
      /** Found already cancelled when its lost authorization was recovered by consultation. */
      cancelado?: boolean;
    }
  /** codigoStatus null: rejected here, before reaching the authority (see queue.ts). */
  | { status: 'rejeitado'; codigoStatus: string | null; motivo: string };

/**
 * protocolo, the event's answer and eventoXml are null when the cancellation was learnt by
 * consultation (its answer lost).
 */
export type NfceCancellation = {
  canceladoEm: string;
  protocolo: string | null;
  /** The retEvento's cStat and xMotivo. */
  codigoStatus: string | null;
  motivo: string | null;
  eventoXml: string | null;
};

export type NfceXml = { signedXml: string | null; nfeProc: string | null; eventoXml: string | null };

export type InutilizacaoRecord = {
  id: string;
  companyId: string;
  serie: number;
  numeroInicial: number;
  numeroFinal: number;
  justificativa: string;
  protocolo: string;
  codigoStatus: string;
  motivo: string;
  xml: string;
  createdAt: Date;
};

export type InutilizacaoSummary = Omit<InutilizacaoRecord, 'xml'>;

/** The list's filters (GET /api/v1/nfce): instants are UTC ISO, `until` exclusive. */
export type NfceFilters = {
  status?: NfceStatus;
  serie?: number;
  chave?: string;
  referenciaExterna?: string;
  /** dhEmi at or after. */
  from?: string;
  /** dhEmi before. */
  until?: string;
};

/** The inutilizações list's filters: registered in [from, until), UTC ISO. */
export type InutilizacaoFilters = { serie?: number; from?: string; until?: string };

/** How many documents wait for a verdict, and since when the oldest (ISO UTC; null when none). */
export type Backlog = { processando: number; oldestCreatedAt: string | null };

/**
 * A document the accountant's export carries (service/nfce/export.ts): authorized, cancelled, or
 * issued in offline contingency and still awaiting the authority. Its XML is read one at a
 * time, when the archive reaches it.
 */
export type NfceExportEntry = Pick<
  NfceRecord,
  'id' | 'chave' | 'serie' | 'numero' | 'dhEmi' | 'status' | 'contingencia' | 'protocolo' | 'autorizadoEm' | 'canceladoEm' | 'protocoloCancelamento'
> & {
  /** tpEvento of the stored cancellation event (110111, or 110112 by substitution); null without one. */
  eventoTipo: '110111' | '110112' | null;
};

/** Builds the webhook event of a state change from the document in its new state. */
export type NfceEventOf = (document: NfceRecord) => WebhookEvent;

export interface NfceStore {
  /**
   * Inserts the document in `processando`; with `claim`, claims its idempotency key first, in the
   * same transaction (nothing is inserted unless the claim is `new`). A live document with the
   * same access key (a contingency XML sent twice) is reported instead of inserted.
   */
  insertDocument(document: NewNfceDocument, claim?: ClaimRequest): Promise<InsertResult>;
  getDocument(companyId: string, id: string): Promise<NfceRecord | undefined>;
  /** The company's documents matching the filters, newest dhEmi first (service/paging.ts). */
  list(companyId: string, filters: NfceFilters, page: PageRequest): Promise<Page<NfceRecord>>;
  /** The company's document with this access key: the live (not rejected) one, else the latest attempt. */
  findByKey(companyId: string, chave: string): Promise<NfceRecord | undefined>;
  getXml(companyId: string, id: string): Promise<NfceXml | undefined>;
  /**
   * Takes up to `limit` processando documents due at `now`, in queue order, skipping `busy` ids
   * (those this process's queue has in hand). On SQLite nothing is leased in the database: one
   * service process owns its data directory and its queue keeps the documents in flight in
   * memory, so after a crash every processando document is due at once. On PostgreSQL the
   * documents taken are leased to this process (FOR UPDATE SKIP LOCKED: two processes never take
   * the same one) until their verdict or postponement frees them; those of a process whose lease
   * ran out (it died) are due to the others (pg-db.ts).
   */
  dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfceWork[]>;
  /** Before sending: stores each signed XML not stored yet and counts the attempt, all in one transaction. */
  beginSends(sends: readonly NfceSend[]): Promise<void>;
  /** The outcome stays unknown (authority unavailable): retried, consulting first, at `at` (its lease freed). */
  postpone(id: string, at: Date, error: string): Promise<void>;
  /** The queue's backlog, for the metrics: documents processando and the oldest one's createdAt. */
  backlog(): Promise<Backlog>;
  /**
   * Records the authority's verdict of a processando document, settles its key (authorized /
   * rejected) and queues the webhook event, in one transaction. False when it was no longer
   * processando (nothing changes).
   */
  recordVerdict(id: string, verdict: NfceVerdict, eventOf: NfceEventOf): Promise<boolean>;
  /**
   * Runs `change` (a cancellation: the document read, the event sent to the authority, the
   * outcome recorded) as the only change of document `id` at a time among every process sharing
   * the store: on SQLite one process owns the store and it just runs; on PostgreSQL it holds the
   * document's lock (pg-db.ts lockedTurn). Callers take their process's turn first (turns.ts).
   */
  changeTurn<T>(id: string, change: () => Promise<T>): Promise<T>;
  /** autorizado → cancelado with the event, and its webhook event, in one transaction. */
  recordCancellation(id: string, cancellation: NfceCancellation, eventOf: NfceEventOf): Promise<boolean>;
  insertInutilizacao(record: InutilizacaoRecord): Promise<void>;
  /**
   * A page of the company's documents for the export whose dhEmi falls in [from, until), in order
   * of emission (dhEmi's instant, then arrival), starting after `after` (null: the first page):
   * authorized, cancelled, and contingency ones still processando (their signed XML). Without
   * the XML texts. Each page costs the same wherever it starts (service/export/pages.ts).
   */
  exportPage(companyId: string, from: Date, until: Date, after: Keyset | null, limit: number): Promise<ExportPage<NfceExportEntry>>;
  /**
   * Deletes these documents of the company (archived: service/nfce/archive.ts) with their
   * idempotency keys, in one transaction; a document an NF-e de devolução refers to stays (its
   * return still points at it). How many went.
   */
  deleteArchived(companyId: string, ids: readonly string[]): Promise<number>;
  /** The company's inutilizações registered in [from, until), with their XML. */
  inutilizacoesBetween(companyId: string, from: Date, until: Date): Promise<InutilizacaoRecord[]>;
  findInutilizacao(companyId: string, serie: number, first: number, last: number): Promise<InutilizacaoRecord | undefined>;
  /**
   * Each series' highest number the company used: an NFC-e that is or may be authorized (every
   * state but rejeitado, whose number may be issued again) or a voided range's end; 0 when none.
   */
  highestNumbers(companyId: string, series: readonly number[]): Promise<Map<number, number>>;
  /** The company's inutilizações, newest registration first. */
  listInutilizacoes(companyId: string, filters: InutilizacaoFilters, page: PageRequest): Promise<Page<InutilizacaoSummary>>;
  /** One inutilização with its XML (ProcInutNFe). */
  getInutilizacao(companyId: string, id: string): Promise<InutilizacaoRecord | undefined>;
}
