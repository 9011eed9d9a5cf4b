// Typed client of the issuance API (docs/api.md), the only way
// the terminal talks to the service. Two kinds of failure, kept apart because the worker treats
// them differently:
// - ServiceHttpError: the service answered with a 4xx/5xx; carries the status, the contract's
//   error body ({ error: { code, message, details } }), Retry-After and the "id" a 409 names;
// - ServiceNetworkError: no answer (refused, reset, timed out, cut mid-body), or an answer that is
//   not the service's (`foreign`: an HTML page, another program on the port, a captive portal, a
//   proxy's error page: anything without the contract's shape). The request may or may not have
//   reached the service, so only a retry with the same idempotency key is safe; a foreign answer
//   is never read as the service refusing the receipt.
// Every call has a timeout; nothing here retries (the outbox worker decides).

import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Agent } from 'undici';
import type { AuthorityStatus, CancelBody, NfceAccepted as NfceAcceptedView, NfceView, VoidBody, VoidView } from '../../base/common/api/nfce.ts';
import type { DevolucaoBody, NfeAccepted, NfeView } from '../../base/common/api/nfe.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import { pinnedAgent, PinMismatchError } from './pinned-tls.ts';

/** The embedded service of `npm start` (bin/start.ts: loopback, port 8765 unless BALCAO_PORT). */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8765';
export const DEFAULT_TIMEOUT_MS = 15_000;

/** What the service last learned of the tax authority (GET /healthz, NFC-e answers while waiting). */
export type { AuthorityStatus } from '../../base/common/api/nfce.ts';
export type AuthoritySituation = AuthorityStatus['situacao'];
export type { NfceStatus } from '../../base/common/api/nfce.ts';

// The API's own types (base/common/api/): what the service answers and takes, written once.

/** GET /api/v1/nfce/{id}; `idempotent_replay` on the replay of an authorized issuance. */
export type NfceDocument = NfceView & { idempotent_replay?: boolean };

/** 202 of POST /api/v1/nfce (docs/api.md, "NFC-e"). */
export type NfceAccepted = NfceAcceptedView;

/** GET /healthz with the terminal's token; `avisos`: the service's warnings for the company, in words. */
export type Health = { ok: boolean; autoridade: AuthoritySituation | null; avisos: string[] };

/** What an issuance POST answered: a fresh attempt (202) or the replay of an authorized one (200). */
export type Submission<Accepted, Document> = { status: 202; replay: false; body: Accepted } | { status: 200; replay: true; body: Document };

export type NfceSubmission = Submission<NfceAccepted, NfceDocument>;

export type { CancelBody } from '../../base/common/api/nfce.ts';
export type InutilizarBody = VoidBody;
export type InutilizarResult = VoidView;

/** POST /api/v1/nfe/devolucao: the return referencing an NFC-e's key, with the items and quantities. */
export type { DevolucaoBody } from '../../base/common/api/nfe.ts';

/** GET /api/v1/nfe/{id}: a return; `idempotent_replay` on the replay of an authorized one. */
export type NfeDocument = NfeView & { idempotent_replay?: boolean };

/** 202 of POST /api/v1/nfe/devolucao. */
export type { NfeAccepted } from '../../base/common/api/nfe.ts';

export type DevolucaoSubmission = Submission<NfeAccepted, NfeDocument>;

/** The tax authority's own refusal, when the service's 422 is one (an event, an inutilização). */
export type AuthorityRefusal = { cStat: string; xMotivo: string };

export type ContractError = { code: string; message: string; details?: { field: string; message: string }[]; rejeicao?: AuthorityRefusal };

export class ServiceHttpError extends Error {
  override name = 'ServiceHttpError';
  readonly status: number;
  /** The contract's error code (`em_processamento`, `prazo_expirado`, ...), or `http_<status>`. */
  readonly code: string;
  /** The service's message, written for integrators: logged, never shown (service-messages.ts). */
  readonly serviceMessage: string;
  readonly details: { field: string; message: string }[];
  readonly rejeicao: AuthorityRefusal | undefined;
  /** Seconds, from the Retry-After header. */
  readonly retryAfterSeconds: number | undefined;
  /** The document a 409 names (the one in flight under the key). */
  readonly documentId: string | undefined;
  readonly body: unknown;

  constructor(status: number, body: unknown, retryAfterSeconds: number | undefined) {
    const err = contractErrorOf(body);
    super(`HTTP ${status}${err ? ` ${err.code}: ${err.message}` : ''}`);
    this.status = status;
    this.code = err?.code ?? `http_${status}`;
    this.serviceMessage = err?.message ?? `O serviço de emissão respondeu HTTP ${status}`;
    this.details = err?.details ?? [];
    this.rejeicao = err?.rejeicao;
    this.retryAfterSeconds = retryAfterSeconds;
    this.documentId = documentIdOf(body);
    this.body = body;
  }
}

