import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UFS, type UF } from './br/uf.ts';
import { FieldError } from './errors.ts';
import { areNeighbours, MAX_PERCURSO, suggestRoute, validateRoute } from './percurso.ts';
import { UF_BORDERS } from './br/uf-borders.ts';

// The test reads the table itself and derives its own oracle (all shortest chains by
// enumeration), so it does not trust the module's BFS.
const table: Record<string, readonly string[]> = UF_BORDERS;
const adj = (a: string): readonly string[] => table[a] ?? [];

function distances(from: string): Map<string, number> {
  const dist = new Map([[from, 0]]);
  const queue = [from];
  while (queue.length) {
    const cur = queue.shift()!;
    for (const n of adj(cur)) {
      if (!dist.has(n)) {
        dist.set(n, dist.get(cur)! + 1);
        queue.push(n);
      }
    }
  }
  return dist;
}
const DIST = new Map(UFS.map((uf) => [uf, distances(uf)]));
const distance = (a: string, b: string) => DIST.get(a as UF)!.get(b)!;

/** Every shortest chain of intermediates from a to b. */
function allShortestChains(a: string, b: string): string[][] {
  const d = distance(a, b);
  const out: string[][] = [];
  const walk = (cur: string, path: string[]) => {
    if (path.length === d - 1) {
      if (adj(cur).includes(b)) out.push(path);
      return;
    }
    for (const n of adj(cur)) if (distance(a, n) === path.length + 1) walk(n, [...path, n]);
  };
  if (d >= 2) walk(a, []);
  return out;
}
const lexMin = (chains: string[][]) =>
  [...chains].sort((x, y) => {
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return 0;
  })[0];

describe('adjacency table', () => {
  it('is symmetric, irreflexive, over the 27 UFs, with 51 edges', () => {
    expect(Object.keys(table).sort()).toEqual([...UFS]);
    const edges = new Set<string>();
    for (const [a, list] of Object.entries(table)) {
      for (const b of list) {
        expect(UFS).toContain(b);
        expect(b).not.toBe(a);
        expect(table[b], `${b} should list ${a}`).toContain(a);
        edges.add([a, b].sort().join('-'));
      }
    }
    expect(edges.size).toBe(51);
  });

  it('is what areNeighbours answers, in both directions', () => {
    for (const a of UFS) {
      for (const b of UFS) expect(areNeighbours(a, b)).toBe(adj(a).includes(b));
    }
    expect(areNeighbours('DF', 'MG')).toBe(true); // UNCERTAIN at SEFAZ (docs/fiscal.md, "MDF-e percurso"), pinned here
    expect(areNeighbours('RS', 'SC')).toBe(true);
    expect(areNeighbours('RS', 'PR')).toBe(false);
    expect(areNeighbours('sp', 'mg')).toBe(false);
    expect(areNeighbours('XX', 'SP')).toBe(false);
  });
});

describe('suggestRoute: vectors of docs/fiscal.md, "MDF-e percurso"', () => {
  it.each([
    ['SP', 'BA', ['MG']],
    ['RS', 'RJ', ['SC', 'PR', 'SP']],
    ['GO', 'RS', ['MS', 'PR', 'SC']],
    ['RS', 'SP', ['SC', 'PR']],
    ['GO', 'RJ', ['MG']],
    ['DF', 'MG', []],
    ['DF', 'SP', ['MG']],
    ['RS', 'AP', ['SC', 'PR', 'MS', 'MT', 'PA']],
    ['SP', 'PE', ['MG', 'BA']],
    ['RS', 'SC', []],
    ['GO', 'MG', []],
    ['SP', 'SP', []],
  ])('%s → %s = %j', (from, to, chain) => {
    expect(suggestRoute(from, to)).toEqual(chain);
    expect(validateRoute(from, to, chain)).toEqual({ valid: true });
  });

  // Ties resolved by the documented rule: the lexicographically smallest shortest chain.
  it.each([
    ['PE', 'RN', ['CE'], [['CE'], ['PB']]],
    ['MT', 'BA', ['GO'], [['GO'], ['TO']]],
    [
      'BA',
      'PR',
      ['GO', 'MS'],
      [
        ['GO', 'MS'],
        ['MG', 'MS'],
        ['MG', 'SP'],
      ],
    ],
  ])('tie %s → %s = %j', (from, to, chosen, ties) => {
    expect(allShortestChains(from, to).sort()).toEqual(ties);
    expect(suggestRoute(from, to)).toEqual(chosen);
    for (const alternative of ties) expect(validateRoute(from, to, alternative)).toEqual({ valid: true });
  });

  it('RN → RS is the longest: 7 intermediates, 11 shortest chains, the smallest one chosen', () => {
    const chains = allShortestChains('RN', 'RS');
    expect(chains).toHaveLength(11);
    expect(chains).toContainEqual(['CE', 'PE', 'BA', 'MG', 'MS', 'PR', 'SC']);
    expect(suggestRoute('RN', 'RS')).toEqual(['CE', 'PE', 'BA', 'GO', 'MS', 'PR', 'SC']);
    expect(suggestRoute('RS', 'RN')).toHaveLength(7);
    const longest = Math.max(...UFS.flatMap((a) => UFS.map((b) => distance(a, b))));
    expect(longest - 1).toBe(7);
  });

  it('rejects a non-UF end with a FieldError naming it', () => {
    expect(() => suggestRoute('XX', 'SP')).toThrow(FieldError);
    expect(() => suggestRoute('SP', 'sp')).toThrow(/^UFFim: /);
  });
});

