-- Cash sessions (caixa) at the terminal (electron/core/cash-session.ts): the till opened with the
-- float the cashier counted, the withdrawals (sangria) and additions (suprimento) made while it
-- was open, and its closing with the cashier's count per payment method against what the sales
-- say. Every finished sale belongs to the session that was open when it finished: a sale cannot
-- finish without one. Money is INTEGER cents, as everywhere in this database.

-- number: 1, 2, 3… on this terminal, printed on the closing report. At most one session is open
-- (closed_at NULL). closing_json is the closing as computed, shown and printed (expected,
-- counted and difference per method, the cash breakdown, the sales counted): kept as it was, so
-- a receipt cancelled after the closing does not rewrite a report already signed off.
CREATE TABLE cash_sessions (
  id TEXT PRIMARY KEY,
  number INTEGER NOT NULL UNIQUE CHECK (number >= 1),
  opened_at TEXT NOT NULL,
  opened_by TEXT NOT NULL CHECK (length(opened_by) BETWEEN 1 AND 80),
  float_cents INTEGER NOT NULL CHECK (float_cents >= 0),
  closed_at TEXT,
  closed_by TEXT CHECK (closed_by IS NULL OR length(closed_by) BETWEEN 1 AND 80),
  closing_json TEXT CHECK (closing_json IS NULL OR json_valid(closing_json)),
  -- The closing report on the thermal printer: when it came out, or why it did not.
  report_printed_at TEXT,
  report_print_error TEXT,
  CHECK ((closed_at IS NULL) = (closing_json IS NULL)),
  CHECK ((closed_at IS NULL) = (closed_by IS NULL))
);
CREATE UNIQUE INDEX cash_sessions_one_open ON cash_sessions ((closed_at IS NULL)) WHERE closed_at IS NULL;

-- A closed session stays as it was closed: only its report's printing may be noted afterwards.
CREATE TRIGGER cash_sessions_closed_immutable BEFORE UPDATE OF id, number, opened_at, opened_by, float_cents, closed_at, closed_by, closing_json ON cash_sessions
WHEN OLD.closed_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'caixa fechado não se altera');
END;
CREATE TRIGGER cash_sessions_no_delete BEFORE DELETE ON cash_sessions
BEGIN
  SELECT RAISE(ABORT, 'caixa não se apaga');
END;

-- Sangria (money taken out of the drawer) and suprimento (money put in), with the reason, and the
-- manager who authorized it when its amount was above the configured limit (settings.ts,
-- cash.pinAboveCents). Append-only, like the audit log each one is written with.
CREATE TABLE cash_movements (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES cash_sessions (id),
  kind TEXT NOT NULL CHECK (kind IN ('sangria', 'suprimento')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 3 AND 255),
  manager_id TEXT REFERENCES managers (id),
  at TEXT NOT NULL
);
CREATE INDEX cash_movements_session ON cash_movements (session_id, id);
CREATE TRIGGER cash_movements_no_update BEFORE UPDATE ON cash_movements
BEGIN
  SELECT RAISE(ABORT, 'movimento de caixa é somente inclusão');
END;
CREATE TRIGGER cash_movements_no_delete BEFORE DELETE ON cash_movements
BEGIN
  SELECT RAISE(ABORT, 'movimento de caixa é somente inclusão');
END;

-- The cashier's count at closing, per payment method (tPag), beside what the sales said.
CREATE TABLE cash_counts (
  session_id TEXT NOT NULL REFERENCES cash_sessions (id),
  tpag TEXT NOT NULL CHECK (length(tpag) = 2),
  expected_cents INTEGER NOT NULL,
  counted_cents INTEGER NOT NULL CHECK (counted_cents >= 0),
  PRIMARY KEY (session_id, tpag)
) WITHOUT ROWID;
CREATE TRIGGER cash_counts_no_update BEFORE UPDATE ON cash_counts
BEGIN
  SELECT RAISE(ABORT, 'contagem de caixa é somente inclusão');
END;
CREATE TRIGGER cash_counts_no_delete BEFORE DELETE ON cash_counts
BEGIN
  SELECT RAISE(ABORT, 'contagem de caixa é somente inclusão');
END;

-- The session a finished sale belongs to (NULL for the sales finished before this migration).
ALTER TABLE sales ADD COLUMN cash_session_id TEXT REFERENCES cash_sessions (id);
CREATE INDEX sales_cash_session ON sales (cash_session_id) WHERE cash_session_id IS NOT NULL;
