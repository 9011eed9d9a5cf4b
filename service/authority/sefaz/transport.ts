// HTTPS with mutual TLS to SEFAZ, through undici: one connection pool per client certificate
// (the company's A1, already read into PEM by fiscal/certificate.ts, so RC2-40 .pfx files work
// without OpenSSL's legacy provider), TLS 1.2 at least, the server always verified against
// Node's roots plus the operator's bundle (the ICP-Brasil chain: BALCAO_SEFAZ_CA). There is no
// option to skip verification.
//
// What goes wrong is sorted for the caller:
// - the server refused our certificate in the handshake → AuthorityCertificateError naming it;
// - we could not verify the server → AuthorityUnavailableError saying to configure the chain;
// - timeouts, refused or reset connections, HTTP errors without a SOAP answer →
//   AuthorityUnavailableError (outcome unknown: the caller consults before sending again).

import { X509Certificate } from 'node:crypto';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Agent } from 'undici';
import type { SigningCredentials } from '../../../fiscal/signature.ts';
import { AuthorityCertificateError, AuthorityUnavailableError } from '../port.ts';
import { formatDateBR } from '../../../base/common/brasilia.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;

export type TransportOptions = {
  /** PEM bundle(s) added to Node's roots (the ICP-Brasil chain, or a simulator's CA). */
  extraCa?: readonly string[];
  /** Whole exchange, from connecting to the last byte of the answer. */
  timeoutMs?: number;
};

export type HttpAnswer = { status: number; contentType: string; text: string };

// Alerts a server sends when it does not accept the client certificate (TLS 1.2 and 1.3), as
// Node reports them (ERR_SSL_<version>_ALERT_<name>).
const CLIENT_CERTIFICATE_ALERT =
  /ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_REVOKED|CERTIFICATE_EXPIRED|CERTIFICATE_UNKNOWN|UNKNOWN_CA|ACCESS_DENIED|HANDSHAKE_FAILURE)$/;
// Our own verification of the server's certificate failed.
const SERVER_CERTIFICATE = new Set([
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** "CN=LOJA:11222333000181 (SHA-256 AB:CD:…, válido até 22/11/2027)": how messages name a certificate. */
export function describeCertificate(pem: string): string {
  try {
    const x = new X509Certificate(pem);
    const cn = x.subject.split('\n').find((l) => l.startsWith('CN=')) ?? x.subject.replace(/\n/g, ', ');
    const until = formatDateBR(new Date(x.validTo));
    return `${cn} (SHA-256 ${x.fingerprint256.slice(0, 23)}…, válido até ${until})`;
  } catch {
    return 'certificado ilegível';
  }
}

function codesOf(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') out.push(e.code);
  }
  return out;
}

function messagesOf(err: unknown): string {
  const out: string[] = [];
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.message === 'string' && e.message) out.push(e.message);
  }
  return out.join(': ');
}

// undici is loaded when the first request goes out: its import costs ~90 ms that a service
// answering from the in-process sandbox never needs.
const undici = () => import('undici');

export class SefazTransport {
  readonly #agents = new Map<string, Agent>();
  readonly #ca: string[];
  readonly #timeoutMs: number;

