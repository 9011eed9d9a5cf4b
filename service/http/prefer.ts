// The `Prefer` request header (RFC 7240) as the NFC-e issuance reads it (docs/api.md, "Waiting
// for the verdict"): `wait=N` asks the service to hold the answer up to N seconds for the
// document's verdict. Preferences it does not know, malformed ones and `respond-async` (the
// client wants the 202 anyway) leave the answer as without the header, as the RFC says.

/** The longest wait the service grants, whatever is asked. */
export const MAX_WAIT_SECONDS = 30;

/** The seconds to wait (at most MAX_WAIT_SECONDS), or undefined when the request does not ask to wait. */
export function preferredWait(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const preferences = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((p) => p.split(';')[0]!.trim().toLowerCase())
    .filter((p) => p !== '');
  if (preferences.includes('respond-async')) return undefined;
  for (const p of preferences) {
    const m = /^wait\s*=\s*"?([0-9]{1,9})"?$/.exec(p);
    if (m) return Math.min(Number(m[1]), MAX_WAIT_SECONDS);
  }
  return undefined;
}
