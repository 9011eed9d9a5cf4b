// Secrets at rest, for the service and the terminal alike: what would let someone issue fiscal
// documents in a company's name (the A1 certificate and its password, the CSC, API tokens, the
// webhook signing secret) is sealed before it reaches a database file, so a copy of the file (a
// backup, a support bundle) gives none of it away.
//
// - AES-256-GCM under a 32-byte key kept outside the database: a key file of the data directory
//   (mode 0600, refused when others can read it) or, for the service, an environment variable.
// - Every value is bound to its purpose (`company/<id>/csc`, `terminal/token`) through the GCM
//   additional data: a value moved to another column or another company fails to open instead
//   of being read as something it is not.
// - Layout of a sealed value: format (1 byte) | IV (12) | tag (16) | ciphertext. Format 2 is the
//   one written now. Format 1 is what each side wrote before the box was shared: the service's
//   had this layout and purpose already; the terminal's had the tag at the end and no purpose.
//   A box is told which format 1 it may meet (`legacy`), so old databases stay readable.
// - Where the OS keychain is real (Electron's safeStorage), `keychainSecretBox` seals with it
//   instead, the purpose carried inside the sealed text.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** What seals and opens secrets: the SecretBox below, or the OS keychain (keychainSecretBox). */
export interface SecretSealer {
  seal(plain: Buffer | string, purpose: string): Buffer;
  /** Throws SecretError when the value does not open (another key, another purpose, damage). */
  open(sealed: Buffer, purpose: string): Buffer;
}

export class SecretError extends Error {
  override name = 'SecretError';
}

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT_SHARED = 0x02;
const FORMAT_LEGACY = 0x01;

/** What a format-1 value is, where old data may hold one. */
export type LegacyFormat = 'service' | 'terminal';

const bytesOf = (plain: Buffer | string): Buffer => (typeof plain === 'string' ? Buffer.from(plain, 'utf8') : plain);

export class SecretBox implements SecretSealer {
  readonly #key: Buffer;
  readonly #legacy: LegacyFormat | undefined;

  constructor(key: Buffer, options: { legacy?: LegacyFormat } = {}) {
    if (key.length !== KEY_BYTES) throw new SecretError(`a chave dos segredos deve ter ${KEY_BYTES} bytes (recebidos ${key.length})`);
    this.#key = Buffer.from(key);
    this.#legacy = options.legacy;
  }

  seal(plain: Buffer | string, purpose: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(bytesOf(plain)), cipher.final()]);
    return Buffer.concat([Buffer.of(FORMAT_SHARED), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, purpose: string): Buffer {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES) throw new SecretError(`segredo cifrado curto demais (${purpose})`);
    const format = sealed[0];
    if (format === FORMAT_SHARED || (format === FORMAT_LEGACY && this.#legacy === 'service')) {
      return this.decrypt(
        sealed.subarray(1, 1 + IV_BYTES),
        sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES),
        sealed.subarray(1 + IV_BYTES + TAG_BYTES),
        purpose,
      );
    }
    if (format === FORMAT_LEGACY && this.#legacy === 'terminal') {
      return this.decrypt(
        sealed.subarray(1, 1 + IV_BYTES),
        sealed.subarray(sealed.length - TAG_BYTES),
        sealed.subarray(1 + IV_BYTES, sealed.length - TAG_BYTES),
        null,
        purpose,
      );
    }
    throw new SecretError(`segredo cifrado em formato desconhecido (${purpose})`);
  }

  /** `aad` null: a legacy terminal value, sealed without one. */
  private decrypt(iv: Buffer, tag: Buffer, body: Buffer, aad: string | null, purpose = aad ?? ''): Buffer {
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv);
    if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch (err) {
      throw new SecretError(`não foi possível decifrar ${purpose}: chave diferente da usada para cifrar, ou dado adulterado`, { cause: err });
    }
  }
}

/** The two calls of Electron's safeStorage a keychain box needs. */
export type KeychainCipher = { encryptString(text: string): Buffer; decryptString(sealed: Buffer): string };

const KEYCHAIN_PREFIX = 'balcao-v2\n';

/**
 * A box backed by the OS keychain. The keychain has no additional data, so the purpose travels
 * inside the sealed text and is checked on opening; a value sealed before purposes (plain
 * base64) still opens.
 */
export function keychainSecretBox(keychain: KeychainCipher): SecretSealer {
  return {
    seal: (plain, purpose) => keychain.encryptString(`${KEYCHAIN_PREFIX}${purpose}\n${bytesOf(plain).toString('base64')}`),
    open(sealed, purpose) {
      let text: string;
      try {
        text = keychain.decryptString(sealed);
      } catch (err) {
        throw new SecretError(`o chaveiro do sistema não abriu ${purpose}`, { cause: err });
      }
      if (!text.startsWith(KEYCHAIN_PREFIX)) return Buffer.from(text, 'base64');
      const [sealedFor, data] = text.slice(KEYCHAIN_PREFIX.length).split('\n');
      if (sealedFor !== purpose || data === undefined) throw new SecretError(`segredo selado para outro uso (${sealedFor}), não ${purpose}`);
      return Buffer.from(data, 'base64');
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Key files

/** A key from text: 32 bytes in base64 (44 characters). */
export function decodeKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  // Buffer.from ignores junk silently; a round trip proves the text really was base64.
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) {
    throw new SecretError(`${origin}: a chave deve ser ${KEY_BYTES} bytes em base64 (44 caracteres)`);
  }
  return key;
}

/**
 * The key in `file`, created on first use (mode 0600, complete or not at all). Refuses a file
 * other users can read: whoever reads the key reads every secret. Reads the key as written now
 * (base64 text) and as the terminal first wrote it (32 raw bytes).
 */
export function readOrCreateKeyFile(file: string): Buffer {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  if (!existsSync(file)) publishNewKey(file);
  if (process.platform !== 'win32') {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) throw new SecretError(`${file} pode ser lido por outros usuários (permissões ${mode.toString(8)}); execute chmod 600 ${file}`);
  }
  const content = readFileSync(file);
  if (content.length === KEY_BYTES) return content;
  return decodeKey(content.toString('utf8'), file);
}

/**
 * Writes a fresh key under a private name, syncs it, then hard-links it into place: link() fails
 * when the name exists, so of two processes starting together exactly one key wins, the other
 * never sees the file before its content is there, and a crash midway leaves only the draft.
 */
function publishNewKey(file: string): void {
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(draft, 'wx', 0o600);
  try {
    writeSync(fd, randomBytes(KEY_BYTES).toString('base64') + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    chmodSync(draft, 0o600); // the umask may have narrowed it already, never widened; be explicit
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(draft);
  }
}
