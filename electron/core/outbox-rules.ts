// The submission worker's decisions as pure functions: given what the service answered (or that
// it did not), what happens to the receipt and to its outbox entry, and when to try again. The
// worker (outbox-worker.ts) only performs the calls and stores these decisions, so every rule
// of the issue can be tested here without a service.
//
// The rules:
// - Never a new key: every decision keeps the entry's idempotency key; nothing here makes one.
// - 202: accepted, poll the document until it leaves `processando`.
// - 200 replay: the document as it is now (authorized, or cancelled later): record it.
// - 409 em_processamento: the first attempt under this key is still running. Poll the document
//   it names (or, without an id, POST again with the same key) after Retry-After.
// - 401, 408, 429: not about this receipt; retry later (Retry-After when given).
// - Other 4xx: the service refused the request; the receipt needs attention, with what that
//   means for a person (service-messages.ts; the service's own message is for integrators).
// - 5xx, refused connections, timeouts, cuts: the outcome is unknown; retry with the same key,
//   with capped exponential backoff and jitter, applied to the whole queue (the service is the
//   same for every receipt, so one probe at a time while it is down).

import type { DevolucaoSubmission, InutilizarResult, NfceDocument, NfceSubmission, NfeDocument, Submission } from './api-client.ts';
import { toCents } from '../../fiscal/money.ts';
import type { ReceiptPatch } from './store/receipts.ts';
import type { ReturnPatch } from './store/returns.ts';
import type { Failure, HttpFailure, Result } from './failures.ts';
import { numberTaken } from './numbering.ts';
import { refusalForPeople, SERVICE_ERROR_WORDS, transientForPeople, type ServiceOperation } from './service-messages.ts';

