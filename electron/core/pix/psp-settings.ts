// How this checkout reaches the store's PSP for dynamic PIX (docs/pix.md, "Dynamic PIX"): the
// API Pix base URL, the OAuth2 token URL and client id (plain settings), the client secret and
// the client certificate with its password (sealed at rest, like the A1 and the CSC:
// electron/core/secret-box.ts), extra trusted roots, and the PSP's CNPJ (the payment institution
// the NFC-e's card group names). Seeded on the first start from the environment (BALCAO_PIX_URL,
// BALCAO_PIX_TOKEN_URL, BALCAO_PIX_CLIENT_ID, BALCAO_PIX_CLIENT_SECRET, BALCAO_PIX_CERT,
// BALCAO_PIX_CERT_PASSWORD, BALCAO_PIX_CA, BALCAO_PIX_PSP_CNPJ), or by `configure`; later starts
// keep what is stored. No PSP configured: no dynamic PIX at this counter.

import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { cnpjProblem } from '../../../base/common/tax-ids.ts';
import type { PosStore } from '../pos-store.ts';
import { terminalSecretPurpose, type SecretSealer } from '../secret-box.ts';
import { TerminalError } from '../errors.ts';
import type { PspConfig } from './psp-client.ts';

/**
 * What the store gives to reach its PSP (the secrets in clear, before sealing): the client's
 * configuration and the PSP's CNPJ, the payment institution of the NFC-e's card group
 * (tpIntegra 1), which the API Pix does not tell.
 */
export type PspSetup = Omit<PspConfig, 'timeoutMs'> & { pspCnpj: string };

/** What the screen may see of it: no secret, only whether each is set. */
export type PspFacts = { baseUrl: string; tokenUrl: string; clientId: string; pspCnpj: string; caSet: boolean; certificateKind: 'pfx' | 'pem' };

const SETTING = 'pix_psp';
const PRINT_QR = 'pix_print_qr';
const SECRET = { clientSecret: 'pix_client_secret', certificate: 'pix_certificate', password: 'pix_certificate_password' } as const;

const invalid = (field: string, message: string) => new TerminalError('configuracao_invalida', message, { field });

function httpsUrl(value: unknown, field: string, what: string): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value.trim()) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:') throw invalid(field, `${what}: informe um endereço https:// completo (ex.: https://pix.banco.com.br/api/v2)`);
  return url.href.replace(/\/$/, '');
}

/** Checks a setup, naming the field (or the environment variable) that is wrong. */
export function validatePspSetup(input: PspSetup, fields: Record<keyof PspSetup, string>): PspSetup {
  const text = (value: unknown, field: string, what: string) => {
    if (typeof value !== 'string' || value.trim() === '') throw invalid(field, `${what} obrigatório`);
    return value.trim();
  };
  const cnpj = text(input.pspCnpj, fields.pspCnpj, 'CNPJ do PSP').replace(/[./-]/g, '');
  const cnpjIssue = cnpjProblem(cnpj);
  if (cnpjIssue) throw invalid(fields.pspCnpj, `CNPJ do PSP: ${cnpjIssue}`);
  const cert = input.certificate;
  if ('pfx' in cert ? cert.pfx.length === 0 : !/BEGIN CERTIFICATE/.test(cert.certPem) || !/PRIVATE KEY/.test(cert.keyPem))
    throw invalid(fields.certificate, 'Certificado do cliente PIX: um .pfx/.p12 com sua senha, ou um PEM com o certificado e a chave privada');
  const opening = clientCertificateProblem(cert);
  if (opening) throw invalid(fields.certificate, `Certificado do cliente PIX: ${opening}`);
  if (input.caPem !== undefined && !/BEGIN CERTIFICATE/.test(input.caPem))
    throw invalid(fields.caPem, 'Raízes confiáveis do PSP: um arquivo PEM com um ou mais certificados');
  return {
    baseUrl: httpsUrl(input.baseUrl, fields.baseUrl, 'Endereço da API Pix do PSP'),
    tokenUrl: httpsUrl(input.tokenUrl, fields.tokenUrl, 'Endereço do token OAuth2 do PSP'),
    clientId: text(input.clientId, fields.clientId, 'Client id do PSP'),
    clientSecret: text(input.clientSecret, fields.clientSecret, 'Client secret do PSP'),
    certificate: cert,
    ...(input.caPem !== undefined && { caPem: input.caPem }),
    pspCnpj: cnpj,
  };
}

