// The webhook signature of docs/api.md, "Webhooks":
//
//   X-Assinatura: t=<unix seconds>,v1=<hex HMAC-SHA256(segredo, t + "." + raw body)>
//
// The timestamp is inside the signed text so a captured request cannot be replayed later than
// the receiver's tolerance; the raw body (bytes as sent, not re-serialized JSON) is signed so a
// receiver verifies before parsing. `verifyWebhookSignature` is what an integrator (and our
// tests) run on the receiving side.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Assinatura';

/** Default clock skew accepted between the signer and the verifier. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const DIGEST_BYTES = 32;

function hmacHex(secret: string, t: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

function assertUnixSeconds(t: number): void {
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError(`instante da assinatura inválido: ${t} (segundos Unix inteiros)`);
}

/** The `X-Assinatura` value for `body` (the exact bytes POSTed) signed at `t` (unix seconds). */
export function signWebhookBody(secret: string, body: string | Uint8Array, t: number): string {
  assertUnixSeconds(t);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

export type VerifyOptions = {
  /** How far `t` may be from `now`, either way; default 300 s. */
  toleranceSeconds?: number;
  /** The verifier's clock, unix seconds; default the current time. */
  now?: number;
};

/**
 * True when `header` carries a `v1` signature of `body` by `secret` made within the tolerance.
 * Accepts several `v1=` entries (any one matching is enough), so a sender may sign with an old
 * and a new secret during a rotation. Never throws on malformed input: anything unexpected is
 * simply not a valid signature.
 */
export function verifyWebhookSignature(secret: string, header: string | null | undefined, body: string | Uint8Array, options: VerifyOptions = {}): boolean {
  if (typeof header !== 'string' || header.length > 4096) return false;
  let t: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^[0-9]{1,15}$/.test(value)) return false;
      t = Number(value);
    } else if (key === 'v1') {
      // Decoded to bytes so the comparison below is between equal-length buffers; anything that
      // is not exactly 64 hex digits cannot match and is skipped without a comparison.
      if (/^[0-9a-fA-F]{64}$/.test(value)) candidates.push(Buffer.from(value, 'hex'));
    }
    // Unknown keys (a future v2) are ignored, so adding a scheme does not break old verifiers.
  }
  if (t === undefined || candidates.length === 0) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (!(Math.abs(now - t) <= tolerance)) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  let ok = false;
  // Every candidate is compared (no early exit), in constant time per comparison.
  for (const candidate of candidates) {
    if (candidate.length === DIGEST_BYTES && timingSafeEqual(candidate, expected)) ok = true;
  }
  return ok;
}