export type NetworkFailureKind = 'refused' | 'timeout' | 'reset' | 'dns' | 'certificate' | 'foreign' | 'other';

export class ServiceNetworkError extends Error {
  override name = 'ServiceNetworkError';
  readonly kind: NetworkFailureKind;
  /** False only when the request certainly never left (connection refused, unknown host). */
  readonly mayHaveReachedService: boolean;

  constructor(kind: NetworkFailureKind, detail: string, options?: { cause?: unknown }) {
    super(`${NETWORK_MESSAGES[kind]} (${detail})`, options);
    this.kind = kind;
    // A refused certificate ends the handshake before the request is written.
    this.mayHaveReachedService = kind !== 'refused' && kind !== 'dns' && kind !== 'certificate';
  }
}

const NETWORK_MESSAGES: Record<NetworkFailureKind, string> = {
  refused: 'Serviço de emissão fora do ar (conexão recusada)',
  timeout: 'O serviço de emissão não respondeu a tempo',
  reset: 'A conexão com o serviço de emissão caiu',
  dns: 'Endereço do serviço de emissão não encontrado',
  certificate: 'Certificado do serviço de emissão não reconhecido',
  foreign: 'No endereço do serviço de emissão respondeu outro programa, não o serviço do Balcão (confira o endereço em Configurações → Serviço)',
  other: 'Falha de comunicação com o serviço de emissão',
};

const SITUATIONS: readonly string[] = ['disponivel', 'indisponivel', 'desconhecida'];

/** The `autoridade.situacao` of an answer's body (or of a submission's body), when it has one. */
export function authoritySituationOf(value: unknown): AuthoritySituation | undefined {
  const find = (v: unknown): unknown => (typeof v === 'object' && v !== null ? (v as { autoridade?: { situacao?: unknown } }).autoridade?.situacao : undefined);
  const situation = find(value) ?? find(typeof value === 'object' && value !== null ? (value as { body?: unknown }).body : undefined);
  return typeof situation === 'string' && SITUATIONS.includes(situation) ? (situation as AuthoritySituation) : undefined;
}

function contractErrorOf(body: unknown): ContractError | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, message, details, rejeicao } = e as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  const refusal = rejeicao as Partial<AuthorityRefusal> | undefined;
  return {
    code,
    message,
    ...(Array.isArray(details) && { details: details as ContractError['details'] }),
    ...(typeof refusal?.cStat === 'string' && typeof refusal.xMotivo === 'string' && { rejeicao: { cStat: refusal.cStat, xMotivo: refusal.xMotivo } }),
  };
}

// The contract says a 409 carries `"id"` of the document in flight; accept it at the top level
// or inside the error object.
function documentIdOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const top = (body as { id?: unknown }).id;
  if (typeof top === 'string') return top;
  const inner = (body as { error?: { id?: unknown } }).error?.id;
  return typeof inner === 'string' ? inner : undefined;
}

/** An answer without the contract's shape: not the service's, so as good as none (see the header). */
function foreignAnswer(status: number, what: string): ServiceNetworkError {
  return new ServiceNetworkError('foreign', `HTTP ${status}${what ? `, ${what}` : ''}`);
}

/** Retry-After: delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

const CODE_KINDS: Record<string, NetworkFailureKind> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  BALCAO_PIN_MISMATCH: 'certificate',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'certificate',
  CERT_HAS_EXPIRED: 'certificate',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate',
};

/** Turns whatever fetch threw into a ServiceNetworkError. */
export function classifyNetworkError(err: unknown): ServiceNetworkError {
  if (err instanceof ServiceNetworkError) return err;
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string; message?: string; name?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return new ServiceNetworkError('timeout', e.message ?? 'tempo esgotado', { cause: err });
  if (e?.cause instanceof PinMismatchError) return new ServiceNetworkError('certificate', e.cause.message, { cause: err });
  const code = e?.cause?.code ?? e?.code;
  // OpenSSL's verification codes (an untrusted, expired, misnamed or misused certificate).
  const certificate = code !== undefined && /CERT|SELF_SIGNED|ISSUER|PURPOSE|ALTNAME/.test(code);
  const kind: NetworkFailureKind =
    (code ? CODE_KINDS[code] : undefined) ??
    (certificate ? 'certificate' : /other side closed|terminated|socket/i.test(`${e?.message} ${e?.cause?.message}`) ? 'reset' : 'other');
  return new ServiceNetworkError(kind, code ?? e?.cause?.message ?? e?.message ?? String(err), { cause: err });
}

