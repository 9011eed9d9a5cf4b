// The service's one data-access seam. Every operation is coarse-grained and atomic (one
// transaction), and returns a Promise: SQLite (sqlite-store.ts, one process owns its data
// directory) and PostgreSQL (pg-store.ts, several processes share one database) implement it
// without a caller knowing which. No other module writes SQL.
//
// The interface is split by concern; document types (NFC-e, MDF-e) and the webhooks have their
// own part (`NfceStore`, `WebhookStore`, ...) beside their code, and `ServiceStore` composes them:
// it sits above them, and they never import it. Their operations that change a document
// together with its idempotency key or a webhook event do it in the same transaction
// (see the *InTx building blocks of SqliteStore).

import type { Environment, QrCodeVersion } from '../fiscal/company.ts';
import type { IbptStoredTable, IbptTable } from '../fiscal/ibpt/table.ts';
import type { RateOverride } from '../fiscal/ibscbs/rates.ts';
import type { IbsCbsSettings } from '../fiscal/ibscbs/settings.ts';
import type { SandboxMemory } from './authority/sandbox-memory.ts';
import type { ClaimRequest, ClaimResult, DocumentType, KeyAttempt, KeyOutcome, StoredKey } from './idempotency-rules.ts';
import type { MdfeStore } from './mdfe/store.ts';
import type { NfceStore } from './nfce/store.ts';
import type { NfeStore } from './nfe/store.ts';
import type { PixStore } from './pix/store.ts';
import type { TerminalStore } from './terminals/store.ts';
import type { WebhookStore } from './webhooks/store.ts';

export type Crt = 1 | 2 | 3 | 4;

export type CompanyAddress = {
  logradouro: string;
  numero: string;
  complemento: string | null;
  bairro: string;
  /** 7-digit IBGE code. */
  codigoMunicipio: string;
  municipio: string;
  uf: string;
  /** 8 digits. */
  cep: string;
  telefone: string | null;
};

/** A company as stored: secrets sealed by secrets.ts, never in clear. */
export type CompanyRecord = {
  id: string;
  cnpj: string;
  ie: string;
  nome: string;
  fantasia: string | null;
  address: CompanyAddress;
  crt: Crt;
  csc: { id: string; sealed: Buffer } | null;
  qrcodeVersao: QrCodeVersion;
  ambiente: Environment;
  certificate: { pfxSealed: Buffer; passwordSealed: Buffer; sha256: string; notAfter: string };
  /** Tax reform: opt-in of CRT 1/2/4, default classification, own rates per period. */
  ibsCbs: IbsCbsSettings;
  createdAt: string;
  /** Bumped by every settings update: what tells a process that its cached credentials are stale. */
  version: number;
  updatedAt: string;
};

/**
 * What `balcao company update` may change: everything but the fiscal identity. The CNPJ and the
 * UF (`address.uf`) identify the company at the tax authority and in every access key, so the
 * store never writes them after registration.
 */
export type CompanySettings = Omit<CompanyRecord, 'id' | 'cnpj' | 'createdAt' | 'version' | 'updatedAt'>;

/**
 * A certificate the company signed with before its current one: the public facts that recognise
 * it in a signed XML and date it, never its private key. Instants are ISO-8601 UTC.
 */
export type ReplacedCertificate = {
  /** As `CompanyRecord.certificate.sha256` (Node's fingerprint256). */
  sha256: string;
  notBefore: string;
  notAfter: string;
  /** When the settings update that replaced it committed: it stopped being the company's then. */
  replacedAt: string;
};

/** What a request needs to know about its caller, resolved from the token. */
export type TokenOwner = {
  tokenSha256: Buffer;
  company: { id: string; cnpj: string; uf: string; ambiente: Environment };
  /** Read with the token, so the request need not read them again (read-scope.ts). */
  settingsVersion: number;
  clockOffsetMinutes: number;
};

