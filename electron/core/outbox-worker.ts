// The submission worker: sends the outbox to the issuance service and records what it learns,
// until every command has a known outcome. The decisions are in outbox-rules.ts; this file
// performs the calls and stores each decision in one transaction with the state it changes.
//
// Scheduling:
// - Commands go out in outbox order (seq). Sends (POST of a receipt, cancellation, void, return) are
//   started in that order, `sendConcurrency` in flight at most (default 2: the next request
//   travels while the service works on the previous one, which nearly doubles the drain of a
//   long queue; 1 gives strictly one at a time). Numbers need no order at the authority; only
//   their uniqueness matters.
// - Polls of receipts the service is processing run alongside, `pollConcurrency` at a time, so
//   a receipt waiting for the authority never holds the queue. Only the oldest `pollWindow`
//   are followed closely (see dispatch); the rest are polled when the window reaches them or
//   when they are pollStaleMs late.
// - A transport failure (refused, reset, timeout, 5xx) pauses the whole queue with capped
//   exponential backoff and jitter; while paused, one command at a time probes the service.
//   The first success resumes full speed, so a queue built up while the service was away
//   drains as fast as the service answers.
// - A 409 or a poll waits only its own entry (next_attempt_at).
// - Every attempt of a command carries the command's idempotency key, stored with it when it
//   was written. Nothing here makes a key.
// - The state before a call is on disk; the result of a call is stored before the next call.
//   A crash of the process repeats at most the call in flight, with the same key. The results
//   are committed without their own fsync (PosStore.relaxedTransaction): a power cut may also
//   repeat the last few calls, again with the same keys, and the service answers them the same.

import type { DevolucaoBody, IssuanceClient, InutilizarBody, NfceDocument, NfeDocument } from './api-client.ts';
import { audit, SYSTEM_ACTOR } from './managers.ts';
import {
  backoffMs,
  decideCancel,
  decideEmit,
  decidePoll,
  decideReturn,
  decideReturnPoll,
  decideVoid,
  DEFAULT_RETRY,
  documentOutcome,
  failureOf,
  returnOutcome,
  type Failure,
  type Result,
  type Retry,
  type RetryPolicy,
} from './outbox-rules.ts';
import type { OutboxRow, PosStore, ReceiptPatch, ReceiptRow, ReturnRow } from './pos-store.ts';
import { iso, type Clock } from './sales.ts';

export type OutboxWorkerOptions = {
  store: PosStore;
  client: IssuanceClient;
  clock: Clock;
  retry?: Partial<RetryPolicy>;
  /** [0, 1); injectable for tests of the schedule. */
  random?: () => number;
  sendConcurrency?: number;
  pollConcurrency?: number;
  /** How many of the oldest documents in processing are followed closely (default 8). */
  pollWindow?: number;
  /** While idle, how often to check the service is reachable (for the online flag). */
  healthIntervalMs?: number;
  onReceiptChanged?: (receiptId: string) => void;
  onReturnChanged?: (returnId: string) => void;
  onStatusChanged?: () => void;
  /**
   * Every exchange with the service, as it ends: null when it got an answer that is not a
   * failure, else the failure (offline contingency counts them: contingency/mode.ts).
   */
  onExchange?: (failure: Failure | null) => void;
};

export type WorkerStatus = { online: boolean | null; lastContactAt: number | null; lastError: string | null };

async function attempt<T>(call: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, failure: failureOf(err) };
  }
}

const isTransport = (f: Failure): boolean => f.kind === 'network' || f.status >= 500;

export class OutboxWorker {
  private readonly store: PosStore;
  private readonly client: IssuanceClient;
  private readonly clock: Clock;
  private readonly policy: RetryPolicy;
  private readonly random: () => number;
  private readonly sendConcurrency: number;
  private readonly pollConcurrency: number;
  private readonly pollWindow: number;
  private readonly healthIntervalMs: number;
  private readonly onReceiptChanged: (receiptId: string) => void;
  private readonly onReturnChanged: (returnId: string) => void;
  private readonly onStatusChanged: () => void;
  private readonly onExchange: (failure: Failure | null) => void;

