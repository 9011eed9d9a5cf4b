// The store's PSP settings (docs/pix.md, "Dynamic PIX"): from the environment on first start,
// the secrets sealed at rest, back in clear only through the box, and bad input named.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PosStore } from '../pos-store.ts';
import { fileKeySecretBox } from '../secret-box.ts';
import type { TerminalError } from '../errors.ts';
import { PspSettings, pspSetupFromEnv } from './psp-settings.ts';
import { generateTestCertificate } from '../../../fiscal/certificate.ts';
import { pemOfPfx } from '../../../test/helpers/pkcs12.ts';

let dir: string;
let store: PosStore;
// A real certificate and key (the settings open them as the TLS client will), in one PEM file.
const client = pemOfPfx(generateTestCertificate({ cnpj: '11222333000181', xNome: 'LOJA PIX' }));
const CERT = client.certPem + client.keyPem;
const KEY_LINE = client.keyPem.split(/\r?\n/)[1]!;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-psp-settings-'));
  store = PosStore.open(dir);
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => {
  writeFileSync(join(dir, 'cliente.pem'), CERT);
  return {
    BALCAO_PIX_URL: 'https://pix.banco.example/api/v2/',
    BALCAO_PIX_TOKEN_URL: 'https://pix.banco.example/oauth/token',
    BALCAO_PIX_CLIENT_ID: 'loja-1',
    BALCAO_PIX_CLIENT_SECRET: 'segredo-do-cliente-PIX-123',
    BALCAO_PIX_CERT: join(dir, 'cliente.pem'),
    BALCAO_PIX_PSP_CNPJ: '99.990.001/0001-98',
    ...extra,
  };
};

const refused = (f: () => unknown): TerminalError => {
  try {
    f();
  } catch (err) {
    return err as TerminalError;
  }
  throw new Error('não recusou');
};

describe('PSP settings', () => {
  it('seeds from BALCAO_PIX_*, seals the client secret and certificate, and gives them back only through the box', () => {
    const settings = new PspSettings(store, fileKeySecretBox(dir), () => Date.parse('2026-11-27T23:00:00Z'));
    expect(settings.config()).toBeNull();
    settings.save(pspSetupFromEnv(env())!, { replace: false });
    expect(settings.facts()).toEqual({
      baseUrl: 'https://pix.banco.example/api/v2',
      tokenUrl: 'https://pix.banco.example/oauth/token',
      clientId: 'loja-1',
      pspCnpj: '99990001000198',
      caSet: false,
      certificateKind: 'pem',
    });
    expect(settings.config()).toMatchObject({
      clientSecret: 'segredo-do-cliente-PIX-123',
      certificate: { certPem: CERT, keyPem: CERT },
      pspCnpj: '99990001000198',
    });

    // A later start with other values keeps what is stored (the manager's changes win).
    settings.save(pspSetupFromEnv(env({ BALCAO_PIX_CLIENT_ID: 'outro' }))!, { replace: false });
    expect(settings.facts()?.clientId).toBe('loja-1');

    store.close();
    const file = readFileSync(join(dir, 'pos.sqlite'));
    expect(file.includes(Buffer.from('segredo-do-cliente-PIX-123'))).toBe(false);
    expect(file.includes(Buffer.from(KEY_LINE))).toBe(false);
    store = PosStore.open(dir);
    const otherKey = mkdtempSync(join(tmpdir(), 'balcao-psp-otherkey-'));
    try {
      expect(refused(() => new PspSettings(store, fileKeySecretBox(otherKey), Date.now).config())).toMatchObject({
        field: 'pix.psp',
        message: expect.stringMatching(/não puderam ser lidos/),
      });
    } finally {
      rmSync(otherKey, { recursive: true, force: true });
    }
  });

  it('names the environment variable that is wrong', () => {
    expect(pspSetupFromEnv({})).toBeUndefined();
    expect(refused(() => pspSetupFromEnv(env({ BALCAO_PIX_URL: 'http://pix.banco.example' })))).toMatchObject({
      field: 'BALCAO_PIX_URL',
      message: expect.stringMatching(/https:\/\//),
    });
    expect(refused(() => pspSetupFromEnv(env({ BALCAO_PIX_PSP_CNPJ: '123' })))).toMatchObject({ field: 'BALCAO_PIX_PSP_CNPJ' });
    expect(refused(() => pspSetupFromEnv(env({ BALCAO_PIX_CERT: join(dir, 'nada.pfx') })))).toMatchObject({
      field: 'BALCAO_PIX_CERT',
      message: expect.stringMatching(/ENOENT/),
    });
    expect(refused(() => pspSetupFromEnv(env({ BALCAO_PIX_CLIENT_SECRET: '' })))).toMatchObject({ field: 'BALCAO_PIX_CLIENT_SECRET' });
  });
});
