// The shared SecretBox on real keys and files: round trips, purposes, the formats each side wrote
// before it was shared, the keychain box, and the key file's checks.

import { createCipheriv, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox, keychainSecretBox, readOrCreateKeyFile, SecretError } from './secret-box.ts';

const key = randomBytes(32);

/** A value as the service sealed it before the box was shared: 1 | IV | tag | body, purpose as AAD. */
function serviceFormat1(plain: string, purpose: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.of(1), iv, cipher.getAuthTag(), body]);
}

/** A value as the terminal sealed it before: 1 | IV | body | tag, no AAD. */
function terminalFormat1(plain: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.of(1), iv, body, cipher.getAuthTag()]);
}

describe('SecretBox', () => {
  const box = new SecretBox(key);

  it('seals with a fresh IV each time, never leaving the plain text in the output, and opens it again', () => {
    const a = box.seal('CSC-DE-TESTE-123456', 'company/x/csc');
    const b = box.seal('CSC-DE-TESTE-123456', 'company/x/csc');
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('CSC-DE-TESTE-123456'))).toBe(false);
    expect(a[0]).toBe(2);
    expect(box.open(a, 'company/x/csc').toString()).toBe('CSC-DE-TESTE-123456');
    const bytes = randomBytes(3000);
    expect(box.open(box.seal(bytes, 'company/x/pfx'), 'company/x/pfx').equals(bytes)).toBe(true);
  });

  it('binds a value to its purpose: another purpose, another key, a tampered value and garbage are refused', () => {
    const sealed = box.seal('segredo', 'company/a/csc');
    expect(() => box.open(sealed, 'company/b/csc')).toThrow(SecretError);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'company/a/csc')).toThrow(/chave diferente/);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, 'company/a/csc')).toThrow(/adulterado/);
    expect(() => box.open(Buffer.from('abc'), 'company/a/csc')).toThrow(/curto/);
  });

  it('reads what each side sealed before the box was shared, each only its own', () => {
    const service = new SecretBox(key, { legacy: 'service' });
    const terminal = new SecretBox(key, { legacy: 'terminal' });
    expect(service.open(serviceFormat1('csc antigo', 'company/x/csc'), 'company/x/csc').toString()).toBe('csc antigo');
    expect(() => service.open(serviceFormat1('csc antigo', 'company/x/csc'), 'company/y/csc')).toThrow(SecretError);
    expect(terminal.open(terminalFormat1('token antigo'), 'terminal/token').toString()).toBe('token antigo');
    expect(() => service.open(terminalFormat1('token antigo'), 'terminal/token')).toThrow(SecretError);
    expect(() => box.open(serviceFormat1('x', 'p'), 'p')).toThrow(/formato desconhecido/);
  });

  it('refuses a key of the wrong size', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('keychainSecretBox', () => {
  // Stands in for Electron's safeStorage: reversible, as the keychain is to its own user.
  const keychain = {
    encryptString: (text: string) => Buffer.from(text, 'utf8').reverse(),
    decryptString: (sealed: Buffer) => Buffer.from(sealed).reverse().toString('utf8'),
  };
  const box = keychainSecretBox(keychain);

  it('carries the purpose inside the sealed text and checks it on opening', () => {
    const sealed = box.seal(Buffer.from([0, 1, 2, 255]), 'terminal/pfx');
    expect(box.open(sealed, 'terminal/pfx').equals(Buffer.from([0, 1, 2, 255]))).toBe(true);
    expect(() => box.open(sealed, 'terminal/token')).toThrow(/outro uso/);
  });

  it('opens a value sealed before purposes (plain base64), and reports a keychain that will not open', () => {
    expect(box.open(keychain.encryptString(Buffer.from('token antigo').toString('base64')), 'terminal/token').toString()).toBe('token antigo');
    const broken = keychainSecretBox({
      ...keychain,
      decryptString: () => {
        throw new Error('keychain locked');
      },
    });
    expect(() => broken.open(Buffer.from('x'), 'terminal/token')).toThrow(/chaveiro do sistema/);
  });
});

describe('readOrCreateKeyFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-key-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the key readable by its owner only, complete (no draft left), and reads the same key after', () => {
    const file = join(dir, 'dados', 'segredos.key');
    const first = readOrCreateKeyFile(file);
    expect(first).toHaveLength(32);
    expect(readdirSync(join(dir, 'dados'))).toEqual(['segredos.key']);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.toString('base64'));
    expect(readOrCreateKeyFile(file).equals(first)).toBe(true);
  });

  it('reads the 32 raw bytes the terminal first wrote', () => {
    const file = join(dir, 'segredos.key');
    const raw = randomBytes(32);
    writeFileSync(file, raw, { mode: 0o600 });
    expect(readOrCreateKeyFile(file).equals(raw)).toBe(true);
  });

  it('refuses a key file others can read, and a damaged one, instead of making a new key (that would orphan every secret)', () => {
    const file = join(dir, 'segredos.key');
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
    if (process.platform !== 'win32') {
      chmodSync(file, 0o644);
      expect(() => readOrCreateKeyFile(file)).toThrow(/lido por outros usuários/);
    }
    writeFileSync(file, Buffer.alloc(5), { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(() => readOrCreateKeyFile(file)).toThrow(/32 bytes em base64/);
  });
});
