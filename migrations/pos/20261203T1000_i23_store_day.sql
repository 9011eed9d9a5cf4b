-- The store's day (issue 23): the cash a sale of a closed till hands back when it is cancelled;
-- the closing report in the printer's log; the XML of an online attempt cancelled by
-- substitution, for the reports.

-- A movement the terminal records by itself for a receipt (electron/core/cash-session.ts,
-- settleRefund): the cash handed back for a sale of an already closed session when its receipt
-- is cancelled (or its number voided) after the closing, as a sangria of the session open then;
-- and, should that cancellation be refused, the same money back in as a suprimento. NULL for the
-- cashier's own sangrias and suprimentos.
ALTER TABLE cash_movements ADD COLUMN receipt_id TEXT REFERENCES receipts (id);
CREATE INDEX cash_movements_receipt ON cash_movements (receipt_id) WHERE receipt_id IS NOT NULL;

-- Such a movement owed while no session is open (the till closed when the manager cancelled):
-- recorded in the next session at its opening, in the opening's transaction, and removed from
-- here. One per receipt: the net of what is still owed (a sangria, or a suprimento when a
-- refusal came back before it was paid).
CREATE TABLE cash_movements_owed (
  receipt_id TEXT PRIMARY KEY REFERENCES receipts (id),
  kind TEXT NOT NULL CHECK (kind IN ('sangria', 'suprimento')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 3 AND 255),
  manager_id TEXT REFERENCES managers (id),
  owed_at TEXT NOT NULL
) WITHOUT ROWID;

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
-- The report lists the cancelled ones of its period (by their task's creation, around dhEmi):
-- few, whatever the history, read through this index.
CREATE INDEX reconciliation_tasks_cancelled ON reconciliation_tasks (created_at) WHERE outcome IN ('cancelada_substituicao', 'ja_cancelada');
