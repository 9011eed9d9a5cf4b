// Certificate pinning for the issuance service on the store's network. The service, when it
// listens beyond loopback, speaks HTTPS with a certificate nobody signs (service/tls.ts) or the
// operator's; each terminal stores the certificate's SHA-256 fingerprint in its settings and
// talks to that certificate only. The check runs on the TLS handshake itself, before a single
// byte of HTTP (and so before the token) is written: a connection to any other certificate is
// closed and the request fails with PinMismatchError, whose message shows both fingerprints.
//
// With a pin, the certificate's chain and names are not consulted (a self-signed certificate has
// neither): the pin is the whole identity, stricter than a CA. Session resumption is off, so
// every connection shows its certificate. Without a pin, an https:// service must present a
// certificate Node trusts, as any HTTPS (api-client.ts uses the global fetch then).

import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Agent } from 'undici';

/** `ab:cd:…` or 64 hex digits → `AB:CD:…` (what Node's fingerprint256 and openssl print); undefined when not one. */
export function normalizeFingerprint(value: string): string | undefined {
  const hex = value
    .trim()
    .replace(/^sha-?256\s*(fingerprint)?\s*[=:]?\s*/i, '')
    .replace(/[:\s]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/.{2}/g)!.join(':');
}

export class PinMismatchError extends Error {
  override name = 'PinMismatchError';
  readonly code = 'BALCAO_PIN_MISMATCH';
  constructor(
    readonly expected: string,
    readonly presented: string | null,
  ) {
    super(
      presented
        ? `o certificado do serviço (SHA-256 ${presented}) não é o configurado neste terminal (${expected}); confira a impressão digital em Configurações → Serviço`
        : `o serviço não apresentou certificado; o configurado neste terminal é ${expected}`,
    );
  }
}

/**
 * An undici dispatcher that connects only to the certificate with this fingerprint. undici is
 * imported here, on first use: ~90 ms that a terminal without a pinned service never pays.
 */
export async function pinnedAgent(fingerprint256: string, options: { connectTimeoutMs?: number } = {}): Promise<Agent> {
  const expected = normalizeFingerprint(fingerprint256);
  if (!expected) throw new Error(`impressão digital inválida: ${fingerprint256}`);
  const { Agent } = await import('undici');
  return new Agent({
    connect: (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      const socket = tlsConnect({
        host,
        port: Number(opts.port) || 443,
        // SNI only for names (an IP address must not be sent as one).
        ...(isIP(host) === 0 && { servername: opts.servername ?? host }),
        // The chain is not what decides: the fingerprint below is.
        rejectUnauthorized: false,
        minVersion: 'TLSv1.2',
        ALPNProtocols: ['http/1.1'],
      });
      let settled = false;
      const done = (err: Error | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          socket.destroy();
          callback(err, null);
        } else {
          callback(null, socket);
        }
      };
      const timer = setTimeout(
        () => done(Object.assign(new Error('tempo esgotado ao conectar'), { code: 'UND_ERR_CONNECT_TIMEOUT' })),
        options.connectTimeoutMs ?? 10_000,
      );
      socket.once('secureConnect', () => {
        const presented = socket.getPeerCertificate()?.fingerprint256 ?? null;
        done(presented === expected ? null : new PinMismatchError(expected, presented));
      });
      socket.once('error', (err) => done(err));
    },
  });
}
