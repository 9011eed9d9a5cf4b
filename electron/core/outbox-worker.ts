// The submission worker: sends the outbox to the issuance service and records what it learns,
// until every command has a known outcome. The decisions are in outbox-rules.ts; this file
// performs the calls and stores each decision in one transaction with the state it changes.
// Receipts and returns are issued the same way (POST, then GET until the verdict), once, here;
// what differs between them is their lane (outbox-lanes.ts).
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

import {
  authoritySituationOf,
  type AuthoritySituation,
  type IssuanceClient,
  type InutilizarBody,
  type NfceAccepted,
  type NfceDocument,
  type NfeAccepted,
  type NfeDocument,
} from './api-client.ts';
import { settleRefund } from './cash-session.ts';
import { audit, SYSTEM_ACTOR } from './managers.ts';
import { receiptLane, returnLane, type DocumentLane, type LaneRow } from './outbox-lanes.ts';
import { transientForPeople } from './service-messages.ts';
import { backoffMs, decideCancel, decideVoid, DEFAULT_RETRY, documentOutcome, type Retry, type RetryPolicy } from './outbox-rules.ts';
import { failureOf, type Failure, type Result } from './failures.ts';
import type { PosStore } from './pos-store.ts';
import type { OutboxRow } from './store/outbox.ts';
import type { ReceiptRow } from './store/receipts.ts';
import type { ReturnRow } from './store/returns.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { WakeableLoop } from './wakeable-loop.ts';
import { systemFault } from '../../base/node/system-faults.ts';

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
  /** How old the service's word on the authority may be when a receipt is first sent online (AUTHORITY_NEWS_FRESH_MS). */
  authorityNewsMaxAgeMs?: number;
  onReceiptChanged?: (receiptId: string) => void;
  onReturnChanged?: (returnId: string) => void;
  onStatusChanged?: () => void;
  /**
   * Every exchange with the service, as it ends: null when it got an answer that is not a
   * failure, else the failure (offline contingency counts them: contingency/mode.ts).
   */
  onExchange?: (failure: Failure | null) => void;
  /** What the service said of the tax authority, when an answer said it (before onExchange). */
  onAuthority?: (situation: AuthoritySituation) => void;
  /** The authority said a receipt's number is another NFC-e's; the receipt took the next one (numbering.ts). */
  onNumberTaken?: () => void;
};

export type WorkerStatus = {
  online: boolean | null;
  lastContactAt: number | null;
  lastError: string | null;
  /** The service's warnings for the company, in words (GET /healthz): kept until the next answer. */
  notices: string[];
};

