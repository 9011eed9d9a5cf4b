// API tokens: `blc_` + 32 random bytes in base64url. Shown once at creation; the service keeps
// only their SHA-256, so a leaked database does not leak working credentials. A plain hash (no
// salt, no slow KDF) is enough because the token has 256 bits of entropy: there is nothing to
// brute-force, and the hash must be cheap because it runs on every request.

import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'blc_';

/**
 * A credential of the service: `prefix` + 32 random bytes in base64url, and its SHA-256 (all the
 * service keeps). The API tokens (`blc_`) and the PIX webhook's URL secret (`pixwh_`) are made so.
 */
export function generateSecret(prefix: string): { token: string; sha256: Buffer } {
  const token = prefix + randomBytes(32).toString('base64url');
  return { token, sha256: hashToken(token) };
}

export const generateToken = (): { token: string; sha256: Buffer } => generateSecret(TOKEN_PREFIX);

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Shape check before any lookup: a malformed credential never reaches the database. */
export const isWellFormedSecret = (prefix: string, token: string): boolean =>
  token.length === prefix.length + 43 && token.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(token.slice(prefix.length));

export const isWellFormedToken = (token: string): boolean => isWellFormedSecret(TOKEN_PREFIX, token);
