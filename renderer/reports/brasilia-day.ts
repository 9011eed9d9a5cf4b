// The reports' and the export's days: today as a Brasília calendar day, whatever zone the
// computer is set to, and a day as the store writes it (dd/mm/aaaa), whatever language the
// browser speaks (an <input type="date"> would show mm/dd/yyyy on an English system).

import { brasiliaDay } from '../../base/common/brasilia.ts';

/** Today in Brasília, as the core takes a day (AAAA-MM-DD). */
export function brasiliaToday(now: Date = new Date()): string {
  return brasiliaDay(now);
}

/** The first day of the month of `day` (AAAA-MM-01). */
export function firstOfMonth(day: string): string {
  return `${day.slice(0, 8)}01`;
}

/** "2026-11-23" → "23/11/2026". */
export function dayAsTyped(day: string): string {
  const [y, m, d] = day.split('-');
  return `${d}/${m}/${y}`;
}

/** "23/11/2026" (or "23112026", "23-11-2026", "23.11.2026") → "2026-11-23"; null when it is no calendar day. */
export function dayFromTyped(text: string): string | null {
  const m = /^\s*(\d{2})[/.-]?(\d{2})[/.-]?(\d{4})\s*$/.exec(text);
  if (!m) return null;
  const [, d, mo, y] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d)) return null;
  return `${y}-${mo}-${d}`;
}
