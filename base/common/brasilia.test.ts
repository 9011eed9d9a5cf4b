import { describe, expect, it } from 'vitest';
import { BRASILIA_TZ, brasiliaDay, brasiliaDayRange, brasiliaHour, brasiliaPeriod, formatBrasilia, formatDateBR, formatDateTimeBR, offsetMinutesAt } from './brasilia.ts';

describe('BRASILIA_TZ', () => {
  it('is an IANA zone the runtime knows, at UTC−3 since DST ended in 2019', () => {
    const hour = new Intl.DateTimeFormat('en-GB', { timeZone: BRASILIA_TZ, hour: '2-digit', hourCycle: 'h23' }).format(
      new Date('2025-01-15T15:00:00Z'),
    );
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
