import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCompany } from './companies.ts';
import { serviceDbPath } from './db.ts';
import { openService } from './open-service.ts';
import { loadMasterKey, MASTER_KEY_ENV, MASTER_KEY_FILE, openText, SecretError, secretContext, serviceSecretBox } from './secrets.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'balcao-secrets-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the service's secret box", () => {
  const box = serviceSecretBox(randomBytes(32));

  it('round-trips text and bytes, with a fresh IV every time', () => {
    const a = box.seal('CSC-DE-TESTE-123456', 'company/x/csc');
    const b = box.seal('CSC-DE-TESTE-123456', 'company/x/csc');
    expect(a.equals(b)).toBe(false);
    expect(openText(box, a, 'company/x/csc')).toBe('CSC-DE-TESTE-123456');
    const bytes = randomBytes(3000);
    expect(box.open(box.seal(bytes, 'company/x/pfx'), 'company/x/pfx').equals(bytes)).toBe(true);
  });

  it('refuses a blob opened under another context (another company, another column)', () => {
    const sealed = box.seal('segredo', secretContext.csc('company-a'));
    expect(() => box.open(sealed, secretContext.csc('company-b'))).toThrow(SecretError);
    expect(() => box.open(sealed, secretContext.pfxPassword('company-a'))).toThrow(SecretError);
  });

  it('refuses a tampered blob and one sealed under another key', () => {
    const sealed = box.seal('segredo', 'ctx');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, 'ctx')).toThrow(/adulterado/);
    expect(() => serviceSecretBox(randomBytes(32)).open(sealed, 'ctx')).toThrow(/chave diferente/);
  });

  it('refuses a key of the wrong size', () => {
    expect(() => serviceSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('loadMasterKey', () => {
  it('creates <data>/master.key with mode 0600 on first start and reuses it after', () => {
    const dir = join(tempDir(), 'data');
    const key = loadMasterKey(dir, {});
    const file = join(dir, MASTER_KEY_FILE);
    expect(key).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(dir, {}).equals(key)).toBe(true);
  });

  it('uses BALCAO_MASTER_KEY instead of the file when set', () => {
    const dir = tempDir();
    const key = randomBytes(32);
    expect(loadMasterKey(dir, { [MASTER_KEY_ENV]: key.toString('base64') }).equals(key)).toBe(true);
    expect(existsSync(join(dir, MASTER_KEY_FILE))).toBe(false);
  });

  it('refuses a BALCAO_MASTER_KEY that is not 32 bytes of base64', () => {
    const dir = tempDir();
    expect(() => loadMasterKey(dir, { [MASTER_KEY_ENV]: randomBytes(16).toString('base64') })).toThrow(/BALCAO_MASTER_KEY.*32 bytes/);
    expect(() => loadMasterKey(dir, { [MASTER_KEY_ENV]: '!'.repeat(44) })).toThrow(/BALCAO_MASTER_KEY/);
  });

  it('processes creating the key of one fresh folder at once all read the same whole key', async () => {
    // What `balcao company create` run in parallel does: each process races to create master.key.
    const dir = join(tempDir(), 'data');
    const script =
      `const { loadMasterKey } = await import(${JSON.stringify(new URL('./secrets.ts', import.meta.url).href)});` +
      `process.stdout.write(loadMasterKey(${JSON.stringify(dir)}, {}).toString('base64'));`;
    const run = () =>
      new Promise<string>((resolve, reject) => {
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (err, stdout, stderr) =>
          err ? reject(new Error(stderr || err.message)) : resolve(stdout),
        );
      });
    const keys = await Promise.all(Array.from({ length: 8 }, run));
    expect(new Set(keys).size).toBe(1);
    expect(Buffer.from(keys[0]!, 'base64')).toHaveLength(32);
    expect(readFileSync(join(dir, MASTER_KEY_FILE), 'utf8').trim()).toBe(keys[0]);
    expect(readdirSync(dir)).toEqual([MASTER_KEY_FILE]); // no draft left behind
  });

  it.runIf(process.platform !== 'win32')('refuses a key file other users can read', () => {
    const dir = tempDir();
    writeFileSync(join(dir, MASTER_KEY_FILE), randomBytes(32).toString('base64'));
    chmodSync(join(dir, MASTER_KEY_FILE), 0o644);
    expect(() => loadMasterKey(dir, {})).toThrow(/chmod 600/);
  });
});

describe('secrets at rest', () => {
  it('the database never holds the certificate, its password, the CSC or the token in clear', async () => {
    const dir = tempDir();
    const pfx = readFileSync(new URL('../fiscal/testdata/legacy-rc2-40.pfx', import.meta.url));
    const password = 'senha-antiga';
    const csc = 'CSC-DE-TESTE-123456';
    const { store, secrets } = await openService(dir, {});
    const { token } = await createCompany(
      { store, secrets },
      { cnpj: '11222333000181', uf: 'SP', nome: 'LOJA LEGADA LTDA', cscId: '000001', csc, certificate: { pfx, password } },
    );
    await store.close();

    const file = serviceDbPath(dir);
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.length).toBeGreaterThan(0);
    for (const secret of [password, csc, token, token.slice(4)]) {
      expect(bytes.includes(Buffer.from(secret, 'utf8')), secret).toBe(false);
    }
    // Any 64-byte window of the .pfx would do; take one from the middle.
    const middle = Math.floor(pfx.length / 2);
    expect(bytes.includes(pfx.subarray(middle, middle + 64))).toBe(false);
    expect(bytes.includes(readFileSync(join(dir, MASTER_KEY_FILE)).subarray(0, 44))).toBe(false);
  });

  it('a database is refused with a master key other than the one that created it', async () => {
    const dir = tempDir();
    const first = await openService(dir, { [MASTER_KEY_ENV]: randomBytes(32).toString('base64') });
    await first.store.close();
    await expect(openService(dir, { [MASTER_KEY_ENV]: randomBytes(32).toString('base64') })).rejects.toThrow(/não é a que cifrou este banco/);
  });
});
