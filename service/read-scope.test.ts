import { describe, expect, it } from 'vitest';
import { inReadScope, readOnce, remember } from './read-scope.ts';

describe('read scope', () => {
  it('reads once per scope, shared by its continuations; outside a scope, every time; a new scope reads again', async () => {
    let reads = 0;
    const read = async () => ++reads;
    expect(await readOnce('k', read)).toBe(1);
    expect(await readOnce('k', read)).toBe(2);
    await inReadScope(async () => {
      const [a, b] = await Promise.all([readOnce('k', read), readOnce('k', read)]);
      await new Promise((r) => setTimeout(r, 5));
      expect([a, b, await readOnce('k', read)]).toEqual([3, 3, 3]);
    });
    expect(await inReadScope(() => readOnce('k', read))).toBe(4);
  });

  it('a failed read is not kept; a value remembered by the scope (its own write) replaces the reading', async () => {
    let attempt = 0;
    await inReadScope(async () => {
      await expect(readOnce('k', async () => (++attempt === 1 ? Promise.reject(new Error('fora')) : attempt))).rejects.toThrow('fora');
      expect(await readOnce('k', async () => ++attempt)).toBe(2);
      remember('k', 99);
      expect(await readOnce('k', async () => ++attempt)).toBe(99);
    });
  });

  it('a scope handed in explicitly is the one used (a request seeds its own before its handler runs)', async () => {
    const scope = new Map<string, Promise<unknown>>();
    remember('k', 'do token', scope);
    expect(await readOnce('k', async () => 'lido', scope)).toBe('do token');
    expect(await inReadScope(() => readOnce('k', async () => 'lido'), scope)).toBe('do token');
  });
});
