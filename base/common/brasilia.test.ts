import { describe, expect, it } from 'vitest';
import {
  BRASILIA_TZ,
  brasiliaDay,
  brasiliaDayRange,
  brasiliaHour,
  brasiliaPeriod,
  formatBrasilia,
  formatDateBR,
  formatDateTimeBR,
  offsetMinutesAt,
  wallClock,
} from './brasilia.ts';

describe('BRASILIA_TZ', () => {
  it('is an IANA zone the runtime knows, at UTC−3 since DST ended in 2019', () => {
    const hour = new Intl.DateTimeFormat('en-GB', { timeZone: BRASILIA_TZ, hour: '2-digit', hourCycle: 'h23' }).format(new Date('2025-01-15T15:00:00Z'));
    expect(hour).toBe('12');
  });
});

describe('formatBrasilia', () => {
  it('shows the instant in Brasília with its offset, to the second', () => {
    expect(formatBrasilia(new Date('2026-11-22T17:03:05.999Z'))).toBe('2026-11-22T14:03:05-03:00');
    // Late evening in Brasília is already the next day in UTC.
    expect(formatBrasilia(new Date('2026-11-23T02:59:59Z'))).toBe('2026-11-22T23:59:59-03:00');
    expect(formatBrasilia(new Date('2026-01-01T03:00:00Z'))).toBe('2026-01-01T00:00:00-03:00');
  });

  it('takes the offset from the time-zone database: summer time before 2019 was -02:00', () => {
    expect(formatBrasilia(new Date('2018-12-01T12:00:00Z'))).toBe('2018-12-01T10:00:00-02:00');
    expect(offsetMinutesAt(new Date('2018-12-01T12:00:00Z'))).toBe(-120);
    expect(offsetMinutesAt(new Date('2026-12-01T12:00:00Z'))).toBe(-180);
  });

  it('parses back to the same second', () => {
    const d = new Date('2026-07-04T08:09:10Z');
    expect(new Date(formatBrasilia(d)).getTime()).toBe(d.getTime());
  });

  it('refuses an invalid date', () => {
    expect(() => formatBrasilia(new Date('nope'))).toThrow(RangeError);
  });
});

describe('Brasília days', () => {
  it('names the day in Brasília', () => {
    expect(brasiliaDay(new Date('2026-11-23T02:59:59Z'))).toBe('2026-11-22');
    expect(brasiliaDay(new Date('2026-11-23T03:00:00Z'))).toBe('2026-11-23');
  });

  it('gives the [start, end) instants of a day', () => {
    expect(brasiliaDayRange('2026-11-22')).toEqual({
      start: new Date('2026-11-22T03:00:00Z'),
      end: new Date('2026-11-23T03:00:00Z'),
    });
  });

  it('refuses malformed and impossible days', () => {
    expect(brasiliaDayRange('2026-02-30')).toBeUndefined();
    expect(brasiliaDayRange('22/11/2026')).toBeUndefined();
    expect(brasiliaDayRange('2026-11-2')).toBeUndefined();
  });
});

describe('as people read it', () => {
  it('gives the day and the time in Brasília, or in another zone', () => {
    const instant = new Date('2026-11-22T02:30:00Z'); // still the 21st in Brasília
    expect(formatDateBR(instant)).toBe('21/11/2026');
    expect(formatDateTimeBR(instant)).toBe('21/11/2026 23:30:00');
    expect(formatDateTimeBR(instant, 'America/Manaus')).toBe('21/11/2026 22:30:00');
  });
});

describe('brasiliaHour', () => {
  it('is the hour on a Brasília wall clock, not UTC', () => {
    expect(brasiliaHour(new Date('2026-11-23T02:30:00Z'))).toBe(23);
    expect(brasiliaHour(new Date('2026-11-23T03:00:00Z'))).toBe(0);
  });
});

describe('brasiliaPeriod', () => {
  it('spans from the start of the first day to the end of the last, both included', () => {
    expect(brasiliaPeriod('2026-11-01', '2026-11-30')).toEqual({ start: new Date('2026-11-01T03:00:00Z'), end: new Date('2026-12-01T03:00:00Z') });
    expect(brasiliaPeriod('2026-11-22', '2026-11-22')).toEqual({ start: new Date('2026-11-22T03:00:00Z'), end: new Date('2026-11-23T03:00:00Z') });
  });

  it('refuses a malformed day or a period that ends before it starts', () => {
    expect(brasiliaPeriod('2026-02-30', '2026-03-01')).toBeUndefined();
    expect(brasiliaPeriod('2026-11-02', '2026-11-01')).toBeUndefined();
  });
});

describe('wallClock', () => {
  // The reference: Intl asked for every instant, as wallClock did before it kept offsets by hour.
  const formats = new Map<string, Intl.DateTimeFormat>();
  const intl = (ms: number, timeZone: string) => {
    const p: Record<string, string> = {};
    let format = formats.get(timeZone);
    if (!format) {
      format = new Intl.DateTimeFormat('en-US', {
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
      formats.set(timeZone, format);
    }
    for (const { type, value } of format.formatToParts(ms)) p[type] = value;
    const offset = p.timeZoneName === 'GMT' ? '+00:00' : p.timeZoneName!.replace(/^GMT/, '');
    return { year: p.year!.padStart(4, '0'), month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second, offset };
  };
  const offsetOf = (ms: number, timeZone: string) => intl(ms, timeZone).offset;
  /** Every instant from 1890 to 2040 at which the zone's offset changes, to the millisecond. */
  const changes = (timeZone: string): number[] => {
    const found: number[] = [];
    const day = 86_400_000;
    for (let t = Date.UTC(1890, 0, 1); t < Date.UTC(2040, 0, 1); t += day) {
      if (offsetOf(t, timeZone) === offsetOf(t + day, timeZone)) continue;
      let [lo, hi] = [t, t + day];
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (offsetOf(mid, timeZone) === offsetOf(lo, timeZone)) lo = mid;
        else hi = mid;
      }
      found.push(hi);
    }
    return found;
  };

  it.each([BRASILIA_TZ, 'America/Manaus', 'America/Noronha'])('agrees with Intl around every change of offset in %s since 1890', (timeZone) => {
    const all = changes(timeZone);
    // São Paulo: local mean time (-03:06:28) until 1914, then decades of summer time until 2019.
    if (timeZone === BRASILIA_TZ) expect(all.length).toBeGreaterThan(80);
    for (const at of all) {
      for (const delta of [-3_600_001, -3_600_000, -1000, -1, 0, 1, 999, 1000, 1_799_999, 3_599_999, 3_600_000]) {
        expect(wallClock(at + delta, timeZone)).toEqual(intl(at + delta, timeZone));
      }
    }
  });

  it('agrees with Intl at random instants from 1000 to 9999, in Brasília and elsewhere', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const timeZone of [BRASILIA_TZ, 'UTC', 'Asia/Kolkata', 'America/Manaus']) {
      for (let k = 0; k < 2000; k++) {
        const ms = Math.floor(Date.UTC(1000, 0, 1) + random() * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1)));
        expect(wallClock(ms, timeZone)).toEqual(intl(ms, timeZone));
        expect(wallClock(ms + 1, timeZone)).toEqual(intl(ms + 1, timeZone));
      }
    }
    for (const ms of [Date.UTC(999, 11, 31, 23), Date.UTC(10000, 0, 1, 5), -1, 0, Date.UTC(1914, 0, 1, 3, 6, 27, 999), Date.UTC(1914, 0, 1, 3, 6, 28)]) {
      expect(wallClock(ms)).toEqual(intl(ms, BRASILIA_TZ));
    }
  });
});
