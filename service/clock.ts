// Time as the service sees it. Each company has its own clock: real time plus, in sandbox mode,
// an offset the company can push forward (POST /api/v1/sandbox/relogio) to test the 30-minute
// and 24-hour windows without waiting. Production ignores any stored offset.
// Instants are shown in Brasília time (base/common/brasilia.ts).

import { readOnce, remember, scopeKeys } from './read-scope.ts';
import type { SandboxStore } from './store.ts';

export type ServiceMode = 'sandbox' | 'production';

/** Each company's notion of "now". */
export class CompanyClock {
  constructor(
    private readonly store: Pick<SandboxStore, 'getClockOffsetMinutes' | 'advanceClock'>,
    private readonly mode: ServiceMode,
    private readonly realNow: () => number = Date.now,
  ) {}

  /** The service's own now, with no company's offset (the operator's view, /readyz). */
  real(): Date {
    return new Date(this.realNow());
  }

  async now(companyId: string): Promise<Date> {
    if (this.mode !== 'sandbox') return new Date(this.realNow());
    // Once per request or queue batch (read-scope.ts).
    const offset = await readOnce(scopeKeys.clockOffset(companyId), () => this.store.getClockOffsetMinutes(companyId));
    return new Date(this.realNow() + offset * 60_000);
  }

  /** Sandbox only: moves the company's clock forward; returns the total offset and the new now. */
  async advance(companyId: string, minutes: number): Promise<{ offsetMinutes: number; now: Date }> {
    if (this.mode !== 'sandbox') throw new Error('o relógio só pode ser adiantado no modo sandbox');
    const offsetMinutes = await this.store.advanceClock(companyId, minutes);
    remember(scopeKeys.clockOffset(companyId), offsetMinutes);
    return { offsetMinutes, now: new Date(this.realNow() + offsetMinutes * 60_000) };
  }
}
