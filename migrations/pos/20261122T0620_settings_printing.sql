-- Settings, secrets, the authorized XML of each receipt, and the print log of the terminal.

-- Terminal settings (settings.ts): one JSON value per key (service_url, series, printer,
-- company, certificate, contingency). Secrets are never here: see secrets.
CREATE TABLE settings (
  key TEXT PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 60),
  value TEXT NOT NULL CHECK (json_valid(value)),
  updated_at TEXT NOT NULL
);

-- Secrets at rest (the service token, the CSC token, the certificate .pfx and its password),
-- each sealed by the terminal's SecretBox (secret-box.ts: AES-256-GCM with a key kept outside
-- this database).
CREATE TABLE secrets (
  name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 60),
  sealed BLOB NOT NULL,
  updated_at TEXT NOT NULL
);

-- The authorized XML (nfeProc) of a receipt, fetched once from the service and kept: previews
-- and reprints are rendered from it without asking the service again.
CREATE TABLE receipt_xml (
  receipt_id TEXT PRIMARY KEY REFERENCES receipts (id),
  xml TEXT NOT NULL,
  fetched_at TEXT NOT NULL
);

-- Every job sent to the printer. A row is written (state 'sending') before the bytes leave and
-- settled after; the automatic print of a receipt is claimed by writing its row, so it happens
-- at most once, even across a crash in the middle of the job (the manager reprints the rest).
-- copy: printing.ts PrintCopy. automatic: printed by the terminal when the receipt was
-- authorized (at most one such job per receipt, see the unique index).
CREATE TABLE print_jobs (
  id INTEGER PRIMARY KEY,
  receipt_id TEXT NOT NULL REFERENCES receipts (id),
  copy TEXT NOT NULL CHECK (copy IN ('consumidor', 'estabelecimento', 'unica', 'reimpressao')),
  automatic INTEGER NOT NULL DEFAULT 0 CHECK (automatic IN (0, 1)),
  state TEXT NOT NULL CHECK (state IN ('sending', 'printed', 'failed')),
  bytes INTEGER NOT NULL DEFAULT 0,
  printer TEXT NOT NULL DEFAULT '',
  error TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX print_jobs_receipt ON print_jobs (receipt_id, id);
CREATE INDEX print_jobs_printed ON print_jobs (finished_at) WHERE state = 'printed';
CREATE UNIQUE INDEX print_jobs_automatic ON print_jobs (receipt_id) WHERE automatic = 1;

-- Receipts the terminal owes a print: queued by the trigger below in the very transaction that
-- records an online receipt's authorization (so a crash right after it cannot lose the print),
-- removed when the print is claimed. Receipts authorized before this migration are not queued:
-- printing them now, long after the sale, would be wrong. A contingency receipt (tpEmis 9) is
-- printed when it is issued, not when it is authorized.
-- NOTE: a migration that rebuilds `receipts` drops this trigger and must create it again.
CREATE TABLE print_due (
  receipt_id TEXT PRIMARY KEY REFERENCES receipts (id),
  queued_at TEXT NOT NULL
);

CREATE TRIGGER receipts_print_due AFTER UPDATE OF state ON receipts
WHEN NEW.state = 'authorized' AND OLD.state <> 'authorized' AND NEW.tp_emis = 1
  AND NOT EXISTS (SELECT 1 FROM print_jobs WHERE receipt_id = NEW.id)
BEGIN
  INSERT OR IGNORE INTO print_due (receipt_id, queued_at) VALUES (NEW.id, NEW.updated_at);
END;
