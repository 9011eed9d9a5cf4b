import { describe, expect, it } from 'vitest';
import { brasiliaToday, firstOfMonth } from './brasilia-day.ts';

describe('brasiliaToday', () => {
  it('is the Brasília calendar day, not UTC’s', () => {
    expect(brasiliaToday(new Date('2026-11-23T02:30:00Z'))).toBe('2026-11-22');
    expect(brasiliaToday(new Date('2026-11-23T03:00:00Z'))).toBe('2026-11-23');
    expect(firstOfMonth('2026-11-23')).toBe('2026-11-01');
  });
});
