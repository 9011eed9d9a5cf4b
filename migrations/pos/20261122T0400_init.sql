-- Terminal (POS) database, first migration: the catalog, sales with their items and payments,
-- the receipts (NFC-e) they became, the outbox of commands to the issuance service, the
-- numbering of each series, managers and the audit log.
--
-- Conventions (same as the service): ids are UUID text; instants are UTC ISO-8601 text with
-- milliseconds ('2026-11-22T17:03:05.123Z': fixed width, so text order is time order), except
-- outbox.next_attempt_at, an integer of epoch milliseconds because the worker compares it with
-- the clock on every tick; money is INTEGER cents; quantities are INTEGER ten-thousandths of the
-- unit (qCom has 4 decimals); booleans are 0/1. All SQL of the terminal lives in
-- electron/core/pos-store.ts.

-- One row per series this terminal issues in. The caller owns the sequence (docs/api.md, "Overview"):
-- next_nnf is taken and incremented in the same transaction that writes the receipt, so a
-- number is never handed out twice and never skipped.
CREATE TABLE series (
  serie INTEGER PRIMARY KEY CHECK (serie BETWEEN 0 AND 999),
  next_nnf INTEGER NOT NULL CHECK (next_nnf BETWEEN 1 AND 1000000000)
);

CREATE TABLE products (
  code TEXT PRIMARY KEY CHECK (length(code) BETWEEN 1 AND 60),
  gtin TEXT NOT NULL,
  description TEXT NOT NULL,
  ncm TEXT NOT NULL,
  cfop TEXT NOT NULL,
  unit TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents > 0),
  tax_group TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  updated_at TEXT NOT NULL
);
CREATE INDEX products_gtin ON products (gtin) WHERE gtin <> 'SEM GTIN';

CREATE TABLE sales (
  id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('open', 'finished', 'discarded')),
  opened_at TEXT NOT NULL,
  finished_at TEXT,
  -- Consumer's CPF (11 digits) or CNPJ (14), validated before it is stored.
  consumer_doc TEXT CHECK (consumer_doc IS NULL OR length(consumer_doc) IN (11, 14)),
  -- Fixed at finish.
  total_cents INTEGER,
  change_cents INTEGER,
  CHECK ((state = 'finished') = (finished_at IS NOT NULL))
);
CREATE INDEX sales_open ON sales (opened_at) WHERE state = 'open';

-- Product facts are copied when the item is added: a later price or description change in the
-- catalog must not change a sale already on the screen (nor its receipt).
CREATE TABLE sale_items (
  id INTEGER PRIMARY KEY,
  sale_id TEXT NOT NULL REFERENCES sales (id),
  product_code TEXT NOT NULL,
  gtin TEXT NOT NULL,
  description TEXT NOT NULL,
  ncm TEXT NOT NULL,
  cfop TEXT NOT NULL,
  unit TEXT NOT NULL,
  tax_group TEXT NOT NULL,
  quantity_units INTEGER NOT NULL CHECK (quantity_units > 0),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
  total_cents INTEGER NOT NULL CHECK (total_cents > 0),
  added_at TEXT NOT NULL,
  -- An item removed before the sale is finished stays listed (struck through on the screen)
  -- and out of every total.
  removed_at TEXT
);
CREATE INDEX sale_items_sale ON sale_items (sale_id, id);

CREATE TABLE sale_payments (
  id INTEGER PRIMARY KEY,
  sale_id TEXT NOT NULL REFERENCES sales (id),
  tpag TEXT NOT NULL CHECK (length(tpag) = 2),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  -- Card group (docs/fiscal.md, "Payments"); all NULL when the payment has none.
  card_tp_integra TEXT CHECK (card_tp_integra IS NULL OR card_tp_integra IN ('1', '2')),
  card_cnpj TEXT,
  card_tband TEXT,
  card_caut TEXT,
  added_at TEXT NOT NULL
);
CREATE INDEX sale_payments_sale ON sale_payments (sale_id, id);

