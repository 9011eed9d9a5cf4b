// An export's documents read a page at a time in the order of an index (keyset paging): each
// page starts where the last one ended, found by the index, so a year is read in as many small
// steps as it has pages, each costing what the first did, and never held whole.

import type { PagePosition } from '../paging.ts';

/** Where a page ended: the last row's ordering instant, as stored, and its sequence number (ties); the lists' position (service/paging.ts). */
export type Keyset = PagePosition;

/** A page of rows; `next` is where the following page starts, null after the last. */
export type Page<T> = { rows: T[]; next: Keyset | null };

/** Rows per page: a few hundred small records (the documents' XML is read one at a time). */
export const EXPORT_PAGE_ROWS = 500;

/** The page of `rows` read with `limit`, given each row's keyset. */
export function pageOf<R, T>(rows: readonly R[], limit: number, keyset: (row: R) => Keyset, map: (row: R) => T): Page<T> {
  return { rows: rows.map(map), next: rows.length === limit ? keyset(rows[rows.length - 1]!) : null };
}

/** Every row, page after page, read only as the caller goes. */
export async function* everyRow<T>(read: (after: Keyset | null) => Promise<Page<T>>): AsyncGenerator<T> {
  let after: Keyset | null = null;
  do {
    const page: Page<T> = await read(after);
    yield* page.rows;
    after = page.next;
  } while (after);
}