export type RetryPolicy = {
  /** Transport failures: first delay and cap of the exponential backoff (whole queue). */
  baseMs: number;
  capMs: number;
  /** Polling a document in `processando`: first poll, growth base and cap. */
  pollFirstMs: number;
  pollBaseMs: number;
  pollCapMs: number;
  /**
   * Documents beyond the poll window (outbox-worker.ts) are polled only once they are this
   * late: the window follows the oldest ones, and this catches any the window does not reach.
   */
  pollStaleMs: number;
  /** A 409 without Retry-After. */
  conflictDefaultMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = {
  baseMs: 500,
  capMs: 30_000,
  pollFirstMs: 50,
  pollBaseMs: 200,
  pollCapMs: 1_000,
  pollStaleMs: 30_000,
  conflictDefaultMs: 1_000,
};

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so retries of
 * many terminals spread out but none comes back at once. `attempt` counts from 1.
 */
export function backoffMs(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/** Retry-After is a floor: never earlier; up to 10 % later so waiting clients do not align. */
export function retryAfterMs(seconds: number | undefined, fallbackMs: number, random: () => number): number {
  const base = seconds === undefined ? fallbackMs : Math.max(0, seconds * 1000);
  return Math.round(base + random() * base * 0.1);
}

/** Statuses that say nothing about this receipt: the request is fine, try again later. */
const RETRYABLE_4XX = new Set([401, 408, 429]);

/** A failure after which the same request should simply be repeated later. */
export type Retry = {
  action: 'retry';
  /** Delay when the wait is specific to this entry (Retry-After); absent: the queue's backoff. */
  inMs?: number;
  /** Transport failure or 5xx: counts towards the queue's backoff and marks the service offline. */
  transport: boolean;
  note: string;
};

function retryOf(f: Failure, policy: RetryPolicy, random: () => number): Retry | undefined {
  const note = transientForPeople(f);
  if (f.kind === 'network') return { action: 'retry', transport: true, note };
  if (f.status >= 500) return { action: 'retry', transport: true, note };
  if (f.status === 409) {
    return { action: 'retry', inMs: retryAfterMs(f.retryAfterSeconds, policy.conflictDefaultMs, random), transport: false, note };
  }
  if (RETRYABLE_4XX.has(f.status)) {
    if (f.retryAfterSeconds !== undefined) return { action: 'retry', inMs: retryAfterMs(f.retryAfterSeconds, 0, random), transport: false, note };
    // No Retry-After: the queue's backoff paces it, like a transport failure.
    return { action: 'retry', transport: true, note };
  }
  return undefined;
}

// =============================================================================================
// Issuance: POST under the command's key (the NFC-e, a return's NF-e), then GET until the verdict

export type SubmitDecision<Accepted, Document> =
  | { action: 'accepted'; accepted: Accepted; pollInMs: number }
  | { action: 'settled'; document: Document }
  | { action: 'poll'; serviceId: string; inMs: number; note: string }
  | Retry
  /** The service refused the request itself; what that means is the document's (its lane's). */
  | { action: 'refused'; message: string };

/** `operation` says what the people's message is about when the service refuses the request. */
function decideSubmit<A, D>(result: Result<Submission<A, D>>, operation: ServiceOperation, policy: RetryPolicy, random: () => number): SubmitDecision<A, D> {
  if (result.ok) {
    const sub = result.value;
    if (sub.replay) return { action: 'settled', document: sub.body };
    return { action: 'accepted', accepted: sub.body, pollInMs: policy.pollFirstMs };
  }
  const f = result.failure;
  const retry = retryOf(f, policy, random);
  if (f.kind === 'http' && f.status === 409 && f.documentId && retry) {
    // The document in flight under our key: follow it instead of knocking again.
    return { action: 'poll', serviceId: f.documentId, inMs: retry.inMs ?? policy.conflictDefaultMs, note: retry.note };
  }
  if (retry) return retry;
  return { action: 'refused', message: refusalForPeople(operation, f as HttpFailure) };
}

export type FollowDecision<Document> =
  | { action: 'final'; document: Document }
  | { action: 'poll'; inMs: number }
  | Retry
  /** The service does not know the id: POST again with the same key (it replays or re-creates). */
  | { action: 'resend'; note: string }
  | { action: 'refused'; message: string };

/** `polls` is how many polls this document had before this one. */
function decideFollow<D>(
  result: Result<D>,
  processing: (document: D) => boolean,
  operation: ServiceOperation,
  polls: number,
  policy: RetryPolicy,
  random: () => number,
): FollowDecision<D> {
  if (result.ok) {
    if (processing(result.value)) return { action: 'poll', inMs: backoffMs(polls + 1, policy.pollBaseMs, policy.pollCapMs, random) };
    return { action: 'final', document: result.value };
  }
  const f = result.failure;
  const retry = retryOf(f, policy, random);
  if (retry) return retry;
  if (f.kind === 'http' && f.status === 404) return { action: 'resend', note: SERVICE_ERROR_WORDS.nao_encontrado };
  return { action: 'refused', message: refusalForPeople(operation, f as HttpFailure) };
}

/** POST /api/v1/nfce. A refusal leaves the receipt needing attention (it can be corrected). */
export const decideEmit = (result: Result<NfceSubmission>, policy: RetryPolicy, random: () => number) => decideSubmit(result, 'emitir', policy, random);

/** GET /api/v1/nfce/{id}. */
export const decidePoll = (result: Result<NfceDocument>, polls: number, policy: RetryPolicy, random: () => number) =>
  decideFollow(result, (d) => d.status === 'processando', 'consultar', polls, policy, random);

/**
 * What a document's state means for the receipt and its emit entry. `contingency`: the receipt
 * was signed and printed at the terminal (tpEmis 9), so it cannot be corrected and resent.
 * `renumber`: the authority says the number is another NFC-e's (numbering.ts): the sale takes the
 * next number instead of waiting for a correction that could never succeed.
 */
export function documentOutcome(doc: NfceDocument, contingency = false): { receipt: ReceiptPatch; entry: 'done' | 'blocked' | 'sent' | 'renumber' } {
  const facts: ReceiptPatch = {
    service_id: doc.id,
    chave: doc.chave ?? null,
    codigo_status: doc.codigo_status ?? null,
    motivo: doc.motivo ?? null,
  };
  switch (doc.status) {
    case 'autorizado':
    case 'cancelado':
      return {
        receipt: {
          ...facts,
          state: doc.status === 'autorizado' ? 'authorized' : 'cancelled',
          protocolo: doc.protocolo ?? null,
          autorizado_em: doc.autorizado_em ?? null,
          cancelado_em: doc.cancelado_em ?? null,
          qrcode: doc.qrcode ?? null,
          url_consulta: doc.url_consulta ?? null,
          attention: null,
        },
        entry: 'done',
      };
    case 'rejeitado':
      if (numberTaken(doc)) return { receipt: facts, entry: 'renumber' };
      return {
        receipt: {
          ...facts,
          state: 'rejected',
          attention: contingency
            ? `NFC-e emitida em contingência rejeitada pela SEFAZ (${doc.codigo_status ?? '?'}): ${doc.motivo ?? 'sem motivo informado'}. ` +
              'Ela não pode ser alterada depois de impressa: a venda precisa de uma nova NFC-e; procure o responsável fiscal.'
            : `NFC-e rejeitada pela SEFAZ (${doc.codigo_status ?? '?'}): ${doc.motivo ?? 'sem motivo informado'}. ` +
              'Corrija e reenvie: o número será o mesmo.',
        },
        entry: 'blocked',
      };
    default:
      return { receipt: { ...facts, state: 'processing' }, entry: 'sent' };
  }
}

// =============================================================================================
// Cancellation: POST /api/v1/nfce/{id}/cancelar

export type CancelDecision =
  | { action: 'cancelled'; document: NfceDocument }
  /** Not cancellable in its state: maybe our earlier call did it (answer lost); look. */
  | { action: 'verify'; message: string }
  | { action: 'refused'; message: string; remedy?: 'devolucao' }
  | Retry;

export function decideCancel(result: Result<NfceDocument>, policy: RetryPolicy, random: () => number): CancelDecision {
  if (result.ok) {
    if (result.value.status === 'cancelado') return { action: 'cancelled', document: result.value };
    return { action: 'verify', message: `O serviço respondeu com a NFC-e em "${result.value.status}"` };
  }
  const f = result.failure;
  const retry = retryOf(f, policy, random);
  if (retry) return retry;
  const h = f as HttpFailure;
  if (h.code === 'estado_invalido') return { action: 'verify', message: refusalForPeople('cancelar', h) };
  if (h.code === 'prazo_expirado') return { action: 'refused', message: refusalForPeople('cancelar', h), remedy: 'devolucao' };
  return { action: 'refused', message: refusalForPeople('cancelar', h) };
}

// =============================================================================================
// Voiding a number: POST /api/v1/nfce/inutilizar

export type VoidDecision = { action: 'voided'; result: InutilizarResult | null } | { action: 'refused'; message: string } | Retry;

// The sandbox (and SEFAZ) answer 563 for the very same range already voided and 206 for a
// number already voided: after a lost answer, that is our own earlier request having worked.
const ALREADY_VOIDED = /\b(563|206)\b|j[aá] (foi |est[aá] )?inutilizad/i;

/** `attempts` is how many times this void was sent before; only a repeat can meet its own success. */
export function decideVoid(result: Result<InutilizarResult>, attempts: number, policy: RetryPolicy, random: () => number): VoidDecision {
  if (result.ok) return { action: 'voided', result: result.value };
  const f = result.failure;
  const retry = retryOf(f, policy, random);
  if (retry) return retry;
  const h = f as HttpFailure;
  if (attempts > 0 && h.status === 422 && ALREADY_VOIDED.test(h.rejeicao?.cStat ?? h.message)) return { action: 'voided', result: null };
  return { action: 'refused', message: refusalForPeople('inutilizar', h) };
}

// =============================================================================================
// Returns: POST /api/v1/nfe/devolucao, then GET /api/v1/nfe/{id} until the verdict
//
// Like the receipt's emission, except that a refusal is final: a return is not corrected and
// sent again under its key; the manager asks for a new return (with a new key) instead.

/** POST /api/v1/nfe/devolucao. */
export const decideReturn = (result: Result<DevolucaoSubmission>, policy: RetryPolicy, random: () => number) =>
  decideSubmit(result, 'devolucao', policy, random);

/** GET /api/v1/nfe/{id}. */
export const decideReturnPoll = (result: Result<NfeDocument>, polls: number, policy: RetryPolicy, random: () => number) =>
  decideFollow(result, (d) => d.situacao === 'processando', 'devolucao', polls, policy, random);

/** What the service's return means for the terminal's return row; `final` once it has a verdict. */
export function returnOutcome(doc: NfeDocument): { patch: ReturnPatch; final: boolean } {
  const facts: ReturnPatch = {
    service_id: doc.id,
    serie: doc.serie,
    nnf: doc.numero,
    chave: doc.chave,
    codigo_status: doc.status ?? null,
    motivo: doc.motivo ?? null,
    total_cents: Number(toCents(doc.valor_total, 'valor_total')),
  };
  switch (doc.situacao) {
    case 'autorizado':
      return {
        patch: { ...facts, state: 'authorized', protocolo: doc.protocolo ?? null, autorizado_em: doc.autorizado_em ?? null, attention: null },
        final: true,
      };
    case 'rejeitado':
      return {
        patch: {
          ...facts,
          state: 'rejected',
          attention:
            `NF-e de devolução rejeitada pela SEFAZ (${doc.status ?? '?'}): ${doc.motivo ?? 'sem motivo informado'}. ` +
            'Nada foi devolvido por ela: faça uma nova devolução.',
        },
        final: true,
      };
    default:
      return { patch: { ...facts, state: 'processing' }, final: false };
  }
}
