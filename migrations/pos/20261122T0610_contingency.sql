-- Offline contingency (tpEmis 9) at the terminal: when it was on, and what is left to reconcile
-- once the service is back. The receipts issued offline are ordinary rows of `receipts`
-- (tp_emis 9, signed_xml) sent through the ordinary outbox; the SQL is in
-- electron/core/pos-store.ts, the rules in electron/core/contingency/.

-- One row per period of contingency. started_at is the dhCont of every receipt issued in it and
-- reason its xJust (15–256 characters, the layout's bounds). automatic: entered by the terminal
-- after the configured number of failed exchanges (started_by NULL), or by a manager
-- (started_by = the manager's id). At most one period is open (ended_at NULL).
CREATE TABLE contingency_periods (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 15 AND 256),
  automatic INTEGER NOT NULL CHECK (automatic IN (0, 1)),
  started_by TEXT REFERENCES managers (id),
  ended_at TEXT,
  ended_by TEXT REFERENCES managers (id),
  CHECK ((automatic = 1) = (started_by IS NULL))
);
CREATE UNIQUE INDEX contingency_periods_one_open ON contingency_periods ((ended_at IS NULL)) WHERE ended_at IS NULL;

-- A sale whose online attempt had not come back (pending or processing) when contingency began
-- is issued again offline: its receipt row takes a NEW number and key with tpEmis 9 (docs/fiscal.md,
-- "Offline contingency": a number that may have been transmitted as normal is never reused in contingency), and
-- the online attempt it replaced is kept here until the service tells its fate:
--   authorized     → cancelled by substitution (event 110112, chave_substituta = the receipt's
--                    contingency key), once that key is authorized too;
--   never          → its number is voided (inutilização).
-- kind: what is known so far: 'verificar' (outcome unknown), 'cancelar_substituicao',
-- 'inutilizar'. state: 'open' (the terminal works on it), 'blocked' (needs a person: see
-- last_error), 'done' (outcome in `outcome`).
CREATE TABLE reconciliation_tasks (
  id TEXT PRIMARY KEY,
  receipt_id TEXT NOT NULL REFERENCES receipts (id),
  -- The superseded online attempt: number, key and body as they were sent.
  serie INTEGER NOT NULL,
  nnf INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_json TEXT NOT NULL,
  service_id TEXT,
  chave TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('verificar', 'cancelar_substituicao', 'inutilizar')),
  state TEXT NOT NULL CHECK (state IN ('open', 'blocked', 'done')),
  outcome TEXT CHECK (outcome IN ('cancelada_substituicao', 'inutilizada', 'ja_cancelada')),
  -- Idempotency keys of the commands this task sends (the same on every attempt).
  void_key TEXT NOT NULL,
  cancel_key TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  protocolo TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  resolved_at TEXT,
  UNIQUE (serie, nnf),
  CHECK ((state = 'done') = (outcome IS NOT NULL))
);
CREATE INDEX reconciliation_tasks_live ON reconciliation_tasks (state, next_attempt_at) WHERE state <> 'done';
CREATE INDEX reconciliation_tasks_receipt ON reconciliation_tasks (receipt_id);

-- Contingency receipts not yet settled, for the status shown on every screen refresh.
CREATE INDEX receipts_contingency ON receipts (tp_emis, state) WHERE tp_emis = 9;
