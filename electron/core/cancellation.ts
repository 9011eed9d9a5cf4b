// Cancelling an authorized receipt (event 110111 at the service): within 30 minutes of its
// authorization (docs/fiscal.md, "Cancellation"), by a manager, with a 15–255 character
// justification. After the window the remedy is the return (NF-e de devolução).
//
// The window as the terminal sees it. The service measures 30 minutes from autorizado_em on its
// own clock, which the terminal follows through the Date of the service's answers
// (service-clock.ts: `offsetMs`, service time minus local time). So the terminal:
// - counts in service time: the window starts at the EARLIER of autorizado_em and the instant
//   the terminal learned of the authorization (translated with the offset). With the offset
//   known, that is autorizado_em; while it is unknown (a terminal started offline; offset 0) the
//   local instant is the better bound when the service's clock is ahead of ours (it can only be
//   late by the polling delay), and autorizado_em when it is behind;
// - ends it CANCEL_SAFETY_MARGIN_MS (60 s) early, to absorb the rest of the clock drift, the
//   time the command takes to reach the service, and a retry or two: the terminal refuses from
//   29 minutes after the start. Within that minute the service would still accept, but a
//   cancellation that reached it a few seconds late would fail after the manager walked away.
// The service stays the judge: a cancellation queued in time but delivered late (the service
// was down) is refused there with prazo_expirado, and the receipt shows that refusal.
//
// The cancellation is an outbox command with its own idempotency key, written in the same
// transaction as the receipt's move to `cancelling` and the audit entry, so it survives a crash
// and is retried until its outcome is known; for a sale of a till already closed, the cash it
// hands back is a sangria of the open one, in that same transaction (cash-session.ts).

import { randomUUID } from 'node:crypto';
import { justification as checkJustification } from '../../fiscal/events.ts';
import type { CancelInput, CancellationInfo } from '../api/terminal-api.ts';
import { checked, TerminalError } from './errors.ts';
import { settleRefund } from './cash-session.ts';
import { actorOfManager, audit, authorizeManager } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import type { ManagerRow } from './store/managers-audit.ts';
import type { ReceiptRow } from './store/receipts.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { existingReceipt } from './receipt-row.ts';

export const CANCEL_WINDOW_MS = 30 * 60_000;
export const CANCEL_SAFETY_MARGIN_MS = 60_000;

type WindowFacts = Pick<ReceiptRow, 'autorizado_em' | 'authorized_seen_at'>;

/**
 * Epoch ms, on the service's clock, the window started at; undefined when the receipt was never
 * authorized. `offsetMs`: service time minus local time (0 when unknown).
 */
export function windowStart(r: WindowFacts, offsetMs = 0): number | undefined {
  const reported = r.autorizado_em ? Date.parse(r.autorizado_em) : NaN;
  const seen = r.authorized_seen_at ? Date.parse(r.authorized_seen_at) + offsetMs : NaN;
  const candidates = [reported, seen].filter((t) => !Number.isNaN(t));
  return candidates.length ? Math.min(...candidates) : undefined;
}

/** Local instant from which this terminal refuses to cancel. */
export function localDeadline(r: WindowFacts, offsetMs = 0): number | undefined {
  const start = windowStart(r, offsetMs);
  return start === undefined ? undefined : start + CANCEL_WINDOW_MS - CANCEL_SAFETY_MARGIN_MS - offsetMs;
}

/** `now` is local; `offsetMs` as in windowStart. */
export function cancellationInfo(r: ReceiptRow, now: number, offsetMs = 0): CancellationInfo {
  const deadline = localDeadline(r, offsetMs);
  if (r.state !== 'authorized' && r.state !== 'cancelling') return { allowed: false, deadline: null, secondsLeft: null, remedy: null };
  if (deadline === undefined) {
    // Authorized without any instant (should not happen): the terminal cannot vouch for the window.
    return { allowed: false, deadline: null, secondsLeft: null, remedy: r.state === 'authorized' ? 'devolucao' : null };
  }
  const left = Math.max(0, Math.floor((deadline - now) / 1000));
  const inside = now < deadline;
  return {
    allowed: r.state === 'authorized' && inside,
    deadline: iso(deadline),
    secondsLeft: left,
    remedy: r.state === 'authorized' ? (inside ? 'cancelar' : 'devolucao') : null,
  };
}