  constructor(options: TransportOptions = {}) {
    this.#ca = [...rootCertificates, ...(options.extraCa ?? [])];
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  private async agentFor(credentials: SigningCredentials): Promise<Agent> {
    let agent = this.#agents.get(credentials.certificatePem);
    if (!agent) {
      const { Agent } = await undici();
      // One secure context per certificate: building it parses Node's ~150 roots, which would
      // otherwise happen again for every connection the pool opens.
      const secureContext = createSecureContext({ key: credentials.privateKeyPem, cert: credentials.certificatePem, ca: this.#ca, minVersion: 'TLSv1.2' });
      agent = new Agent({
        connect: {
          secureContext,
          minVersion: 'TLSv1.2',
          rejectUnauthorized: true,
          timeout: Math.min(CONNECT_TIMEOUT_MS, this.#timeoutMs),
        },
        keepAliveTimeout: 30_000,
        // A renewed certificate makes a new pool; the old one's idle sockets go with the timeout.
        connections: 16,
      });
      this.#agents.set(credentials.certificatePem, agent);
    }
    return agent;
  }

  /** POSTs one SOAP request and returns the HTTP answer, or throws as the header explains. */
  async post(url: URL, body: string, contentType: string, credentials: SigningCredentials): Promise<HttpAnswer> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const { request } = await undici();
      const res = await request(url, {
        method: 'POST',
        dispatcher: await this.agentFor(credentials),
        headers: { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)), accept: 'application/soap+xml, text/xml' },
        body,
        signal,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode === 403) {
        // Some authorizers (BA) refuse a certificate they do not accept with HTTP 403.
        throw new AuthorityCertificateError(
          `A SEFAZ (${url.host}) recusou o certificado digital da empresa (HTTP 403): ${describeCertificate(credentials.certificatePem)}. ` +
            'Confira se é o A1 ICP-Brasil do CNPJ, válido e não revogado (balcao company update --certificado).',
          'HTTP_403',
        );
      }
      return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text };
    } catch (err) {
      if (err instanceof AuthorityCertificateError) throw err;
      throw this.classify(err, url, credentials, signal.aborted);
    }
  }

  private classify(err: unknown, url: URL, credentials: SigningCredentials, timedOut: boolean): Error {
    const codes = codesOf(err);
    // OpenSSL reports some alerts only in the message (EPROTO "…alert handshake failure…").
    const alert =
      codes.find((c) => CLIENT_CERTIFICATE_ALERT.test(c)) ??
      /alert (handshake failure|bad certificate|unknown ca|certificate required|certificate unknown|certificate expired|certificate revoked|access denied|unsupported certificate)/i
        .exec(messagesOf(err))?.[0]
        ?.toUpperCase()
        .replace(/ /g, '_');
    if (alert) {
      return new AuthorityCertificateError(
        `A SEFAZ (${url.host}) recusou o certificado digital da empresa na conexão TLS (${alert}): ${describeCertificate(credentials.certificatePem)}. ` +
          'Confira se é o A1 ICP-Brasil do CNPJ, válido e não revogado (balcao company update --certificado).',
        alert,
      );
    }
    // A server that refuses the certificate without an alert just drops the handshake (IIS and
    // Node do): the connection ends after our certificate went out and before TLS was set up.
    if (codes.includes('ECONNRESET') && /before secure TLS connection was established/.test(messagesOf(err))) {
      return new AuthorityCertificateError(
        `A SEFAZ (${url.host}) encerrou a conexão TLS durante o handshake, ao receber o certificado digital da empresa: ` +
          `${describeCertificate(credentials.certificatePem)}. Em geral é o certificado recusado (não ICP-Brasil, vencido, revogado ou de outro CNPJ); ` +
          'confira-o (balcao company update --certificado) e a conexão com a internet.',
        'ECONNRESET',
      );
    }
    const server = codes.find((c) => SERVER_CERTIFICATE.has(c));
    if (server) {
      return new AuthorityUnavailableError(
        `Certificado do servidor ${url.host} não reconhecido (${server}): configure BALCAO_SEFAZ_CA com a cadeia ICP-Brasil (veja o README).`,
      );
    }
    if (timedOut || codes.some((c) => /TIMEOUT|ABORT/i.test(c))) {
      return new AuthorityUnavailableError(`SEFAZ (${url.host}) não respondeu em ${Math.round(this.#timeoutMs / 1000)} s`);
    }
    return new AuthorityUnavailableError(`Falha de comunicação com a SEFAZ (${url.host}): ${codes[0] ?? ''} ${messagesOf(err)}`.replace(/\s+/g, ' ').trim());
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }
}
