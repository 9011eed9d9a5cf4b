// Webhook delivery (docs/api.md, "Webhooks"): the worker that drains the outbox
// (`webhook_deliveries`, filled by document state changes in their own transactions) and POSTs
// each event to the company's webhook.
//
// Guarantees and choices:
// - At least once. A delivery is leased before the POST and recorded after it; a process that
//   dies in between leaves it to be taken again when the lease ends (on SQLite its next attempt
//   pushed `leaseMs` ahead; on PostgreSQL the process's own lease, BALCAO_LEASE_MS: WebhookStore).
//   Receivers deduplicate by the event id.
// - The body is the stored payload, byte for byte, on every attempt: same event id, same JSON.
//   Only the signature is fresh (`t` = the send time), so a receiver's replay window works.
// - 2xx = delivered. Anything else (another status, a redirect, a timeout, a connection error)
//   is retried with exponential backoff: 10 s, 30 s, 1 min, 2 min, 5 min, 10 min, 30 min, then
//   every hour, each delay ±20 % jitter (so receivers coming back from an outage are not hit by
//   every event at the same instant). A failure 48 h or more after the event was created gives
//   up (≈ 55 attempts): twice the 24 h the contract promises, so a receiver down for a whole
//   weekend day still gets its events.
// - The base delays can be replaced with BALCAO_WEBHOOK_BACKOFF_MS, a comma-separated list of
//   milliseconds whose last value repeats (e.g. `50,100,200` in tests). Giving up stays at 48 h.
// - Each attempt has a 10 s timeout. Redirects are not followed (a 3xx is a failed attempt): the
//   company registered one URL and the signed event goes there, not wherever it points next.
// - Where it may go is the operator's choice (destinations.ts): any address on a store's own
//   service, public ones only on a service that hosts many companies. Then the address is checked
//   again at each attempt, on the address the connection is made to, before connecting. Only the
//   status code of the answer is used; its body is never read, stored or shown.
// - The URL and the secret are read when sending, so a PUT /webhook applies to pending events;
//   an event whose company removed its webhook is given up ("webhook removido").

import { isIP } from 'node:net';
import type { Dispatcher } from 'undici';

type GuardedFetch = { fetch: typeof fetch; dispatcher: Dispatcher };
import type { SecretSealer } from '../secrets.ts';
import { openText, secretContext } from '../secrets.ts';
import { ANY_DESTINATION, connectLookup, refusal, type DestinationPolicy, type Lookup } from './destinations.ts';
import type { WebhookAttemptResult, WebhookDelivery as LeasedDelivery, WebhookStore } from './store.ts';
import { SIGNATURE_HEADER, signWebhookBody } from './signature.ts';

export const BACKOFF_ENV = 'BALCAO_WEBHOOK_BACKOFF_MS';
export const DEFAULT_BACKOFF_MS: readonly number[] = Object.freeze([10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000]);
export const GIVE_UP_AFTER_MS = 48 * 3_600_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_POLL_INTERVAL_MS = 250;
export const USER_AGENT = 'Balcao-Webhooks/1';

const JITTER = 0.2;
const MAX_BASE_DELAY_MS = 24 * 3_600_000;
// The lease must outlast an attempt (timeout) plus recording it, or a slow attempt would be
// taken by another worker while still running.
const LEASE_MARGIN_MS = 50_000;

/** Parses BALCAO_WEBHOOK_BACKOFF_MS: positive integers (ms), comma-separated, ≤ 24 h each. */
export function parseBackoffMs(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  const delays = parts.map(Number);
  if (parts.some((p) => !/^[0-9]+$/.test(p)) || delays.some((d) => d < 1 || d > MAX_BASE_DELAY_MS)) {
    throw new RangeError(
      `${BACKOFF_ENV} inválido ("${text}"): informe atrasos em milissegundos separados por vírgula, ` +
        `cada um de 1 a ${MAX_BASE_DELAY_MS} (ex.: 10000,30000,60000)`,
    );
  }
  return delays;
}

/** The base delays: BALCAO_WEBHOOK_BACKOFF_MS when set, else the default schedule. */
export function backoffFromEnv(env: NodeJS.ProcessEnv = process.env): readonly number[] {
  const text = env[BACKOFF_ENV];
  return text === undefined || text.trim() === '' ? DEFAULT_BACKOFF_MS : parseBackoffMs(text);
}

/**
 * How long to wait after the `failedAttempts`-th failed attempt (1 = the first one failed):
 * the schedule's entry for it (the last one once past the end) with ±20 % jitter.
 */
export function retryDelayMs(failedAttempts: number, schedule: readonly number[], random: () => number = Math.random): number {
  const base = schedule[Math.min(Math.max(failedAttempts, 1), schedule.length) - 1] ?? DEFAULT_BACKOFF_MS[0]!;
  return Math.max(1, Math.round(base * (1 + JITTER * (2 * random() - 1))));
}

