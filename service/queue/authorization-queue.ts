// The authorization queue: takes the `processando` documents of a document type in order and
// brings each to a verdict, exactly once, whatever crashes in between. The NFC-e (nfce/lane.ts)
// and the NF-e de devolução (nfe/lane.ts) run on it.
//
// One document's way:
// 1. Taken (due, not in flight here). Without a signed XML yet, it is built and signed with the
//    cNF and dhEmi fixed when it was accepted, so its access key is the one the 202 gave.
// 2. The signed XML and the attempt count are COMMITTED (one transaction for the whole batch
//    taken) before anything is sent: the authority never sees a document we could lose.
// 3. If it may already have reached the authority (an earlier attempt was counted, or it was
//    signed before this process started), the authority is CONSULTED first: found → that verdict
//    is recorded; not found → it is sent. So nothing is ever issued twice.
// 4. Sent (authorizeNfe). 100/150 → autorizado; 204 (a duplicate of this very key: an earlier
//    send was authorized and its answer lost) → consulted and that authorization recorded; any
//    other cStat → rejeitado. The verdict, the idempotency key's settlement and the webhook
//    event are one transaction (NfceStore.recordVerdict).
// 5. AuthorityUnavailableError (or anything unexpected): the outcome is unknown, the document
//    stays processando and is retried with capped exponential backoff (consulting first).
//
// A document whose request can no longer be signed (the certificate expired or the CSC was
// removed after it was accepted) never reached the authority: it is rejected here, with
// codigo_status null and the reason in motivo, and its key is freed.
//
// Concurrency: at most `concurrency` documents between taken and answered by the authority
// (default 8, BALCAO_NFCE_CONCURRENCY), refilled in groups so a batch shares its commit. A slot
// is freed when the authority answers, not when the verdict is committed: the queue is a closed
// loop, so every millisecond a slot is held costs throughput (Little's law). Signing runs on a
// worker thread (signer.ts), off the event loop that answers HTTP. The documents in this queue's
// hands are known in memory (`busy`). On SQLite one service process owns its data directory:
// nothing is leased in the database, and after a crash all are due at once. On PostgreSQL,
// where several processes share the database, the lane's `due` leases what it takes to this
// process (nfce/pg-store.ts): no two processes take the same document, and those of a process
// that died are taken by the others once its lease runs out (step 3 then consults first).
//
// The steps above are the same for every NF-e model the service authorizes: AuthorizationQueue
// runs them over a QueueLane, which says where a document type's queued documents are, how one
// is signed and how its verdict is recorded (nfce/lane.ts signs on a worker thread; nfe/lane.ts
// has nothing to sign).

import { setImmediate as yieldToIo } from 'node:timers/promises';
import { FieldError } from '../../fiscal/errors.ts';
import { wrapNfeProc } from '../../fiscal/protocol.ts';
import { AUTHORIZED, AuthorityCertificateError, AuthorityUnavailableError, type NfeVerdict } from '../authority/port.ts';
import type { ServiceDeps } from '../deps.ts';
import { inReadScope } from '../read-scope.ts';
import { authorizingIssuer, type AuthorizingIssuer } from './issuer.ts';
import { systemFault } from '../../base/node/system-faults.ts';

/** `: <what to do>` after a log message when `err` is a fault of the machine (a full disk): the operator reads it. */
const faultSuffix = (err: unknown): string => {
  const fault = systemFault(err);
  return fault ? `: ${fault.message}` : '';
};

/** cStat 204: "Duplicidade de NF-e" (the same key is already authorized). */
const DUPLICATE = '204';

export const CONCURRENCY_ENV = 'BALCAO_NFCE_CONCURRENCY';
export const DEFAULT_CONCURRENCY = 8;
const MAX_CONCURRENCY = 64;

