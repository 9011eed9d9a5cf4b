import { describe, expect, it } from 'vitest';
import { brasiliaHour, brasiliaPeriod } from './brasilia-time.ts';

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
