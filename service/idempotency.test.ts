import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompany } from './companies.ts';
import { ApiError } from './http/errors.ts';
import { decideClaim } from './idempotency-rules.ts';
import type { RaceResult, RaceRound, RaceWorkerData } from './idempotency-race.worker.ts';
import { canonicalJson, Idempotency, readIdempotencyKey, requestFingerprint } from './idempotency.ts';
import { openService } from './open-service.ts';
import type { SqliteStore } from './sqlite-store.ts';

let dataDir: string;
let store: SqliteStore;
let idempotency: Idempotency;
let companyA: string;
let companyB: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'balcao-idempotency-'));
  const opened = await openService(dataDir, {});
  store = opened.store;
  idempotency = new Idempotency(store);
  companyA = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A' })).companyId;
  companyB = (await createCompany(opened, { cnpj: '11444777000161', uf: 'BA', nome: 'Loja B' })).companyId;
});

afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const fp = (body: unknown) => requestFingerprint(body);
const claim = (key: string, body: unknown, options: { companyId?: string; docType?: 'nfce' | 'mdfe'; documentId?: string } = {}) => {
  const documentId = options.documentId ?? randomUUID();
  return idempotency
    .claim({ companyId: options.companyId ?? companyA, docType: options.docType ?? 'nfce', key, fingerprint: fp(body), documentId })
    .then((result) => ({ result, documentId }));
};

