-- The checkouts of a company and the NFC-e series each one issues in (PUT /api/v1/terminais/{id},
-- service/terminals/). The caller owns the numbering of the NFC-e (docs/api.md, "Overview"), so
-- two checkouts of one store must never number in the same series: each claims its series here
-- and the service refuses a series another terminal of the same company holds.
--
-- terminal_id is the terminal's own identifier (a UUID it makes on its first start), scoped by
-- the company: the same id under another company is another terminal.

CREATE TABLE terminals (
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  terminal_id TEXT NOT NULL CHECK (length(terminal_id) BETWEEN 1 AND 64),
  nome TEXT NOT NULL CHECK (length(nome) BETWEEN 1 AND 60),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (company_id, terminal_id)
) WITHOUT ROWID;

-- One row per series held. The primary key is the rule: a series of a company has one holder.
CREATE TABLE terminal_series (
  company_id TEXT NOT NULL,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  terminal_id TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  PRIMARY KEY (company_id, serie),
  FOREIGN KEY (company_id, terminal_id) REFERENCES terminals (company_id, terminal_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX terminal_series_terminal ON terminal_series (company_id, terminal_id);
