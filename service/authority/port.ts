// The tax-authority port: everything the service asks of SEFAZ, in SEFAZ's own terms (signed XML
// in, verdict and answer XML out). The embedded sandbox implements it (sandbox.ts); a real SEFAZ
// client (SOAP 1.2 over mutual TLS with the company's A1 certificate) implements the same
// interface and plugs in without touching the rest of the service.
//
// Failures of the way (timeouts, refused connections, the authority out of service) throw
// AuthorityUnavailableError: the outcome is then unknown, and the caller must find it out with a
// consultation before sending the same document again. A rejection is not an exception: it is a
// verdict (cStat other than the success codes).

import type { SigningCredentials } from '../../fiscal/signature.ts';
import type { Environment } from '../../fiscal/company.ts';
import { AUTHORIZED_CSTAT } from '../../fiscal/protocol.ts';

/** Who is asking: the authority identifies the company by its certificate and CNPJ. */
export type AuthorityCompany = {
  id: string;
  cnpj: string;
  uf: string;
  environment: Environment;
  /** The CSC as registered at the authority (it recomputes the QR v2 hash with it). */
  csc?: { id: string; token: string };
  /** The technical responsible's CSRT as registered at the authority (it recomputes hashCSRT with it). */
  csrt?: { id: number; token: string };
  credentials: SigningCredentials;
};

/** Answer to an NF-e/NFC-e authorization (synchronous, indSinc=1) or consultation. */
export type NfeVerdict = {
  cStat: string;
  xMotivo: string;
  /** Present when authorized (cStat 100) or denied with protocol. */
  nProt?: string;
  /** dhRecbto, ISO 8601 with the Brasília offset. */
  receivedAt: string;
  /** The `<protNFe>` element, ready for nfeProc. */
  protNFe: string;
  /**
   * 539 (the number is authorized under another key): what the authority said of that key when
   * asked, so the caller can tell which document holds the number. Absent where unknown.
   */
  duplicateOf?: { key: string; cStat: string; xMotivo: string; nProt?: string };
};

export type NfeConsultation = { found: false; cStat: string; xMotivo: string } | { found: true; verdict: NfeVerdict; cancelled: boolean };

export type EventVerdict = {
  cStat: string;
  xMotivo: string;
  nProt?: string;
  registeredAt: string;
  /** The `<retEvento>` element, ready for procEventoNFe / procEventoMDFe. */
  retEvento: string;
};

export type VoidingVerdict = {
  cStat: string;
  xMotivo: string;
  nProt?: string;
  receivedAt: string;
  /** The `<retInutNFe>` element, ready for procInutNFe. */
  retInutNFe: string;
};

export type MdfeVerdict = {
  cStat: string;
  xMotivo: string;
  nProt?: string;
  receivedAt: string;
  /** The `<protMDFe>` element, ready for mdfeProc. */
  protMDFe: string;
};

export type MdfeConsultation =
  { found: false; cStat: string; xMotivo: string } | { found: true; verdict: MdfeVerdict; state: 'autorizado' | 'encerrado' | 'cancelado' };

/** MDFeConsNaoEnc: the emitter's manifests still open (111 found, 112 none). */
export type OpenManifests = { cStat: string; xMotivo: string; manifests: { chMDFe: string; nProt: string }[] };

/** Answer of the status service (NFeStatusServico): 107 = in operation. */
export type ServiceStatusVerdict = { cStat: string; xMotivo: string };

export interface TaxAuthority {
  /** Whether the NF-e/NFC-e authorizer of the company's UF answers (NFeStatusServico). */
  nfeStatus(company: AuthorityCompany): Promise<ServiceStatusVerdict>;
  /** NFC-e (65) and NF-e (55): one signed `<NFe>`, answered synchronously. */
  authorizeNfe(company: AuthorityCompany, signedNFe: string): Promise<NfeVerdict>;
  /** What the authority knows of a key (NfeConsultaProtocolo): settles an unknown outcome. */
  consultNfe(company: AuthorityCompany, key: string): Promise<NfeConsultation>;
  /** One signed `<evento>` (110111 cancellation, 110112 cancellation by substitution). */
  registerNfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict>;
  /** One signed `<inutNFe>`. */
  voidNfeNumbers(company: AuthorityCompany, signedInutNFe: string): Promise<VoidingVerdict>;
  /** One signed `<MDFe>`, synchronous (MDFeRecepcaoSinc). */
  authorizeMdfe(company: AuthorityCompany, signedMDFe: string): Promise<MdfeVerdict>;
  consultMdfe(company: AuthorityCompany, key: string): Promise<MdfeConsultation>;
  /** One signed `<eventoMDFe>` (110111 cancellation, 110112 closing, 110114 driver, 110115 documents added). */
  registerMdfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict>;
  /** The emitter's manifests the authority holds as not closed (MDFeConsNaoEnc). */
  openManifests(company: AuthorityCompany): Promise<OpenManifests>;
}

export class AuthorityUnavailableError extends Error {
  constructor(message = 'Autoridade fiscal indisponível') {
    super(message);
    this.name = 'AuthorityUnavailableError';
  }
}

/**
 * The authority refused the company's certificate during the TLS handshake (missing, expired,
 * revoked, not issued by a CA it trusts): nothing was sent, and nothing will be until the
 * certificate is fixed. Not an outage: the message names the certificate.
 */
export class AuthorityCertificateError extends Error {
  constructor(
    message: string,
    /** The TLS alert or error code, e.g. ERR_SSL_TLSV1_ALERT_UNKNOWN_CA. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'AuthorityCertificateError';
  }
}

/** cStat values that mean the document is authorized for use (fiscal/protocol.ts). */
export const AUTHORIZED = AUTHORIZED_CSTAT;
/** cStat values that mean the event was registered. */
export const EVENT_REGISTERED = new Set(['135', '136', '155']);
