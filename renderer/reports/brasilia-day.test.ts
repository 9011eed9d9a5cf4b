import { describe, expect, it } from 'vitest';
import { brasiliaToday, dayAsTyped, dayFromTyped, firstOfMonth } from './brasilia-day.ts';

describe('brasiliaToday', () => {
  it('is the Brasília calendar day, not UTC’s', () => {
    expect(brasiliaToday(new Date('2026-11-23T02:30:00Z'))).toBe('2026-11-22');
    expect(brasiliaToday(new Date('2026-11-23T03:00:00Z'))).toBe('2026-11-23');
    expect(firstOfMonth('2026-11-23')).toBe('2026-11-01');
  });
});

describe('days as the store types them', () => {
  it('reads dd/mm/aaaa (with or without separators) and writes it back; refuses what is no calendar day', () => {
    expect(dayAsTyped('2026-02-03')).toBe('03/02/2026');
    expect(dayFromTyped('03/02/2026')).toBe('2026-02-03');
    expect(dayFromTyped(' 03022026 ')).toBe('2026-02-03');
    expect(dayFromTyped('29/02/2028')).toBe('2028-02-29');
    for (const bad of ['29/02/2026', '31/04/2026', '02/13/2026', '2026-02-03', '3/2/2026', '']) expect(dayFromTyped(bad), bad).toBeNull();
  });
});
