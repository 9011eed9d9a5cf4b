// Brasília time for both programs: the service's instants and day filters (service/clock.ts
// re-exports these) and the terminal's reports and cash sessions, which count days and hours
// as the store lives them, in Brasília, whatever zone the computer is set to.
//
// The offset comes from the time-zone database (America/Sao_Paulo) rather than a hard-coded
// -03:00: Brazil dropped DST in 2019, but dates before that, and any future change, stay right.

import { BRASILIA_TZ } from './uf.ts';

// Building an Intl.DateTimeFormat costs far more than using one: build it once.
const brasiliaParts = new Intl.DateTimeFormat('en-US', {
  timeZone: BRASILIA_TZ,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'longOffset',
});

type Parts = { year: string; month: string; day: string; hour: string; minute: string; second: string; offset: string };

function partsOf(date: Date): Parts {
  if (Number.isNaN(date.getTime())) throw new RangeError('data inválida');
  const p: Record<string, string> = {};
  for (const { type, value } of brasiliaParts.formatToParts(date)) p[type] = value;
  // longOffset is "GMT-03:00", or just "GMT" for a zero offset.
  const offset = p.timeZoneName === 'GMT' ? '+00:00' : (p.timeZoneName ?? '').replace(/^GMT/, '');
  return {
    year: p.year!.padStart(4, '0'),
    month: p.month!,
    day: p.day!,
    hour: p.hour!,
    minute: p.minute!,
    second: p.second!,
    offset,
  };
}

/** ISO 8601 in Brasília time, seconds precision: `2026-11-22T14:03:05-03:00`. */
export function formatBrasilia(date: Date): string {
  const p = partsOf(date);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${p.offset}`;
}

/** The calendar day in Brasília: `2026-11-22`. */
export function brasiliaDay(date: Date): string {
  const p = partsOf(date);
  return `${p.year}-${p.month}-${p.day}`;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The instants of a Brasília calendar day, `[start, end)`, for "de/ate" day filters.
 * Undefined for a malformed or impossible date (2026-02-30).
 */
export function brasiliaDayRange(day: string): { start: Date; end: Date } | undefined {
  const m = DAY.exec(day);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const utcMidnight = Date.UTC(y, mo - 1, d);
  const check = new Date(utcMidnight);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return undefined;
  // The offset in force at local noon of that day: midnight itself may not exist on a day DST
  // started (Brazil moved clocks at 00:00), noon always does.
  const startOf = (utcDayMs: number) => utcDayMs - offsetMinutesAt(new Date(utcDayMs + 12 * 3600_000)) * 60_000;
  return { start: new Date(startOf(utcMidnight)), end: new Date(startOf(utcMidnight + 24 * 3600_000)) };
}

/** Minutes east of UTC in Brasília at `date` (-180 today). */
export function offsetMinutesAt(date: Date): number {
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(partsOf(date).offset);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

/** The hour of the day (0–23) in Brasília. */
export function brasiliaHour(date: Date): number {
  return Number(partsOf(date).hour);
}

/**
 * The [start, end) instants of the Brasília days `de` to `ate`, both included; undefined when
 * either is malformed or `de` comes after `ate`.
 */
export function brasiliaPeriod(de: string, ate: string): { start: Date; end: Date } | undefined {
  const first = brasiliaDayRange(de);
  const last = brasiliaDayRange(ate);
  if (!first || !last || first.start >= last.end) return undefined;
  return { start: first.start, end: last.end };
}

