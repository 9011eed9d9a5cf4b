// The NF-e part of the service store (ServiceStore.nfe): the returns (NF-e de devolução) and what
// they need to know of the NFC-e they refer to. Every operation is one transaction; the ones that
// change a document together with its idempotency key or a webhook event do all of it in that
// same transaction, like the NFC-e part.

import type { Environment } from '../../fiscal/company.ts';
import type { DevolucaoExportSource } from '../export/devolucoes.ts';
import type { Page, PageRequest } from '../paging.ts';
import type { WebhookEvent } from '../webhooks/store.ts';

export type NfeStatus = 'processando' | 'autorizado' | 'rejeitado';

export type NfeItemRecord = {
  numeroItem: number;
  codigo: string;
  descricao: string;
  unidade: string;
  /** Ten-thousandths of the unit. */
  quantidadeUnits: bigint;
  valor: string;
};

/** A return as the API shows it and the routes decide on it (the XML texts left out). */
export type NfeRecord = {
  id: string;
  companyId: string;
  tipo: 'devolucao';
  idempotencyKey: string | null;
  serie: number;
  numero: number;
  chave: string;
  nfceId: string;
  chaveNfce: string;
  /** As written in ide/dhEmi (Brasília offset). */
  dhEmi: string;
  ambiente: Environment;
  justificativa: string;
  valorTotal: string;
  status: NfeStatus;
  codigoStatus: string | null;
  motivo: string | null;
  protocolo: string | null;
  /** dhRecbto of the authorization, as the authority wrote it. */
  autorizadoEm: string | null;
  attempts: number;
  createdAt: string;
  itens: NfeItemRecord[];
};

export type NfeSummary = Omit<NfeRecord, 'itens'>;

/** The list's filters (GET /api/v1/nfe): instants are UTC ISO, `until` exclusive. */
export type NfeFilters = {
  status?: NfeStatus;
  serie?: number;
  chave?: string;
  /** The returns of this NFC-e. */
  chaveNfce?: string;
  referenciaExterna?: string;
  from?: string;
  until?: string;
};

/** What the POST stores: the signed return in `processando`. */
export type NewNfeDocument = Pick<
  NfeRecord,
  | 'id'
  | 'companyId'
  | 'tipo'
  | 'idempotencyKey'
  | 'serie'
  | 'numero'
  | 'chave'
  | 'nfceId'
  | 'chaveNfce'
  | 'dhEmi'
  | 'ambiente'
  | 'justificativa'
  | 'valorTotal'
  | 'itens'
> & { requestJson: string; signedXml: string; createdAt: Date };

/** The NFC-e a return refers to, as the return needs it. */
export type ReturnedNfce = {
  id: string;
  status: 'processando' | 'autorizado' | 'rejeitado' | 'cancelado';
  /** nfeProc once authorized (or cancelled later). */
  nfeProc: string | null;
};

/** A queued return as the worker needs it. */
export type NfeWork = {
  id: string;
  companyId: string;
  chave: string;
  signedXml: string;
  attempts: number;
  createdAt: string;
};

export type NfeVerdict =
  | { status: 'autorizado'; codigoStatus: string; motivo: string; protocolo: string | null; autorizadoEm: string; nfeProc: string }
  /** codigoStatus null: rejected here, before reaching the authority. */
  | { status: 'rejeitado'; codigoStatus: string | null; motivo: string };

/** Builds the webhook event of a state change from the document in its new state. */
export type NfeEventOf = (document: NfeRecord) => WebhookEvent;

export interface NfeStore extends DevolucaoExportSource {
  /** The company's NFC-e with that access key (not a rejected attempt), if any. */
  findNfce(companyId: string, chave: string): Promise<ReturnedNfce | undefined>;
  /**
   * Quantities of the NFC-e's items already returned by the company's returns that are
   * processing or authorized, by nItem, in ten-thousandths.
   */
  returnedQuantities(companyId: string, chaveNfce: string): Promise<Map<number, bigint>>;
  /** The number the next return of the series gets: the lowest number rejected and not reused, else the next one. */
  nextNumber(companyId: string, serie: number): Promise<number>;
  /** Inserts the return in `processando` with its items (one transaction). */
  insertDocument(document: NewNfeDocument): Promise<void>;
  getDocument(companyId: string, id: string): Promise<NfeRecord | undefined>;
  /** The company's returns matching the filters, newest dhEmi first, without their items (service/paging.ts). */
  list(companyId: string, filters: NfeFilters, page: PageRequest): Promise<Page<NfeSummary>>;
  /** The company's return with this access key: the live (not rejected) one, else the latest attempt. */
  findByKey(companyId: string, chave: string): Promise<NfeRecord | undefined>;
  /** Any company's document by id (restart recovery). */
  exists(id: string): Promise<boolean>;
  getXml(companyId: string, id: string): Promise<{ signedXml: string; nfeProc: string | null } | undefined>;
  /** Takes up to `limit` processando documents due at `now`, as NfceStore.dueDocuments (leased on PostgreSQL). */
  dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfeWork[]>;
  /** Counts the attempt of each, before it is sent (one transaction). */
  beginSends(ids: readonly string[]): Promise<void>;
  /** The outcome stays unknown: retried, consulting first, at `at` (its lease freed). */
  postpone(id: string, at: Date, error: string): Promise<void>;
  /** The queue's backlog, for the metrics. */
  backlog(): Promise<{ processando: number; oldestCreatedAt: string | null }>;
  /**
   * Runs `turn` (a return's acceptance: the next number, the document built and stored) as the
   * only one of the company's at a time, among every process sharing the store.
   */
  numberingTurn<T>(companyId: string, turn: () => Promise<T>): Promise<T>;
  /**
   * Records the verdict of a processando document, settles its key and queues the webhook
   * event, in one transaction. False when it was no longer processando.
   */
  recordVerdict(id: string, verdict: NfeVerdict, eventOf: NfeEventOf): Promise<boolean>;
}
