// The PSP configured behind the manager's PIN (Gerente › PIX (PSP), docs/pix.md): every field
// checked with an error naming it, the secrets sealed and never given back, the save audited
// without them, and "Testar conexão" asking the PSP simulator for a token over mutual TLS.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspSettingsInput } from '../electron/api/terminal-api.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { createTlsIdentity } from '../service/authority/sefaz/simulator/tls-identity.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';

let dir: string;
let psp: PixPspSimulator;
let terminal: Terminal;
let auth: { managerId: string; pin: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-psp-screen-'));
  psp = await startPixPspSimulator({ tokenTtlSeconds: 3600 });
  terminal = await createTerminal({ dataDir: dir, serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 3, startWorker: false });
  const manager = await terminal.createManager({ name: 'Gerente', pin: '4321' });
  auth = { managerId: manager.id, pin: '4321' };
});

afterAll(async () => {
  await terminal?.close();
  await psp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const form = (over: Partial<PspSettingsInput> = {}): PspSettingsInput => ({
  baseUrl: psp.url,
  tokenUrl: psp.tokenUrl,
  clientId: psp.clientId,
  clientSecret: psp.clientSecret,
  certificate: { kind: 'pem', ...psp.client },
  caPem: psp.caPem,
  pspCnpj: '99.990.001/0001-98',
  pixKey: '11.222.333/0001-81',
  printQr: true,
  ...over,
});

describe('PSP settings on screen', () => {
  it('refuses each wrong field by name, saves behind the PIN with the secrets sealed and audited as changed, and tests the connection in words', async () => {
    const refusal = (over: Partial<PspSettingsInput>) => terminal.savePspSettings(form(over), auth);
    await expect(refusal({ baseUrl: 'http://pix.banco.example/api/v2' })).rejects.toMatchObject({
      field: 'pix.psp.baseUrl',
      message: expect.stringMatching(/^Endereço da API Pix do PSP: informe um endereço https:\/\//),
    });
    await expect(refusal({ tokenUrl: '' })).rejects.toMatchObject({ field: 'pix.psp.tokenUrl' });
    const a1 = generateTestCertificate({ cnpj: '11222333000181', xNome: 'LOJA PIX', password: 'certa' });
    await expect(refusal({ certificate: { kind: 'pfx', pfxBase64: a1.pfx.toString('base64'), password: 'errada' } })).rejects.toMatchObject({
      field: 'pix.psp.certificate',
      message: 'Certificado do cliente PIX: a senha não abre este arquivo .pfx/.p12; confira a senha do certificado',
    });
    const stranger = createTlsIdentity('outra AC', 'outro').client!;
    await expect(refusal({ certificate: { kind: 'pem', certPem: psp.client.certPem, keyPem: stranger.keyPem } })).rejects.toMatchObject({
      field: 'pix.psp.certificate',
      message: expect.stringMatching(/chave privada não é a deste certificado/),
    });
    await expect(refusal({ pixKey: 'não é chave' })).rejects.toMatchObject({ field: 'pix.key', message: expect.stringMatching(/^Chave PIX inválida/) });
    await expect(refusal({ pixKey: '' })).rejects.toMatchObject({ field: 'pix.key' });
    await expect(terminal.savePspSettings(form(), { ...auth, pin: '0000' })).rejects.toMatchObject({ code: 'pin_invalido' });
    expect(await terminal.pspSettings()).toMatchObject({ configured: false, printQr: false, pixKey: null });

    // The simulator's client certificate in PEM, its roots, its client id and secret.
    const view = await terminal.savePspSettings(form(), auth);
    expect(view).toEqual({
      configured: true,
      baseUrl: psp.url,
      tokenUrl: psp.tokenUrl,
      clientId: psp.clientId,
      pspCnpj: '99990001000198',
      clientSecretSet: true,
      certificateKind: 'pem',
      caSet: true,
      pixKey: '11222333000181',
      printQr: true,
    });
    const entry = terminal.store.managers.auditLog().find((a) => a.action === 'pix_psp_configurado')!;
    expect(JSON.parse(entry.details!)).toMatchObject({ segredos: { clientSecret: 'alterado', certificado: 'alterado' }, depois: { pixKey: '11222333000181' } });
    const secretLine = psp.client.keyPem.split('\n')[1]!;
    expect(entry.details).not.toContain(psp.clientSecret);
    expect(readFileSync(join(dir, 'pos.sqlite')).includes(Buffer.from(psp.clientSecret))).toBe(false);
    expect(readFileSync(join(dir, 'pos.sqlite')).includes(Buffer.from(secretLine))).toBe(false);

    // The screen gets no secret back; saved again with the secrets left empty, the stored ones stay.
    const kept = { clientSecret: '', certificate: null } as const;
    expect(await terminal.testPspConnection(form(kept), auth)).toEqual({ ok: true, message: expect.stringMatching(/^Conexão com o PSP funcionando/) });
    await terminal.savePspSettings(form({ ...kept, printQr: false }), auth);
    expect(terminal.psp.config()).toMatchObject({ clientSecret: psp.clientSecret, certificate: psp.client });
    expect((await terminal.pspSettings()).printQr).toBe(false);

    // "Testar conexão" says why it failed, and saves nothing.
    const wrongSecret = await terminal.testPspConnection(form({ clientSecret: 'errado' }), auth);
    expect(wrongSecret).toEqual({ ok: false, message: expect.stringMatching(/recusou as credenciais PIX \(HTTP 401/) });
    const noRoot = await terminal.testPspConnection(form({ caPem: null }), auth);
    expect(noRoot).toEqual({ ok: false, message: expect.stringMatching(/não vem de uma autoridade confiável; informe a raiz do PSP/) });
    const otherClient = await terminal.testPspConnection(form({ certificate: { kind: 'pem', ...stranger } }), auth);
    expect(otherClient).toEqual({ ok: false, message: expect.stringMatching(/o PSP recusou a conexão TLS: confira o certificado do cliente/) });
    expect(terminal.psp.config()).toMatchObject({ clientSecret: psp.clientSecret, caPem: psp.caPem });
    expect(psp.problems).toEqual([]);
  });
});
