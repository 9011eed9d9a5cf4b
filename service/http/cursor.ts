// The one cursor codec of every list (docs/api.md, "Lists and paging"): `proximo_cursor` in an
// answer, `cursor` in the next request. Opaque to clients, it is base64url JSON of the list it
// belongs to, the position where the page ended (service/paging.ts) and a digest of the filters
// it was made with: a cursor sent to another list, with other filters, or edited, is a 400
// naming `cursor`, never a page of something else. It carries no secret and needs none: the
// company always comes from the token, so a forged cursor moves only within the caller's data.

import { createHash } from 'node:crypto';
import type { PagePosition } from '../paging.ts';
import { invalidRequest } from './errors.ts';

export type ListName = 'nfce' | 'nfe' | 'mdfe' | 'inutilizacoes';

type Payload = { l: ListName; a: string; s: number; f: string };

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A short digest of the filters (keys sorted, absent ones left out). */
function filtersDigest(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .filter((k) => filters[k] !== undefined)
      .sort()
      .map((k) => [k, filters[k]]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
}

export function encodeCursor(list: ListName, position: PagePosition, filters: Record<string, unknown>): string {
  const payload: Payload = { l: list, a: position.at, s: position.seq, f: filtersDigest(filters) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

const refused = (message: string) =>
  invalidRequest('Cursor inválido.', [{ field: 'cursor', message: `${message}; use o proximo_cursor da página anterior, com os mesmos filtros` }]);

/** The position a cursor of `list` made with these `filters` names; 400 naming `cursor` otherwise. */
export function decodeCursor(cursor: string, list: ListName, filters: Record<string, unknown>): PagePosition {
  let payload: Partial<Payload>;
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw new Error('not base64url');
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Payload>;
  } catch {
    throw refused('cursor ilegível');
  }
  const { l, a, s, f } = payload ?? {};
  if (typeof a !== 'string' || !ISO_UTC.test(a) || Number.isNaN(Date.parse(a)) || !Number.isSafeInteger(s) || (s as number) < 0 || typeof f !== 'string') {
    throw refused('cursor ilegível');
  }
  if (l !== list) throw refused('cursor de outra lista');
  if (f !== filtersDigest(filters)) throw refused('cursor feito com outros filtros');
  return { at: a, seq: s as number };
}