export type IssuanceClientOptions = {
  /** Default: the embedded service. */
  baseUrl?: string;
  token: string;
  /** Per request, connection included. */
  timeoutMs?: number;
  /** Hears the Date header of every answer, errors included (service-clock.ts). */
  onAnswerDated?: (date: string | null) => void;
  /** The pinned SHA-256 of an https:// service's certificate (pinned-tls.ts); null or absent: the system's trust. */
  fingerprint256?: string | null;
};

/** PUT /api/v1/terminais/{id}: this checkout and every series it issues in. */
export type TerminalClaim = { nome: string; series: number[] };
/** The claim's answer; `numeracao` (each series' highest number at the service) from services that say it. */
export type TerminalClaimed = {
  terminal: string;
  nome: string;
  series: number[];
  numeracao?: { serie: number; ultimo_numero: number }[];
  /** The service's technical responsible; absent from a service older than it, null when it has none. */
  responsavel_tecnico?: { cnpj: string; contato: string; email: string; telefone: string; csrt: { id: number; token: string } | null } | null;
};

type Raw = { status: number; headers: Headers; body: unknown; bytes: Uint8Array };

// What every answer about a document has (base/common/api/): an answer without them is not the service's.
const NFCE_FIELDS = ['id', 'status', 'chave'] as const;
const NFE_FIELDS = ['id', 'situacao', 'chave'] as const;

export class IssuanceClient {
  // Mutable: the manager changes them in the settings and the next request uses them.
  baseUrl: string;
  private token: string;
  private readonly timeoutMs: number;
  private readonly onAnswerDated: (date: string | null) => void;
  private fingerprint: string | null;
  private pinned: Promise<Agent> | undefined;

