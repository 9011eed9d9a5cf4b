-- The store's day (issue 23): the closing report in the printer's log.

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
