// How long a client may take to send its request. Without a bound, a client that sends its
// headers and then trickles the body (or trickles the headers, or sends nothing) holds a
// connection for ever, and enough of them exhaust the process. Node measures these while the
// request arrives, not while the service answers: an issuance waiting on a slow tax authority
// is not cut.
//
// - requestTimeout: headers and body must have arrived within it (408 tempo_esgotado, then the
//   connection is closed). BALCAO_REQUEST_TIMEOUT_MS, default 30 s: a 1 MiB body, the largest
//   accepted, needs a link of about 35 KB/s to make it.
// - headersTimeout: the headers alone; the smaller of the request timeout and 10 s.
// - keepAliveTimeout: an idle connection between requests is closed after 10 s (clients that keep
//   connections open read it in the Keep-Alive header).
// - connectionsCheckingInterval: how often Node looks for expired requests; a tenth of the
//   request timeout, at most a second, so the bound holds within about 10 %.

export const REQUEST_TIMEOUT_ENV = 'BALCAO_REQUEST_TIMEOUT_MS';
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const MIN_REQUEST_TIMEOUT_MS = 100;
const MAX_REQUEST_TIMEOUT_MS = 600_000;
const MAX_HEADERS_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 10_000;

export type HttpTimeouts = {
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
};

export function httpTimeouts(requestTimeoutMs: number): HttpTimeouts {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(requestTimeoutMs, MAX_HEADERS_TIMEOUT_MS),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(requestTimeoutMs / 10))),
  };
}

/** BALCAO_REQUEST_TIMEOUT_MS, or the default; anything but an integer of 100 to 600000 throws. */
export function requestTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[REQUEST_TIMEOUT_ENV]?.trim();
  if (!text) return DEFAULT_REQUEST_TIMEOUT_MS;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < MIN_REQUEST_TIMEOUT_MS || n > MAX_REQUEST_TIMEOUT_MS) {
    throw new RangeError(
      `${REQUEST_TIMEOUT_ENV} inválido ("${text}"): informe um inteiro de ${MIN_REQUEST_TIMEOUT_MS} a ${MAX_REQUEST_TIMEOUT_MS} (milissegundos)`,
    );
  }
  return n;
}
