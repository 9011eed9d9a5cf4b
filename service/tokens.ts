// API tokens: `blc_` + 32 random bytes in base64url. Shown once at creation; the service keeps
// only their SHA-256, so a leaked database does not leak working credentials. A plain hash (no
// salt, no slow KDF) is enough because the token has 256 bits of entropy: there is nothing to
// brute-force, and the hash must be cheap because it runs on every request.

import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'blc_';
const TOKEN_FORMAT = /^blc_[A-Za-z0-9_-]{43}$/;

export function generateToken(): { token: string; sha256: Buffer } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, sha256: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Shape check before any lookup: a malformed token never reaches the database. */
export const isWellFormedToken = (token: string): boolean => TOKEN_FORMAT.test(token);
