// The dynamic PIX charge's decisions as pure functions, as outbox-rules.ts is for the receipts:
// given a charge and what the PSP answered to one call (or that nothing came back), what the
// charge becomes and when to look again. charges.ts only performs the calls and stores these
// decisions, so every rule can be tested without a PSP.
//
// The rules:
// - Never a second charge for one txid: the row and its txid are written before the first
//   `PUT /cob`; after a lost answer (or a restart) the charge is first read (`GET /cob/{txid}`):
//   found, it is adopted; 404, it is created again with the same txid. A 400 to the PUT because
//   the txid is already in use means the same: read it.
// - Paid is what the PSP reports: a PIX in the charge's `pix` list, with its endToEndId. Paid
//   while the cashier still waits: `paid` (the sale's NFC-e is due). Paid after the cashier gave
//   up or after the charge expired: `paid_late`, for the manager, never lost and never charged
//   again.
// - The cashier's cancel reads first (a PIX may have arrived meanwhile) and removes only an
//   unpaid charge (`PATCH status REMOVIDA_PELO_USUARIO_RECEBEDOR`).
// - No answer, 5xx, 429 and a 401 the client could not cure: unknown, look again after a capped
//   exponential backoff with jitter. Other 4xx: the PSP refused this charge; it ends, with the
//   PSP's words for the cashier.

import { iso } from '../../../base/common/clock.ts';
import { backoffMs } from '../outbox-rules.ts';
import type { PspOutcome } from './psp-client.ts';
import { NEVER, type PixChargePatch, type PixChargeRow } from './pix-store.ts';

/** The call a charge needs next. */
export type ChargeCall = 'create' | 'read' | 'remove' | 'refund' | 'read-refund' | 'finish';

export type ChargePolicy = {
  /** Reading an active charge: first look, growth and cap of the polling interval. */
  pollFirstMs: number;
  pollCapMs: number;
  /** After no answer or a 5xx: base and cap of the backoff. */
  retryBaseMs: number;
  retryCapMs: number;
};

export const DEFAULT_CHARGE_POLICY: ChargePolicy = { pollFirstMs: 500, pollCapMs: 5_000, retryBaseMs: 1_000, retryCapMs: 30_000 };

export type ChargeDecision = {
  patch: PixChargePatch;
  /** A call to make at once, in the same round (a read that found nothing to adopt: create). */
  follow?: ChargeCall;
};

/** What the charge needs next, by its state; undefined when it needs nothing. */
export function nextCall(charge: PixChargeRow): ChargeCall | undefined {
  switch (charge.state) {
    case 'creating':
      // First time: create. After an attempt with no clear answer: read before creating again.
      return charge.attempts === 0 ? 'create' : 'read';
    case 'active':
    case 'cancelling':
      return 'read';
    case 'paid':
      return 'finish';
    case 'refunding':
      return charge.refund_state === null ? 'refund' : 'read-refund';
    case 'cancelled':
    case 'expired':
    case 'finished':
      // Watched a while (WATCH_AFTER_MS): a PIX the PSP still reports goes to the manager.
      return charge.next_try_at < NEVER ? 'read' : undefined;
    default:
      return undefined;
  }
}

export { NEVER };
/**
 * How long a charge the cashier gave up on (or that expired) is still read, and how often: a PIX
 * paid as it was removed, or that a bank reports late (the PSP simulator's "paid late"), is found
 * and shown to the manager rather than lost. No webhook receiver yet: reading is how it is found.
 */
export const WATCH_AFTER_MS = 60 * 60_000;
const WATCH_FIRST_MS = 2_000;
const WATCH_CAP_MS = 60_000;
export const watchAgain = (attempts: number, now: number) => iso(now + growingDelayMs(attempts, WATCH_FIRST_MS, WATCH_CAP_MS));

/** A delay growing by half at each attempt from `firstMs`, up to `capMs`: how soon a charge (or a refund) is read again. */
export const growingDelayMs = (attempts: number, firstMs: number, capMs: number): number =>
  Math.min(capMs, Math.round(firstMs * 1.5 ** Math.min(20, attempts)));

type Answer = PspOutcome & { kind: 'answer' };
type PixEntry = { endToEndId: string; valor: string; horario: string };
type CobBody = { status?: string; location?: string; pix?: PixEntry[] };

/** A transient failure (no answer, 5xx, 429, 401): same state, look again after the backoff. */
function transient(outcome: PspOutcome): boolean {
  return outcome.kind === 'no-answer' || outcome.status >= 500 || outcome.status === 429 || outcome.status === 401 || outcome.status === 408;
}

