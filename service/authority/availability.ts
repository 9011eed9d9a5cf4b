// What the service last learned of the tax authority, per company: whether its latest call got
// an answer. A client that would otherwise have to wait on each document to find out (the
// terminal deciding to issue in offline contingency) reads it instead: in the answer to
// GET /healthz with the company's token, and in the NFC-e answers while a receipt waits
// (docs/api.md, "NFC-e"). It is an observation, not a promise: "disponivel" means the last call
// was answered, and a document accepted now may still wait.
//
// Kept in memory: each process learns from its own calls, and a process that just started knows
// nothing yet ("desconhecida") until its first call, which the queues make at once when work is due.
// While an authority is down and nothing else calls it, the status service is asked now and then
// (queue/availability-probe.ts), so "indisponivel" does not outlive the outage.

import { formatBrasilia } from '../../base/common/brasilia.ts';

export type AuthoritySituation = 'disponivel' | 'indisponivel' | 'desconhecida';

/** As the API shows it. `desde`: when the situation began, as this process saw it. */
export type AuthorityStatusView = { situacao: AuthoritySituation; desde: string | null };

type Observed = { available: boolean; since: number; lastCall: number };

export class AuthorityAvailability {
  readonly #byCompany = new Map<string, Observed>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A call for `companyId` got an answer (`true`, whatever its verdict) or none (`false`). */
  observe(companyId: string, available: boolean): void {
    const now = this.now();
    const before = this.#byCompany.get(companyId);
    this.#byCompany.set(companyId, { available, since: before?.available === available ? before.since : now, lastCall: now });
  }

  of(companyId: string): AuthorityStatusView {
    const seen = this.#byCompany.get(companyId);
    if (!seen) return { situacao: 'desconhecida', desde: null };
    return { situacao: seen.available ? 'disponivel' : 'indisponivel', desde: formatBrasilia(new Date(seen.since)) };
  }

  /** The companies whose last call went unanswered, with when that call was made. */
  down(): { companyId: string; lastCall: number }[] {
    return [...this.#byCompany].filter(([, o]) => !o.available).map(([companyId, o]) => ({ companyId, lastCall: o.lastCall }));
  }
}
