// The browser-mode host's checks, apart from the server so each reads on its own: which Host
// and Origin headers are ours, the bearer secret compared in constant time, and the headers
// every response carries.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { contentSecurityPolicy } from '../content-security-policy.ts';

/** 256 random bits, URL-safe: the per-start secret carried in the page's fragment. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison of a presented secret with ours (hashing first evens the lengths). */
export function sameSecret(presented: unknown, secret: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(secret));
}

/** The secret from `Authorization: Bearer <secret>`, or undefined. */
export function bearer(header: string | undefined): string | undefined {
  const m = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header ?? '');
  return m?.[1];
}

/**
 * The names this host answers to. A page served from another name that resolves to 127.0.0.1
 * (DNS rebinding) sends that name as Host, and is refused: it would otherwise be same-origin
 * with itself and free to read our answers.
 */
export function hostNames(host: string, port: number): string[] {
  const names = [`${host}:${port}`];
  if (host === '127.0.0.1') names.push(`localhost:${port}`);
  return names;
}

export const allowedHost = (header: string | undefined, names: readonly string[]): boolean => header !== undefined && names.includes(header.toLowerCase());

/** Origins of the host's own pages: the only ones allowed to open the events socket. */
export const ownOrigins = (names: readonly string[]): string[] => names.map((n) => `http://${n}`);

export function securityHeaders(names: readonly string[]): Record<string, string> {
  return {
    // The events WebSocket is this host's only network peer besides its own HTTP.
    'content-security-policy': contentSecurityPolicy(names.map((n) => `ws://${n}`)),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=()',
  };
}
