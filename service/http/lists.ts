// What every list endpoint shares (docs/api.md, "Lists and paging"): the paging parameters
// (`limit`, `cursor`), the envelope of the answer (`data`, `total`, `total_limitado`, `limit`,
// `proximo_cursor`), the Brasília days `de`/`ate` as an instant range, and the page request the
// stores take.

import { Type, type TSchema } from '@sinclair/typebox';
import { brasiliaDayRange } from '../../base/common/brasilia.ts';
import type { Page, PageRequest } from '../paging.ts';
import { TOTAL_CAP } from '../paging.ts';
import { decodeCursor, encodeCursor, type ListName } from './cursor.ts';
import { invalidRequest } from './errors.ts';

export const MAX_PAGE = 200;
export const DEFAULT_LIMIT = 50;

/** `limit` and `cursor`, for a list's querystring schema. */
export const pagingParams = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: `Tamanho da página (padrão ${DEFAULT_LIMIT}, máximo ${MAX_PAGE})` })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 400,
      description: 'O proximo_cursor da página anterior (com os mesmos filtros): a página seguinte, tão rápida quanto a primeira',
    }),
  ),
};

/** `de` and `ate`, Brasília days, for a list's querystring schema. */
export const dayParams = (what: string) => ({
  de: Type.Optional(Type.String({ format: 'date', description: `Primeiro dia de ${what}, AAAA-MM-DD, horário de Brasília (inclusive)` })),
  ate: Type.Optional(Type.String({ format: 'date', description: `Último dia de ${what}, AAAA-MM-DD, horário de Brasília (inclusive)` })),
});

const envelopeFields = <T extends TSchema>(item: T) => ({
  data: Type.Array(item),
  total: Type.Integer({ description: `Itens que atendem aos filtros; exato até ${TOTAL_CAP}, e ${TOTAL_CAP} além disso (total_limitado)` }),
  total_limitado: Type.Boolean({ description: `true: mais de ${TOTAL_CAP} itens atendem aos filtros; total diz ${TOTAL_CAP}` }),
  limit: Type.Integer(),
  proximo_cursor: Type.Union([Type.String(), Type.Null()], { description: 'cursor da página seguinte; null na última página' }),
});

/** The answer of a list: a page of `item`. */
export const PageEnvelope = <T extends TSchema>(item: T) => Type.Object(envelopeFields(item));

/** The MDF-e list's answer: the envelope plus the offset its contract has. */
export const OffsetPageEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({ ...envelopeFields(item), offset: Type.Integer({ description: 'Itens pulados (0 quando a página vem de um cursor)' }) });

export type Envelope<T> = { data: T[]; total: number; total_limitado: boolean; limit: number; proximo_cursor: string | null };

/** The page the stores read, from `limit` and `cursor` (400 naming `cursor` when it is not one of this list and filters). */
export function pageRequest(query: { limit?: number; cursor?: string }, list: ListName, filters: Record<string, unknown>): PageRequest {
  const limit = query.limit ?? DEFAULT_LIMIT;
  return query.cursor === undefined ? { limit } : { limit, after: decodeCursor(query.cursor, list, filters) };
}

/** The answer of a page, its rows shown by `view`. */
export function envelope<T, V>(page: Page<T>, limit: number, view: (row: T) => V, list: ListName, filters: Record<string, unknown>): Envelope<V> {
  return {
    data: page.rows.map(view),
    total: page.total,
    total_limitado: page.totalLimited,
    limit,
    proximo_cursor: page.next && encodeCursor(list, page.next, filters),
  };
}

/** de/ate (Brasília days, inclusive) → [from, until) in UTC ISO; 400 for a malformed or impossible date. */
export function dayFilters(de: string | undefined, ate: string | undefined): { from?: string; until?: string } {
  const day = (value: string, field: string) => {
    const range = brasiliaDayRange(value);
    if (!range) throw invalidRequest('Parâmetro de data inválido.', [{ field, message: 'data inválida (use AAAA-MM-DD, ex.: 2026-11-22)' }]);
    return range;
  };
  const from = de === undefined ? undefined : day(de, 'de');
  const until = ate === undefined ? undefined : day(ate, 'ate');
  if (from && until && from.start >= until.end) {
    throw invalidRequest('Intervalo de datas inválido.', [{ field: 'de', message: 'posterior a ate' }]);
  }
  return { ...(from && { from: from.start.toISOString() }), ...(until && { until: until.end.toISOString() }) };
}