describe('canonical JSON and fingerprint', () => {
  it('ignores key order at every depth, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { y: 1, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"x":2,"y":1}]},"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('is the same for any permutation of keys (property)', () => {
    const shuffle = (value: unknown, seed: number): unknown => {
      if (Array.isArray(value)) return value.map((v) => shuffle(v, seed));
      if (value === null || typeof value !== 'object') return value;
      const entries = Object.entries(value);
      const rotated = entries.map((_, i) => entries[(i + seed) % entries.length]!);
      return Object.fromEntries(rotated.reverse().map(([k, v]) => [k, shuffle(v, seed + 1)]));
    };
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(10), (value, seed) => {
        expect(requestFingerprint(shuffle(value, seed))).toBe(requestFingerprint(value));
      }),
    );
  });

  it('leaves referencia_externa out: it is the key, not the content', () => {
    expect(fp({ ide: { nNF: 1 }, referencia_externa: 'pedido-1' })).toBe(fp({ ide: { nNF: 1 } }));
    expect(fp({ ide: { nNF: 1 } })).not.toBe(fp({ ide: { nNF: 2 } }));
    expect(fp({ ide: { nNF: 1 } })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('readIdempotencyKey', () => {
  const fieldsOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect(e.status).toBe(400);
      expect(e.code).toBe('requisicao_invalida');
      return e.options.details?.map((d) => d.field);
    }
    throw new Error('expected a 400');
  };

  it('takes the header, or the body field, or nothing', () => {
    expect(readIdempotencyKey('pedido-1', { a: 1 })).toBe('pedido-1');
    expect(readIdempotencyKey(undefined, { referencia_externa: 'pedido-2' })).toBe('pedido-2');
    expect(readIdempotencyKey('pedido-3', { referencia_externa: 'pedido-3' })).toBe('pedido-3');
    expect(readIdempotencyKey(undefined, { a: 1 })).toBeUndefined();
    expect(readIdempotencyKey(undefined, undefined)).toBeUndefined();
  });

  it('accepts 1 to 200 characters (counted as characters, not bytes)', () => {
    expect(readIdempotencyKey('x', {})).toBe('x');
    expect(readIdempotencyKey('x'.repeat(200), {})).toHaveLength(200);
    expect(readIdempotencyKey(undefined, { referencia_externa: 'ç'.repeat(200) })).toHaveLength(200);
  });

  it('refuses empty, over 200, non-text and two different keys with 400', () => {
    expect(fieldsOf(() => readIdempotencyKey('', {}))).toEqual(['Idempotency-Key']);
    expect(fieldsOf(() => readIdempotencyKey('x'.repeat(201), {}))).toEqual(['Idempotency-Key']);
    expect(fieldsOf(() => readIdempotencyKey(undefined, { referencia_externa: '' }))).toEqual(['referencia_externa']);
    expect(fieldsOf(() => readIdempotencyKey(undefined, { referencia_externa: 'y'.repeat(201) }))).toEqual(['referencia_externa']);
    expect(fieldsOf(() => readIdempotencyKey(undefined, { referencia_externa: 42 }))).toEqual(['referencia_externa']);
    expect(fieldsOf(() => readIdempotencyKey('a', { referencia_externa: 'b' }))).toEqual(['Idempotency-Key', 'referencia_externa']);
  });
});

describe('decideClaim', () => {
  it('is the table of docs/api.md, "Idempotency"', () => {
    const stored = (state: 'processing' | 'authorized' | 'rejected') => ({ state, fingerprint: 'f1', documentId: 'd1' });
    expect(decideClaim(undefined, 'f1')).toEqual({ action: 'insert' });
    expect(decideClaim(stored('processing'), 'f1')).toEqual({ action: 'refuse', result: { kind: 'in_progress', documentId: 'd1' } });
    expect(decideClaim(stored('processing'), 'f2')).toEqual({ action: 'refuse', result: { kind: 'mismatch', documentId: 'd1' } });
    expect(decideClaim(stored('authorized'), 'f1')).toEqual({ action: 'refuse', result: { kind: 'replay', documentId: 'd1' } });
    expect(decideClaim(stored('authorized'), 'f2')).toEqual({ action: 'refuse', result: { kind: 'mismatch', documentId: 'd1' } });
    expect(decideClaim(stored('rejected'), 'f1')).toEqual({ action: 'retake' });
    expect(decideClaim(stored('rejected'), 'f2')).toEqual({ action: 'retake' });
  });
});

describe('Idempotency on a real SQLite file', () => {
  it('first call new; same body while processing → in_progress with the id in flight; different body → mismatch', async () => {
    const first = await claim('k-processing', { n: 1 });
    expect(first.result).toEqual({ kind: 'new' });
    expect((await claim('k-processing', { n: 1 })).result).toEqual({ kind: 'in_progress', documentId: first.documentId });
    expect((await claim('k-processing', { n: 2 })).result).toMatchObject({ kind: 'mismatch' });
  });

  it('after an authorization: replay of the same document, mismatch for another body, also after later events', async () => {
    const first = await claim('k-authorized', { n: 1 });
    const attempt = { companyId: companyA, docType: 'nfce' as const, key: 'k-authorized', documentId: first.documentId };
    expect(await idempotency.settle(attempt, 'authorized')).toBe(true);
    expect((await claim('k-authorized', { n: 1 })).result).toEqual({ kind: 'replay', documentId: first.documentId });
    expect((await claim('k-authorized', { n: 9 })).result).toMatchObject({ kind: 'mismatch' });
    // An authorization is final: a late "rejected" (a confused worker) does not free the key.
    expect(await idempotency.settle(attempt, 'rejected')).toBe(false);
    expect(await idempotency.settle(attempt, 'authorized')).toBe(true);
    expect((await claim('k-authorized', { n: 1 })).result).toEqual({ kind: 'replay', documentId: first.documentId });
  });

  it('after a rejection the key is free: a real new attempt, even with a corrected body', async () => {
    const first = await claim('k-rejected', { n: 1 });
    await idempotency.settle({ companyId: companyA, docType: 'nfce', key: 'k-rejected', documentId: first.documentId }, 'rejected');
    const second = await claim('k-rejected', { n: 1, corrigido: true });
    expect(second.result).toEqual({ kind: 'new' });
    expect((await claim('k-rejected', { n: 1, corrigido: true })).result).toEqual({
      kind: 'in_progress',
      documentId: second.documentId,
    });
    // The first attempt's outcome can no longer touch the key, which now belongs to the second.
    expect(await idempotency.settle({ companyId: companyA, docType: 'nfce', key: 'k-rejected', documentId: first.documentId }, 'authorized')).toBe(false);
  });

  it('release frees a key whose attempt never reached the authority', async () => {
    const first = await claim('k-release', { n: 1 });
    expect(await idempotency.release({ companyId: companyA, docType: 'nfce', key: 'k-release', documentId: first.documentId })).toBe(true);
    expect((await claim('k-release', { n: 1 })).result).toEqual({ kind: 'new' });
  });

  it('scopes keys by company and by document type', async () => {
    expect((await claim('k-scope', { n: 1 })).result).toEqual({ kind: 'new' });
    expect((await claim('k-scope', { n: 1 }, { companyId: companyB })).result).toEqual({ kind: 'new' });
    expect((await claim('k-scope', { n: 1 }, { docType: 'mdfe' })).result).toEqual({ kind: 'new' });
    expect((await claim('k-scope', { other: true }, { companyId: companyB, docType: 'mdfe' })).result).toEqual({ kind: 'new' });
  });

  it('keeps an unsettled key locked across a restart and lists it for recovery', async () => {
    const first = await claim('k-unknown', { n: 1 }, { docType: 'mdfe' });
    await store.close();
    const reopened = await openService(dataDir, {});
    store = reopened.store;
    idempotency = new Idempotency(store);
    expect((await claim('k-unknown', { n: 1 }, { docType: 'mdfe' })).result).toEqual({
      kind: 'in_progress',
      documentId: first.documentId,
    });
    const pending = await idempotency.pending('mdfe');
    expect(pending.map((p) => [p.key, p.documentId])).toContainEqual(['k-unknown', first.documentId]);
    expect(pending.every((p) => p.docType === 'mdfe')).toBe(true);
  });
});

describe('concurrent claims from several connections', () => {
  const WORKERS = 6;

  /**
   * Runs `rounds` claims, each fired by all workers at the same instant; `between` runs after a
   * round is complete and before the next one is released.
   */
  async function race(rounds: RaceRound[], between?: (round: RaceResult[]) => Promise<void>): Promise<RaceResult[][]> {
    const barrier = new SharedArrayBuffer(4);
    const go = new Int32Array(barrier);
    const results: RaceResult[][] = rounds.map(() => []);
    const workers: Worker[] = [];
    let failure: Error | undefined;
    // The worker is TypeScript: load it through tsx, as bin/balcao.js loads the CLI.
    const entry = new URL('./idempotency-race.worker.ts', import.meta.url).href;
    const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
    const deadline = Date.now() + 45_000;
    try {
      const exited = Array.from({ length: WORKERS }, () => {
        const worker = new Worker(bootstrap, {
          eval: true,
          workerData: { dataDir, companyId: companyA, rounds, barrier } satisfies RaceWorkerData,
        });
        workers.push(worker);
        return new Promise<void>((resolve) => {
          worker.on('message', (m: { ready?: boolean } & Partial<RaceResult>) => {
            if (!m.ready) results[m.round!]!.push(m as RaceResult);
          });
          worker.on('error', (err) => (failure ??= err));
          worker.on('exit', (code) => {
            if (code !== 0) failure ??= new Error(`worker saiu com código ${code}`);
            resolve();
          });
        });
      });
      const settled = async (round: number) => {
        while (results[round]!.length < WORKERS) {
          if (failure) throw failure;
          if (Date.now() > deadline) throw new Error(`rodada ${round} sem resposta de todos os workers`);
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      for (let round = 0; round < rounds.length; round++) {
        Atomics.store(go, 0, round + 1);
        Atomics.notify(go, 0);
        await settled(round);
        await between?.(results[round]!);
      }
      await Promise.all(exited);
      if (failure) throw failure;
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
    return results;
  }

  const expectOneWinner = (results: RaceResult[]) => {
    expect(results).toHaveLength(WORKERS);
    const winners = results.filter((r) => r.result.kind === 'new');
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((r) => r !== winners[0])) {
      expect(loser.result).toEqual({ kind: 'in_progress', documentId: winners[0]!.documentId });
    }
    return winners[0]!;
  };

  it('N identical calls at the same instant: exactly one new, the others see it in progress', async () => {
    const body = { ide: { nNF: 7 } };
    const rounds = Array.from({ length: 10 }, (_, i) => ({ key: `race-same-${i}`, fingerprint: fp(body) }));
    for (const results of await race(rounds)) expectOneWinner(results);
  });

  it('concurrent retries after each rejection: exactly one new attempt every time', async () => {
    const key = 'race-after-rejection';
    const rejectWinner = async (results: RaceResult[]) => {
      const winner = expectOneWinner(results);
      expect(await idempotency.settle({ companyId: companyA, docType: 'nfce', key, documentId: winner.documentId }, 'rejected')).toBe(true);
    };
    const rounds = Array.from({ length: 10 }, (_, i) => ({ key, fingerprint: fp({ n: 1, tentativa: i }) }));
    await race(rounds, rejectWinner);
  });
});
