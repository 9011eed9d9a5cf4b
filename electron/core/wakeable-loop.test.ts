import { describe, expect, it } from 'vitest';
import { WakeableLoop } from './wakeable-loop.ts';

const LONG_SLEEP = 3_600_000; // a round that asks for this is only ever ended by a wake

describe('WakeableLoop', () => {
  it('a wake during a round starts the next one at once; a wake while asleep ends the sleep', async () => {
    let rounds = 0;
    const loop: WakeableLoop = new WakeableLoop(() => {
      rounds++;
      if (rounds === 1) loop.wake(); // new work written while the first round ran
      return LONG_SLEEP;
    });
    loop.start();
    await expect.poll(() => rounds).toBe(2);
    loop.wake();
    await expect.poll(() => rounds).toBe(3);
    await loop.stop();
    expect(loop.running).toBe(false);
  });

  it('stop waits for the round under way, and no round starts after it', async () => {
    let rounds = 0;
    let finishRound!: () => void;
    const loop = new WakeableLoop(async (state) => {
      rounds++;
      await new Promise<void>((resolve) => (finishRound = resolve));
      expect(state.running).toBe(false); // the round can see it should wind down
      return 0;
    });
    loop.start();
    await expect.poll(() => rounds).toBe(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    finishRound();
    await stopping;
    expect(rounds).toBe(1);
  });
});
