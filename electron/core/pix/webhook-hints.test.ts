import { describe, expect, it } from 'vitest';
import type { PixChargeRow } from './pix-store.ts';
import { WebhookHints } from './webhook-hints.ts';

const charge = (txid: string, state: PixChargeRow['state']) => ({ txid, state }) as PixChargeRow;

describe('WebhookHints: what the service heard from the PSP, as a hint', () => {
  it('makes a charge due once per PIX the service has seen, asking at its interval', async () => {
    let answer = { webhook: true, endToEndIds: [] as string[] };
    const asked: string[] = [];
    const hints = new WebhookHints(
      async (txid) => {
        asked.push(txid);
        return answer;
      },
      { askMs: 1_000 },
    );
    const open = [charge('a', 'active'), charge('b', 'creating'), charge('c', 'finished')];
    expect(await hints.seen(open, 0)).toEqual([]);
    expect(asked).toEqual(['a', 'b']);
    expect(hints.webhook).toBe(true);
    expect(hints.nextAskIn(open, 400)).toBe(600);

    answer = { webhook: true, endToEndIds: ['E1'] };
    expect(await hints.seen(open, 500)).toEqual([]); // not asked before its interval
    expect(await hints.seen(open, 1_000)).toEqual(['a']); // a charge being created is not read yet
    expect(await hints.seen(open, 2_000)).toEqual([]); // the same PIX: no second read
    answer = { webhook: true, endToEndIds: ['E1', 'E2'] };
    expect(await hints.seen(open, 3_000)).toEqual(['a']); // paid twice: read again
  });

  it('falls back to polling as before when the service has no webhook or does not answer', async () => {
    let fail = false;
    const hints = new WebhookHints(
      async () => {
        if (fail) throw new Error('serviço fora');
        return { webhook: true, endToEndIds: [] };
      },
      { askMs: 1_000, askWithoutWebhookMs: 30_000 },
    );
    await hints.seen([charge('a', 'active')], 0);
    expect(hints.webhook).toBe(true);
    fail = true;
    expect(await hints.seen([charge('a', 'active')], 1_000)).toEqual([]);
    expect(hints.webhook).toBe(false);
    expect(hints.nextAskIn([charge('a', 'active')], 1_000)).toBe(30_000);
    expect(await new WebhookHints(undefined).seen([charge('a', 'active')], 0)).toEqual([]);
    expect(new WebhookHints(undefined).nextAskIn([charge('a', 'active')], 0)).toBeUndefined();
  });
});
