// How the service's lists are read (docs/api.md, "Lists and paging"), written once for every list
// and both databases: newest first, by an instant and an insertion sequence that breaks its
// ties; a page starts after a position (keyset paging: a deep page costs what the first does) or,
// for the MDF-e list, after an offset of at most MAX_OFFSET rows; the total is counted through
// the same index and stops at TOTAL_CAP, so it never reads every row of a big company.
//
// Each list names, for each set of filters, the index that serves it (its equality columns, then
// the instant and the sequence): SQLite is told which one (INDEXED BY, so the plan does not
// depend on statistics the service never gathers); PostgreSQL's planner finds the same index by
// its shape. test/list-plans.test.ts reads both engines' plans of every list query.

/** Where a page ends: the instant (UTC ISO) and insertion sequence of its last row. */
export type PagePosition = { at: string; seq: number };

export type PageRequest = {
  limit: number;
  /** Rows strictly after this position (older, or as old and inserted earlier). */
  after?: PagePosition;
  /** Rows skipped (the MDF-e list only; at most MAX_OFFSET). */
  offset?: number;
};

export type Page<T> = {
  rows: T[];
  /** Rows matching the filters, up to TOTAL_CAP. */
  total: number;
  /** More than TOTAL_CAP rows match: `total` says TOTAL_CAP. */
  totalLimited: boolean;
  /** Where the next page starts; null on the last page. */
  next: PagePosition | null;
};

/**
 * The total is exact up to here; beyond, it says this with `total_limitado`. Counting reads one
 * index entry per matching row, up to the cap, on every page: a filter matching many rows costs
 * up to the cap's worth more per page than one matching few. At 10,000, a filtered list's page
 * cost 1.65 times as much at 200 k documents as at 10 k (issue 27's scale bench); at 1,000 it
 * stays small next to the page itself. A screen shows no more than "mais de 1.000" anyway.
 */
export const TOTAL_CAP = 1_000;
/** The deepest offset the MDF-e list accepts; deeper pages are reached with the cursor. */
export const MAX_OFFSET = 10_000;

export type Dialect = 'sqlite' | 'postgres';

export type ListSpec = {
  table: string;
  /** SQLite: the index that serves these filters and the order (INDEXED BY). */
  index: string;
  /** The select list (the row a record is read from). */
  columns: string;
  /** The order's instant, as the index holds it, and how a parameter is compared with it. */
  at: string;
  instant: (param: string) => string;
  /** The insertion sequence that breaks ties of the instant (rowid on SQLite). */
  seq: string;
  /** The filters, `?` for each parameter: the company first, as every index starts with it. */
  where: readonly (readonly [sql: string, value: unknown])[];
};

export type Sql = { text: string; values: unknown[] };