export type QueueLogger = {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export type QueueOptions = {
  deps: Pick<ServiceDeps, 'store' | 'clock' | 'companies' | 'authority'>;
  log: QueueLogger;
  /** Documents in flight at most. */
  concurrency?: number;
  /** Backoff after an unknown outcome: base × 2^(attempts−1), at most `maxMs`, ±20 % jitter. */
  retry?: { baseMs: number; maxMs: number };
  /** How often an idle queue looks for retries that came due. */
  pollMs?: number;
};

export function concurrencyFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[CONCURRENCY_ENV]?.trim();
  if (!text) return DEFAULT_CONCURRENCY;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > MAX_CONCURRENCY) {
    throw new RangeError(`${CONCURRENCY_ENV} inválido ("${text}"): informe um inteiro de 1 a ${MAX_CONCURRENCY}`);
  }
  return n;
}

/** What the queue needs of any queued document. */
export type QueuedDocument = {
  id: string;
  companyId: string;
  chave: string;
  /** The signed XML, once committed. */
  signedXml: string | null;
  /** Sends started (committed before each call). */
  attempts: number;
  createdAt: string;
};

/** How one document type's documents are found, signed and recorded. Every method is one transaction. */
export interface QueueLane<W extends QueuedDocument, S> {
  /** For messages and logs: "NFC-e", "NF-e de devolução". */
  readonly label: string;
  due(now: Date, limit: number, busy: ReadonlySet<string>): Promise<W[]>;
  /**
   * The signed XML to send and the send to commit first (carrying the XML when it was signed
   * now). A FieldError means the document can no longer be signed: it is rejected, unsent.
   */
  prepare(work: W, issuer: AuthorizingIssuer): Promise<{ xml: string; send: S }>;
  beginSends(sends: readonly S[]): Promise<void>;
  postpone(id: string, at: Date, error: string): Promise<void>;
  /** Records the authorization (with its nfeProc), settles the key, queues the webhook event. */
  authorized(work: W, outcome: { verdict: NfeVerdict; nfeProc: string; cancelled: boolean }): Promise<void>;
  /** Records the rejection (codigoStatus null: rejected here, never sent), frees the key. */
  rejected(work: W, outcome: { codigoStatus: string | null; motivo: string }): Promise<void>;
  /** Releases what the lane holds (a signing thread), when the queue stops. */
  close?(): Promise<void>;
}

type Prepared<W, S> = { work: W; issuer: AuthorizingIssuer; xml: string; send: S };

type Answer =
  | { kind: 'authorized'; verdict: NfeVerdict; cancelled: boolean }
  | { kind: 'rejected'; cStat: string; xMotivo: string }
  /** Unavailable, or anything unexpected: the outcome is not known. */
  | { kind: 'unknown'; err: unknown };

export type AuthorizationQueueOptions<W extends QueuedDocument, S> = QueueOptions & { lane: QueueLane<W, S> };

/** Brings the processando documents of one lane to a verdict (see the header). */
export class AuthorizationQueue<W extends QueuedDocument, S> {
  readonly #deps: QueueOptions['deps'];
  readonly #lane: QueueLane<W, S>;
  readonly #log: QueueLogger;
  readonly #concurrency: number;
  readonly #retry: { baseMs: number; maxMs: number };
  readonly #pollMs: number;
  readonly #refill: number;
  /** In this queue's hands, from taken to verdict recorded: never taken twice. */
  readonly #busy = new Set<string>();
  /** Taken and not yet answered by the authority: what `concurrency` limits. */
  #sending = 0;
  #stopped = true;
  #pumping = false;
  /** The pump's current run: stop() waits for it, so the lane is never closed under a batch being taken. */
  #pumped: Promise<void> = Promise.resolve();
  #again = false;
  #scheduled = false;
  #timer: NodeJS.Timeout | undefined;
  /** Documents created before this instant may have been sent by a previous process. */
  #startedAt = '';
  #drained: (() => void) | undefined;

  constructor(options: AuthorizationQueueOptions<W, S>) {
    this.#deps = options.deps;
    this.#lane = options.lane;
    this.#log = options.log;
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.#refill = Math.max(1, Math.floor(this.#concurrency / 2));
    this.#retry = options.retry ?? { baseMs: 500, maxMs: 30_000 };
    this.#pollMs = options.pollMs ?? 250;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#startedAt = new Date().toISOString();
    this.wake();
  }

