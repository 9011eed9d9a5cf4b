// The reports' and the export's default period: today as a Brasília calendar day (AAAA-MM-DD),
// whatever zone the computer is set to.

import { brasiliaDay } from '../../base/common/brasilia.ts';

export function brasiliaToday(now: Date = new Date()): string {
  return brasiliaDay(now);
}

/** The first day of the month of `day` (AAAA-MM-01). */
export function firstOfMonth(day: string): string {
  return `${day.slice(0, 8)}01`;
}