/** `?` → `$1, $2, ...` for PostgreSQL. The service's SQL never holds a literal question mark. */
function numbered(dialect: Dialect, text: string): string {
  if (dialect === 'sqlite') return text;
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

function from(dialect: Dialect, spec: ListSpec): string {
  return dialect === 'sqlite' ? `${spec.table} INDEXED BY ${spec.index}` : spec.table;
}

/**
 * The page: `limit + 1` rows (the extra one says whether there is a next page), each with its
 * sequence as `page_seq`, newest first, after `page.after` or `page.offset`.
 */
export function pageSql(dialect: Dialect, spec: ListSpec, page: PageRequest): Sql {
  const where = spec.where.map(([sql]) => sql);
  const values = spec.where.map(([, value]) => value);
  if (page.after) {
    // SQLite bounds the index range with the first conjunct and filters the rows of the same
    // instant with the second; PostgreSQL compares the pair as the index orders it.
    where.push(
      dialect === 'sqlite'
        ? `${spec.at} <= ${spec.instant('?')} AND (${spec.at} < ${spec.instant('?')} OR ${spec.seq} < ?)`
        : `(${spec.at}, ${spec.seq}) < (${spec.instant('?')}, ?)`,
    );
    values.push(...(dialect === 'sqlite' ? [page.after.at, page.after.at, page.after.seq] : [page.after.at, page.after.seq]));
  }
  values.push(page.limit + 1);
  const offset = page.offset ? ' OFFSET ?' : '';
  if (page.offset) values.push(page.offset);
  const text = `SELECT ${spec.columns}, ${spec.seq} AS page_seq FROM ${from(dialect, spec)} WHERE ${where.join(' AND ')}
    ORDER BY ${spec.at} DESC, ${spec.seq} DESC LIMIT ?${offset}`;
  return { text: numbered(dialect, text), values };
}

/**
 * The rows matching the filters, counted through the index up to TOTAL_CAP + 1. In the list's
 * order, as the page reads them: the planner then walks the same index and stops at the cap,
 * rather than scanning the table until it has found that many.
 */
export function countSql(dialect: Dialect, spec: ListSpec): Sql {
  const text = `SELECT count(*) AS n FROM (SELECT 1 FROM ${from(dialect, spec)} WHERE ${spec.where.map(([sql]) => sql).join(' AND ')}
    ORDER BY ${spec.at} DESC, ${spec.seq} DESC LIMIT ?) AS matching`;
  return { text: numbered(dialect, text), values: [...spec.where.map(([, value]) => value), TOTAL_CAP + 1] };
}

/** The page from its `limit + 1` rows and the capped count. */
export function pageOf<Row, T>(
  rows: readonly (Row & { page_seq: number | string })[],
  count: number,
  limit: number,
  record: (row: Row) => T,
  instantOf: (record: T) => string,
): Page<T> {
  const records = rows.slice(0, limit).map(record);
  const last = records.at(-1);
  const next = rows.length > limit && last !== undefined ? { at: instantOf(last), seq: Number(rows[limit - 1]!.page_seq) } : null;
  return { rows: records, total: Math.min(count, TOTAL_CAP), totalLimited: count > TOTAL_CAP, next };
}

/** The order of the NFC-e and NF-e lists: ide/dhEmi as an instant, as each engine indexes it. */
export const EMISSION_ORDER: Record<Dialect, Pick<ListSpec, 'at' | 'instant' | 'seq'>> = {
  sqlite: { at: 'julianday(dh_emi)', instant: (p) => `julianday(${p})`, seq: 'rowid' },
  postgres: { at: 'balcao_instant(dh_emi)', instant: (p) => `${p}::timestamptz`, seq: 'seq' },
};

/** An idempotency key as each engine keeps it (migrations/service-postgres/, header). */
export const keyParam = (dialect: Dialect, key: string): unknown => (dialect === 'postgres' ? Buffer.from(key, 'utf8') : key);

/** An instant as positions and filters carry it: UTC ISO with milliseconds. */
export const utcInstant = (text: string): string => new Date(text).toISOString();

type Statements = (sql: string) => { all(...params: unknown[]): unknown[]; pluck(): { get(...params: unknown[]): unknown } };

/** What reads a page on SQLite: the statement cache and a read transaction (page and total of one snapshot). */
export type SqliteReader = { statement: Statements; read<T>(fn: () => T): T };

export function sqlitePage<Row, T>(db: SqliteReader, spec: ListSpec, page: PageRequest, record: (row: Row) => T, instantOf: (record: T) => string): Page<T> {
  const query = pageSql('sqlite', spec, page);
  const count = countSql('sqlite', spec);
  return db.read(() => {
    const rows = db.statement(query.text).all(...query.values) as (Row & { page_seq: number })[];
    return pageOf(
      rows,
      Number(
        db
          .statement(count.text)
          .pluck()
          .get(...count.values),
      ),
      page.limit,
      record,
      instantOf,
    );
  });
}

type Client = { query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }> };

/** What reads a page on PostgreSQL: a transaction on one connection. */
export type PostgresReader = { transaction<T>(fn: (client: Client) => Promise<T>): Promise<T> };

/** A page on PostgreSQL, in one REPEATABLE READ transaction (page and total of one snapshot). */
export function postgresPage<Row, T>(
  db: PostgresReader,
  spec: ListSpec,
  page: PageRequest,
  record: (row: Row) => T,
  instantOf: (record: T) => string,
): Promise<Page<T>> {
  const query = pageSql('postgres', spec, page);
  const count = countSql('postgres', spec);
  return db.transaction(async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const rows = (await client.query<Row & { page_seq: number }>(query.text, query.values)).rows;
    const n = (await client.query<{ n: number }>(count.text, count.values)).rows[0]!.n;
    return pageOf(rows, Number(n), page.limit, record, instantOf);
  });
}
