// Secrets at rest (the service token, the CSC token, the certificate and its password) are kept
// in the terminal's database sealed by a SecretBox, so a copy of pos.sqlite alone gives none of
// them away.
//
// - FileKeySecretBox: AES-256-GCM with a random 32-byte key in a file of the data directory,
//   created with mode 0600 (browser mode, the headless terminal, tests). It protects against a
//   copied database, not against someone who can read the whole data directory.
// - In Electron, the main process passes a box backed by the OS keychain (safeStorage), e.g.:
//
//     const box: SecretBox = {
//       seal: (plain) => safeStorage.encryptString(plain.toString('base64')),
//       open: (sealed) => Buffer.from(safeStorage.decryptString(sealed), 'base64'),
//     };
//
// A box that cannot open what it is given (another key, a damaged value) throws: the caller
// reports the secret as unreadable and the manager enters it again.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface SecretBox {
  seal(plain: Buffer): Buffer;
  open(sealed: Buffer): Buffer;
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/** File name of the key inside the data directory. */
export const SECRET_KEY_FILE = 'segredos.key';

// Layout of a sealed value: version (1 byte) | IV (12) | ciphertext | GCM tag (16).
const VERSION = 1;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const KEY_LENGTH = 32;

export class FileKeySecretBox implements SecretBox {
  private readonly key: Buffer;
  readonly keyPath: string;

  /** Reads the key of `dataDir`, creating it (mode 0600) on first use. */
  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.keyPath = join(dataDir, SECRET_KEY_FILE);
    this.key = FileKeySecretBox.readOrCreateKey(this.keyPath);
  }

  private static readOrCreateKey(path: string): Buffer {
    if (!existsSync(path)) FileKeySecretBox.publishNewKey(path);
    const key = readFileSync(path);
    if (key.length !== KEY_LENGTH) throw new SecretBoxError(`Arquivo de chave dos segredos inválido: ${path} (esperados ${KEY_LENGTH} bytes, há ${key.length})`);
    return key;
  }

  /**
   * Creates the key file complete or not at all: written and synced under a private name, then
   * hard-linked into place. link() fails when the name exists, so of two processes opening the
   * same folder for the first time one key wins and the other reads it whole; a crash midway
   * leaves only the draft, never a short key file that would be refused on every later start.
   */
  private static publishNewKey(path: string): void {
    const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const fd = openSync(draft, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(KEY_LENGTH));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(draft, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(draft);
    }
  }

  seal(plain: Buffer): Buffer {
    const iv = randomBytes(IV_LENGTH);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), iv, body, cipher.getAuthTag()]);
  }

  open(sealed: Buffer): Buffer {
    if (sealed.length < 1 + IV_LENGTH + TAG_LENGTH || sealed[0] !== VERSION) throw new SecretBoxError('valor selado em formato desconhecido');
    const iv = sealed.subarray(1, 1 + IV_LENGTH);
    const tag = sealed.subarray(sealed.length - TAG_LENGTH);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(1 + IV_LENGTH, sealed.length - TAG_LENGTH)), decipher.final()]);
    } catch (err) {
      throw new SecretBoxError('o valor não abre com esta chave (chave trocada ou valor corrompido)', { cause: err });
    }
  }
}
