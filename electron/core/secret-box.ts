// The terminal's secrets at rest (the service token, the CSC token, the certificate and its
// password) are sealed by the shared SecretBox (base/node/secret-box.ts) before they reach
// pos.sqlite, each bound to its purpose (`terminal/<name>`), so a copy of the database alone
// gives none of them away. The key: in Electron, the OS keychain where it is a real one
// (electron/main.ts); otherwise a 0600 key file of the data directory (browser mode, the
// headless terminal, tests), which protects against a copied database, not against someone who
// can read the whole data directory. A value that does not open (another key, damage) is
// reported as unreadable, and the manager enters it again.

import { join } from 'node:path';
import { SecretBox, readOrCreateKeyFile, type SecretSealer } from '../../base/node/secret-box.ts';

export { SecretError, type SecretSealer } from '../../base/node/secret-box.ts';

/** File name of the key inside the data directory. */
export const SECRET_KEY_FILE = 'segredos.key';

/** The purpose a terminal secret is sealed for. */
export const terminalSecretPurpose = (name: string): string => `terminal/${name}`;

/** The key-file box of `dataDir` (created with its key on first use); reads the terminal's first format too. */
export function fileKeySecretBox(dataDir: string): SecretSealer {
  return new SecretBox(readOrCreateKeyFile(join(dataDir, SECRET_KEY_FILE)), { legacy: 'terminal' });
}