-- The fiscal document of a finished sale. Its number and idempotency key are fixed when it is
-- written and never change: a rejected receipt is corrected and sent again with both.
-- state (electron/api/terminal-api.ts ReceiptState):
--   pending          written, the service has not acknowledged it yet
--   processing       the service accepted it (service_id known), verdict awaited
--   authorized       autorizado; the number is consumed for ever
--   rejected         the authority rejected it (codigo_status/motivo); waits for a correction
--   needs_attention  the service refused the request (4xx); waits for the operator
--   cancelling       a cancellation is queued in the outbox
--   cancelled        cancelado; the number stays consumed
--   voiding          the number is being voided (inutilização), the sale was abandoned
--   voided           the number is voided
-- tp_emis and signed_xml are here for offline contingency (tpEmis 9): a receipt signed at the
-- terminal keeps its XML, and its number must then never be voided.
CREATE TABLE receipts (
  id TEXT PRIMARY KEY,
  sale_id TEXT NOT NULL UNIQUE REFERENCES sales (id),
  serie INTEGER NOT NULL REFERENCES series (serie),
  nnf INTEGER NOT NULL CHECK (nnf >= 1),
  idempotency_key TEXT NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 200),
  state TEXT NOT NULL CHECK (state IN ('pending', 'processing', 'authorized', 'rejected', 'needs_attention',
                                       'cancelling', 'cancelled', 'voiding', 'voided')),
  tp_emis INTEGER NOT NULL DEFAULT 1 CHECK (tp_emis IN (1, 9)),
  signed_xml TEXT,
  request_json TEXT NOT NULL,
  total_cents INTEGER NOT NULL,
  service_id TEXT,
  chave TEXT,
  codigo_status TEXT,
  motivo TEXT,
  protocolo TEXT,
  -- As the service reported it (Brasília offset), and the local instant the terminal learned it:
  -- the cancellation window starts at the earlier of the two (cancellation.ts).
  autorizado_em TEXT,
  authorized_seen_at TEXT,
  cancelado_em TEXT,
  qrcode TEXT,
  url_consulta TEXT,
  -- What the operator must act on (the service's or the authority's message), or NULL.
  attention TEXT,
  corrections INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (serie, nnf)
);
CREATE INDEX receipts_recent ON receipts (created_at);
CREATE INDEX receipts_state ON receipts (state);

-- Commands for the issuance service, inserted in the same transaction as the state change they
-- carry out, and sent from here until their outcome is known. payload is the exact JSON body;
-- idempotency_key goes in the Idempotency-Key header of every attempt (for 'emit' it is the
-- receipt's key).
-- kind: emit (POST /nfce), cancel (POST /nfce/{id}/cancelar), void (POST /nfce/inutilizar).
-- state:
--   pending  to be sent (again) at next_attempt_at
--   sent     the service has the document (emit only): polled at next_attempt_at
--   done     outcome known and recorded
--   blocked  waits for the operator (rejected / needs attention); a correction makes it pending
--   failed   final refusal (a cancellation after the window, ...) or superseded (a voided sale)
CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('emit', 'cancel', 'void')),
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
-- The worker reads the live commands on every tick: these keep that proportional to the live
-- ones, not to the whole history (done commands stay, as the record of what was sent).
CREATE INDEX outbox_state_seq ON outbox (state, seq);
CREATE INDEX outbox_state_due ON outbox (state, next_attempt_at);
CREATE INDEX outbox_receipt ON outbox (receipt_id, kind);
-- At most one live command of each kind per receipt.
CREATE UNIQUE INDEX outbox_live ON outbox (receipt_id, kind) WHERE state IN ('pending', 'sent', 'blocked');

-- Managers authorize cancellations and voids with a PIN, stored only as a scrypt hash
-- (managers.ts). failed_attempts/locked_until slow down guessing at the counter.
CREATE TABLE managers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
  pin_hash TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  failed_attempts INTEGER NOT NULL DEFAULT 0,
  locked_until INTEGER,
  created_at TEXT NOT NULL
);

-- Who did what, when and why: every cancellation, reprint, correction and void, and every PIN
-- refused. Append-only: the triggers refuse updates and deletes.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('manager', 'operator', 'system')),
  actor_id TEXT NOT NULL,
  actor_name TEXT NOT NULL,
  action TEXT NOT NULL,
  receipt_id TEXT REFERENCES receipts (id),
  reason TEXT,
  details TEXT
);
CREATE INDEX audit_log_receipt ON audit_log (receipt_id, id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log é somente inclusão');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log é somente inclusão');
END;