  private running = false;
  private loopDone: Promise<void> | undefined;
  private readonly inFlight = new Map<number, Promise<void>>();
  private sending = 0;
  private polling = 0;
  private healthCheck: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;

  // Queue-wide backoff after transport failures.
  private transportFailures = 0;
  private pausedUntil = 0;

  private status: WorkerStatus = { online: null, lastContactAt: null, lastError: null };

  constructor(options: OutboxWorkerOptions) {
    this.store = options.store;
    this.client = options.client;
    this.clock = options.clock;
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.random = options.random ?? Math.random;
    this.sendConcurrency = Math.max(1, options.sendConcurrency ?? 2);
    this.pollConcurrency = Math.max(1, options.pollConcurrency ?? 4);
    this.pollWindow = Math.max(this.pollConcurrency, options.pollWindow ?? 8);
    this.healthIntervalMs = options.healthIntervalMs ?? 15_000;
    this.onReceiptChanged = options.onReceiptChanged ?? (() => {});
    this.onReturnChanged = options.onReturnChanged ?? (() => {});
    this.onStatusChanged = options.onStatusChanged ?? (() => {});
    this.onExchange = options.onExchange ?? (() => {});
  }

  get state(): WorkerStatus {
    return { ...this.status };
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Stops taking new work and waits for the calls in flight (each has its own timeout). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight.values(), this.healthCheck]);
  }

  /** Something new is due (a finished sale, a cancellation): look now instead of at the next timer. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let waitMs: number;
      try {
        waitMs = this.dispatch();
      } catch (err) {
        // A database error (disk full, locked too long): keep the worker alive and try again.
        this.setStatus({ lastError: `Erro interno da fila: ${(err as Error).message}` });
        waitMs = 1000;
      }
      if (!this.running) break;
      if (this.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, Math.min(waitMs, 60_000)));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** Starts what is due; returns how long to sleep before looking again (woken earlier on any completion). */
  private dispatch(): number {
    const now = this.clock();
    if (now < this.pausedUntil) return this.pausedUntil - now;
    // While the service is failing, one command at a time probes it.
    const probing = this.transportFailures > 0;
    const slots = (busy: number, max: number) => (probing ? (this.inFlight.size ? 0 : 1) : max - busy);
    const wakeAt: number[] = [];

    // Sends (new receipts, retries, cancellations, voids), in outbox order.
    let free = slots(this.sending, this.sendConcurrency);
    if (free > 0) {
      for (const entry of this.store.dueOutbox('pending', now, free + this.inFlight.size)) {
        if (free <= 0) break;
        if (this.inFlight.has(entry.seq)) continue;
        this.launch(entry, false);
        free--;
      }
    }
    const nextSend = this.store.nextDueAt('pending');
    if (nextSend !== undefined) wakeAt.push(nextSend);

    // Polls. The service settles documents roughly in the order it accepted them, so only the
    // oldest `pollWindow` are followed closely; when one settles the window moves on and the
    // next, already due, is polled at once. While a long queue drains that is about one poll
    // per receipt instead of one every backoff step for every receipt (each poll costs the
    // service the time it needs to sign), and during an authority outage the load stays flat.
    // A document outside the window is polled anyway once it is pollStaleMs late.
    free = slots(this.polling, this.pollConcurrency);
    const window = this.store.oldestOutbox('sent', this.pollWindow);
    const inWindow = new Set(window.map((e) => e.seq));
    for (const entry of window) {
      if (this.inFlight.has(entry.seq)) continue;
      if (entry.next_attempt_at > now) wakeAt.push(entry.next_attempt_at);
      else if (free > 0) {
        this.launch(entry, true);
        free--;
      }
    }
    if (free > 0) {
      for (const entry of this.store.dueOutbox('sent', now - this.policy.pollStaleMs, free + inWindow.size + this.inFlight.size)) {
        if (free <= 0) break;
        if (inWindow.has(entry.seq) || this.inFlight.has(entry.seq)) continue;
        this.launch(entry, true);
        free--;
      }
    }
    const nextPoll = this.store.nextDueAt('sent');
    if (nextPoll !== undefined) wakeAt.push(nextPoll + this.policy.pollStaleMs);

    if (this.inFlight.size === 0 && nextSend === undefined && nextPoll === undefined) this.maybeCheckHealth(now);
    // Anything due already is in flight or waiting for a free slot: a completion wakes the loop.
    const next = Math.min(...wakeAt.filter((t) => t > now));
    return Math.min(Number.isFinite(next) ? next - now : this.healthIntervalMs, this.healthIntervalMs);
  }

  private launch(entry: OutboxRow, isPoll: boolean): void {
    if (isPoll) this.polling++;
    else this.sending++;
    const run = (async () => {
      try {
        await this.process(entry);
      } catch (err) {
        // A bug or a database failure while recording: never spin on it.
        const now = this.clock();
        try {
          this.store.updateOutbox(
            entry.seq,
            { attempts: entry.attempts + 1, last_error: `Erro interno: ${(err as Error).message}`, next_attempt_at: now + this.policy.capMs },
            iso(now),
          );
        } catch {
          // the database itself is failing; the loop reports it
        }
        this.setStatus({ lastError: `Erro interno da fila: ${(err as Error).message}` });
      } finally {
        if (isPoll) this.polling--;
        else this.sending--;
        this.inFlight.delete(entry.seq);
        this.wake();
      }
    })();
    this.inFlight.set(entry.seq, run);
  }

  /** While idle, refresh the online flag now and then (nothing else would tell the screen). */
  private maybeCheckHealth(now: number): void {
    if (this.healthCheck || !this.running) return;
    const last = this.status.lastContactAt;
    if (this.status.online !== null && last !== null && now - last < this.healthIntervalMs) return;
    this.healthCheck = (async () => {
      const r = await attempt(() => this.client.health());
      if (r.ok) this.setStatus({ online: r.value, lastContactAt: this.clock(), ...(r.value && { lastError: null }) });
      else this.setStatus({ online: false, lastContactAt: this.clock(), lastError: r.failure.message });
      this.onExchange(r.ok ? (r.value ? null : { kind: 'http', status: 503, code: 'healthz', message: 'Serviço de emissão respondeu com falha', details: [] }) : r.failure);
    })().finally(() => (this.healthCheck = undefined));
  }

  private setStatus(patch: Partial<WorkerStatus>): void {
    const before = this.status;
    this.status = { ...before, ...patch };
    if (before.online !== this.status.online || before.lastError !== this.status.lastError) this.onStatusChanged();
  }

  /** Bookkeeping of every exchange: online flag, last error, queue-wide backoff. */
  private noteExchange(result: Result<unknown>): void {
    const now = this.clock();
    this.onExchange(result.ok ? null : result.failure);
    if (result.ok || !isTransport(result.failure)) {
      this.transportFailures = 0;
      this.pausedUntil = 0;
      this.setStatus({ online: true, lastContactAt: now, lastError: result.ok ? null : result.failure.message });
      return;
    }
    this.transportFailures++;
    this.pausedUntil = now + backoffMs(this.transportFailures, this.policy.baseMs, this.policy.capMs, this.random);
    this.setStatus({ online: result.failure.kind === 'http', lastContactAt: now, lastError: result.failure.message });
  }

  private retryLater(entry: OutboxRow, d: Retry, now: number): void {
    if (d.transport && d.inMs === undefined && !this.pausedUntil) {
      // A retryable 4xx without Retry-After: pace it with the queue's backoff too.
      this.transportFailures++;
      this.pausedUntil = now + backoffMs(this.transportFailures, this.policy.baseMs, this.policy.capMs, this.random);
    }
    this.store.updateOutbox(
      entry.seq,
      { attempts: entry.attempts + 1, last_error: d.note, next_attempt_at: d.inMs === undefined ? now : now + d.inMs },
      iso(now),
    );
  }

  /** Applies `fn` only if the entry is still as it was when the call started (not superseded). */
  private record(entry: OutboxRow, fn: (receipt: ReceiptRow, now: number) => void): void {
    const now = this.clock();
    const changed = this.store.relaxedTransaction(() => {
      const current = this.store.outboxEntry(entry.seq);
      if (!current || current.state !== entry.state || current.payload !== entry.payload || current.attempts !== entry.attempts) return false;
      fn(this.store.receipt(entry.receipt_id)!, now);
      return true;
    });
    if (changed) this.onReceiptChanged(entry.receipt_id);
  }

  private process(entry: OutboxRow): Promise<void> {
    switch (entry.kind) {
      case 'emit':
        return entry.state === 'sent' ? this.poll(entry) : this.send(entry);
      case 'cancel':
        return this.cancel(entry);
      case 'void':
        return this.voidNumber(entry);
      case 'return':
        return entry.state === 'sent' ? this.pollReturn(entry) : this.sendReturn(entry);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Emission

  private applyDocument(entry: OutboxRow, receipt: ReceiptRow, doc: NfceDocument, now: number): void {
    const outcome = documentOutcome(doc, receipt.tp_emis === 9);
    const patch: ReceiptPatch = { ...outcome.receipt };
    if ((patch.state === 'authorized' || patch.state === 'cancelled') && !receipt.authorized_seen_at) patch.authorized_seen_at = iso(now);
    this.store.updateReceipt(receipt.id, patch, iso(now));
    if (outcome.entry === 'sent') {
      this.store.updateOutbox(
        entry.seq,
        { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + this.policy.pollFirstMs },
        iso(now),
      );
    } else {
      this.store.updateOutbox(
        entry.seq,
        {
          state: outcome.entry,
          last_error: outcome.entry === 'blocked' ? (patch.attention ?? null) : null,
          ...(outcome.entry === 'done' && { completed_at: iso(now) }),
        },
        iso(now),
      );
    }
  }

  private async send(entry: OutboxRow): Promise<void> {
    const result = await attempt(() => this.client.createNfce(JSON.parse(entry.payload), entry.idempotency_key));
    this.noteExchange(result);
    const d = decideEmit(result, this.policy, this.random);
    this.record(entry, (receipt, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'accepted':
          this.store.updateReceipt(receipt.id, { state: 'processing', service_id: d.serviceId, chave: d.chave, attention: null }, at);
          this.store.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + d.pollInMs }, at);
          return;
        case 'settled':
          this.applyDocument(entry, receipt, d.document, now);
          return;
        case 'poll':
          this.store.updateReceipt(receipt.id, { state: 'processing', service_id: d.serviceId }, at);
          this.store.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: d.note, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'attention':
          this.store.updateReceipt(receipt.id, { state: 'needs_attention', attention: d.message }, at);
          this.store.updateOutbox(entry.seq, { state: 'blocked', attempts: entry.attempts + 1, last_error: d.message }, at);
          return;
      }
    });
  }

  private async poll(entry: OutboxRow): Promise<void> {
    const serviceId = this.store.receipt(entry.receipt_id)?.service_id;
    if (!serviceId) {
      // Sent without an id cannot happen through this worker; recover by sending again (same key).
      this.record(entry, (_r, now) => this.store.updateOutbox(entry.seq, { state: 'pending', next_attempt_at: now }, iso(now)));
      return;
    }
    const result = await attempt(() => this.client.getNfce(serviceId));
    this.noteExchange(result);
    const d = decidePoll(result, entry.attempts, this.policy, this.random);
    this.record(entry, (receipt, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'final':
          this.applyDocument(entry, receipt, d.document, now);
          return;
        case 'poll':
          this.store.updateOutbox(entry.seq, { attempts: entry.attempts + 1, last_error: null, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'resend':
          this.store.updateReceipt(receipt.id, { state: 'pending' }, at);
          this.store.updateOutbox(entry.seq, { state: 'pending', attempts: 0, last_error: d.note, next_attempt_at: now }, at);
          return;
        case 'attention':
          this.store.updateReceipt(receipt.id, { state: 'needs_attention', attention: d.message }, at);
          this.store.updateOutbox(entry.seq, { state: 'blocked', attempts: entry.attempts + 1, last_error: d.message }, at);
          return;
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Cancellation

  private async cancel(entry: OutboxRow): Promise<void> {
    const receipt = this.store.receipt(entry.receipt_id)!;
    const serviceId = receipt.service_id;
    if (!serviceId) {
      this.record(entry, (r, now) => this.refuseCancel(entry, r, now, 'NFC-e sem identificação no serviço: não é possível cancelar', false));
      return;
    }
    const result = await attempt(() => this.client.cancelNfce(serviceId, JSON.parse(entry.payload), entry.idempotency_key));
    this.noteExchange(result);
    let d = decideCancel(result, this.policy, this.random);
    let verified: NfceDocument | undefined;
    if (d.action === 'verify') {
      // "Not cancellable in its state": if it is already cancelled, an earlier attempt of ours
      // got through and its answer was lost. Look before calling it a refusal.
      const look = await attempt(() => this.client.getNfce(serviceId));
      this.noteExchange(look);
      if (!look.ok) d = isTransport(look.failure) ? { action: 'retry', transport: true, note: look.failure.message } : { action: 'refused', message: d.message };
      else if (look.value.status === 'cancelado') verified = look.value;
      else d = { action: 'refused', message: d.message };
    }
    this.record(entry, (r, now) => {
      const at = iso(now);
      const doc = verified ?? (d.action === 'cancelled' ? d.document : undefined);
      if (doc) {
        this.store.updateReceipt(r.id, { ...documentOutcome(doc).receipt, state: 'cancelled', cancelado_em: doc.cancelado_em ?? at }, at);
        this.store.updateOutbox(entry.seq, { state: 'done', attempts: entry.attempts + 1, last_error: null, completed_at: at }, at);
        audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'cancelamento_confirmado', receiptId: r.id, details: { cancelado_em: doc.cancelado_em } });
        return;
      }
      if (d.action === 'retry') return this.retryLater(entry, d, now);
      if (d.action === 'refused') return this.refuseCancel(entry, r, now, d.message, d.remedy === 'devolucao');
    });
  }

  private refuseCancel(entry: OutboxRow, receipt: ReceiptRow, now: number, message: string, offerReturn: boolean): void {
    const at = iso(now);
    const attention = offerReturn ? `${message} Para desfazer a venda, faça a devolução (NF-e de devolução).` : message;
    this.store.updateReceipt(receipt.id, { state: 'authorized', attention }, at);
    this.store.updateOutbox(entry.seq, { state: 'failed', attempts: entry.attempts + 1, last_error: message, completed_at: at }, at);
    audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'cancelamento_recusado', receiptId: receipt.id, reason: message });
  }

  // -------------------------------------------------------------------------------------------
  // Voiding an abandoned number

  private async voidNumber(entry: OutboxRow): Promise<void> {
    const body = JSON.parse(entry.payload) as InutilizarBody;
    const result = await attempt(() => this.client.inutilizarNfce(body, entry.idempotency_key));
    this.noteExchange(result);
    const d = decideVoid(result, entry.attempts, this.policy, this.random);
    this.record(entry, (r, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'voided':
          this.store.updateReceipt(
            r.id,
            {
              state: 'voided',
              attention: null,
              ...(d.result && { protocolo: d.result.protocolo, codigo_status: d.result.codigo_status, motivo: d.result.motivo }),
            },
            at,
          );
          this.store.updateOutbox(entry.seq, { state: 'done', attempts: entry.attempts + 1, last_error: null, completed_at: at }, at);
          {
            // The sale's own emission is over for good: its number is void.
            const emit = this.store.liveOutbox(r.id, 'emit');
            if (emit) this.store.updateOutbox(emit.seq, { state: 'failed', last_error: 'número inutilizado', completed_at: at }, at);
          }
          audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'inutilizacao_confirmada', receiptId: r.id, details: d.result });
          return;
        case 'refused': {
          // Back to where it was: the sale still waits for a correction or another attempt.
          this.store.updateReceipt(r.id, { state: r.codigo_status ? 'rejected' : 'needs_attention', attention: d.message }, at);
          this.store.updateOutbox(entry.seq, { state: 'failed', attempts: entry.attempts + 1, last_error: d.message, completed_at: at }, at);
          // The emit command is still blocked, waiting for the operator as before.
          audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'inutilizacao_recusada', receiptId: r.id, reason: d.message });
          return;
        }
        case 'retry':
          this.retryLater(entry, d, now);
          return;
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Returns (NF-e de devolução): the entry's key is the return's (returns.idempotency_key)

  /** Like `record`, for the return the entry carries. */
  private recordReturn(entry: OutboxRow, fn: (ret: ReturnRow, now: number) => void): void {
    const now = this.clock();
    let returnId: string | undefined;
    const changed = this.store.relaxedTransaction(() => {
      const current = this.store.outboxEntry(entry.seq);
      if (!current || current.state !== entry.state || current.payload !== entry.payload || current.attempts !== entry.attempts) return false;
      const ret = this.store.returnByKey(entry.idempotency_key);
      if (!ret) return false;
      returnId = ret.id;
      fn(ret, now);
      return true;
    });
    if (changed && returnId) this.onReturnChanged(returnId);
  }

  private applyReturn(entry: OutboxRow, ret: ReturnRow, doc: NfeDocument, now: number): void {
    const at = iso(now);
    const outcome = returnOutcome(doc);
    this.store.updateReturn(ret.id, outcome.patch, at);
    if (!outcome.final) {
      this.store.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + this.policy.pollFirstMs }, at);
      return;
    }
    this.store.updateOutbox(entry.seq, { state: 'done', last_error: null, completed_at: at }, at);
    const authorized = outcome.patch.state === 'authorized';
    audit(this.store, () => now, {
      actor: SYSTEM_ACTOR,
      action: authorized ? 'devolucao_autorizada' : 'devolucao_rejeitada',
      receiptId: ret.receipt_id,
      reason: authorized ? null : (outcome.patch.attention ?? null),
      details: { devolucao: ret.id, serie: doc.serie, nNF: doc.numero, chave: doc.chave, codigo_status: doc.status },
    });
  }

  private refuseReturn(entry: OutboxRow, ret: ReturnRow, now: number, message: string): void {
    const at = iso(now);
    this.store.updateReturn(ret.id, { state: 'needs_attention', attention: `${message}. Nada foi devolvido por ela.` }, at);
    this.store.updateOutbox(entry.seq, { state: 'failed', attempts: entry.attempts + 1, last_error: message, completed_at: at }, at);
    audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'devolucao_recusada', receiptId: ret.receipt_id, reason: message, details: { devolucao: ret.id } });
  }

  private async sendReturn(entry: OutboxRow): Promise<void> {
    const result = await attempt(() => this.client.createDevolucao(JSON.parse(entry.payload) as DevolucaoBody, entry.idempotency_key));
    this.noteExchange(result);
    const d = decideReturn(result, this.policy, this.random);
    this.recordReturn(entry, (ret, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'accepted':
          this.store.updateReturn(
            ret.id,
            { state: 'processing', service_id: d.accepted.id, serie: d.accepted.serie, nnf: d.accepted.numero, chave: d.accepted.chave, attention: null },
            at,
          );
          this.store.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + d.pollInMs }, at);
          return;
        case 'settled':
          this.applyReturn(entry, ret, d.document, now);
          return;
        case 'poll':
          this.store.updateReturn(ret.id, { state: 'processing', service_id: d.serviceId }, at);
          this.store.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: d.note, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'refused':
          this.refuseReturn(entry, ret, now, d.message);
          return;
      }
    });
  }

  private async pollReturn(entry: OutboxRow): Promise<void> {
    const serviceId = this.store.returnByKey(entry.idempotency_key)?.service_id;
    if (!serviceId) {
      this.recordReturn(entry, (_r, now) => this.store.updateOutbox(entry.seq, { state: 'pending', next_attempt_at: now }, iso(now)));
      return;
    }
    const result = await attempt(() => this.client.getNfe(serviceId));
    this.noteExchange(result);
    const d = decideReturnPoll(result, entry.attempts, this.policy, this.random);
    this.recordReturn(entry, (ret, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'final':
          this.applyReturn(entry, ret, d.document, now);
          return;
        case 'poll':
          this.store.updateOutbox(entry.seq, { attempts: entry.attempts + 1, last_error: null, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'resend':
          this.store.updateReturn(ret.id, { state: 'pending' }, at);
          this.store.updateOutbox(entry.seq, { state: 'pending', attempts: 0, last_error: d.note, next_attempt_at: now }, at);
          return;
        case 'refused':
          this.refuseReturn(entry, ret, now, d.message);
          return;
      }
    });
  }
}