describe('suggestRoute over all 702 ordered pairs', () => {
  const pairs = UFS.flatMap((a) => UFS.filter((b) => b !== a).map((b) => [a, b] as const));

  it('gives a valid chain of BFS distance − 1 states, the lexicographically smallest shortest one', () => {
    expect(pairs).toHaveLength(702);
    let ties = 0;
    for (const [a, b] of pairs) {
      const route = suggestRoute(a, b);
      expect(validateRoute(a, b, route), `${a}→${b}`).toEqual({ valid: true });
      expect(route.length).toBe(Math.max(0, distance(a, b) - 1));
      const chains = allShortestChains(a, b);
      if (chains.length > 1) ties++;
      if (chains.length) expect(route).toEqual(lexMin(chains));
    }
    expect(ties).toBe(374); // docs/fiscal.md, "MDF-e percurso"
  });

  it('property: for any ordered pair of distinct UFs, the suggestion passes validateRoute and is shortest', () => {
    fc.assert(
      fc.property(fc.constantFrom(...pairs), ([a, b]) => {
        const route = suggestRoute(a, b);
        expect(validateRoute(a, b, route)).toEqual({ valid: true });
        expect(route.length).toBe(distance(a, b) - 1);
        // Not symmetric in general, but always as short the other way round.
        expect(suggestRoute(b, a).length).toBe(route.length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('validateRoute: the five rules', () => {
  it('rule 1: same start and end admit no percurso', () => {
    expect(validateRoute('SP', 'SP', [])).toEqual({ valid: true });
    expect(validateRoute('SP', 'SP', ['MG'])).toMatchObject({ valid: false, field: 'infPercurso[0].UFPer' });
  });

  it('rule 2: bordering states admit no percurso (RS,SC for RS→SC is rejection 663)', () => {
    expect(validateRoute('RS', 'SC', [])).toEqual({ valid: true });
    const r = validateRoute('RS', 'SC', ['RS', 'SC']);
    expect(r).toMatchObject({
      valid: false,
      field: 'infPercurso[0].UFPer',
      message: expect.stringContaining('RS e SC fazem divisa'),
    });
    expect(validateRoute('DF', 'MG', ['GO'])).toMatchObject({ valid: false, field: 'infPercurso[0].UFPer' });
    expect(validateRoute('GO', 'MG', [])).toEqual({ valid: true });
  });

  it('rule 3: non-bordering states need a percurso, and the message suggests one', () => {
    expect(validateRoute('SP', 'BA', [])).toMatchObject({
      valid: false,
      field: 'infPercurso',
      message: expect.stringMatching(/obrigatório.*sugestão: MG/),
    });
  });

  it('rule 3: UFIni and UFFim are not repeated in the percurso', () => {
    expect(validateRoute('RS', 'SP', ['RS', 'SC', 'PR'])).toMatchObject({
      valid: false,
      field: 'infPercurso[0].UFPer',
      message: expect.stringContaining('início (RS)'),
    });
    expect(validateRoute('RS', 'SP', ['SC', 'PR', 'SP'])).toMatchObject({
      valid: false,
      field: 'infPercurso[2].UFPer',
      message: expect.stringContaining('fim (SP)'),
    });
  });

  it('rule 4: travel order and bordering links, naming the broken link', () => {
    expect(validateRoute('RS', 'RJ', ['SC', 'PR', 'SP'])).toEqual({ valid: true });
    // RS does not border PR.
    expect(validateRoute('RS', 'RJ', ['PR', 'SC', 'SP'])).toEqual({
      valid: false,
      field: 'infPercurso[0].UFPer',
      message: 'RS e PR não fazem divisa',
    });
    // Reversed chain: RS does not border SP.
    expect(validateRoute('RS', 'RJ', ['SP', 'PR', 'SC'])).toEqual({
      valid: false,
      field: 'infPercurso[0].UFPer',
      message: 'RS e SP não fazem divisa',
    });
    // GO→RS in the wrong order (docs/fiscal.md, "MDF-e percurso": must be MS, PR, SC).
    expect(validateRoute('GO', 'RS', ['PR', 'MS', 'SC'])).toMatchObject({
      valid: false,
      field: 'infPercurso[0].UFPer',
      message: 'GO e PR não fazem divisa',
    });
    // A gap in the middle.
    expect(validateRoute('RS', 'RJ', ['SC', 'SP'])).toEqual({
      valid: false,
      field: 'infPercurso[1].UFPer',
      message: 'SC e SP não fazem divisa',
    });
    // The last state must border UFFim.
    expect(validateRoute('RS', 'RJ', ['SC', 'PR'])).toEqual({
      valid: false,
      field: 'infPercurso[1].UFPer',
      message: 'PR e RJ não fazem divisa',
    });
  });

  it('accepts a longer chain than the shortest, if every link borders', () => {
    expect(validateRoute('SP', 'BA', ['RJ', 'ES'])).toEqual({ valid: true });
    expect(validateRoute('PE', 'RN', ['PB'])).toEqual({ valid: true });
  });

  it('rule 5 (codes): every entry is a real UF, and the ends too', () => {
    expect(validateRoute('SP', 'BA', ['mg'])).toMatchObject({ valid: false, field: 'infPercurso[0].UFPer' });
    expect(validateRoute('RS', 'RJ', ['SC', 'XX', 'SP'])).toMatchObject({
      valid: false,
      field: 'infPercurso[1].UFPer',
      message: expect.stringContaining('inexistente'),
    });
    expect(validateRoute('EX', 'SP', [])).toMatchObject({ valid: false, field: 'UFIni' });
    expect(validateRoute('SP', '', [])).toMatchObject({ valid: false, field: 'UFFim' });
  });

  it('refuses the same state twice in a row and more than 25 entries', () => {
    expect(validateRoute('SP', 'BA', ['MG', 'MG'])).toMatchObject({ valid: false, field: 'infPercurso[1].UFPer' });
    const tooLong = Array.from({ length: MAX_PERCURSO + 1 }, (_, i) => (i % 2 ? 'SC' : 'PR'));
    expect(validateRoute('SP', 'RS', tooLong)).toMatchObject({ valid: false, field: 'infPercurso' });
  });

  it('property: a random walk is accepted exactly when it satisfies the rules', () => {
    const outcomes = { true: 0, false: 0 };
    // Walks over the real graph that usually end next to UFFim, with an occasional arbitrary UF
    // spliced in, so both outcomes occur often.
    const walk = fc.record({
      from: fc.constantFrom(...UFS),
      to: fc.oneof(fc.constantFrom(...UFS), fc.nat()), // a number: some neighbour of the walk's end
      steps: fc.array(fc.nat(), { maxLength: 8 }),
      splice: fc.option(fc.record({ at: fc.nat(), uf: fc.constantFrom(...UFS) })),
    });
    fc.assert(
      fc.property(walk, ({ from, to: toPick, steps, splice }) => {
        const route: string[] = [];
        let cur: string = from;
        for (const s of steps) {
          const n = adj(cur);
          cur = n[s % n.length]!;
          route.push(cur);
        }
        const to = typeof toPick === 'string' ? toPick : adj(cur)[toPick % adj(cur).length]!;
        if (splice && route.length) route[splice.at % route.length] = splice.uf;

        const chain = [from, ...route, to];
        const expected =
          from === to || adj(from).includes(to)
            ? route.length === 0
            : route.length > 0 && route.every((u) => u !== from && u !== to) && chain.every((u, i) => i === 0 || adj(chain[i - 1]!).includes(u));
        expect(validateRoute(from, to, route).valid).toBe(expected);
        outcomes[expected ? 'true' : 'false']++;
      }),
      { numRuns: 2000 },
    );
    // Guard against a generator that only ever produces one outcome.
    expect(outcomes.true).toBeGreaterThan(100);
    expect(outcomes.false).toBeGreaterThan(100);
  });
});