  constructor(options: IssuanceClientOptions) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_SERVICE_URL).replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.onAnswerDated = options.onAnswerDated ?? (() => {});
    this.fingerprint = options.fingerprint256 ?? null;
  }

  /** Points the client at another service, token or pin; requests in flight finish with the old ones. */
  reconfigure(options: { baseUrl?: string; token?: string; fingerprint256?: string | null }): void {
    if (options.baseUrl !== undefined) this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (options.token !== undefined) this.token = options.token;
    if (options.fingerprint256 !== undefined && options.fingerprint256 !== this.fingerprint) {
      this.fingerprint = options.fingerprint256;
      const old = this.pinned;
      this.pinned = undefined;
      void old?.then((agent) => agent.close()).catch(() => undefined);
    }
  }

  /** Closes the pinned connections, if any. */
  async close(): Promise<void> {
    const pinned = this.pinned;
    this.pinned = undefined;
    await pinned?.then((agent) => agent.close()).catch(() => undefined);
  }

  /**
   * fetch for this service: with a pinned https:// service, undici's own fetch through the
   * pinning dispatcher (pinned-tls.ts); otherwise the global fetch.
   */
  private async send(url: string, init: RequestInit): Promise<Response> {
    if (this.fingerprint === null || !url.startsWith('https:')) return fetch(url, init);
    this.pinned ??= pinnedAgent(this.fingerprint);
    const [{ fetch: undiciFetch }, dispatcher] = await Promise.all([import('undici'), this.pinned]);
    return undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  }

  /** One HTTP exchange. Resolves for 2xx; rejects with ServiceHttpError or ServiceNetworkError. */
  private async call(
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string; accept?: string; timeoutMs?: number } = {},
  ): Promise<Raw> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: options.accept ?? 'application/json' };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    let res: Response;
    let bytes: Uint8Array;
    try {
      res = await this.send(this.baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs) });
      this.onAnswerDated(res.headers.get('date'));
      // Reading the body is part of the exchange: a connection cut mid-body is a lost answer.
      bytes = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      throw classifyNetworkError(err);
    }
    const type = res.headers.get('content-type') ?? '';
    let parsed: unknown = undefined;
    if (type.includes('json') && bytes.length) {
      try {
        parsed = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        parsed = undefined; // a garbled body: not an answer of the service (below)
      }
    }
    if (res.status >= 400) {
      // The service answers every error with the contract's body. Without it, something else
      // answered (a proxy's 502 page, another program's 404): the service was not reached.
      if (!contractErrorOf(parsed)) throw foreignAnswer(res.status, type);
      throw new ServiceHttpError(res.status, parsed, parseRetryAfter(res.headers.get('retry-after')));
    }
    // A JSON call must get JSON back (a page that says 200 is not the service's yes).
    const wanted = options.accept ?? 'application/json';
    if (wanted.includes('json') && (typeof parsed !== 'object' || parsed === null)) throw foreignAnswer(res.status, type);
    if (!wanted.includes('json') && !type.includes(wanted.split('/')[1]!)) throw foreignAnswer(res.status, type);
    return { status: res.status, headers: res.headers, body: parsed, bytes };
  }

  /** The answer's body when it has the fields every answer of `what` has; else it was not the service's. */
  private static json<T>(raw: Raw, what: string, fields: readonly string[] = ['id']): T {
    const body = raw.body as Record<string, unknown>;
    const missing = fields.filter((f) => body[f] === undefined);
    if (missing.length) throw foreignAnswer(raw.status, `JSON sem ${missing.join(', ')} em ${what}`);
    return raw.body as T;
  }

  // -------------------------------------------------------------------------------------------
  // NFC-e

  /** POST /api/v1/nfce with the receipt's idempotency key (the same on every attempt). */
  async createNfce(request: NfceRequest | { xml: string }, idempotencyKey: string): Promise<NfceSubmission> {
    const raw = await this.call('POST', '/api/v1/nfce', { body: request, idempotencyKey });
    if (raw.status === 200) return { status: 200, replay: true, body: IssuanceClient.json<NfceDocument>(raw, 'POST /api/v1/nfce', NFCE_FIELDS) };
    return { status: 202, replay: false, body: IssuanceClient.json<NfceAccepted>(raw, 'POST /api/v1/nfce', NFCE_FIELDS) };
  }

  async getNfce(id: string): Promise<NfceDocument> {
    return IssuanceClient.json(await this.call('GET', `/api/v1/nfce/${encodeURIComponent(id)}`), 'GET /api/v1/nfce/{id}', NFCE_FIELDS);
  }

  /** The key is sent as Idempotency-Key: harmless where not honoured, and traceable in logs. */
  async cancelNfce(id: string, body: CancelBody, idempotencyKey?: string): Promise<NfceDocument> {
    const raw = await this.call('POST', `/api/v1/nfce/${encodeURIComponent(id)}/cancelar`, { body, ...(idempotencyKey && { idempotencyKey }) });
    return IssuanceClient.json(raw, 'POST /api/v1/nfce/{id}/cancelar', NFCE_FIELDS);
  }

  async inutilizarNfce(body: InutilizarBody, idempotencyKey?: string): Promise<InutilizarResult> {
    const raw = await this.call('POST', '/api/v1/nfce/inutilizar', { body, ...(idempotencyKey && { idempotencyKey }) });
    return IssuanceClient.json(raw, 'POST /api/v1/nfce/inutilizar', ['codigo_status']);
  }

  /** The 80 mm receipt: PDF, or ESC/POS bytes for a 48-column printer. */
  async danfe(id: string, formato: 'pdf' | 'escpos' = 'pdf'): Promise<Uint8Array> {
    const query = formato === 'escpos' ? '?formato=escpos' : '';
    const raw = await this.call('GET', `/api/v1/nfce/${encodeURIComponent(id)}/danfe${query}`, {
      accept: formato === 'escpos' ? 'application/octet-stream' : 'application/pdf',
    });
    return raw.bytes;
  }

  async xml(id: string): Promise<string> {
    const raw = await this.call('GET', `/api/v1/nfce/${encodeURIComponent(id)}/xml`, { accept: 'application/xml' });
    return new TextDecoder().decode(raw.bytes);
  }

  // -------------------------------------------------------------------------------------------
  // NF-e de devolução

  /** POST /api/v1/nfe/devolucao with the return's idempotency key (the same on every attempt). */
  async createDevolucao(body: DevolucaoBody, idempotencyKey: string): Promise<DevolucaoSubmission> {
    const raw = await this.call('POST', '/api/v1/nfe/devolucao', { body, idempotencyKey });
    if (raw.status === 200) return { status: 200, replay: true, body: IssuanceClient.json<NfeDocument>(raw, 'POST /api/v1/nfe/devolucao', NFE_FIELDS) };
    return { status: 202, replay: false, body: IssuanceClient.json<NfeAccepted>(raw, 'POST /api/v1/nfe/devolucao', NFE_FIELDS) };
  }

  async getNfe(id: string): Promise<NfeDocument> {
    return IssuanceClient.json(await this.call('GET', `/api/v1/nfe/${encodeURIComponent(id)}`), 'GET /api/v1/nfe/{id}', NFE_FIELDS);
  }

  // -------------------------------------------------------------------------------------------
  // Terminals and series; the accountant's export

  /** PUT /api/v1/terminais/{id}: claims the series; 409 serie_em_uso when another checkout holds one. */
  async claimTerminal(terminalId: string, claim: TerminalClaim, options: { timeoutMs?: number } = {}): Promise<TerminalClaimed> {
    const raw = await this.call('PUT', `/api/v1/terminais/${encodeURIComponent(terminalId)}`, { body: claim, ...options });
    return IssuanceClient.json(raw, 'PUT /api/v1/terminais/{id}', ['terminal', 'series']);
  }

  /** GET /api/v1/pix/recebidos?txid=: what the PSP's webhook told the service of a charge (a hint; the PSP confirms). */
  async pixReceived(txid: string): Promise<{ webhook: boolean; endToEndIds: string[] }> {
    // Short: it is asked inside the PIX loop's round, and a service away must not hold the PSP's reads.
    const raw = await this.call('GET', `/api/v1/pix/recebidos?txid=${encodeURIComponent(txid)}`, { timeoutMs: 2_000 });
    const body = IssuanceClient.json<{ webhook_configurado: boolean; data: { endToEndId: string }[] }>(raw, 'GET /api/v1/pix/recebidos', [
      'webhook_configurado',
      'data',
    ]);
    return { webhook: body.webhook_configurado === true, endToEndIds: body.data.map((p) => p.endToEndId) };
  }

  /**
   * GET /api/v1/{nfce|mdfe}/exportacao, streamed to `file` (written beside it and renamed when
   * whole, so a cut download never looks complete). Resolves with the bytes written.
   */
  async downloadExport(kind: 'nfce' | 'mdfe', de: string, ate: string, file: string, timeoutMs = 10 * 60_000): Promise<number> {
    const url = `${this.baseUrl}/api/v1/${kind}/exportacao?de=${encodeURIComponent(de)}&ate=${encodeURIComponent(ate)}`;
    const partial = `${file}.parcial`;
    let res: Response;
    try {
      res = await this.send(url, { headers: { authorization: `Bearer ${this.token}`, accept: 'application/zip' }, signal: AbortSignal.timeout(timeoutMs) });
      this.onAnswerDated(res.headers.get('date'));
    } catch (err) {
      throw classifyNetworkError(err);
    }
    if (res.status !== 200 || !res.body) {
      const text = await res.text().catch(() => '');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      throw new ServiceHttpError(res.status, parsed, parseRetryAfter(res.headers.get('retry-after')));
    }
    let bytes = 0;
    try {
      const body = Readable.fromWeb(res.body as unknown as WebReadableStream);
      body.on('data', (chunk: Buffer) => (bytes += chunk.length));
      await pipeline(body, createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, file);
    } catch (err) {
      await rm(partial, { force: true });
      throw classifyNetworkError(err);
    }
    return bytes;
  }

  // -------------------------------------------------------------------------------------------
  // Sandbox controls (contract 5) and health

  async sandboxAuthority(settings: { latencia_ms?: number; disponivel?: boolean }): Promise<{ latencia_ms: number; disponivel: boolean }> {
    return IssuanceClient.json(await this.call('POST', '/api/v1/sandbox/autoridade', { body: settings }), 'POST /api/v1/sandbox/autoridade', ['disponivel']);
  }

  async sandboxAdvanceClock(minutes: number): Promise<{ deslocamento_minutos: number; agora: string }> {
    const raw = await this.call('POST', '/api/v1/sandbox/relogio', { body: { avancar_minutos: minutes } });
    return IssuanceClient.json(raw, 'POST /api/v1/sandbox/relogio', ['agora']);
  }

  /**
   * GET /healthz: `ok` when the service answers 2xx, and what it last learned of the company's
   * tax authority (null from a service that does not say). Network failures are thrown.
   */
  async health(options: { timeoutMs?: number } = {}): Promise<Health> {
    try {
      const raw = await this.call('GET', '/healthz', options);
      // `{ "status": "ok" }` is the service's; any other 2xx is someone else's page.
      if ((raw.body as { status?: unknown }).status !== 'ok') throw foreignAnswer(raw.status, 'GET /healthz sem status ok');
      const avisos = (raw.body as { avisos?: unknown }).avisos;
      return {
        ok: true,
        autoridade: authoritySituationOf(raw.body) ?? null,
        avisos: Array.isArray(avisos) ? avisos.filter((a): a is string => typeof a === 'string') : [],
      };
    } catch (err) {
      if (err instanceof ServiceHttpError) return { ok: false, autoridade: null, avisos: [] };
      throw err;
    }
  }
}