/**
 * Why the TLS stack cannot use this client certificate (null: it can): opened exactly as the PSP
 * client will open it, so "the password is wrong" is said here and not at the first sale.
 */
export function clientCertificateProblem(cert: PspSetup['certificate']): string | null {
  try {
    createSecureContext('pfx' in cert ? { pfx: cert.pfx, passphrase: cert.password } : { cert: cert.certPem, key: cert.keyPem });
    return null;
  } catch (err) {
    const message = (err as Error).message;
    if ('pfx' in cert) {
      if (/mac verify failure|invalid password/i.test(message)) return 'a senha não abre este arquivo .pfx/.p12; confira a senha do certificado';
      return `o arquivo não é um PKCS#12 (.pfx/.p12) que este computador consiga abrir (${message})`;
    }
    if (/key values mismatch/i.test(message)) return 'a chave privada não é a deste certificado';
    if (/bad decrypt|passphrase|encrypted/i.test(message)) return 'a chave privada está protegida por senha; exporte-a sem senha ou use o .pfx/.p12';
    return `o PEM não abre como certificado e chave privada (${message})`;
  }
}

const ENV_FIELDS: Record<keyof PspSetup, string> = {
  baseUrl: 'BALCAO_PIX_URL',
  tokenUrl: 'BALCAO_PIX_TOKEN_URL',
  clientId: 'BALCAO_PIX_CLIENT_ID',
  clientSecret: 'BALCAO_PIX_CLIENT_SECRET',
  certificate: 'BALCAO_PIX_CERT',
  caPem: 'BALCAO_PIX_CA',
  pspCnpj: 'BALCAO_PIX_PSP_CNPJ',
};

/**
 * The PSP from the environment, or undefined when BALCAO_PIX_URL is not set. BALCAO_PIX_CERT is
 * a file: a .pfx/.p12 (with BALCAO_PIX_CERT_PASSWORD) or a PEM holding the certificate and its
 * key; BALCAO_PIX_CA a PEM file of roots to trust besides the system's.
 */
