import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedTls, isLoopback, operatorTls, tlsChoice, TlsConfigError } from './tls.ts';

describe('isLoopback', () => {
  it('knows this machine from the network', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.0.10', 'caixa.local', '10.0.0.1']) expect(isLoopback(h), h).toBe(false);
  });
});

describe('tlsChoice', () => {
  it('never leaves the token in clear beyond this machine', () => {
    expect(tlsChoice('0.0.0.0', {})).toBe('generated');
    expect(tlsChoice('192.168.0.10', { tls: false })).toBe('generated');
    expect(tlsChoice('192.168.0.10', { cert: 'c.pem', key: 'k.pem' })).toEqual({ cert: 'c.pem', key: 'k.pem' });
    expect(tlsChoice('127.0.0.1', {})).toBeUndefined();
    expect(tlsChoice('127.0.0.1', { tls: true })).toBe('generated');
  });
});

describe('generatedTls', () => {
  it('makes a certificate once, key readable only by its user, and gives the same one (same fingerprint) afterwards', () => {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-tls-'));
    const first = generatedTls(dir, ['192.168.0.10']);
    expect(first.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(statSync(join(dir, 'tls', 'servico.key')).mode & 0o777).toBe(0o600);
    expect(generatedTls(dir)).toEqual(first);
  });
});

describe('operatorTls', () => {
  it('refuses a key that is not the certificate’s, naming the option', () => {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-tls-'));
    const made = generatedTls(dir);
    const cert = join(dir, 'c.pem');
    const key = join(dir, 'k.pem');
    writeFileSync(cert, made.cert);
    writeFileSync(key, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => operatorTls(cert, key)).toThrow(TlsConfigError);
    expect(() => operatorTls(cert, key)).toThrow(/--tls-key/);
    writeFileSync(key, made.key);
    expect(operatorTls(cert, key)).toMatchObject({ fingerprint256: made.fingerprint256, origin: 'operador' });
    expect(() => operatorTls(join(dir, 'nada.pem'), key)).toThrow(/--tls-cert: não foi possível ler/);
  });
});
