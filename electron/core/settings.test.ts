// Settings on a real terminal database: seeding on first open only, validation that writes
// nothing, secrets sealed at rest and never in the view, the certificate's checks, and the
// credentials offline contingency gets.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { DEMO_CSC, demoEmitter } from '../../fiscal/samples.ts';
import type { SettingsPatch } from '../api/terminal-api.ts';
import { profileOfEmitter } from './company-profile.ts';
import type { TerminalError } from './errors.ts';
import { PosStore } from './pos-store.ts';
import { fileKeySecretBox, type SecretSealer } from './secret-box.ts';
import { Settings } from './settings.ts';

let dir: string;
let store: PosStore;
let box: SecretSealer;
let now = Date.parse('2026-11-22T15:00:00.000Z');
const clock = () => now;
const demo = profileOfEmitter(demoEmitter());
// Generated once: RSA key generation is the slow part.
const cert = generateTestCertificate({
  cnpj: demo.cnpj,
  xNome: demo.xNome,
  notBefore: new Date('2026-01-01T00:00:00Z'),
  notAfter: new Date('2027-01-01T00:00:00Z'),
});

beforeEach(() => {
  now = Date.parse('2026-11-22T15:00:00.000Z');
  dir = mkdtempSync(join(tmpdir(), 'balcao-settings-'));
  store = PosStore.open(dir);
  box = fileKeySecretBox(dir);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = (seed: ConstructorParameters<typeof Settings>[0]['seed'] = { token: 'tok-1', series: 3 }) => new Settings({ store, clock, box, seed });
const update = (s: Settings, patch: SettingsPatch) => s.prepare(patch).commit();

function refusal(run: () => unknown): { code: string; field?: string; message: string } {
  try {
    run();
  } catch (err) {
    const e = err as TerminalError;
    return { code: e.code, field: e.field, message: e.message };
  }
  throw new Error('aceito');
}

describe('Settings', () => {
  it('options seed a new data directory; afterwards the stored settings win', () => {
    const first = open({ serviceUrl: 'https://10.0.0.5:8765/', token: 'tok-1', series: 3 });
    expect(first.view()).toMatchObject({
      serviceUrl: 'https://10.0.0.5:8765',
      tokenSet: true,
      series: 3,
      company: null,
      certificate: null,
      serviceFingerprint: null,
      cash: { pinAboveCents: 0 },
    });
    // The checkout's own id, made once and kept: the service knows its series by it.
    expect(first.terminal).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: expect.any(String) });
    expect(first.printer).toEqual({ kind: 'virtual', address: null, profile: 'epson-tm-t20', paperWidth: 80 });
    const again = open({ serviceUrl: 'https://outro:1', token: 'tok-2', series: 9 });
    expect([again.serviceUrl, again.token, again.series]).toEqual(['https://10.0.0.5:8765', 'tok-1', 3]);
    expect(again.terminal).toEqual(first.terminal);
  });

  it('without options: the embedded service, series 1, no token (set later, then kept)', () => {
    const s = open({});
    expect([s.serviceUrl, s.series, s.token, s.view().tokenSet]).toEqual(['http://127.0.0.1:8765', 1, '', false]);
    expect(open({ token: 'depois', series: 4 }).token).toBe('depois');
    expect(open({}).series).toBe(4);
  });

  it('a token the secret key can no longer open is replaced by the one of the options', () => {
    open({ token: 'antigo', series: 1 });
    box = fileKeySecretBox(join(dir, 'outra-chave'));
    expect(open({}).token).toBe('');
    expect(open({ token: 'novo' }).token).toBe('novo');
  });

  it('keeps the secrets sealed: neither the token nor the CSC is in the database in clear, nor in the view', () => {
    const s = open();
    const { audit } = update(s, { token: 'token-super-secreto', company: { ...demo, cscToken: DEMO_CSC.token } });
    expect(audit).toMatchObject({ token: 'alterado', cscToken: 'alterado' });
    expect(JSON.stringify(audit)).not.toMatch(/token-super-secreto|CSC-DE-TESTE/);
    const view = s.view();
    expect(view).toMatchObject({ tokenSet: true, company: { ...demo, cscSet: true } });
    expect(JSON.stringify(view)).not.toMatch(/token-super-secreto|CSC-DE-TESTE/);
    const dump = JSON.stringify(store.db.prepare('SELECT * FROM secrets UNION ALL SELECT key, value, updated_at FROM settings').all());
    expect(dump).not.toMatch(/token-super-secreto|CSC-DE-TESTE/);
    expect(Buffer.concat(store.db.prepare('SELECT sealed FROM secrets').pluck().all() as Buffer[]).includes('token-super-secreto')).toBe(false);
    expect(s.token).toBe('token-super-secreto');
  });

  it('validates the whole patch before writing anything, naming the field', () => {
    const s = open();
    const cases: [SettingsPatch, string][] = [
      [{ serviceUrl: 'ftp://x' }, 'serviceUrl'],
      [{ serviceUrl: 'http://user:senha@x' }, 'serviceUrl'],
      // The token never crosses the store's network in clear: http:// only to this machine.
      [{ serviceUrl: 'http://192.168.0.10:8765' }, 'serviceUrl'],
      [{ serviceFingerprint: 'AB:CD' }, 'serviceFingerprint'],
      [{ terminalName: '   ' }, 'terminalName'],
      [{ cash: { pinAboveCents: -1 } }, 'cash.pinAboveCents'],
      [{ cash: { pinAboveCents: 10.5 } }, 'cash.pinAboveCents'],
      [{ token: 'com espaço' }, 'token'],
      [{ series: 1000 }, 'series'],
      [{ series: 1.5 }, 'series'],
      [{ printer: { kind: 'tcp', address: null, profile: 'epson-tm-t20', paperWidth: 80 } }, 'printer.address'],
      [{ contingency: { maxHours: 25 } }, 'contingency.maxHours'],
      [{ contingency: { failureThreshold: 0 } }, 'contingency.failureThreshold'],
      [{ contingency: { series: -1 } }, 'contingency.series'],
      [{ company: { ...demo, cscToken: 'x y' } }, 'company.cscToken'],
      [{ company: demo }, 'company.cscToken'], // a CSC id without its token
      [{ company: { ...demo, cscId: null, cscToken: DEMO_CSC.token } }, 'company.cscId'],
    ];
    for (const [patch, field] of cases) {
      expect(refusal(() => s.prepare({ series: 5, ...patch }))).toMatchObject({ code: 'configuracao_invalida', field });
    }
    expect(s.series).toBe(3);
    expect(store.db.prepare("SELECT count(*) FROM settings WHERE key NOT IN ('service_url', 'series', 'terminal')").pluck().get()).toBe(0);
  });

  it('takes the pin in any usual spelling and keeps it as Node prints it; loopback may stay http://', () => {
    const s = open();
    const hex = '1eaf164ffb64bb3d7d6751a220adf510c4dc700122a0a44c227dc65af4051580';
    update(s, { serviceUrl: 'https://192.168.0.10:8765', serviceFingerprint: `SHA256 Fingerprint=${hex}` });
    expect(s.serviceFingerprint).toBe(hex.toUpperCase().match(/../g)!.join(':'));
    update(s, { serviceFingerprint: null, serviceUrl: 'http://localhost:8765', terminalName: ' Caixa  2 ', cash: { pinAboveCents: 5000 } });
    expect(s.view()).toMatchObject({
      serviceFingerprint: null,
      serviceUrl: 'http://localhost:8765',
      terminal: { name: 'Caixa 2' },
      cash: { pinAboveCents: 5000 },
    });
  });

  it('contingency settings: defaults, then a partial patch keeps the rest', () => {
    const s = open();
    expect(s.contingencySettings()).toEqual({ failureThreshold: 3, maxReceipts: 500, maxHours: 24, series: null });
    const { change } = update(s, { contingency: { maxReceipts: 50, series: 890 } });
    expect(change.contingency).toBe(true);
    expect(s.contingencySettings()).toEqual({ failureThreshold: 3, maxReceipts: 50, maxHours: 24, series: 890 });
    update(s, { contingency: { series: null } });
    expect(s.contingencySettings().series).toBeNull();
  });

  it('a CSC id may stay without sending the token again; removing the id removes the token', () => {
    const s = open();
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    update(s, { company: { ...demo, xFant: 'Novo Nome' } });
    expect(s.view().company).toMatchObject({ xFant: 'Novo Nome', cscSet: true });
    expect(update(s, { company: { ...demo, cscId: null } }).audit.cscToken).toBe('removido');
    expect(s.view().company?.cscSet).toBe(false);
  });
});