export function pspSetupFromEnv(env: NodeJS.ProcessEnv): PspSetup | undefined {
  if (!env.BALCAO_PIX_URL) return undefined;
  const read = (name: 'BALCAO_PIX_CERT' | 'BALCAO_PIX_CA'): Buffer => {
    const path = env[name];
    if (!path) throw invalid(name, `${name}: informe o caminho do arquivo`);
    try {
      return readFileSync(path);
    } catch (err) {
      throw invalid(name, `${name}: não foi possível ler ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  const certFile = read('BALCAO_PIX_CERT');
  const pem = certFile.toString('latin1');
  const certificate = pem.includes('-----BEGIN') ? { certPem: pem, keyPem: pem } : { pfx: certFile, password: env.BALCAO_PIX_CERT_PASSWORD ?? '' };
  return validatePspSetup(
    {
      baseUrl: env.BALCAO_PIX_URL,
      tokenUrl: env.BALCAO_PIX_TOKEN_URL ?? '',
      clientId: env.BALCAO_PIX_CLIENT_ID ?? '',
      clientSecret: env.BALCAO_PIX_CLIENT_SECRET ?? '',
      certificate,
      ...(env.BALCAO_PIX_CA && { caPem: read('BALCAO_PIX_CA').toString('utf8') }),
      pspCnpj: env.BALCAO_PIX_PSP_CNPJ ?? '',
    },
    ENV_FIELDS,
  );
}

/** The PSP settings of one checkout, stored in pos.sqlite beside the others. */
export class PspSettings {
  constructor(
    private readonly store: PosStore,
    private readonly box: SecretSealer,
    private readonly clock: () => number,
  ) {}

  /** Stores `setup` (validated by the caller) unless one is stored already and `replace` is false. */
  save(setup: PspSetup, options: { replace: boolean }): void {
    if (!options.replace && this.store.settings.settingValue(SETTING) !== undefined) return;
    const at = new Date(this.clock()).toISOString();
    const seal = (name: string, plain: Buffer) => this.store.settings.putSealedSecret(name, this.box.seal(plain, terminalSecretPurpose(name)), at);
    const cert = setup.certificate;
    this.store.transaction(() => {
      const facts: PspFacts = {
        baseUrl: setup.baseUrl,
        tokenUrl: setup.tokenUrl,
        clientId: setup.clientId,
        pspCnpj: setup.pspCnpj,
        caSet: setup.caPem !== undefined,
        certificateKind: 'pfx' in cert ? 'pfx' : 'pem',
      };
      this.store.settings.putSetting(SETTING, JSON.stringify({ ...facts, caPem: setup.caPem ?? null }), at);
      seal(SECRET.clientSecret, Buffer.from(setup.clientSecret));
      seal(SECRET.certificate, 'pfx' in cert ? cert.pfx : Buffer.from(JSON.stringify(cert)));
      seal(SECRET.password, Buffer.from('pfx' in cert ? cert.password : ''));
    });
  }

  /** Whether a charge's QR Code is printed for the customer when it becomes active (off unless the manager turns it on). */
  get printQr(): boolean {
    return this.store.settings.settingValue(PRINT_QR) === 'true';
  }

  setPrintQr(on: boolean): void {
    this.store.settings.putSetting(PRINT_QR, JSON.stringify(on), new Date(this.clock()).toISOString());
  }

  /** What the screen may show: no secret. Null when no PSP is configured. */
  facts(): PspFacts | null {
    const raw = this.store.settings.settingValue(SETTING);
    if (raw === undefined) return null;
    const { caPem: _ca, ...facts } = JSON.parse(raw) as PspFacts & { caPem: string | null };
    return facts;
  }

  /**
   * What the stored configuration is, as stored (the facts and the sealed secrets' bytes, none
   * opened): the PIX loop compares it each round and opens the secrets only when it changed.
   * Null when no PSP is configured.
   */
  storedVersion(): string | null {
    const raw = this.store.settings.settingValue(SETTING);
    if (raw === undefined) return null;
    const sealed = Object.values(SECRET).map((name) => this.store.settings.sealedSecret(name)?.toString('base64') ?? '');
    return [raw, ...sealed].join('\n');
  }

  /**
   * The client's configuration with its secrets opened; null when no PSP is configured. A secret
   * this box cannot open (another key, damage) is a configuration error naming it.
   */
  config(): PspSetup | null {
    const raw = this.store.settings.settingValue(SETTING);
    if (raw === undefined) return null;
    const stored = JSON.parse(raw) as PspFacts & { caPem: string | null };
    const open = (name: string): Buffer => {
      const sealed = this.store.settings.sealedSecret(name);
      try {
        if (sealed === undefined) throw new Error('ausente');
        return this.box.open(sealed, terminalSecretPurpose(name));
      } catch {
        throw invalid('pix.psp', 'Os segredos do PSP PIX não puderam ser lidos neste computador; o gerente os informa de novo em Configurações › PIX (PSP)');
      }
    };
    const certificate = open(SECRET.certificate);
    return {
      baseUrl: stored.baseUrl,
      tokenUrl: stored.tokenUrl,
      clientId: stored.clientId,
      clientSecret: open(SECRET.clientSecret).toString('utf8'),
      certificate:
        stored.certificateKind === 'pfx'
          ? { pfx: certificate, password: open(SECRET.password).toString('utf8') }
          : (JSON.parse(certificate.toString('utf8')) as { certPem: string; keyPem: string }),
      ...(stored.caPem !== null && { caPem: stored.caPem }),
      pspCnpj: stored.pspCnpj,
    };
  }
}
