-- The store's day (issue 23): the closing report in the printer's log; the XML of an online
-- attempt cancelled by substitution, for the reports.

-- Every job sent to the printer that is not a receipt: the till's closing report (and its
-- reprints), written before the bytes leave and settled after, like print_jobs. The printer's
-- recent jobs on the screen list both.
CREATE TABLE report_print_jobs (
  id INTEGER PRIMARY KEY,
  cash_session_id TEXT NOT NULL REFERENCES cash_sessions (id),
  state TEXT NOT NULL CHECK (state IN ('sending', 'printed', 'failed')),
  bytes INTEGER NOT NULL,
  printer TEXT NOT NULL,
  error TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX report_print_jobs_printed ON report_print_jobs (finished_at) WHERE state = 'printed';

-- The authorized nfeProc of the online attempt a contingency receipt superseded (contingency/
-- reconcile.ts), once it was cancelled: fetched from the service the first time a report needs
-- it and kept, as receipt_xml keeps a receipt's. The report counts it among the cancellations
-- (by substitution, 110112) from its own XML, as the accountant's file does.
ALTER TABLE reconciliation_tasks ADD COLUMN xml TEXT;
