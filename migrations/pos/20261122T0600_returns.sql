-- Returns (NF-e de devolução, model 55) requested at the terminal after a receipt's cancellation
-- window: the return itself, the sale items it brings back, and a new outbox command kind,
-- 'return' (POST /api/v1/nfe/devolucao, then GET /api/v1/nfe/{id} until the verdict). The SQL is
-- in electron/core/pos-store.ts, the rules in electron/core/returns.ts.

-- The outbox gains the kind 'return'. SQLite cannot alter a CHECK: the table is rebuilt with the
-- same columns, rows (seq kept, so AUTOINCREMENT goes on from the highest) and indexes. The
-- migration runner turns foreign keys off around it and checks them before committing.
CREATE TABLE outbox_new (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('emit', 'cancel', 'void', 'return')),
  receipt_id TEXT NOT NULL REFERENCES receipts (id),
  idempotency_key TEXT NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 200),
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'done', 'blocked', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
INSERT INTO outbox_new (seq, kind, receipt_id, idempotency_key, payload, state, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at)
  SELECT seq, kind, receipt_id, idempotency_key, payload, state, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_new RENAME TO outbox;
CREATE INDEX outbox_state_seq ON outbox (state, seq);
CREATE INDEX outbox_state_due ON outbox (state, next_attempt_at);
CREATE INDEX outbox_receipt ON outbox (receipt_id, kind);
-- At most one live command of each kind per receipt: one return of a receipt at a time.
CREATE UNIQUE INDEX outbox_live ON outbox (receipt_id, kind) WHERE state IN ('pending', 'sent', 'blocked');

-- One return of (part of) an authorized receipt. Its idempotency key is made when the manager
-- authorizes it and is the key of every attempt of its outbox command.
-- state (electron/api/terminal-api.ts ReturnState):
--   pending          written, the service has not acknowledged it yet
--   processing       the service accepted it (service_id, number and key known), verdict awaited
--   authorized       autorizada
--   rejected         the authority rejected it (codigo_status/motivo): a new return is needed
--   needs_attention  the service refused the request (4xx): see attention
-- total_cents and the items' total_cents are the terminal's reckoning until the service answers,
-- then the service's figures.
CREATE TABLE returns (
  id TEXT PRIMARY KEY,
  receipt_id TEXT NOT NULL REFERENCES receipts (id),
  idempotency_key TEXT NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 200),
  state TEXT NOT NULL CHECK (state IN ('pending', 'processing', 'authorized', 'rejected', 'needs_attention')),
  request_json TEXT NOT NULL,
  reason TEXT NOT NULL,
  total_cents INTEGER NOT NULL CHECK (total_cents >= 0),
  manager_id TEXT NOT NULL REFERENCES managers (id),
  service_id TEXT,
  serie INTEGER,
  nnf INTEGER,
  chave TEXT,
  protocolo TEXT,
  codigo_status TEXT,
  motivo TEXT,
  autorizado_em TEXT,
  attention TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX returns_receipt ON returns (receipt_id, created_at);
CREATE INDEX returns_recent ON returns (created_at);

-- The sale items a return brings back, in ten-thousandths of the unit (like sale_items).
CREATE TABLE return_items (
  return_id TEXT NOT NULL REFERENCES returns (id),
  sale_item_id INTEGER NOT NULL REFERENCES sale_items (id),
  quantity_units INTEGER NOT NULL CHECK (quantity_units > 0),
  total_cents INTEGER NOT NULL CHECK (total_cents >= 0),
  PRIMARY KEY (return_id, sale_item_id)
);