export interface CompanyStore {
  /** Creates the company and its first API token together (its version and updatedAt are set here). */
  insertCompany(company: Omit<CompanyRecord, 'version' | 'updatedAt'>, tokenSha256: Buffer): Promise<void>;
  getCompany(id: string): Promise<CompanyRecord | undefined>;
  /** The company's settings version alone (undefined when unknown): read on every issuance, so cheap. */
  getCompanyVersion(id: string): Promise<number | undefined>;
  /**
   * Replaces the settings if the company is still at `expectedVersion` (the one the caller
   * validated against) and bumps the version; the updated company, or undefined when it moved
   * on in between (or does not exist) and nothing changed.
   *
   * A new certificate (another sha256) comes with `replaced`, the public facts of the one on
   * file at `expectedVersion`, which is recorded in the same transaction with the commit instant
   * as `replacedAt` (see `replacedCertificates`). A certificate change without it, or `replaced`
   * that is not the certificate on file, is a caller's bug: rejected, nothing written.
   *
   * The sealed secrets replaced (the old .pfx with its private key, its password, the old CSC)
   * must not stay readable in the database's files afterwards, not even in free space or a
   * journal: SQLite scrubs them (secure_delete and a WAL checkpoint); PostgreSQL would need the
   * old row versions vacuumed.
   */
  updateCompanySettings(
    id: string,
    expectedVersion: number,
    settings: CompanySettings,
    replaced?: Omit<ReplacedCertificate, 'replacedAt'>,
  ): Promise<CompanyRecord | undefined>;
  /** The company's earlier certificates, oldest replacement first (empty for an unknown company). */
  replacedCertificates(companyId: string): Promise<ReplacedCertificate[]>;
  /**
   * Revokes every API token of the company and stores this one instead, in one transaction.
   * False (and nothing changes) for an unknown company.
   */
  replaceApiTokens(companyId: string, tokenSha256: Buffer): Promise<boolean>;
  findTokenOwner(tokenSha256: Buffer): Promise<TokenOwner | undefined>;
  /** The deployment's technical responsible (service/resp-tec.ts), if one was set. */
  technicalResponsible(): Promise<StoredTechnicalResponsible | undefined>;
  /** Sets (or, with undefined, removes) the deployment's technical responsible. */
  setTechnicalResponsible(value: StoredTechnicalResponsible | undefined): Promise<void>;
  /** The IBS/CBS rates the operator set for all companies (empty when never set), as checked. */
  getOperatorRates(): Promise<RateOverride[]>;
  /**
   * Replaces the operator's rates (already checked) and bumps every company's settings version in
   * the same transaction, so each process reloads its companies' issuers on their next request.
   */
  setOperatorRates(periods: readonly RateOverride[]): Promise<void>;
  /**
   * Stores an IBPT table (Lei 12.741; `balcao ibpt import --servico`), replacing the one of the
   * same UF and versão, and bumps the settings version of that UF's companies in the same
   * transaction, so each process reloads their issuers (and the tables) on their next request.
   */
  importIbptTable(table: IbptTable, fileName: string): Promise<IbptStoredTable>;
  /** The IBPT tables of `uf` with their rates. */
  ibptTables(uf: string): Promise<IbptTable[]>;
  /** Changes whenever the IBPT tables of `uf` do: whether a copy read before is still current. */
  ibptStamp(uf: string): Promise<string>;
  /** Every stored IBPT table, without its rates, newest validity first. */
  listIbptTables(): Promise<IbptStoredTable[]>;
}

export type PendingKey = KeyAttempt & { createdAt: string; updatedAt: string };

