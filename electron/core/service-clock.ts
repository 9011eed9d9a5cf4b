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
//
// The same clock dates what the terminal signs itself: a receipt issued in offline contingency
// carries dhEmi and dhCont on the service's time as last known (`fiscalNow`), never on the PC's,
// so a PC clock hours ahead does not sign receipts the authority rejects as issued after their
// reception (703), nor one a day behind receipts it finds a day late (150). For that the bottom of
// the Date second is taken (the service's time when the answer left was at least Date), so a
// receipt is never dated in the future of the service's clock. The offset is kept in the
// database (`seed`, `onJump`), for a terminal that starts while the service is away.
//
// A PC whose clock is more than CLOCK_ALERT_MS away from the service's is told, in words, on the
// status bar (`alert`).

import { type Clock } from '../../base/common/clock.ts';

/** A change smaller than this is the Date header's rounding, not the service's clock moving. */
const NOTICEABLE_MS = 5_000;

/** Beyond this, the PC's clock is wrong enough to tell (the authority tolerates minutes, not more). */
export const CLOCK_ALERT_MS = 3 * 60_000;

/** "3 h", "26 h", "12 min", "1 h 30 min", "3 dias": how far, for people. */
export function howFar(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours >= 72) return `${Math.round(hours / 24)} dias`;
  const rest = minutes % 60;
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}

export class ServiceClock {
  private offset: number | null = null;
  private observed: number | null = null;

  /**
   * `onJump` hears of a noticeable change of the offset (the screen's countdowns are stale).
   * `keep` hears the offset worth keeping (the first of a run, and every jump); `seed` is the one
   * kept by an earlier run, used until an answer says otherwise.
   */
  constructor(
    private readonly local: Clock,
    private readonly onJump: () => void = () => {},
    options: { seed?: number | null; keep?: (offsetMs: number) => void } = {},
  ) {
    this.offset = options.seed ?? null;
    this.keep = options.keep ?? (() => {});
  }

  private readonly keep: (offsetMs: number) => void;

  /** Service time minus local time, in ms; null until an answer was dated. */
  get offsetMs(): number | null {
    return this.offset;
  }

  /** Local instant of the last dated answer; null before the first. */
  get observedAt(): number | null {
    return this.observed;
  }

  /**
   * The service's time as last known, for what the terminal dates itself (see the header): never
   * later than the service's clock; the PC's own when nothing was ever learned.
   */
  fiscalNow(): number {
    return this.local() + (this.offset === null ? 0 : this.offset - 1000);
  }

  /** What the status bar says when the PC's clock is far from the service's; null when it is not. */
  alert(): string | null {
    if (this.offset === null || Math.abs(this.offset) <= CLOCK_ALERT_MS) return null;
    const ahead = this.offset < 0; // service time minus ours: negative, ours is ahead
    return (
      `O relógio deste computador está ${howFar(this.offset)} ${ahead ? 'adiantado' : 'atrasado'} em relação ao serviço de emissão. ` +
      'Acerte a data e a hora do computador (no Windows: Configurações → Hora e idioma → Definir hora automaticamente). ' +
      'Enquanto isso, as NFC-e em contingência saem com a hora do serviço.'
    );
  }

  /** Takes the Date header of an answer received just now. Ignores a missing or garbled one. */
  observe(dateHeader: string | null): void {
    if (!dateHeader) return;
    const dated = Date.parse(dateHeader);
    if (Number.isNaN(dated)) return;
    const now = this.local();
    const next = dated + 1000 - now;
    const previous = this.offset;
    const first = this.observed === null;
    this.observed = now;
    this.offset = next;
    const jumped = previous === null ? Math.abs(next) >= NOTICEABLE_MS : Math.abs(next - previous) >= NOTICEABLE_MS;
    // The first answer of a run is worth keeping (a seed may be stale), though it is no jump.
    if (jumped || first) this.keep(next);
    if (jumped) this.onJump();
  }
}
