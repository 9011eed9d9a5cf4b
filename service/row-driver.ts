// The two column kinds the service's stores read back differently: an idempotency key (SQLite
// keeps text; PostgreSQL keeps bytes, so that keys compare byte for byte as on SQLite) and a
// flag (SQLite's 0/1, PostgreSQL's boolean). Each document's row mapping (nfce/rows.ts,
// mdfe/rows.ts, nfe/rows.ts) is written once and told which driver read the row.

export type RowDriver<Key, Flag> = {
  key(raw: Key): string | null;
  flag(raw: Flag): boolean;
};

export const SQLITE_ROWS: RowDriver<string | null, number> = {
  key: (raw) => raw,
  flag: (raw) => raw === 1,
};

export const POSTGRES_ROWS: RowDriver<Buffer | null, boolean> = {
  key: (raw) => (raw === null ? null : raw.toString('utf8')),
  flag: (raw) => raw,
};
