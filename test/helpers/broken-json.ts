// fast-check generators of request bodies broken in one place, from a valid body: a leaf turned
// into a value of another JSON type, a required key removed, an unknown key added somewhere (the
// schemas refuse extra fields), or a JSON value that is not such a body at all. Also the check
// every property test of the API shares: a 4xx carrying the contract's error body.

import fc from 'fast-check';
import { expect } from 'vitest';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Path = (string | number)[];

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function children(value: Json): [string | number, Json][] {
  if (value === null || typeof value !== 'object') return [];
  return Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
}

function leafPaths(value: Json, path: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [path];
  return children(value).flatMap(([k, v]) => leafPaths(v, [...path, k]));
}

function objectPaths(value: Json, path: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const own = Array.isArray(value) ? [] : [path];
  return [...own, ...children(value).flatMap(([k, v]) => objectPaths(v, [...path, k]))];
}

function at(root: Json, path: Path): unknown {
  let cur: unknown = root;
  for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

/** A copy of `root` with `change` applied to the parent of `path` and its last key. */
export function update(root: Json, path: Path, change: (parent: Record<string | number, Json>, key: string | number) => void): Json {
  const copy = structuredClone(root);
  const parent = (path.length > 1 ? at(copy, path.slice(0, -1)) : copy) as Record<string | number, Json>;
  change(parent, path[path.length - 1]!);
  return copy;
}

export type BrokenOptions = {
  /** Keys of `valid` whose absence still makes a valid body (every other key is required). */
  optional?: (path: Path) => boolean;
  /** A required top-level key: a JSON object without it is "not this body at all". */
  anchor: string;
};

/** Bodies that `valid` becomes when broken in one place (see the header). */
export function brokenBodies(valid: Json, { optional = () => false, anchor }: BrokenOptions): fc.Arbitrary<Json> {
  const leaves = leafPaths(valid);
  const required = leaves.filter((p) => typeof p[p.length - 1] === 'string' && !optional(p));
  const objects = objectPaths(valid);
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...leaves), fc.jsonValue() as fc.Arbitrary<Json>)
      .filter(([path, v]) => typeOf(at(valid, path)) !== typeOf(v))
      .map(([path, v]) => update(valid, path, (p, k) => (p[k] = v))),
    fc.constantFrom(...required).map((path) => update(valid, path, (p, k) => delete p[k])),
    fc
      .tuple(fc.constantFrom(...objects), fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue() as fc.Arbitrary<Json>)
      .filter(([path, name]) => !(name in (at(valid, path) as object)))
      .map(([path, name, v]) => (path.length ? update(valid, [...path, name], (p, k) => (p[k] = v)) : { ...(valid as object), [name]: v })),
    fc.jsonValue().filter((v) => typeOf(v) !== 'object' || !(anchor in (v as object))) as fc.Arbitrary<Json>,
  );
}

/** The body as JSON text, so a generated string or number is sent as JSON too (the client sends a string as is). */
export const asJson = (body: Json): string => JSON.stringify(body);

/** Every 4xx code of docs/api.md, "Errors". */
const CLIENT_ERROR_CODES = [
  'requisicao_invalida',
  'nao_autorizado',
  'nao_encontrado',
  'tempo_esgotado',
  'em_processamento',
  'payload_muito_grande',
  'uri_muito_longa',
  'tipo_de_conteudo_invalido',
  'chave_idempotencia_reutilizada',
  'prazo_expirado',
  'estado_invalido',
  'csc_nao_configurado',
  'validacao',
  'cabecalhos_muito_grandes',
];

/** A 4xx (never a 500) whose body is the contract's `{ error: { code, message, details? } }`. */
export function expectClientError(res: { status: number; body: unknown; text: string }, body: unknown, codes: string[] = CLIENT_ERROR_CODES) {
  const what = `${JSON.stringify(body)} → ${res.status} ${res.text}`;
  expect(res.status, what).toBeGreaterThanOrEqual(400);
  expect(res.status, what).toBeLessThan(500);
  const error = (res.body as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
  expect(Object.keys(res.body as object), what).toEqual(['error']);
  expect(codes, what).toContain(error?.code);
  expect(typeof error?.message === 'string' && error.message.length > 0, what).toBe(true);
  if (error?.details !== undefined) {
    expect(Array.isArray(error.details), what).toBe(true);
    for (const d of error.details as unknown[]) expect(d, what).toEqual({ field: expect.any(String), message: expect.any(String) });
  }
  expect(
    Object.keys(error ?? {}).every((k) => ['code', 'message', 'details'].includes(k)),
    what,
  ).toBe(true);
}