export const WINDOW_OVER_MESSAGE =
  'Prazo de cancelamento encerrado (30 minutos após a autorização). Para desfazer a venda, faça a devolução (NF-e de devolução).';

export type CancelRequest = {
  receipt: ReceiptRow;
  manager: ManagerRow;
  justification: string;
  /** Service time minus local time (service-clock.ts); 0 when unknown. */
  serviceOffsetMs?: number;
  /** Tests only: send it even though the local window is over, to see the service refuse it. */
  skipLocalWindowCheck?: boolean;
};

/** Refuses a receipt that is not authorized, or whose window is over (unless the test skips it). */
function assertCancellable(r: ReceiptRow, now: number, serviceOffsetMs: number | undefined, skipLocalWindowCheck: boolean | undefined): void {
  if (r.state === 'cancelling' || r.state === 'cancelled') throw new TerminalError('estado_invalido', 'Esta NFC-e já foi cancelada ou está sendo cancelada');
  if (r.state !== 'authorized') throw new TerminalError('estado_invalido', 'Só uma NFC-e autorizada pode ser cancelada');
  const deadline = localDeadline(r, serviceOffsetMs);
  if (!skipLocalWindowCheck && (deadline === undefined || now >= deadline)) {
    throw new TerminalError('prazo_expirado', WINDOW_OVER_MESSAGE, { remedy: 'devolucao' });
  }
}

/**
 * The manager's cancellation from the screen: the receipt and its window are checked before the
 * PIN is asked (no point asking for it), and again when the command is written.
 */
export async function cancelReceipt(
  store: PosStore,
  clock: Clock,
  receiptId: string,
  input: CancelInput,
  options: Pick<CancelRequest, 'serviceOffsetMs' | 'skipLocalWindowCheck'>,
): Promise<void> {
  const r = existingReceipt(store, receiptId);
  assertCancellable(r, clock(), options.serviceOffsetMs, options.skipLocalWindowCheck);
  checked('justificativa_invalida', 'justification', () => checkJustification(input?.justification, 'justification'));
  const manager = await authorizeManager(store, clock, input, 'cancelamento', r.id);
  requestCancellation(store, clock, { receipt: r, manager, justification: input.justification, ...options });
}

/** Checks and queues the cancellation; returns the outbox seq. Call with a verified manager. */
export function requestCancellation(store: PosStore, clock: Clock, req: CancelRequest): number {
  const justificativa = checked('justificativa_invalida', 'justification', () => checkJustification(req.justification, 'justification'));
  return store.transaction(() => {
    const r = existingReceipt(store, req.receipt.id);
    const now = clock();
    assertCancellable(r, now, req.serviceOffsetMs, req.skipLocalWindowCheck);
    const deadline = localDeadline(r, req.serviceOffsetMs);
    const at = iso(now);
    const seq = store.outbox.insertOutbox({
      kind: 'cancel',
      receipt_id: r.id,
      idempotency_key: randomUUID(),
      payload: JSON.stringify({ justificativa }),
      state: 'pending',
      next_attempt_at: now,
      created_at: at,
    });
    store.receipts.updateReceipt(r.id, { state: 'cancelling', attention: null }, at);
    // A sale of a closed till: its cash goes back from the open drawer (cash-session.ts).
    settleRefund(store, clock, r.id, req.manager);
    audit(store, clock, {
      actor: actorOfManager(req.manager),
      action: 'cancelamento_solicitado',
      receiptId: r.id,
      reason: justificativa,
      details: { nNF: r.nnf, serie: r.serie, chave: r.chave, foraDoPrazoLocal: deadline === undefined || now >= deadline },
    });
    return seq;
  });
}