export interface IdempotencyStore {
  /** The atomic claim of docs/api.md, "Idempotency" (rules in idempotency-rules.ts). */
  claimIdempotencyKey(request: ClaimRequest): Promise<ClaimResult>;
  /** The key as stored, without claiming it (undefined when never claimed, or forgotten). */
  findIdempotencyKey(companyId: string, docType: DocumentType, key: string): Promise<StoredKey | undefined>;
  /**
   * Records the outcome of the attempt `attempt.documentId`. False (and nothing changes) when
   * the key has moved on to another attempt or the transition is not allowed.
   */
  settleIdempotencyKey(attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean>;
  /**
   * Removes the claim of `attempt.documentId` while it is still processing: the request was
   * refused before anything was stored. False when the key has moved on.
   */
  forgetIdempotencyKey(attempt: KeyAttempt): Promise<boolean>;
  /**
   * Keys still locked by a process that is gone, oldest first: what the recovery of a document
   * type settles. On SQLite (its process owns the file) every locked key, read at start; on
   * PostgreSQL the keys whose claiming process no longer holds its lease (pg-db.ts).
   */
  pendingIdempotencyKeys(docType: DocumentType): Promise<PendingKey[]>;
}

export type SandboxAuthority = { latencyMs: number; disponivel: boolean };

export const DEFAULT_SANDBOX_AUTHORITY: Readonly<SandboxAuthority> = Object.freeze({ latencyMs: 0, disponivel: true });

export interface SandboxStore {
  getSandboxAuthority(companyId: string): Promise<SandboxAuthority>;
  /** Applies the fields present and returns the resulting settings. */
  updateSandboxAuthority(companyId: string, patch: Partial<SandboxAuthority>): Promise<SandboxAuthority>;
  getClockOffsetMinutes(companyId: string): Promise<number>;
  /** Both at once, as the sandbox authority reads them on every call (one round trip where it counts). */
  getSandboxReading(companyId: string): Promise<{ authority: SandboxAuthority; offsetMinutes: number }>;
  /** Adds `minutes` (≥ 0) to the company's clock offset; returns the new offset. */
  advanceClock(companyId: string, minutes: number): Promise<number>;
  /**
   * Where the simulated tax authority keeps its memory (authority/sandbox-memory.ts): its own
   * file beside service.sqlite (`<data>/sandbox-authority.sqlite`, in memory for a store
   * without a data directory), or a schema of the PostgreSQL database every process shares.
   * Opened on each call; its owner closes it.
   */
  openSandboxAuthorityMemory(): SandboxMemory;
}

/** The technical responsible as stored: the CSRT sealed (purpose secretContext.csrt). */
export type StoredTechnicalResponsible = {
  cnpj: string;
  contact: string;
  email: string;
  phone: string;
  csrt: { id: number; sealed: Buffer } | null;
  updatedAt: string;
};

export interface ServiceStore extends CompanyStore, IdempotencyStore, SandboxStore, WebhookStore {
  /** MDF-e documents and their events (service/mdfe/store.ts). */
  readonly mdfe: MdfeStore;
  /** NFC-e documents and inutilizações (service/nfce/store.ts). */
  readonly nfce: NfceStore;
  /** NF-e documents: the returns (service/nfe/store.ts). */
  readonly nfe: NfeStore;
  /** The company's checkouts and the NFC-e series each holds (service/terminals/store.ts). */
  readonly terminals: TerminalStore;
  /** The API Pix webhook: each company's secret and the PIX its PSP reported (service/pix/store.ts). */
  readonly pix: PixStore;
  /**
   * The sealed master-key check value: the stored one, or `candidate` stored now when the
   * database has none yet (first start).
   */
  masterKeyCheck(candidate: Buffer): Promise<Buffer>;
  /**
   * Whether several service processes may share this store (PostgreSQL). Then what a process
   * works on is leased to it in the database, and what a stopped process left in flight is
   * settled by the others, looking periodically, not only at start.
   */
  readonly shared: boolean;
  /**
   * Readiness: the database answers and its schema is the one this code ships (no migration
   * missing). Throws an Error whose message (Portuguese) says what is wrong.
   */
  checkReady(): Promise<void>;
  close(): Promise<void>;
}
