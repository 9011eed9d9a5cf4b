-- What the SQLite set added after the first PostgreSQL migration was written
-- (migrations/service/20261125T0900_exports.sql, 20261125T0910_terminals.sql): the accountant's
-- export by emission day, and the checkouts with the NFC-e series each one holds.

-- The export selects a company's NFC-e by ide/dhEmi, written with its own offset
-- ('2026-11-22T14:03:05-03:00'): text order is not time order across offsets. A text with an
-- explicit offset names one instant whatever the session's time zone, but PostgreSQL's cast from
-- text is only STABLE (a text without an offset would depend on the session), so it cannot be
-- indexed as it is; this function says what holds for these columns, which always carry their
-- offset. A query must spell balcao_instant(dh_emi) to use the index.
CREATE FUNCTION balcao_instant(text) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT $1::timestamptz $$;

CREATE INDEX nfce_documents_emissao ON nfce_documents (company_id, balcao_instant(dh_emi));
CREATE INDEX nfce_inutilizacoes_created ON nfce_inutilizacoes (company_id, created_at);

-- A series of a company has one holder (the primary key of terminal_series); claims of one
-- company take an advisory lock so the whole set a terminal asks for is judged at once
-- (service/terminals/pg-store.ts).
CREATE TABLE terminals (
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  terminal_id TEXT NOT NULL CHECK (char_length(terminal_id) BETWEEN 1 AND 64),
  nome TEXT NOT NULL CHECK (char_length(nome) BETWEEN 1 AND 60),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (company_id, terminal_id)
);

CREATE TABLE terminal_series (
  company_id TEXT NOT NULL,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  terminal_id TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  PRIMARY KEY (company_id, serie),
  FOREIGN KEY (company_id, terminal_id) REFERENCES terminals (company_id, terminal_id) ON DELETE CASCADE
);
CREATE INDEX terminal_series_terminal ON terminal_series (company_id, terminal_id);
