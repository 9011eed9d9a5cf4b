// Bad input never gets a 500 and never leaves anything behind: fast-check generates broken
// NFC-e bodies (a leaf of a valid body turned into another JSON type, a required field removed,
// an unknown field added, or a body that is not an NFC-e at all) and POSTs them to the real
// service; every answer must be a 4xx with the contract's error body, and afterwards no
// document and no idempotency key may exist.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nfceBody, readDb, registerCompany, type TestCompany } from './helpers/nfce.ts';
import { startService, type ServiceProcess } from './helpers/service-process.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

function leafPaths(value: Json, path: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [path];
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => leafPaths(v, [...path, k]));
}

function objectPaths(value: Json, path: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const own = Array.isArray(value) ? [] : [path];
  return [...own, ...entries.flatMap(([k, v]) => objectPaths(v, [...path, k]))];
}

function update(root: Json, path: Path, change: (parent: Record<string | number, Json>, key: string | number) => void): Json {
  const copy = structuredClone(root);
  let parent = copy as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, Json>;
  change(parent, path[path.length - 1]!);
  return copy;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const valid = nfceBody(1) as unknown as Json;
const leaves = leafPaths(valid);
// Every key of the sample is required (optional groups are absent from it), except
// ICMSSN102/orig: the layout makes it optional for CSOSN 102, 103, 300 and 400
// (leiauteNFe_v4.00.xsd, minOccurs="0"), so a body without it is a valid NFC-e and gets its 202.
const requiredKeys = leaves.filter((p) => typeof p[p.length - 1] === 'string' && !(p[p.length - 2] === 'ICMSSN102' && p[p.length - 1] === 'orig'));
const objects = objectPaths(valid);

const brokenBody: fc.Arbitrary<Json> = fc.oneof(
  // A leaf turned into a value of another JSON type.
  fc
    .tuple(fc.constantFrom(...leaves), fc.jsonValue() as fc.Arbitrary<Json>)
    .filter(([path, v]) => {
      let cur: unknown = valid;
      for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
      return typeOf(cur) !== typeOf(v);
    })
    .map(([path, v]) => update(valid, path, (p, k) => (p[k] = v))),
  // A required field removed.
  fc.constantFrom(...requiredKeys).map((path) => update(valid, path, (p, k) => delete p[k])),
  // An unknown field added somewhere.
  fc
    .tuple(fc.constantFrom(...objects), fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue() as fc.Arbitrary<Json>)
    .filter(([path, name]) => {
      let cur: unknown = valid;
      for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
      return !(name in (cur as object));
    })
    .map(([path, name, v]) => (path.length ? update(valid, [...path, name], (p, k) => (p[k] = v)) : { ...(valid as object), [name]: v })),
  // Not an NFC-e at all.
  fc.jsonValue().filter((v) => typeOf(v) !== 'object' || !('ide' in (v as object))) as fc.Arbitrary<Json>,
);

describe('POST /api/v1/nfce with broken bodies (property)', () => {
  let service: ServiceProcess;
  let company: TestCompany;

  beforeAll(async () => {
    service = await startService();
    company = await registerCompany(service.url, service.dataDir);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers 4xx with the contract error body, never 500, and stores nothing', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(brokenBody, async (body) => {
        run += 1;
        const res = await company.client.post('/api/v1/nfce', body, { headers: { 'idempotency-key': `prop-${run}` } });
        expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
        expect(res.status, JSON.stringify(body)).toBeLessThan(500);
        expect(res.body.error.code).toMatch(/^(requisicao_invalida|validacao)$/);
        expect(typeof res.body.error.message).toBe('string');
      }),
      { numRuns: 200 },
    );
    const stored = readDb(service.dataDir, (db) => ({
      documents: (db.prepare('SELECT count(*) AS n FROM nfce_documents').get() as { n: number }).n,
      keys: (db.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE key LIKE 'prop-%'").get() as { n: number }).n,
    }));
    expect(stored).toEqual({ documents: 0, keys: 0 });
    // The same service still issues a valid receipt: the broken ones changed nothing.
    expect((await company.client.post('/api/v1/nfce', nfceBody(1))).status).toBe(202);
  });
});