/** The part of a pino / fastify logger the worker uses. */
export type DeliveryLogger = {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export type WebhookDeliveryOptions = {
  store: WebhookStore;
  secrets: SecretSealer;
  logger?: DeliveryLogger;
  /** Base delays between attempts (last one repeats); default: backoffFromEnv(). */
  backoffMs?: readonly number[];
  /** Per-attempt timeout; default 10 s. */
  timeoutMs?: number;
  pollIntervalMs?: number;
  /** At most this many POSTs in flight; default 8. */
  maxConcurrent?: number;
  /** A failure this long after the event was created gives up; default 48 h. Tests only. */
  giveUpAfterMs?: number;
  /** How long a delivery being attempted stays leased on SQLite; default: timeoutMs + 50 s (PostgreSQL leases it to the process). */
  leaseMs?: number;
  now?: () => number;
  random?: () => number;
  /** Where webhooks may be delivered (destinations.ts); default any address. */
  destinations?: DestinationPolicy;
  /** How names are resolved (tests: a name that resolves elsewhere later). */
  lookup?: Lookup;
};

type Outcome = { ok: true; status: number } | { ok: false; error: string; permanent?: boolean };

const silent: DeliveryLogger = { debug: () => undefined, warn: () => undefined, error: () => undefined };

export class WebhookDelivery {
  readonly #store: WebhookStore;
  readonly #secrets: SecretSealer;
  readonly #log: DeliveryLogger;
  readonly #backoff: readonly number[];
  readonly #timeoutMs: number;
  readonly #pollMs: number;
  readonly #maxConcurrent: number;
  readonly #giveUpAfterMs: number;
  readonly #leaseMs: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #destinations: DestinationPolicy;
  readonly #lookup: Lookup | undefined;
  /** undici's fetch on connections whose addresses are checked (a restricted policy only). */
  #guarded: Promise<GuardedFetch> | undefined;

  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #pollAgain = false;
  #shutdown = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: WebhookDeliveryOptions) {
    this.#store = options.store;
    this.#secrets = options.secrets;
    this.#log = options.logger ?? silent;
    this.#backoff = options.backoffMs ?? backoffFromEnv();
    if (this.#backoff.length === 0) throw new RangeError('a lista de atrasos do webhook não pode ser vazia');
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#pollMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#maxConcurrent = options.maxConcurrent ?? 8;
    this.#giveUpAfterMs = options.giveUpAfterMs ?? GIVE_UP_AFTER_MS;
    this.#leaseMs = options.leaseMs ?? this.#timeoutMs + LEASE_MARGIN_MS;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#destinations = options.destinations ?? ANY_DESTINATION;
    this.#lookup = options.lookup;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#shutdown = new AbortController();
    this.#schedule(0);
  }

  /**
   * Stops polling and aborts the POSTs in flight; their deliveries are released to be retried
   * at once by the next start (an attempt cut by a shutdown is not the receiver's fault).
   * Resolves when every attempt has been recorded, so the caller may close the store after it.
   */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#shutdown.abort(new Error('serviço em encerramento'));
    await this.#polling;
    await Promise.allSettled([...this.#inFlight]);
    const guarded = await this.#guarded?.catch(() => undefined);
    this.#guarded = undefined;
    await guarded?.dispatcher.close().catch(() => undefined);
  }

  /** Polls now instead of at the next tick: for callers that just enqueued an event. */
  nudge(): void {
    if (!this.#running) return;
    if (this.#polling) this.#pollAgain = true;
    else this.#schedule(0);
  }

  #schedule(delayMs: number): void {
    clearTimeout(this.#timer);
    // unref: a pending poll alone never keeps the process alive; the HTTP server does.
    this.#timer = setTimeout(() => void this.#tick(), delayMs).unref();
  }

  async #tick(): Promise<void> {
    if (!this.#running || this.#polling) return;
    this.#pollAgain = false;
    this.#polling = this.#poll();
    await this.#polling;
    this.#polling = undefined;
    if (this.#running) this.#schedule(this.#pollAgain ? 0 : this.#pollMs);
  }

  async #poll(): Promise<void> {
    const free = this.#maxConcurrent - this.#inFlight.size;
    if (free <= 0) return;
    let due: LeasedDelivery[];
    try {
      due = await this.#store.leaseDueWebhookDeliveries(new Date(this.#now()), free, this.#leaseMs);
    } catch (err) {
      // A busy or briefly unavailable database: the next tick tries again.
      this.#log.error({ err }, 'webhook: falha ao buscar entregas pendentes');
      return;
    }
    for (const delivery of due) {
      const attempt = this.#deliver(delivery, this.#shutdown.signal).finally(() => {
        this.#inFlight.delete(attempt);
        // A freed slot may have work waiting for it (the lease took only `free` deliveries).
        if (due.length === free) this.nudge();
      });
      this.#inFlight.add(attempt);
    }
  }

  async #deliver(delivery: LeasedDelivery, shutdown: AbortSignal): Promise<void> {
    const outcome = await this.#attempt(delivery, shutdown).catch((err: unknown): Outcome => ({
      ok: false,
      error: `erro interno: ${(err as Error)?.message ?? String(err)}`,
    }));
    const at = new Date(this.#now());
    const attempt = delivery.attempts + 1;
    const log = { eventId: delivery.eventId, companyId: delivery.companyId, tipo: delivery.tipo, attempt };
    let result: WebhookAttemptResult;
    if (outcome.ok) {
      result = { delivered: true, at };
      this.#log.debug({ ...log, status: outcome.status }, 'webhook entregue');
    } else if (shutdown.aborted) {
      result = { delivered: false, at, error: 'interrompida pelo encerramento do serviço', nextAttemptAt: at };
    } else {
      const age = at.getTime() - Date.parse(delivery.createdAt);
      if (outcome.permanent || age >= this.#giveUpAfterMs) {
        result = { delivered: false, at, error: outcome.error, giveUp: true };
        this.#log.error({ ...log, error: outcome.error }, 'webhook: entrega abandonada');
      } else {
        const nextAttemptAt = new Date(at.getTime() + retryDelayMs(attempt, this.#backoff, this.#random));
        result = { delivered: false, at, error: outcome.error, nextAttemptAt };
        this.#log.warn({ ...log, error: outcome.error, nextAttemptAt: nextAttemptAt.toISOString() }, 'webhook: falha na entrega');
      }
    }
    try {
      await this.#store.recordWebhookAttempt(delivery.eventId, result);
    } catch (err) {
      // Not recorded: the lease ends and the event is sent again (at least once).
      this.#log.error({ err, ...log }, 'webhook: falha ao registrar a tentativa');
    }
  }

  async #attempt(delivery: LeasedDelivery, shutdown: AbortSignal): Promise<Outcome> {
    const webhook = await this.#store.getWebhook(delivery.companyId);
    if (!webhook) return { ok: false, error: 'webhook removido', permanent: true };
    const secret = openText(this.#secrets, webhook.secretSealed, secretContext.webhookSecret(delivery.companyId));
    const t = Math.floor(this.#now() / 1000);
    // The payload string is sent as is: fetch encodes it as UTF-8, the same bytes HMAC signs.
    const body = delivery.payload;
    // An address in the URL is connected to without a lookup: judged here.
    const host = new URL(webhook.url).hostname.replace(/^\[|\]$/g, '');
    const refused = isIP(host) ? refusal(this.#destinations, host) : undefined;
    if (refused) return { ok: false, error: `destino recusado: ${refused}` };
    const send = this.#destinations.kind === 'any' ? { fetch: globalThis.fetch as typeof fetch } : await this.#guardedFetch();
    // The attempt's own timer, held here until the attempt ends: Node 20's AbortSignal.any holds
    // its sources weakly, and an AbortSignal.timeout() nobody else references could be collected
    // before it fired, leaving the attempt hanging until its lease ran out.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException(`sem resposta em ${this.#timeoutMs} ms`, 'TimeoutError')), this.#timeoutMs);
    let response: Response;
    try {
      response = await send.fetch(webhook.url, {
        ...('dispatcher' in send && { dispatcher: send.dispatcher }),
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [SIGNATURE_HEADER]: signWebhookBody(secret, body, t),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([shutdown, timeout.signal]),
      });
    } catch (err) {
      return { ok: false, error: this.#describeFetchError(err, shutdown) };
    } finally {
      clearTimeout(timer);
    }
    // Only the status matters; discarding the body frees the connection for reuse.
    await response.body?.cancel().catch(() => undefined);
    const { status } = response;
    if (status >= 200 && status < 300) return { ok: true, status };
    if (status >= 300 && status < 400) return { ok: false, error: `HTTP ${status} (redirecionamento não é seguido)` };
    return { ok: false, error: `HTTP ${status}` };
  }

  /** undici's fetch through connections that resolve names with the destination check (destinations.ts). */
  #guardedFetch(): Promise<GuardedFetch> {
    this.#guarded ??= import('undici').then(({ Agent, fetch: undiciFetch }) => ({
      fetch: undiciFetch as unknown as typeof fetch,
      dispatcher: new Agent({ connect: { lookup: connectLookup(this.#destinations, this.#lookup) } }),
    }));
    return this.#guarded;
  }

  #describeFetchError(err: unknown, shutdown: AbortSignal): string {
    if (shutdown.aborted) return 'interrompida pelo encerramento do serviço';
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e?.name === 'TimeoutError') return `sem resposta em ${this.#timeoutMs} ms`;
    if (e?.cause?.code === 'EDESTINORECUSADO') return e.cause.message ?? 'destino recusado';
    const cause = e?.cause?.code ?? e?.cause?.message;
    return `falha de conexão: ${cause ?? e?.message ?? String(err)}`;
  }
}