  /**
   * Takes nothing new and waits (at most `graceMs`) for the documents in flight. One still in
   * flight after that keeps its unknown outcome in the database and is consulted at next start.
   * A batch taken but not yet committed when the stop comes is put back, unsent (see launch).
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pumped;
    if (this.#busy.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => (this.#drained = resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    await this.#lane.close?.();
  }

  /** Something may be due now (a document accepted, one finished): look soon. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.pump();
    });
  }

  private pump(): Promise<void> {
    if (this.#pumping || this.#stopped) return this.#pumped;
    this.#pumped = this.pumpRun();
    return this.#pumped;
  }

  private async pumpRun(): Promise<void> {
    this.#pumping = true;
    clearTimeout(this.#timer);
    try {
      do {
        this.#again = false;
        const free = this.#concurrency - this.#sending;
        // Refill in groups, not slot by slot: a batch costs one commit for its signed XMLs, and
        // single-document batches would pay that commit (an fsync) per document.
        if (free <= 0 || (this.#sending > 0 && free < this.#refill)) break;
        const due = await this.#lane.due(new Date(), free, this.#busy);
        if (due.length === 0 || this.#stopped) break;
        await this.launch(due);
        if (due.length === free) this.#again = true;
      } while (this.#again && !this.#stopped);
    } catch (err) {
      this.#log.error({ err }, `fila da ${this.#lane.label}: falha ao buscar documentos${faultSuffix(err)}`);
    } finally {
      this.#pumping = false;
      if (!this.#stopped) {
        this.#timer = setTimeout(() => void this.pump(), this.#pollMs);
        this.#timer.unref();
      }
    }
  }

  /** Signs what needs signing, commits the batch, then sends each (not awaited). */
  private async launch(batch: W[]): Promise<void> {
    for (const work of batch) this.#busy.add(work.id);
    this.#sending += batch.length;
    // One reading of each company's clock and settings version for the batch (read-scope.ts).
    const outcomes = await inReadScope(() => Promise.allSettled(batch.map((work) => this.prepare(work))));
    if (this.#stopped) {
      // Stopped while signing: nothing of the batch is committed or sent, so nothing reaches the
      // authority after the signal; the next start takes these documents again, as they were.
      for (const work of batch) {
        this.release();
        this.done(work.id);
      }
      return;
    }
    const prepared: Prepared<W, S>[] = [];
    outcomes.forEach((outcome, i) => {
      const work = batch[i]!;
      if (outcome.status === 'fulfilled') return prepared.push(outcome.value);
      this.release();
      void this.fail(work, outcome.reason).finally(() => this.done(work.id));
    });
    try {
      await this.#lane.beginSends(prepared.map((p) => p.send));
    } catch (err) {
      this.#log.error({ err }, `fila da ${this.#lane.label}: falha ao gravar o XML assinado; nada foi enviado${faultSuffix(err)}`);
      for (const p of prepared) {
        this.release();
        this.done(p.work.id);
      }
      return;
    }
    for (const p of prepared) {
      void this.send(p).finally(() => this.done(p.work.id));
      // The simulated authority answers in-process: let HTTP requests in between its verdicts.
      await yieldToIo();
    }
  }

