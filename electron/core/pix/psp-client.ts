// The terminal's client of the store's PSP (its bank) through the central bank's API Pix: the
// immediate charge of a sale (`PUT /cob/{txid}`, `GET`, `PATCH` to remove it), and the refund
// of a received PIX (`PUT/GET /pix/{e2eid}/devolucao/{id}`). Over HTTPS with mutual TLS (the
// store's client certificate, PKCS#12 with its password or PEM, and the PSP's roots added to
// Node's: TLS always verified) and OAuth2 client credentials (a token fetched at the token URL,
// kept until it expires; a 401 fetches a new one once).
//
// Every request is checked against the API Pix document (base/node/pix-api/) before it leaves:
// one out of the standard is a bug here, refused with PixRequestError, never sent. The client
// decides nothing about the sale: it reports what the PSP answered (or that no answer came), and
// the charge rules (charge-rules.ts) decide, as outbox-rules.ts does for the service.

import type { Agent } from 'undici';
import { fromCents } from '../../../fiscal/money.ts';
import { pixRequestProblems, type PixMethod } from '../../../base/node/pix-api/pix-openapi.ts';

/** How the terminal reaches the store's PSP (Configurações › PIX (PSP); BALCAO_PIX_* on first start). */
export type PspConfig = {
  /** The API Pix's base URL, e.g. `https://pix.banco.com.br/api/v2`. */
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The store's client certificate: PKCS#12 with its password, or PEM certificate and key. */
  certificate: { pfx: Buffer; password: string } | { certPem: string; keyPem: string };
  /** Roots to trust besides Node's (PEM), e.g. the PSP's own CA or the simulator's. */
  caPem?: string;
  /** Per-request timeout (default 15 s). */
  timeoutMs?: number;
};

/** What one exchange with the PSP gave: an answer (any status), or none (network, timeout, TLS). */
export type PspOutcome = { kind: 'answer'; status: number; body: unknown } | { kind: 'no-answer'; error: string };

/** A request out of the API Pix document: a bug in the terminal, never sent. */
export class PixRequestError extends Error {
  override name = 'PixRequestError';
}

export type ChargeRequest = {
  txid: string;
  amountCents: number;
  /** The store's PIX key (the receiver). */
  key: string;
  /** Seconds the charge can be paid for, from its creation. */
  expirySeconds: number;
  /** Shown to the payer (≤ 140 characters). */
  message?: string;
};

export class PspClient {
  private agent: Promise<Agent> | undefined;
  private token: { value: string; until: number } | undefined;

  constructor(private readonly config: PspConfig) {}

  /** Creates the immediate charge `txid` (API Pix `PUT /cob/{txid}`). */
  createCharge(charge: ChargeRequest): Promise<PspOutcome> {
    return this.call('PUT', `/cob/${charge.txid}`, {
      calendario: { expiracao: charge.expirySeconds },
      valor: { original: fromCents(BigInt(charge.amountCents)) },
      chave: charge.key,
      ...(charge.message ? { solicitacaoPagador: charge.message.slice(0, 140) } : {}),
    });
  }

  /** The charge as the PSP has it, with the PIX received for it (`GET /cob/{txid}`). */
  getCharge(txid: string): Promise<PspOutcome> {
    return this.call('GET', `/cob/${txid}`);
  }

