import { describe, expect, it } from 'vitest';
import { ServiceClock } from './service-clock.ts';

describe('ServiceClock', () => {
  const local = Date.parse('2026-11-22T15:00:00.400Z');

  it('is unknown until an answer is dated, and ignores a missing or garbled Date', () => {
    const clock = new ServiceClock(() => local);
    expect(clock.offsetMs).toBeNull();
    clock.observe(null);
    clock.observe('ontem à tarde');
    expect(clock.offsetMs).toBeNull();
  });

  it('takes the top of the Date second: the service is never believed earlier than it can be', () => {
    const clock = new ServiceClock(() => local);
    clock.observe('Sun, 22 Nov 2026 15:00:00 GMT'); // sent within [15:00:00, 15:00:01)
    expect(clock.offsetMs).toBe(600);
    clock.observe('Sun, 22 Nov 2026 15:31:00 GMT'); // the sandbox clock moved 31 minutes
    expect(clock.offsetMs).toBe(31 * 60_000 + 600);
  });

  it('tells of a jump, not of the rounding of every answer', () => {
    let jumps = 0;
    let now = local;
    const clock = new ServiceClock(
      () => now,
      () => jumps++,
    );
    clock.observe('Sun, 22 Nov 2026 15:00:00 GMT');
    expect(jumps).toBe(0); // learned, and it agrees with ours
    now += 1500;
    clock.observe('Sun, 22 Nov 2026 15:00:02 GMT');
    expect(jumps).toBe(0);
    clock.observe('Sun, 22 Nov 2026 15:31:02 GMT');
    expect(jumps).toBe(1);
    const behind = new ServiceClock(
      () => local,
      () => jumps++,
    );
    behind.observe('Sun, 22 Nov 2026 14:50:00 GMT'); // a PC 10 minutes fast: known from the start
    expect(jumps).toBe(2);
  });
});