/** How old the service's word on the tax authority may be when a receipt is first sent online. */
export const AUTHORITY_NEWS_FRESH_MS = 5_000;

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
  private readonly authorityNewsMaxAgeMs: number;
  private readonly receipts: DocumentLane<ReceiptRow, NfceAccepted, NfceDocument>;
  private readonly returns: DocumentLane<ReturnRow, NfeAccepted, NfeDocument>;
  private readonly onStatusChanged: () => void;
  private readonly onExchange: (failure: Failure | null) => void;
  private readonly onAuthority: (situation: AuthoritySituation) => void;
  private readonly onNumberTaken: () => void;

  private readonly loop: WakeableLoop;
  private readonly inFlight = new Map<number, Promise<void>>();
  private sending = 0;
  private polling = 0;
  private healthCheck: { generation: number; done: Promise<void> } | undefined;
  /**
   * Bumped when the service's address or token changes: answers (and silences) of calls made
   * before then are about the old service and must not colour what is known of the new one.
   */
  private generation = 0;
  /** When the service last said (or was asked) what it knows of the authority; null: never. */
  private authorityAskedAt: number | null = null;
  /** Outbox entries handed to the service by this process, and when this process began. */
  private readonly launched = new Set<number>();
  private readonly startedAt: string;

  // Queue-wide backoff after transport failures.
  private transportFailures = 0;
  private pausedUntil = 0;

  private status: WorkerStatus = { online: null, lastContactAt: null, lastError: null, notices: [] };

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
    this.authorityNewsMaxAgeMs = options.authorityNewsMaxAgeMs ?? AUTHORITY_NEWS_FRESH_MS;
    this.startedAt = iso(this.clock());
    this.receipts = receiptLane({ store: this.store, client: this.client, clock: this.clock, onChanged: options.onReceiptChanged ?? (() => {}) });
    this.onNumberTaken = options.onNumberTaken ?? (() => {});
    this.returns = returnLane({ store: this.store, client: this.client, onChanged: options.onReturnChanged ?? (() => {}) });
    this.onStatusChanged = options.onStatusChanged ?? (() => {});
    this.onExchange = options.onExchange ?? (() => {});
    this.onAuthority = options.onAuthority ?? (() => {});
    this.loop = new WakeableLoop(() => {
      try {
        const next = this.dispatch();
        if (this.machineFault !== null) {
          this.machineFault = null;
          this.onStatusChanged();
        }
        return next;
      } catch (err) {
        // A database error (disk full, locked too long): keep the worker alive and try again.
        this.setStatus({ lastError: this.internalError(err) });
        return 1000;
      }
    });
  }

  /**
   * The last fault of this computer the worker met (a full disk, a failing one), in words, until
   * the queue works again: the status bar shows it (Terminal's `alerts`) whether or not the
   * service answers.
   */
  machineFault: string | null = null;

  /** What the status bar says of a failure of ours: a fault of the machine in words (a full disk), else the error. */
  private internalError(err: unknown): string {
    const fault = systemFault(err, { path: this.store.db.name });
    if (fault) this.machineFault = fault.message;
    return fault?.message ?? `Erro interno da fila: ${(err as Error).message}`;
  }

  get state(): WorkerStatus {
    return { ...this.status };
  }

  get isRunning(): boolean {
    return this.loop.running;
  }

  start(): void {
    this.loop.start();
  }

  /** Stops taking new work and waits for the calls in flight (each has its own timeout). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight.values(), this.healthCheck?.done]);
  }

  /**
   * The manager (or `balcao start`) pointed the terminal at another address or token: whatever
   * was learned of the old one (offline, its backoff) is forgotten and the new one is probed at
   * once, instead of showing the old one's state until the next health check.
   */
  serviceChanged(): void {
    this.generation++;
    this.authorityAskedAt = null;
    this.transportFailures = 0;
    this.pausedUntil = 0;
    this.setStatus({ online: null, lastContactAt: null, lastError: null, notices: [] });
    this.loop.wake();
  }

  /**
   * Whether the receipt's NFC-e certainly never reached the service: its emit entry was written
   * after this process began (no earlier process could have sent it) and this process never
   * handed it to the service. A crash between a send and its record leaves no such certainty,
   * which is why the entry's attempt count alone would not do.
   */
  neverSent(receiptId: string): boolean {
    const entry = this.store.outbox.liveOutbox(receiptId, 'emit');
    return !!entry && entry.state === 'pending' && entry.attempts === 0 && entry.created_at >= this.startedAt && !this.launched.has(entry.seq);
  }

  /** Something new is due (a finished sale, a cancellation): look now instead of at the next timer. */
  wake(): void {
    this.loop.wake();
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
      for (const entry of this.store.outbox.dueOutbox('pending', now, free + this.inFlight.size)) {
        if (free <= 0) break;
        if (this.inFlight.has(entry.seq)) continue;
        if (this.firstOnlineSend(entry) && !this.authorityNewsFresh(now)) continue; // held until the service says
        this.launch(entry, false);
        free--;
      }
    }
    const nextSend = this.store.outbox.nextDueAt('pending');
    if (nextSend !== undefined) wakeAt.push(nextSend);

    // Polls. The service settles documents roughly in the order it accepted them, so only the
    // oldest `pollWindow` are followed closely; when one settles the window moves on and the
    // next, already due, is polled at once. While a long queue drains that is about one poll
    // per receipt instead of one every backoff step for every receipt (each poll costs the
    // service the time it needs to sign), and during an authority outage the load stays flat.
    // A document outside the window is polled anyway once it is pollStaleMs late.
    free = slots(this.polling, this.pollConcurrency);
    const window = this.store.outbox.oldestOutbox('sent', this.pollWindow);
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
      for (const entry of this.store.outbox.dueOutbox('sent', now - this.policy.pollStaleMs, free + inWindow.size + this.inFlight.size)) {
        if (free <= 0) break;
        if (inWindow.has(entry.seq) || this.inFlight.has(entry.seq)) continue;
        this.launch(entry, true);
        free--;
      }
    }
    const nextPoll = this.store.outbox.nextDueAt('sent');
    if (nextPoll !== undefined) wakeAt.push(nextPoll + this.policy.pollStaleMs);

    if (this.inFlight.size === 0 && nextSend === undefined && nextPoll === undefined) this.maybeCheckHealth(now);
    // Anything due already is in flight or waiting for a free slot: a completion wakes the loop.
    const next = Math.min(...wakeAt.filter((t) => t > now));
    return Math.min(Number.isFinite(next) ? next - now : this.healthIntervalMs, this.healthIntervalMs);
  }

  private launch(entry: OutboxRow, isPoll: boolean): void {
    this.launched.add(entry.seq);
    if (isPoll) this.polling++;
    else this.sending++;
    const run = (async () => {
      try {
        await this.process(entry);
      } catch (err) {
        // A bug or a database failure while recording: never spin on it.
        const now = this.clock();
        try {
          this.store.outbox.updateOutbox(
            entry.seq,
            { attempts: entry.attempts + 1, last_error: this.internalError(err), next_attempt_at: now + this.policy.capMs },
            iso(now),
          );
        } catch {
          // the database itself is failing; the loop reports it
        }
        this.setStatus({ lastError: this.internalError(err) });
      } finally {
        if (isPoll) this.polling--;
        else this.sending--;
        this.inFlight.delete(entry.seq);
        this.wake();
      }
    })();
    this.inFlight.set(entry.seq, run);
  }

  /**
   * A receipt's NFC-e about to be sent online for the first time. Before it goes, the terminal
   * wants to have heard lately what the service knows of the tax authority: were it down, the
   * sale is to be issued offline (contingency/mode.ts), and an online attempt would only leave
   * an original to cancel by substitution later. Contingency receipts (an XML issued offline)
   * and retries are never held.
   */
  private firstOnlineSend(entry: OutboxRow): boolean {
    return entry.kind === 'emit' && entry.attempts === 0 && this.store.receipts.receipt(entry.receipt_id)?.tp_emis === 1;
  }

  /**
   * Whether the service was asked (or told us unasked) about the authority within
   * `authorityNewsMaxAgeMs`; when not, asks now (a health check) and says no until it answers,
   * or fails: a failed check also counts, so a service that does not answer is not asked in a
   * loop (its silence is the worker's business, and the sends then find it).
   */
  private authorityNewsFresh(now: number): boolean {
    if (this.authorityAskedAt !== null && now - this.authorityAskedAt < this.authorityNewsMaxAgeMs) return true;
    this.maybeCheckHealth(now, true);
    return false;
  }

  /** While idle, refresh the online flag now and then (nothing else would tell the screen); `force`: now. */
  private maybeCheckHealth(now: number, force = false): void {
    if (this.healthCheck?.generation === this.generation || !this.loop.running) return;
    const last = this.status.lastContactAt;
    if (!force && this.status.online !== null && last !== null && now - last < this.healthIntervalMs) return;
    const generation = this.generation;
    const check = { generation, done: Promise.resolve() };
    check.done = (async () => {
      const r = await attempt(() => this.client.health());
      if (generation !== this.generation) return; // the old address's answer
      this.authorityAskedAt = this.clock();
      if (r.ok && r.value.autoridade) this.onAuthority(r.value.autoridade);
      if (r.ok) this.setStatus({ online: r.value.ok, lastContactAt: this.clock(), ...(r.value.ok && { lastError: null, notices: r.value.avisos }) });
      else this.setStatus({ online: false, lastContactAt: this.clock(), lastError: transientForPeople(r.failure) });
      this.onExchange(
        r.ok ? (r.value.ok ? null : { kind: 'http', status: 503, code: 'healthz', message: 'Serviço de emissão respondeu com falha', details: [] }) : r.failure,
      );
    })().finally(() => {
      if (this.healthCheck === check) this.healthCheck = undefined;
      this.wake();
    });
    this.healthCheck = check;
  }

  private setStatus(patch: Partial<WorkerStatus>): void {
    const before = this.status;
    this.status = { ...before, ...patch };
    const noticesChanged = before.notices.join('\n') !== this.status.notices.join('\n');
    if (before.online !== this.status.online || before.lastError !== this.status.lastError || noticesChanged) this.onStatusChanged();
  }

  /**
   * Bookkeeping of every exchange: online flag, last error, queue-wide backoff. `generation`:
   * the one the call was made in; an exchange with a service the terminal has left says nothing.
   */
  private noteExchange(result: Result<unknown>, generation: number): void {
    if (generation !== this.generation) return;
    // What the service says of the authority first: the exchange's own outcome is judged with it.
    const authority = result.ok ? authoritySituationOf(result.value) : undefined;
    if (authority) {
      this.authorityAskedAt = this.clock();
      this.onAuthority(authority);
    }
    const now = this.clock();
    this.onExchange(result.ok ? null : result.failure);
    if (result.ok || !isTransport(result.failure)) {
      this.transportFailures = 0;
      this.pausedUntil = 0;
      this.setStatus({ online: true, lastContactAt: now, lastError: result.ok ? null : transientForPeople(result.failure) });
      return;
    }
    this.transportFailures++;
    this.pausedUntil = now + backoffMs(this.transportFailures, this.policy.baseMs, this.policy.capMs, this.random);
    this.setStatus({ online: result.failure.kind === 'http', lastContactAt: now, lastError: transientForPeople(result.failure) });
  }

  private retryLater(entry: OutboxRow, d: Retry, now: number): void {
    if (d.transport && d.inMs === undefined && !this.pausedUntil) {
      // A retryable 4xx without Retry-After: pace it with the queue's backoff too.
      this.transportFailures++;
      this.pausedUntil = now + backoffMs(this.transportFailures, this.policy.baseMs, this.policy.capMs, this.random);
    }
    this.store.outbox.updateOutbox(
      entry.seq,
      { attempts: entry.attempts + 1, last_error: d.note, next_attempt_at: d.inMs === undefined ? now : now + d.inMs },
      iso(now),
    );
  }

  /**
   * Applies `fn` to the entry's row only if the entry is still as it was when the call started
   * (not superseded), in one transaction with what `fn` writes.
   */
  private record<Row extends LaneRow>(
    entry: OutboxRow,
    lane: Pick<DocumentLane<Row, unknown, unknown>, 'row' | 'changed'>,
    fn: (row: Row, now: number) => void,
  ): void {
    const now = this.clock();
    let changed: Row | undefined;
    this.store.relaxedTransaction(() => {
      const current = this.store.outbox.outboxEntry(entry.seq);
      if (!current || current.state !== entry.state || current.payload !== entry.payload || current.attempts !== entry.attempts) return;
      const row = lane.row(entry);
      // The entry's row is written with it and never deleted: its absence is a broken database,
      // and the error parks the entry (launch) instead of retrying it in a tight loop.
      if (!row) throw new Error(`a entrada ${entry.seq} da fila não tem o documento ${entry.kind === 'return' ? 'de devolução' : 'da venda'}`);
      fn(row, now);
      changed = row;
    });
    if (changed) lane.changed(changed);
  }

  private process(entry: OutboxRow): Promise<void> {
    switch (entry.kind) {
      case 'emit':
        return entry.state === 'sent' ? this.follow(this.receipts, entry) : this.submit(this.receipts, entry);
      case 'return':
        return entry.state === 'sent' ? this.follow(this.returns, entry) : this.submit(this.returns, entry);
      case 'cancel':
        return this.cancel(entry);
      case 'void':
        return this.voidNumber(entry);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Issuance (a receipt's NFC-e, a return's NF-e): POST, then GET until the verdict

  /** Records a document the service returned; while it is processing, the entry follows it. */
  private settle<Row extends LaneRow, A, D>(lane: DocumentLane<Row, A, D>, entry: OutboxRow, row: Row, document: D, now: number): void {
    const at = iso(now);
    const settled = lane.settle(row, document, now);
    switch (settled.entry) {
      case 'sent':
        this.store.outbox.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + this.policy.pollFirstMs }, at);
        return;
      case 'done':
        this.store.outbox.updateOutbox(entry.seq, { state: 'done', last_error: null, completed_at: at }, at);
        return;
      case 'blocked':
        this.store.outbox.updateOutbox(entry.seq, { state: 'blocked', last_error: settled.note }, at);
        return;
      case 'renumbered':
        // The old attempt is over; the sale goes out again under its new number and key.
        this.store.outbox.updateOutbox(entry.seq, { state: 'failed', last_error: settled.next.note, completed_at: at }, at);
        this.store.outbox.insertOutbox({
          kind: 'emit',
          receipt_id: entry.receipt_id,
          idempotency_key: settled.next.idempotencyKey,
          payload: settled.next.payload,
          state: 'pending',
          next_attempt_at: now,
          created_at: at,
        });
        setImmediate(this.onNumberTaken);
        return;
    }
  }

  private refuse<Row extends LaneRow, A, D>(lane: DocumentLane<Row, A, D>, entry: OutboxRow, row: Row, message: string, now: number): void {
    const at = iso(now);
    const state = lane.refuse(row, message, now);
    this.store.outbox.updateOutbox(
      entry.seq,
      { state, attempts: entry.attempts + 1, last_error: message, ...(state === 'failed' && { completed_at: at }) },
      at,
    );
  }

  private async submit<Row extends LaneRow, A, D>(lane: DocumentLane<Row, A, D>, entry: OutboxRow): Promise<void> {
    const generation = this.generation;
    const result = await attempt(() => lane.submit(entry));
    this.noteExchange(result, generation);
    const d = lane.decideSubmit(result, this.policy, this.random);
    this.record(entry, lane, (row, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'accepted':
          lane.accepted(row, d.accepted, at);
          this.store.outbox.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: null, next_attempt_at: now + d.pollInMs }, at);
          return;
        case 'settled':
          this.settle(lane, entry, row, d.document, now);
          return;
        case 'poll':
          lane.mark(row, { state: 'processing', service_id: d.serviceId }, at);
          this.store.outbox.updateOutbox(entry.seq, { state: 'sent', attempts: 0, last_error: d.note, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'refused':
          this.refuse(lane, entry, row, d.message, now);
          return;
      }
    });
  }

  private async follow<Row extends LaneRow, A, D>(lane: DocumentLane<Row, A, D>, entry: OutboxRow): Promise<void> {
    const serviceId = lane.row(entry)?.service_id;
    if (!serviceId) {
      // Sent without an id cannot happen through this worker; recover by sending again (same key).
      this.record(entry, lane, (_row, now) => this.store.outbox.updateOutbox(entry.seq, { state: 'pending', next_attempt_at: now }, iso(now)));
      return;
    }
    const generation = this.generation;
    const result = await attempt(() => lane.fetch(serviceId));
    this.noteExchange(result, generation);
    const d = lane.decideFollow(result, entry.attempts, this.policy, this.random);
    this.record(entry, lane, (row, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'final':
          this.settle(lane, entry, row, d.document, now);
          return;
        case 'poll':
          this.store.outbox.updateOutbox(entry.seq, { attempts: entry.attempts + 1, last_error: null, next_attempt_at: now + d.inMs }, at);
          return;
        case 'retry':
          this.retryLater(entry, d, now);
          return;
        case 'resend':
          lane.mark(row, { state: 'pending' }, at);
          this.store.outbox.updateOutbox(entry.seq, { state: 'pending', attempts: 0, last_error: d.note, next_attempt_at: now }, at);
          return;
        case 'refused':
          this.refuse(lane, entry, row, d.message, now);
          return;
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Cancellation

  private async cancel(entry: OutboxRow): Promise<void> {
    const receipt = this.store.receipts.receipt(entry.receipt_id)!;
    const serviceId = receipt.service_id;
    if (!serviceId) {
      this.record(entry, this.receipts, (r, now) => this.refuseCancel(entry, r, now, 'NFC-e sem identificação no serviço: não é possível cancelar', false));
      return;
    }
    const generation = this.generation;
    const result = await attempt(() => this.client.cancelNfce(serviceId, JSON.parse(entry.payload), entry.idempotency_key));
    this.noteExchange(result, generation);
    let d = decideCancel(result, this.policy, this.random);
    let verified: NfceDocument | undefined;
    if (d.action === 'verify') {
      // "Not cancellable in its state": if it is already cancelled, an earlier attempt of ours
      // got through and its answer was lost. Look before calling it a refusal.
      const look = await attempt(() => this.client.getNfce(serviceId));
      this.noteExchange(look, generation);
      if (!look.ok)
        d = isTransport(look.failure)
          ? { action: 'retry', transport: true, note: transientForPeople(look.failure) }
          : { action: 'refused', message: d.message };
      else if (look.value.status === 'cancelado') verified = look.value;
      else d = { action: 'refused', message: d.message };
    }
    this.record(entry, this.receipts, (r, now) => {
      const at = iso(now);
      const doc = verified ?? (d.action === 'cancelled' ? d.document : undefined);
      if (doc) {
        this.store.receipts.updateReceipt(r.id, { ...documentOutcome(doc).receipt, state: 'cancelled', cancelado_em: doc.cancelado_em ?? at }, at);
        this.store.outbox.updateOutbox(entry.seq, { state: 'done', attempts: entry.attempts + 1, last_error: null, completed_at: at }, at);
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
    this.store.receipts.updateReceipt(receipt.id, { state: 'authorized', attention }, at);
    this.store.outbox.updateOutbox(entry.seq, { state: 'failed', attempts: entry.attempts + 1, last_error: message, completed_at: at }, at);
    // The sale stands: cash handed back for it from a later till comes back in (cash-session.ts).
    settleRefund(this.store, () => now, receipt.id, null);
    audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'cancelamento_recusado', receiptId: receipt.id, reason: message });
  }

  // -------------------------------------------------------------------------------------------
  // Voiding an abandoned number

  private async voidNumber(entry: OutboxRow): Promise<void> {
    const body = JSON.parse(entry.payload) as InutilizarBody;
    const generation = this.generation;
    const result = await attempt(() => this.client.inutilizarNfce(body, entry.idempotency_key));
    this.noteExchange(result, generation);
    const d = decideVoid(result, entry.attempts, this.policy, this.random);
    this.record(entry, this.receipts, (r, now) => {
      const at = iso(now);
      switch (d.action) {
        case 'voided':
          this.store.receipts.updateReceipt(
            r.id,
            {
              state: 'voided',
              attention: null,
              ...(d.result && { protocolo: d.result.protocolo, codigo_status: d.result.codigo_status, motivo: d.result.motivo }),
            },
            at,
          );
          this.store.outbox.updateOutbox(entry.seq, { state: 'done', attempts: entry.attempts + 1, last_error: null, completed_at: at }, at);
          {
            // The sale's own emission is over for good: its number is void.
            const emit = this.store.outbox.liveOutbox(r.id, 'emit');
            if (emit) this.store.outbox.updateOutbox(emit.seq, { state: 'failed', last_error: 'número inutilizado', completed_at: at }, at);
          }
          audit(this.store, () => now, { actor: SYSTEM_ACTOR, action: 'inutilizacao_confirmada', receiptId: r.id, details: d.result });
          return;
        case 'refused': {
          // Back to where it was: the sale still waits for a correction or another attempt.
          this.store.receipts.updateReceipt(r.id, { state: r.codigo_status ? 'rejected' : 'needs_attention', attention: d.message }, at);
          this.store.outbox.updateOutbox(entry.seq, { state: 'failed', attempts: entry.attempts + 1, last_error: d.message, completed_at: at }, at);
          settleRefund(this.store, () => now, r.id, null);
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
}