  /** Removes an unpaid charge (`PATCH /cob/{txid}`, status REMOVIDA_PELO_USUARIO_RECEBEDOR). */
  removeCharge(txid: string): Promise<PspOutcome> {
    return this.call('PATCH', `/cob/${txid}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
  }

  /** Asks the PSP to give back `amountCents` of the PIX `e2eid` (`PUT /pix/{e2eid}/devolucao/{id}`). */
  refund(e2eid: string, refundId: string, amountCents: number): Promise<PspOutcome> {
    return this.call('PUT', `/pix/${e2eid}/devolucao/${refundId}`, { valor: fromCents(BigInt(amountCents)) });
  }

  /** The refund's state (`GET /pix/{e2eid}/devolucao/{id}`). */
  getRefund(e2eid: string, refundId: string): Promise<PspOutcome> {
    return this.call('GET', `/pix/${e2eid}/devolucao/${refundId}`);
  }

  /**
   * "Testar conexão": asks the token URL for a new OAuth2 token over mutual TLS. Null when one
   * came; otherwise why not, in words the manager can act on.
   */
  async tokenProblem(): Promise<string | null> {
    this.token = undefined;
    try {
      await this.accessToken();
      return null;
    } catch (error) {
      return connectionProblem(error);
    }
  }

  /** Releases the connections. */
  async close(): Promise<void> {
    const agent = this.agent;
    this.agent = undefined;
    if (agent) await (await agent).close();
  }

  private async call(method: PixMethod, path: string, body?: unknown): Promise<PspOutcome> {
    const problems = pixRequestProblems({ method, path, body });
    if (problems.length) throw new PixRequestError(`Requisição ${method} ${path} fora da API Pix: ${problems.join('; ')}`);
    try {
      let answer = await this.send(method, path, body, await this.accessToken());
      if (answer.status === 401) {
        // An expired or revoked token: one new token, one retry.
        this.token = undefined;
        answer = await this.send(method, path, body, await this.accessToken());
      }
      return answer;
    } catch (error) {
      if (error instanceof PixRequestError) throw error;
      return { kind: 'no-answer', error: describe(error) };
    }
  }

  private async send(method: PixMethod, path: string, body: unknown, token: string): Promise<PspOutcome & { kind: 'answer' }> {
    const res = await this.fetch(`${this.config.baseUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (a proxy's HTML page): kept as text for the log.
    }
    return { kind: 'answer', status: res.status, body: parsed };
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.until > Date.now()) return this.token.value;
    const res = await this.fetch(this.config.tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.config.clientId}:${this.config.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    const json = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number };
    if (!res.ok || !json.access_token)
      throw new Error(`o PSP recusou as credenciais PIX (HTTP ${res.status} no endereço do token); confira client id e secret em Configurações › PIX (PSP)`);
    // Renewed a minute early (or at half its life when shorter), so a request never carries one about to expire.
    const lifeMs = (json.expires_in ?? 300) * 1000;
    this.token = { value: json.access_token, until: Date.now() + Math.max(lifeMs - 60_000, lifeMs / 2) };
    return json.access_token;
  }

  private async fetch(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response> {
    if (!url.startsWith('https://')) throw new Error(`o endereço do PSP deve ser https:// (${url})`);
    this.agent ??= this.makeAgent();
    const [{ fetch: undiciFetch }, dispatcher] = await Promise.all([import('undici'), this.agent]);
    return undiciFetch(url, { ...init, dispatcher, signal: AbortSignal.timeout(this.config.timeoutMs ?? 15_000) }) as unknown as Promise<Response>;
  }

  private async makeAgent(): Promise<Agent> {
    const [{ Agent }, { rootCertificates }] = await Promise.all([import('undici'), import('node:tls')]);
    const cert = this.config.certificate;
    return new Agent({
      connect: {
        // Node's roots plus the configured ones: adding a root never drops the public ones.
        ca: this.config.caPem ? [...rootCertificates, this.config.caPem] : [...rootCertificates],
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        ...('pfx' in cert ? { pfx: cert.pfx, passphrase: cert.password } : { cert: cert.certPem, key: cert.keyPem }),
      },
    });
  }
}

/** TLS and network failures the manager can fix, by the code Node gives them. */
const CONNECTION_PROBLEMS: [RegExp, string][] = [
  [/ECONNREFUSED/, 'nada responde nesse endereço e porta; confira o endereço do token'],
  [/ENOTFOUND|EAI_AGAIN/, 'o nome do servidor não foi encontrado (DNS); confira o endereço e a internet'],
  [/ERR_TLS_CERT_ALTNAME_INVALID/, 'o certificado do servidor do PSP não é desse endereço'],
  [/CERT_HAS_EXPIRED/, 'o certificado do servidor do PSP está vencido'],
  [
    /SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/,
    'o certificado do servidor do PSP não vem de uma autoridade confiável; informe a raiz do PSP em "Raízes confiáveis"',
  ],
  [
    /ALERT_UNKNOWN_CA|ALERT_BAD_CERTIFICATE|CERTIFICATE_REQUIRED|ECONNRESET|socket hang up|other side closed/i,
    'o PSP recusou a conexão TLS: confira o certificado do cliente (é o que o PSP emitiu para esta loja?)',
  ],
];

function connectionProblem(error: unknown): string {
  const text = describe(error);
  const known = CONNECTION_PROBLEMS.find(([pattern]) => pattern.test(text));
  return known ? `${known[1]} (${text})` : text;
}

function describe(error: unknown): string {
  const e = error as Error & { cause?: Error & { code?: string } };
  const cause = e.cause ? `: ${e.cause.code ?? ''} ${e.cause.message}`.trimEnd() : '';
  return `${e.name === 'TimeoutError' ? 'tempo esgotado' : e.message}${cause}`;
}
