import { describe, expect, it } from 'vitest';
import { howFar, ServiceClock } from './service-clock.ts';

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

  it("dates what the terminal signs on the service's time, never after it (the bottom of the Date second); the PC's own until it knows", () => {
    const clock = new ServiceClock(() => local);
    expect(clock.fiscalNow()).toBe(local);
    clock.observe('Sun, 22 Nov 2026 12:00:00 GMT'); // a PC 3 h fast
    expect(clock.fiscalNow()).toBe(Date.parse('2026-11-22T12:00:00.000Z'));
  });

  it('keeps the offset it learns (the first answer, every jump) and starts from the one kept', () => {
    const kept: number[] = [];
    const clock = new ServiceClock(() => local, undefined, { keep: (o) => kept.push(o) });
    clock.observe('Sun, 22 Nov 2026 15:00:00 GMT');
    clock.observe('Sun, 22 Nov 2026 15:00:00 GMT');
    clock.observe('Mon, 23 Nov 2026 17:00:00 GMT');
    expect(kept).toEqual([600, 26 * 3_600_000 + 600]);
    const next = new ServiceClock(() => local, undefined, { seed: kept.at(-1)! });
    expect(next.fiscalNow()).toBe(Date.parse('2026-11-23T17:00:00.000Z'));
    expect(next.observedAt).toBeNull(); // known from the last run: the service is still asked
  });

  it('says in words how far the PC is, and which way, beyond three minutes', () => {
    const clock = new ServiceClock(() => local);
    clock.observe('Sun, 22 Nov 2026 15:02:00 GMT');
    expect(clock.alert()).toBeNull();
    clock.observe('Sun, 22 Nov 2026 12:00:00 GMT');
    expect(clock.alert()).toMatch(/^O relógio deste computador está 3 h adiantado em relação ao serviço de emissão\. Acerte a data e a hora/);
    clock.observe('Mon, 23 Nov 2026 17:00:00 GMT');
    expect(clock.alert()).toMatch(/está 26 h atrasado/);
    expect([howFar(12 * 60_000), howFar(90 * 60_000), howFar(5 * 24 * 3_600_000)]).toEqual(['12 min', '1 h 30 min', '5 dias']);
  });
});