function words(outcome: PspOutcome): string {
  if (outcome.kind === 'no-answer') return `PSP sem resposta (${outcome.error})`;
  const body = outcome.body as { detail?: string; title?: string } | undefined;
  return `PSP respondeu HTTP ${outcome.status}${body?.detail ? `: ${body.detail}` : body?.title ? `: ${body.title}` : ''}`;
}

function retry(charge: PixChargeRow, outcome: PspOutcome, now: number, policy: ChargePolicy, random: () => number): ChargeDecision {
  const attempts = charge.attempts + 1;
  return { patch: { attempts, last_error: words(outcome), next_try_at: iso(now + backoffMs(attempts, policy.retryBaseMs, policy.retryCapMs, random)) } };
}

const pollAgain = (charge: PixChargeRow, now: number, policy: ChargePolicy): string =>
  iso(now + growingDelayMs(charge.attempts, policy.pollFirstMs, policy.pollCapMs));

type RefundStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
const REFUND_NOT_DONE = 'O PSP não realizou a devolução';
const refundRefused = (answer: Answer) => `Devolução recusada: ${words(answer)}`;

/** The devolução's status in the PSP's answer to asking or reading it; undefined: the PSP refused it. */
function refundStatus(answer: Answer): RefundStatus | undefined {
  const status = (answer.body as { status?: RefundStatus } | undefined)?.status;
  return answer.status === 201 || answer.status === 200 ? status : undefined;
}

const isUsedTxid = (a: Answer) => a.status === 400 && /CobOperacaoInvalida$/.test(String((a.body as { type?: string } | undefined)?.type));

/** Integer cents of an API Pix amount ("12.34"). */
export function pixCents(valor: string): number {
  const match = /^(\d{1,10})\.(\d{2})$/.exec(valor);
  if (!match) throw new Error(`valor PIX inválido: ${valor}`);
  return Number(match[1]) * 100 + Number(match[2]);
}

/** What the charge becomes after `call` got `outcome` at `now`. */
export function decide(
  call: ChargeCall,
  charge: PixChargeRow,
  outcome: PspOutcome,
  now: number,
  policy: ChargePolicy = DEFAULT_CHARGE_POLICY,
  random: () => number = Math.random,
): ChargeDecision {
  if (transient(outcome)) return retry(charge, outcome, now, policy, random);
  const answer = outcome as Answer;
  switch (call) {
    case 'create':
      if (answer.status === 201)
        return {
          patch: {
            state: 'active',
            location: (answer.body as CobBody).location ?? null,
            attempts: 0,
            last_error: null,
            next_try_at: iso(now + policy.pollFirstMs),
          },
        };
      if (isUsedTxid(answer)) return { patch: { attempts: charge.attempts + 1 }, follow: 'read' };
      return { patch: { state: 'cancelled', last_error: words(answer), next_try_at: iso(now) } };
    case 'read':
      return afterRead(charge, answer, now, policy);
    case 'remove':
      if (answer.status === 200) return { patch: { state: 'cancelled', last_error: null, attempts: 0, next_try_at: watchAgain(0, now) } };
      // Refused (it was paid a moment ago, say): the next round reads it and finds out.
      return { patch: { attempts: charge.attempts + 1, last_error: words(answer), next_try_at: iso(now + policy.pollFirstMs) } };
    case 'refund':
    case 'read-refund': {
      const status = refundStatus(answer);
      if (status === 'DEVOLVIDO') return { patch: { state: 'refunded', refund_state: 'DEVOLVIDO', last_error: null } };
      if (status === 'NAO_REALIZADO') return { patch: { state: 'paid_late', refund_state: 'NAO_REALIZADO', last_error: REFUND_NOT_DONE } };
      // Any other status the PSP gives is a devolução still under way.
      if (status) return { patch: { refund_state: 'EM_PROCESSAMENTO', attempts: charge.attempts + 1, next_try_at: pollAgain(charge, now, policy) } };
      return { patch: { state: 'paid_late', last_error: refundRefused(answer) } };
    }
    case 'finish':
      throw new Error('finish não é uma chamada ao PSP');
  }
}

