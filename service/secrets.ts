// The service's secrets at rest (base/node/secret-box.ts seals them): the A1 certificate (.pfx
// bytes and its password), the NFC-e security code (CSC), the webhook signing secret and the
// technical responsible's CSRT, under
// one master key kept outside the database: BALCAO_MASTER_KEY, or `<data>/master.key`.

import { join } from 'node:path';
import { SecretBox, decodeKey, readOrCreateKeyFile, SecretError, type SecretSealer } from '../base/node/secret-box.ts';

export { SecretError, type SecretSealer } from '../base/node/secret-box.ts';

export const MASTER_KEY_FILE = 'master.key';
export const MASTER_KEY_ENV = 'BALCAO_MASTER_KEY';

/** Sealing purposes, one per kind of secret, so the additional data is spelled in one place. */
export const secretContext = {
  csc: (companyId: string) => `company/${companyId}/csc`,
  pfx: (companyId: string) => `company/${companyId}/pfx`,
  pfxPassword: (companyId: string) => `company/${companyId}/pfx-password`,
  webhookSecret: (companyId: string) => `company/${companyId}/webhook-secret`,
  /** The deployment's technical responsible's CSRT (resp-tec.ts), one for all companies. */
  csrt: 'deployment/csrt',
  masterKeyCheck: 'master-key-check',
} as const;

/** The service's box over `key`; it reads what the service sealed before the box was shared. */
export function serviceSecretBox(key: Buffer): SecretSealer {
  return new SecretBox(key, { legacy: 'service' });
}

/** `box.open` as text (UTF-8). */
export function openText(box: SecretSealer, sealed: Buffer, purpose: string): string {
  return box.open(sealed, purpose).toString('utf8');
}

/**
 * The master key: BALCAO_MASTER_KEY when set (base64 of 32 bytes), else `<dataDir>/master.key`,
 * created on first start with mode 0600. Refuses a key file that other users can read.
 */
export function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return decodeKey(fromEnv, MASTER_KEY_ENV);
  return readOrCreateKeyFile(join(dataDir, MASTER_KEY_FILE));
}

/**
 * Proves `box` holds the key this database was created with (sealing a check value on first
 * use). Without it, a wrong key would only surface at the first issuance, or worse, new
 * companies would be sealed under a key the old ones do not share.
 */
export async function verifyMasterKey(box: SecretSealer, store: { masterKeyCheck(candidate: Buffer): Promise<Buffer> }): Promise<void> {
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
