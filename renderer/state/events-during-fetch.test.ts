import { describe, expect, it } from 'vitest';
import { EventsDuringFetch } from './events-during-fetch.ts';

describe('EventsDuringFetch', () => {
  it('applies the answer, then the events seen while it travelled, in order; earlier and later events are not replayed', async () => {
    const events = new EventsDuringFetch<string>();
    const applied: string[] = [];
    events.seen('before');
    let answer!: (value: string) => void;
    const fetched = events.fetch(
      () => new Promise<string>((resolve) => (answer = resolve)),
      (a) => applied.push(`answer:${a}`),
      (e) => applied.push(e),
    );
    events.seen('during-1');
    events.seen('during-2');
    answer('list');
    await fetched;
    events.seen('after');
    expect(applied).toEqual(['answer:list', 'during-1', 'during-2']);
  });

  it('a failed fetch applies nothing and stops collecting', async () => {
    const events = new EventsDuringFetch<string>();
    const applied: string[] = [];
    const fetched = events.fetch(
      () => Promise.reject(new Error('sem conexão')),
      () => applied.push('answer'),
      (e) => applied.push(e),
    );
    events.seen('during');
    await expect(fetched).rejects.toThrow('sem conexão');
    const next = events.fetch(
      async () => 'ok',
      () => applied.push('answer'),
      (e) => applied.push(e),
    );
    await next;
    expect(applied).toEqual(['answer']);
  });
});