  private async prepare(work: W): Promise<Prepared<W, S>> {
    const now = await this.#deps.clock.now(work.companyId);
    const issuer = await authorizingIssuer(this.#deps, work.companyId, now);
    const { xml, send } = await this.#lane.prepare(work, issuer);
    return { work, issuer, xml, send };
  }

  /** Asks the authority, frees the slot as soon as it answered, then records the answer. */
  private async send(prepared: Prepared<W, S>): Promise<void> {
    let answer: Answer;
    try {
      answer = await this.ask(prepared);
    } catch (err) {
      answer = { kind: 'unknown', err };
    } finally {
      // The next batch is signed while this verdict is being committed.
      this.release();
    }
    const { work, xml } = prepared;
    try {
      switch (answer.kind) {
        case 'authorized':
          await this.#lane.authorized(work, { verdict: answer.verdict, nfeProc: wrapNfeProc(xml, answer.verdict.protNFe), cancelled: answer.cancelled });
          this.#log.info({ documentId: work.id, chave: work.chave, cStat: answer.verdict.cStat }, `${this.#lane.label}: autorizada`);
          return;
        case 'rejected':
          await this.#lane.rejected(work, { codigoStatus: answer.cStat, motivo: answer.xMotivo });
          this.#log.info({ documentId: work.id, chave: work.chave, cStat: answer.cStat }, `${this.#lane.label}: rejeitada`);
          return;
        case 'unknown':
          return await this.retryLater(work, answer.err);
      }
    } catch (err) {
      // Not recorded: still processando, taken again later, consulting first.
      await this.retryLater(work, err);
    }
  }

  private async ask({ work, issuer, xml }: Prepared<W, S>): Promise<Answer> {
    const { authority } = this.#deps;
    const company = issuer.authority;
    const mayHaveReached = work.attempts > 0 || (work.signedXml !== null && work.createdAt < this.#startedAt);
    if (mayHaveReached) {
      const known = await authority.consultNfe(company, work.chave);
      if (known.found) return { kind: 'authorized', verdict: known.verdict, cancelled: known.cancelled };
    }
    const verdict = await authority.authorizeNfe(company, xml);
    if (AUTHORIZED.has(verdict.cStat)) return { kind: 'authorized', verdict, cancelled: false };
    if (verdict.cStat === DUPLICATE) {
      const known = await authority.consultNfe(company, work.chave);
      if (known.found) return { kind: 'authorized', verdict: known.verdict, cancelled: known.cancelled };
    }
    return { kind: 'rejected', cStat: verdict.cStat, xMotivo: verdict.xMotivo };
  }

  /** Preparing failed: a request that cannot be signed any more is rejected; anything else retried. */
  private async fail(work: W, err: unknown): Promise<void> {
    if (!(err instanceof FieldError)) return this.retryLater(work, err);
    this.#log.warn({ documentId: work.id, err }, `${this.#lane.label} rejeitada pelo serviço: não pôde ser assinada`);
    try {
      await this.#lane.rejected(work, { codigoStatus: null, motivo: `Não foi possível assinar a ${this.#lane.label}: ${err.message}` });
    } catch (recordErr) {
      await this.retryLater(work, recordErr);
    }
  }

  private async retryLater(work: W, err: unknown): Promise<void> {
    const attempts = work.attempts + 1;
    const base = Math.min(this.#retry.maxMs, this.#retry.baseMs * 2 ** Math.min(attempts - 1, 30));
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    const unavailable = err instanceof AuthorityUnavailableError;
    const label = this.#lane.label;
    if (unavailable) this.#log.debug({ documentId: work.id, attempts, delayMs: delay }, `${label}: autoridade indisponível, nova tentativa`);
    else if (err instanceof AuthorityCertificateError)
      this.#log.warn({ documentId: work.id, err }, `${label}: certificado recusado pela SEFAZ; nada foi enviado, nova tentativa`);
    else this.#log.error({ documentId: work.id, err }, `${label}: falha inesperada, nova tentativa${faultSuffix(err)}`);
    try {
      await this.#lane.postpone(work.id, new Date(Date.now() + delay), (err as Error)?.message ?? String(err));
    } catch (postponeErr) {
      // Stays due: taken again at the next look, consulting first.
      this.#log.error({ documentId: work.id, err: postponeErr }, `${label}: falha ao adiar a nova tentativa${faultSuffix(postponeErr)}`);
    }
  }

  private release(): void {
    this.#sending -= 1;
    this.wake();
  }

  private done(id: string): void {
    this.#busy.delete(id);
    if (this.#stopped && this.#busy.size === 0) this.#drained?.();
  }
}
