// Encryption at rest of what would let someone issue fiscal documents in a company's name: the
// A1 certificate (.pfx bytes and its password), the NFC-e security code (CSC) and the webhook
// signing secret. AES-256-GCM under one master key kept outside the database, so a copied
// service.sqlite (a backup, a support bundle) is useless on its own.
//
// Every sealed value is bound to its purpose through the GCM additional data (e.g.
// `company/<id>/csc`): a blob moved to another column or another company fails to open instead
// of being read as something it is not.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';
export const MASTER_KEY_ENV = 'BALCAO_MASTER_KEY';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Format byte first, so a future algorithm or key rotation can coexist with old blobs.
const FORMAT_V1 = 0x01;

export class SecretError extends Error {
  override name = 'SecretError';
}

/** Sealing contexts, one per kind of secret, so the additional data is spelled in one place. */
export const secretContext = {
  csc: (companyId: string) => `company/${companyId}/csc`,
  pfx: (companyId: string) => `company/${companyId}/pfx`,
  pfxPassword: (companyId: string) => `company/${companyId}/pfx-password`,
  webhookSecret: (companyId: string) => `company/${companyId}/webhook-secret`,
  masterKeyCheck: 'master-key-check',
} as const;

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new SecretError(`a chave mestra deve ter ${KEY_BYTES} bytes (recebidos ${key.length})`);
    this.#key = Buffer.from(key);
  }

  seal(plaintext: Buffer | string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
    return Buffer.concat([Buffer.of(FORMAT_V1), iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, context: string): Buffer {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== FORMAT_V1) {
      throw new SecretError(`segredo cifrado em formato desconhecido (${context})`);
    }
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretError(
        `não foi possível decifrar ${context}: chave mestra diferente da usada para cifrar, ou dado adulterado`,
      );
    }
  }

  openText(sealed: Buffer, context: string): string {
    return this.open(sealed, context).toString('utf8');
  }
}

function decodeKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  // Buffer.from ignores junk silently; a round trip proves the text really was base64.
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) {
    throw new SecretError(`${origin}: a chave mestra deve ser ${KEY_BYTES} bytes em base64 (44 caracteres)`);
  }
  return key;
}

/**
 * The master key: BALCAO_MASTER_KEY when set (base64 of 32 bytes), else `<dataDir>/master.key`,
 * created on first start with mode 0600. Refuses a key file that other users can read.
 */
export function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return decodeKey(fromEnv, MASTER_KEY_ENV);

  const file = join(dataDir, MASTER_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(file)) publishNewKey(file);
  if (process.platform !== 'win32') {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) {
      throw new SecretError(
        `${file} pode ser lido por outros usuários (permissões ${mode.toString(8)}); execute chmod 600 ${file}`,
      );
    }
  }
  return decodeKey(readFileSync(file, 'utf8'), file);
}

/**
 * Creates `file` with a fresh key, complete or not at all. The key is written and synced under a
 * private name, then hard-linked into place: link() fails when the name exists, so of two
 * processes starting together (`balcao company create` run in parallel) exactly one key wins,
 * and the other process never sees the winner's file before its content is there.
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

/**
 * Proves `box` holds the key this database was created with (sealing a check value on first
 * use). Without it, a wrong key would only surface at the first issuance, or worse, new
 * companies would be sealed under a key the old ones do not share.
 */
export async function verifyMasterKey(box: SecretBox, store: { masterKeyCheck(candidate: Buffer): Promise<Buffer> }): Promise<void> {
  const stored = await store.masterKeyCheck(box.seal('balcao-master-key-check', secretContext.masterKeyCheck));
  try {
    box.open(stored, secretContext.masterKeyCheck);
  } catch {
    throw new SecretError(
      `A chave mestra em uso (${MASTER_KEY_ENV} ou ${MASTER_KEY_FILE}) não é a que cifrou este banco de dados; ` +
        'restaure a chave original (o banco não pode ser lido sem ela).',
    );
  }
}
