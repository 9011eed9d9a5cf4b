// Transmitting the receipts issued in contingency once the service is back. They need nothing of
// their own to go out: each is an ordinary `emit` entry of the outbox whose body is the signed
// XML (`{ "xml": … }`, issue.ts) under the receipt's own idempotency key, written with the sale;
// the outbox worker sends the queue in order (seq) as soon as the service answers, and records
// the verdict as for any receipt: authorized → the receipt is updated (nothing is printed again:
// the consumer already has the contingency DANFE); rejected or refused → it waits for a person,
// with the reason (outbox-rules.ts documentOutcome).
//
// What is here: the deadline. The authority expects an offline NFC-e within 24 hours of its
// issue (docs/fiscal.md, "Offline contingency": the most common rule; some UFs allow less or more), so the status
// warns from two hours before the earliest deadline among those not yet authorized.

import { formatDateTimeBR } from '../../../fiscal/danfe/model.ts';

export const TRANSMISSION_DEADLINE_MS = 24 * 3_600_000;
export const DEADLINE_WARNING_MS = 2 * 3_600_000;

/** Epoch ms by which a receipt issued at `createdAt` (ISO) must reach the authority. */
export function transmissionDeadline(createdAt: string): number {
  return Date.parse(createdAt) + TRANSMISSION_DEADLINE_MS;
}

/**
 * The warning for the earliest deadline among `waiting` receipts not yet authorized, or null
 * when it is more than DEADLINE_WARNING_MS away.
 */
export function deadlineWarning(deadline: number, waiting: number, now: number): string | null {
  if (waiting <= 0 || deadline - now > DEADLINE_WARNING_MS) return null;
  const when = formatDateTimeBR(new Date(deadline).toISOString(), 'prazo');
  const what = waiting === 1 ? 'a NFC-e emitida em contingência' : `as ${waiting} NFC-e emitidas em contingência`;
  if (deadline <= now) return `O prazo de 24 horas para transmitir ${what} venceu em ${when}: restabeleça a conexão com o serviço de emissão já.`;
  const minutes = Math.ceil((deadline - now) / 60_000);
  const left = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min` : `${minutes} min`;
  return `Transmita ${what}: o prazo de 24 horas da mais antiga vence em ${left} (${when}).`;
}
