// The service's own TLS for a store's network. Beyond loopback the service speaks only HTTPS
// (service/main.ts): the company token travels in every request and must never cross the
// store's network in clear. The certificate is the operator's (--tls-cert/--tls-key), or one the
// service makes on its first start and keeps in <data>/tls/ (the key readable only by its user).
// Nobody signs the generated one: the terminals trust it by its SHA-256 fingerprint, which the
// service prints at start and the manager types into each checkout's settings (pinning,
// electron/core/pinned-tls.ts). A renewed or replaced certificate changes the fingerprint, and
// every terminal then refuses the service until its pin is updated: that is the point.

import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';

export type TlsMaterial = {
  cert: string;
  key: string;
  /** SHA-256 of the certificate (DER), as `AB:CD:…` (what openssl and Node print). */
  fingerprint256: string;
  /** Where it came from: the operator's files, or made by the service. */
  origin: 'operador' | 'gerado';
};

export class TlsConfigError extends Error {
  override name = 'TlsConfigError';
}

/** Folder of the generated certificate inside the data directory. */
export const TLS_DIR = 'tls';
const CERT_FILE = 'servico.crt';
const KEY_FILE = 'servico.key';
const VALID_YEARS = 10;

/**
 * How the service listens on `host`: plain HTTP only on loopback and only when TLS was not asked
 * for; beyond loopback always HTTPS, with the operator's certificate or the generated one.
 */
export function tlsChoice(host: string, asked: { tls?: boolean; cert?: string; key?: string }): { cert: string; key: string } | 'generated' | undefined {
  if (asked.cert !== undefined && asked.key !== undefined) return { cert: asked.cert, key: asked.key };
  return asked.tls || !isLoopback(host) ? 'generated' : undefined;
}

/** True for the addresses that stay on this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

function fingerprintOf(certPem: string, what: string): string {
  try {
    return new X509Certificate(certPem).fingerprint256;
  } catch (err) {
    throw new TlsConfigError(`${what}: não é um certificado PEM válido (${(err as Error).message})`);
  }
}

/** The operator's certificate and key (PEM files); refused when unreadable or not a pair. */
export function operatorTls(certFile: string, keyFile: string): TlsMaterial {
  const read = (file: string, option: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new TlsConfigError(`${option}: não foi possível ler ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  const cert = read(certFile, '--tls-cert');
  const key = read(keyFile, '--tls-key');
  const fingerprint256 = fingerprintOf(cert, '--tls-cert');
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) throw new Error('a chave não é a do certificado');
  } catch (err) {
    throw new TlsConfigError(`--tls-key: ${(err as Error).message}`);
  }
  return { cert, key, fingerprint256, origin: 'operador' };
}

/**
 * The generated certificate of this data directory: made on the first call and kept, so the
 * fingerprint the terminals pinned stays valid across restarts. `names` are put in the
 * certificate's subjectAltName (the terminals pin it; browsers and other clients can check them).
 */
export function generatedTls(dataDir: string, names: readonly string[] = []): TlsMaterial {
  const dir = join(dataDir, TLS_DIR);
  const certFile = join(dir, CERT_FILE);
  const keyFile = join(dir, KEY_FILE);
  if (existsSync(certFile) && existsSync(keyFile)) {
    const cert = readFileSync(certFile, 'utf8');
    return { cert, key: readFileSync(keyFile, 'utf8'), fingerprint256: fingerprintOf(cert, certFile), origin: 'gerado' };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { cert, key } = selfSigned(names);
  writeFileSync(keyFile, key, { mode: 0o600, flag: 'wx' });
  writeFileSync(certFile, cert, { mode: 0o644, flag: 'wx' });
  return { cert, key, fingerprint256: fingerprintOf(cert, certFile), origin: 'gerado' };
}

function selfSigned(extraNames: readonly string[]): { cert: string; key: string } {
  // OpenSSL generates in milliseconds what forge's pure-JS RSA takes seconds for.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01' + randomBytes(12).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 5 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + VALID_YEARS * 365 * 24 * 3600_000);
  const name = [
    { shortName: 'C', value: 'BR' },
    { shortName: 'O', value: 'Balcao' },
    { shortName: 'CN', value: `Servico de emissao Balcao (${hostname()})` },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  const names = [...new Set(['localhost', '127.0.0.1', '::1', hostname(), ...extraNames].filter((n) => n && n !== '0.0.0.0' && n !== '::'))];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keyPem };
}
