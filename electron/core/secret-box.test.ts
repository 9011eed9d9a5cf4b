// FileKeySecretBox on real files: the key file (mode 0600, shared by every box of the folder),
// sealing round trips, and refusals of another key or a tampered value.

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileKeySecretBox, SECRET_KEY_FILE, SecretBoxError } from './secret-box.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-secret-box-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('FileKeySecretBox', () => {
  it('creates a 32-byte key readable by its owner only, and every box of the folder uses it', () => {
    const box = new FileKeySecretBox(join(dir, 'dados'));
    const key = join(dir, 'dados', SECRET_KEY_FILE);
    expect(readFileSync(key)).toHaveLength(32);
    expect(readdirSync(join(dir, 'dados'))).toEqual([SECRET_KEY_FILE]); // the draft it was written under is gone
    if (process.platform !== 'win32') expect(statSync(key).mode & 0o777).toBe(0o600);
    const sealed = box.seal(Buffer.from('token-secreto'));
    expect(new FileKeySecretBox(join(dir, 'dados')).open(sealed).toString()).toBe('token-secreto');
  });

  it('seals with a fresh IV each time (AES-256-GCM), never leaving the plain text in the output', () => {
    const box = new FileKeySecretBox(dir);
    const plain = Buffer.from('CSC-DE-TESTE-123456');
    const a = box.seal(plain);
    const b = box.seal(plain);
    expect(a.equals(b)).toBe(false);
    expect(a.includes(plain)).toBe(false);
    expect(a).toHaveLength(1 + 12 + plain.length + 16);
    expect(box.open(a).equals(plain)).toBe(true);
    expect(box.open(box.seal(Buffer.alloc(0)))).toHaveLength(0);
  });

  it('refuses what another key sealed, a tampered value and garbage', () => {
    const box = new FileKeySecretBox(join(dir, 'a'));
    const other = new FileKeySecretBox(join(dir, 'b'));
    const sealed = box.seal(Buffer.from('segredo'));
    expect(() => other.open(sealed)).toThrow(SecretBoxError);
    const tampered = Buffer.from(sealed);
    tampered[14]! ^= 1;
    expect(() => box.open(tampered)).toThrow(/não abre com esta chave/);
    expect(() => box.open(Buffer.from('abc'))).toThrow(/formato desconhecido/);
  });

  it('refuses a damaged key file instead of making a new key (that would orphan every secret)', () => {
    writeFileSync(join(dir, SECRET_KEY_FILE), Buffer.alloc(5));
    expect(() => new FileKeySecretBox(dir)).toThrow(/chave dos segredos inválido/);
  });
});
