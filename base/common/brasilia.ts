// Brasília time, the one way: fiscal documents, API answers and receipts show instants in the
// Brasília zone. The offset comes from the time-zone database (BRASILIA_TZ below), never a
// hard-coded -03:00: Brazil dropped DST in 2019, but dates before that, and any future change,
// stay right. Intl.DateTimeFormat is far costlier to build than to use, so each is built once,
// and asked for a zone's offset once per hour (wallClock).

export const BRASILIA_TZ = 'America/Sao_Paulo';

type WallClock = { year: string; month: string; day: string; hour: string; minute: string; second: string; offset: string };

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    formats.set(timeZone, f);
  }
  return f;
}

/** The wall clock of `date` in `timeZone` (Brasília by default), with its UTC offset (`-03:00`). */
export function wallClock(date: Date | number, timeZone: string = BRASILIA_TZ): WallClock {
  const ms = typeof date === 'number' ? date : date.getTime();
  if (Number.isNaN(ms)) throw new RangeError('data inválida');
  // Intl costs ~5 µs a call, once per NFC-e: the offset is taken from it once per UTC hour and
  // the wall clock computed from it, unless the offset changes within that hour.
  const hour = hourOffset(Math.floor(ms / HOUR), timeZone);
  if (hour === null) return intlWallClock(ms, timeZone);
  const d = new Date(ms + hour.ms);
  const year = d.getUTCFullYear();
  if (year < 1000 || year > 9999) return intlWallClock(ms, timeZone);
  return {
    year: String(year),
    month: two(d.getUTCMonth() + 1),
    day: two(d.getUTCDate()),
    hour: two(d.getUTCHours()),
    minute: two(d.getUTCMinutes()),
    second: two(d.getUTCSeconds()),
    offset: hour.offset,
  };
}

const HOUR = 3_600_000;
const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** The offset of a zone through one UTC hour (null: it changes within the hour), by hour. */
type HourOffset = { offset: string; ms: number } | null;
const hourOffsets = new Map<string, Map<number, HourOffset>>();

/**
 * The offset in force through the whole UTC hour `hour` (hours since the epoch) in `timeZone`,
 * from Intl at its first and last millisecond; null when they differ (a change of offset, which
 * the database may place at any second: local mean time ended at 03:06:28 UTC in São Paulo).
 * No zone changes offset twice within an hour, so two equal ends mean one offset throughout.
 */
function hourOffset(hour: number, timeZone: string): HourOffset {
  let byHour = hourOffsets.get(timeZone);
  if (!byHour) hourOffsets.set(timeZone, (byHour = new Map()));
  let found = byHour.get(hour);
  if (found === undefined) {
    const start = hour * HOUR;
    const first = intlWallClock(start, timeZone);
    const last = intlWallClock(start + HOUR - 1, timeZone);
    const local = Date.UTC(Number(first.year), Number(first.month) - 1, Number(first.day), Number(first.hour), Number(first.minute), Number(first.second));
    found = first.offset === last.offset && Number(first.year) >= 1000 ? { offset: first.offset, ms: local - start } : null;
    if (byHour.size >= 4096) byHour.clear(); // a few hours a day are asked for; never unbounded
    byHour.set(hour, found);
  }
  return found;
}

/** The wall clock as Intl gives it: the reference, and the answer for the hours not cached. */
function intlWallClock(ms: number, timeZone: string): WallClock {
  const p: Record<string, string> = {};
  for (const { type, value } of formatFor(timeZone).formatToParts(ms)) p[type] = value;
  // longOffset is "GMT-03:00", or just "GMT" for a zero offset.
  const offset = p.timeZoneName === 'GMT' ? '+00:00' : (p.timeZoneName ?? '').replace(/^GMT/, '');
  return { year: p.year!.padStart(4, '0'), month: p.month!, day: p.day!, hour: p.hour!, minute: p.minute!, second: p.second!, offset };
}

/** ISO 8601 in Brasília time, seconds precision: `2026-11-22T14:03:05-03:00`. */
export function formatBrasilia(date: Date | number): string {
  const p = wallClock(date);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${p.offset}`;
}

/** The calendar day in Brasília: `2026-11-22`. */
export function brasiliaDay(date: Date | number): string {
  const p = wallClock(date);
  return `${p.year}-${p.month}-${p.day}`;
}

/** "22/11/2026", the day in Brasília as people read it. */
export function formatDateBR(date: Date | number): string {
  const p = wallClock(date);
  return `${p.day}/${p.month}/${p.year}`;
}

/** "22/11/2026 14:03:05" in `timeZone` (Brasília by default). */
export function formatDateTimeBR(date: Date | number, timeZone: string = BRASILIA_TZ): string {
  const p = wallClock(date, timeZone);
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}:${p.second}`;
}

/** Minutes east of UTC in Brasília at `date` (-180 today). */
export function offsetMinutesAt(date: Date | number): number {
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(wallClock(date).offset);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The instants of a Brasília calendar day, `[start, end)`, for "from/to" day filters.
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

/** The hour of the day (0–23) in Brasília. */
export function brasiliaHour(date: Date | number): number {
  return Number(wallClock(date).hour);
}
