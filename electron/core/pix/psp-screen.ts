// The PSP settings as the manager's screen handles them (Gerente › PIX (PSP), docs/pix.md): what
// it may see (no secret: only whether each is set), the setup a form gives once merged with the
// stored secrets the manager left empty and checked field by field with the same rules as the
// environment's, and "Testar conexão" (an OAuth2 token over mutual TLS, said in words).

import type { PspConnectionTest, PspSettingsInput, PspSettingsView } from '../../api/terminal-api.ts';
import { TerminalError } from '../errors.ts';
import { PspClient } from './psp-client.ts';
import { validatePspSetup, type PspSettings, type PspSetup } from './psp-settings.ts';

/** The form's fields, as errors name them (`field`); the messages name them in Portuguese. */
const SCREEN_FIELDS: Record<keyof PspSetup, string> = {
  baseUrl: 'pix.psp.baseUrl',
  tokenUrl: 'pix.psp.tokenUrl',
  clientId: 'pix.psp.clientId',
  clientSecret: 'pix.psp.clientSecret',
  certificate: 'pix.psp.certificate',
  caPem: 'pix.psp.caPem',
  pspCnpj: 'pix.psp.pspCnpj',
};

const invalid = (field: string, message: string) => new TerminalError('configuracao_invalida', message, { field });

export function pspSettingsView(psp: PspSettings, pixKey: string | null): PspSettingsView {
  const facts = psp.facts();
  return {
    configured: facts !== null,
    baseUrl: facts?.baseUrl ?? '',
    tokenUrl: facts?.tokenUrl ?? '',
    clientId: facts?.clientId ?? '',
    pspCnpj: facts?.pspCnpj ?? '',
    clientSecretSet: facts !== null,
    certificateKind: facts?.certificateKind ?? null,
    caSet: facts?.caSet ?? false,
    pixKey,
    printQr: psp.printQr,
  };
}

/**
 * The setup the form gives: the secrets left empty are the stored ones (the screen never has
 * them), then every field checked as `validatePspSetup` checks the environment's — https URLs,
 * the certificate opened with its password — each error naming the form's field.
 */
export function setupFromScreen(input: PspSettingsInput, stored: PspSetup | null): PspSetup {
  if (typeof input !== 'object' || input === null) throw invalid('pix.psp', 'Configuração do PSP ausente');
  const secret = typeof input.clientSecret === 'string' ? input.clientSecret : '';
  const clientSecret = secret !== '' ? secret : (stored?.clientSecret ?? '');
  const cert = input.certificate;
  let certificate: PspSetup['certificate'];
  if (cert === null || cert === undefined) {
    if (!stored)
      throw invalid(SCREEN_FIELDS.certificate, 'Certificado do cliente PIX obrigatório: um .pfx/.p12 com sua senha, ou o certificado e a chave em PEM');
    certificate = stored.certificate;
  } else if (cert.kind === 'pfx') {
    if (typeof cert.pfxBase64 !== 'string' || !/^[A-Za-z0-9+/=\s]+$/.test(cert.pfxBase64) || cert.pfxBase64.length > 1_000_000)
      throw invalid(SCREEN_FIELDS.certificate, 'Certificado do cliente PIX: escolha o arquivo .pfx/.p12');
    certificate = { pfx: Buffer.from(cert.pfxBase64, 'base64'), password: typeof cert.password === 'string' ? cert.password : '' };
  } else if (cert.kind === 'pem') {
    certificate = { certPem: String(cert.certPem ?? ''), keyPem: String(cert.keyPem ?? '') };
  } else {
    throw invalid(SCREEN_FIELDS.certificate, 'Certificado do cliente PIX: PKCS#12 (.pfx/.p12) ou PEM');
  }
  const caPem = input.caPem === undefined ? stored?.caPem : input.caPem === null || input.caPem.trim() === '' ? undefined : input.caPem;
  return validatePspSetup(
    {
      baseUrl: input.baseUrl,
      tokenUrl: input.tokenUrl,
      clientId: input.clientId,
      clientSecret,
      certificate,
      ...(caPem !== undefined && { caPem }),
      pspCnpj: input.pspCnpj,
    },
    SCREEN_FIELDS,
  );
}

/** What the audit log keeps of a save: the plain facts before and after, and which secrets changed. */
export function pspAudit(before: PspSettingsView, input: PspSettingsInput, after: PspSettingsView): Record<string, unknown> {
  const { clientSecretSet: _a, ...antes } = before;
  const { clientSecretSet: _b, ...depois } = after;
  return {
    antes,
    depois,
    segredos: {
      clientSecret: input.clientSecret ? 'alterado' : 'mantido',
      certificado: input.certificate ? 'alterado' : 'mantido',
    },
  };
}

/** "Testar conexão": an OAuth2 token from the PSP over mutual TLS with `setup`, in words. */
export async function testPspConnection(setup: PspSetup): Promise<PspConnectionTest> {
  const client = new PspClient({ ...setup, timeoutMs: 15_000 });
  try {
    const problem = await client.tokenProblem();
    return problem === null
      ? { ok: true, message: `Conexão com o PSP funcionando: token OAuth2 obtido em ${new URL(setup.tokenUrl).host} com o certificado do cliente (TLS mútuo).` }
      : { ok: false, message: `Não foi possível obter o token do PSP: ${problem}.` };
  } finally {
    await client.close();
  }
}
