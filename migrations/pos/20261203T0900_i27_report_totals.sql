-- The manager's report (electron/core/reports.ts) from daily totals instead of every receipt's
-- XML: each receipt's share, read from its fiscal XML once (electron/core/report-share.ts), and
-- the totals of each Brasília day they add up to. PosStore changes both in the same transaction
-- as the receipt's state or XML, so they never disagree with the receipts; a year's report adds
-- up at most 366 days. Money in cents, quantities in ten-thousandths (as everywhere here).

-- bucket: 'sale' (in the totals), 'cancelled' (listed apart), 'none' (counts nowhere: voided, or
-- no fiscal document yet), 'pending' (its XML is still to be read: an authorized receipt whose
-- nfeProc was not fetched yet). facts: what the receipt added (JSON), to take it out again when
-- its state changes (a cancellation); emptied by the retention once nothing can change it.
CREATE TABLE report_receipts (
  receipt_id TEXT PRIMARY KEY REFERENCES receipts (id),
  bucket TEXT NOT NULL CHECK (bucket IN ('pending', 'none', 'sale', 'cancelled')),
  -- The receipt's created_at: the report reads the pending ones of the days around its period.
  created_at TEXT NOT NULL,
  -- Brasília day of dhEmi, dhEmi itself, tpEmis and vNF (for the lists of cancelled and
  -- contingency receipts).
  day TEXT,
  dh_emi TEXT,
  tp_emis INTEGER,
  vnf_cents INTEGER,
  facts TEXT,
  CHECK ((bucket IN ('sale', 'cancelled')) = (day IS NOT NULL))
) WITHOUT ROWID;
CREATE INDEX report_receipts_pending ON report_receipts (created_at) WHERE bucket = 'pending';
CREATE INDEX report_receipts_listed ON report_receipts (day, dh_emi) WHERE bucket = 'cancelled' OR (bucket = 'sale' AND tp_emis = 9);

CREATE TABLE report_days (
  day TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  total_cents INTEGER NOT NULL,
  change_cents INTEGER NOT NULL
) WITHOUT ROWID;

-- count: payment entries (detPag) of that method.
CREATE TABLE report_day_payments (
  day TEXT NOT NULL,
  tpag TEXT NOT NULL,
  count INTEGER NOT NULL,
  amount_cents INTEGER NOT NULL,
  PRIMARY KEY (day, tpag)
) WITHOUT ROWID;

CREATE TABLE report_day_hours (
  day TEXT NOT NULL,
  hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
  count INTEGER NOT NULL,
  total_cents INTEGER NOT NULL,
  PRIMARY KEY (day, hour)
) WITHOUT ROWID;

-- description and unit: as the latest receipt of the day wrote them (xProd, uCom).
CREATE TABLE report_day_products (
  day TEXT NOT NULL,
  code TEXT NOT NULL,
  description TEXT NOT NULL,
  unit TEXT NOT NULL,
  quantity_units INTEGER NOT NULL,
  total_cents INTEGER NOT NULL,
  PRIMARY KEY (day, code)
) WITHOUT ROWID;

-- Receipts still waiting for a verdict or a person, for the report's list of sales without an
-- authorized receipt: few at any time, whatever the history.
CREATE INDEX receipts_unsettled ON receipts (created_at) WHERE state IN ('pending', 'processing', 'rejected', 'needs_attention');

-- Receipts written before this migration: their shares are read when a report first covers them.
-- balcao_progress: the runner's count of the rows copied (migrations/migrate.ts).
INSERT INTO report_receipts (receipt_id, bucket, created_at) SELECT id, 'pending', created_at FROM receipts WHERE balcao_progress('receipts');