describe('certificate and contingency credentials', () => {
  it('needs the company first, then refuses a wrong password naming it, and stores the right one sealed', () => {
    const s = open();
    const pfxBase64 = cert.pfx.toString('base64');
    expect(refusal(() => s.checkCertificate(pfxBase64, cert.password))).toMatchObject({ code: 'configuracao_invalida', field: 'company' });
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    expect(refusal(() => s.checkCertificate(pfxBase64, 'errada'))).toEqual({
      code: 'certificado_invalido',
      field: 'password',
      message: 'Senha do certificado incorreta',
    });
    expect(refusal(() => s.checkCertificate('não é base64!', cert.password))).toMatchObject({ field: 'pfxBase64' });
    expect(refusal(() => s.checkCertificate(Buffer.from('lixo').toString('base64'), 'x'))).toMatchObject({ code: 'certificado_invalido', field: 'pfxBase64' });
    expect(s.certificate()).toBeNull();

    const view = s.storeCertificate(s.checkCertificate(pfxBase64, cert.password));
    expect(view).toEqual({ subject: cert.certificate.subject, cnpj: demo.cnpj, notAfter: '2027-01-01T00:00:00.000Z' });
    const sealed = Buffer.concat(store.db.prepare('SELECT sealed FROM secrets').pluck().all() as Buffer[]);
    expect(sealed.includes(cert.pfx.subarray(0, 64))).toBe(false);
    expect(sealed.includes(cert.password)).toBe(false);
  });

  it('refuses an expired certificate and one of another CNPJ', () => {
    const s = open();
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    now = Date.parse('2027-02-01T12:00:00Z');
    expect(refusal(() => s.checkCertificate(cert.pfx.toString('base64'), cert.password))).toMatchObject({
      code: 'certificado_invalido',
      field: 'pfxBase64',
      message: expect.stringMatching(/^Certificado vencido em/),
    });
    now = Date.parse('2026-11-22T15:00:00.000Z');
    update(s, { company: { ...demo, cnpj: '11444777000161', cscToken: DEMO_CSC.token } });
    expect(refusal(() => s.checkCertificate(cert.pfx.toString('base64'), cert.password)).message).toContain('11444777000161');
  });

  it('gives contingency the emitter and the certificate, or says what is missing', () => {
    const s = open();
    expect(s.credentials()).toEqual({ reason: 'Dados da empresa não cadastrados neste terminal' });
    update(s, { company: { ...demo, cscId: null } });
    expect(s.credentials()).toEqual({ reason: 'CSC da empresa não cadastrado neste terminal' });
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    expect(s.credentials()).toEqual({ reason: 'Certificado digital não instalado neste terminal' });
    expect(s.contingencyCredentials()).toBeNull();
    s.storeCertificate(s.checkCertificate(cert.pfx.toString('base64'), cert.password));

    // A new Settings (a restart) opens the sealed certificate again.
    const reopened = open({});
    const credentials = reopened.contingencyCredentials();
    expect(credentials?.emitter).toEqual(demoEmitter());
    expect(credentials?.certificate.fingerprint256).toBe(cert.certificate.fingerprint256);
    expect(credentials?.certificate.privateKeyPem).toBe(cert.certificate.privateKeyPem);

    now = Date.parse('2027-01-02T00:00:00Z');
    expect(reopened.credentials()).toEqual({ reason: expect.stringMatching(/^Certificado digital vencido em/) });
  });

  it('keeps the technical responsible the service answered, its CSRT sealed, and signs contingency receipts with it', () => {
    const s = open();
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    s.storeCertificate(s.checkCertificate(cert.pfx.toString('base64'), cert.password));
    const CSRT = 'CSRT-DO-SERVICO-123';
    s.setTechnicalResponsible({
      cnpj: '12ABC34501DE35',
      contato: 'Suporte Fiscal',
      email: 'fiscal@balcao.dev',
      telefone: '4133334444',
      csrt: { id: 1, token: CSRT },
    });
    const sealed = Buffer.concat(store.db.prepare('SELECT sealed FROM secrets').pluck().all() as Buffer[]);
    expect(sealed.includes(Buffer.from(CSRT))).toBe(false);
    const respTec = { cnpj: '12ABC34501DE35', contact: 'Suporte Fiscal', email: 'fiscal@balcao.dev', phone: '4133334444', csrt: { id: 1, token: CSRT } };
    expect(open({}).contingencyCredentials()?.emitter).toEqual(demoEmitter({ respTec }));
    s.setTechnicalResponsible(null);
    expect(s.contingencyCredentials()?.emitter).toEqual(demoEmitter());
  });

  it('changing the company CNPJ drops the certificate of the old one', () => {
    const s = open();
    update(s, { company: { ...demo, cscToken: DEMO_CSC.token } });
    s.storeCertificate(s.checkCertificate(cert.pfx.toString('base64'), cert.password));
    const { audit } = update(s, { company: { ...demo, cnpj: '11444777000161', cscToken: DEMO_CSC.token } });
    expect(audit.certificate).toEqual({ removido: { cnpj: demo.cnpj, subject: cert.certificate.subject } });
    expect(s.certificate()).toBeNull();
    expect(store.settings.sealedSecret('certificate_pfx')).toBeUndefined();
  });
});
