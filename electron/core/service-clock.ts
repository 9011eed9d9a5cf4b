// The issuance service's clock as this terminal knows it. The 30-minute cancellation window is
// the service's (and the tax authority's): it counts from autorizado_em on the service's clock,
// which may differ from the store PC's (a drifting PC clock, or the sandbox's per-company clock
// moved forward, contract 5). Every answer to our token is dated by that clock (HTTP Date), so
// the terminal keeps the latest difference between the two and judges the window with it.
//
// Date has whole seconds: the service's time when the answer left was in [Date, Date + 1 s).
// The estimate takes the top of that interval, so the terminal never believes the service is
// earlier than it is by more than the answer's travel time; the window's safety margin
// (cancellation.ts) absorbs that and the second of rounding.
//
// Until the first answer (a terminal started offline) the offset is unknown and the window falls
// back to the terminal's own observations (cancellation.ts windowStart).

import { type Clock } from '../../base/common/clock.ts';

/** A change smaller than this is the Date header's rounding, not the service's clock moving. */
const NOTICEABLE_MS = 5_000;

export class ServiceClock {
  private offset: number | null = null;
  private observed: number | null = null;

  /** `onJump` hears of a noticeable change of the offset (the screen's countdowns are stale). */
  constructor(
    private readonly local: Clock,
    private readonly onJump: () => void = () => {},
  ) {}

  /** Service time minus local time, in ms; null until an answer was dated. */
  get offsetMs(): number | null {
    return this.offset;
  }

  /** Local instant of the last dated answer; null before the first. */
  get observedAt(): number | null {
    return this.observed;
  }

  /** Takes the Date header of an answer received just now. Ignores a missing or garbled one. */
  observe(dateHeader: string | null): void {
    if (!dateHeader) return;
    const dated = Date.parse(dateHeader);
    if (Number.isNaN(dated)) return;
    const now = this.local();
    const next = dated + 1000 - now;
    const previous = this.offset;
    this.observed = now;
    this.offset = next;
    if (previous === null ? Math.abs(next) >= NOTICEABLE_MS : Math.abs(next - previous) >= NOTICEABLE_MS) this.onJump();
  }
}