function afterRead(charge: PixChargeRow, answer: Answer, now: number, policy: ChargePolicy): ChargeDecision {
  if (charge.state === 'cancelled' || charge.state === 'expired' || charge.state === 'finished') return afterWatch(charge, answer, now);
  if (answer.status === 404) {
    // Never created (the PUT was lost before the PSP took it): create it, same txid; a charge
    // the cashier gave up on meanwhile is simply over.
    if (charge.state === 'cancelling') return { patch: { state: 'cancelled', last_error: null } };
    return { patch: { state: 'creating', attempts: 0 }, follow: 'create' };
  }
  if (answer.status !== 200) return { patch: { state: 'cancelled', last_error: words(answer) } };
  const body = answer.body as CobBody;
  const pix = body.pix?.[0];
  if (pix) {
    const paid = { e2eid: pix.endToEndId, paid_cents: pixCents(pix.valor), paid_at: pix.horario, last_error: null, attempts: 0, next_try_at: iso(now) };
    const late = charge.state === 'cancelling' || Date.parse(pix.horario) > Date.parse(charge.expires_at);
    return { patch: { ...paid, state: late ? 'paid_late' : 'paid' } };
  }
  const location = charge.location ?? body.location ?? null;
  if (body.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR' || body.status === 'REMOVIDA_PELO_PSP')
    return { patch: { state: 'cancelled', location, attempts: 0, next_try_at: watchAgain(0, now) } };
  if (charge.state === 'cancelling') return { patch: { location }, follow: 'remove' };
  if (now >= Date.parse(charge.expires_at)) return { patch: { state: 'expired', location, attempts: 0, next_try_at: watchAgain(0, now) } };
  return { patch: { state: 'active', location, attempts: charge.attempts + 1, last_error: null, next_try_at: pollAgain(charge, now, policy) } };
}

/** A charge given up on or expired, read again: a PIX found is the manager's; none, look later, until the watch ends. */
function afterWatch(charge: PixChargeRow, answer: Answer, now: number): ChargeDecision {
  // A finished charge is read only for a PIX paid twice (secondPayments; the first one is its sale's).
  const pix = answer.status === 200 && charge.state !== 'finished' ? (answer.body as CobBody).pix?.[0] : undefined;
  if (pix)
    return {
      patch: {
        state: 'paid_late',
        e2eid: pix.endToEndId,
        paid_cents: pixCents(pix.valor),
        paid_at: pix.horario,
        last_error: null,
        attempts: 0,
        next_try_at: NEVER,
      },
    };
  const over = answer.status !== 200 || now >= Date.parse(charge.expires_at) + WATCH_AFTER_MS;
  return { patch: { attempts: charge.attempts + 1, next_try_at: over ? NEVER : watchAgain(charge.attempts + 1, now) } };
}

/**
 * The PIX of a charge beyond the one its sale (or the manager) took: paid twice, the bank sent
 * another endToEndId for the same txid. Each is refunded automatically (secondRefund).
 */
export function secondPayments(charge: PixChargeRow, outcome: PspOutcome): { e2eid: string; paidCents: number; paidAt: string }[] {
  if (outcome.kind !== 'answer' || outcome.status !== 200) return [];
  const pix = (outcome.body as CobBody).pix ?? [];
  const taken = charge.e2eid ?? pix[0]?.endToEndId;
  return pix.filter((p) => p.endToEndId !== taken).map((p) => ({ e2eid: p.endToEndId, paidCents: pixCents(p.valor), paidAt: p.horario }));
}

export type SecondRefundPatch = {
  refund_state?: RefundStatus;
  attempts: number;
  next_try_at: string;
  last_error: string | null;
};

/** A second PIX's refund after `outcome` (asked, or read): done, read again later, or refused in the PSP's words. */
export function secondRefund(
  attempts: number,
  outcome: PspOutcome,
  now: number,
  policy: ChargePolicy = DEFAULT_CHARGE_POLICY,
  random: () => number = Math.random,
): SecondRefundPatch {
  if (transient(outcome))
    return {
      attempts: attempts + 1,
      last_error: words(outcome),
      next_try_at: iso(now + backoffMs(attempts + 1, policy.retryBaseMs, policy.retryCapMs, random)),
    };
  const answer = outcome as Answer;
  const status = refundStatus(answer);
  if (status === 'EM_PROCESSAMENTO')
    return {
      refund_state: status,
      attempts: attempts + 1,
      last_error: null,
      next_try_at: iso(now + growingDelayMs(attempts, policy.pollFirstMs, policy.pollCapMs)),
    };
  if (status) return { refund_state: status, attempts, last_error: status === 'NAO_REALIZADO' ? REFUND_NOT_DONE : null, next_try_at: NEVER };
  return { refund_state: 'NAO_REALIZADO', attempts, last_error: refundRefused(answer), next_try_at: NEVER };
}
