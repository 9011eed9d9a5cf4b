-- Dynamic PIX (issue 26, docs/pix.md "Dynamic PIX"): one row per immediate charge the checkout
-- asks the store's PSP for. The row, with its txid, is written BEFORE the PSP is called, so a
-- crash, a lost answer or a restart finds it and asks about that txid again rather than making
-- a second charge (electron/core/pix/charge-rules.ts decides each answer).
--
-- txid: the sale's UUID without dashes and a two-digit sequence (the sale's first charge is 01,
-- a new one after the cashier cancelled is 02…): 34 letters and digits, inside the API Pix's
-- 26–35. state:
--   creating   written, PUT /cob not yet answered (or the answer was lost): ask again, same txid
--   active     the PSP has it (location, BR Code); polled until paid, expired or cancelled
--   paid       the PSP reported a PIX for it (e2eid): the sale's NFC-e is due
--   finished   its payment line (tPag 17, the e2eid in cAut) is on the sale, and the sale was
--              finished when that paid it in full
--   cancelling the cashier gave up: the removal (PATCH status REMOVIDA) is due
--   cancelled  removed at the PSP, never paid
--   expired    its calendar ran out, never paid
--   paid_late  paid after the cashier gave up or it expired: shown to the manager, who finishes
--              the sale with it or refunds it
--   refunding / refunded  the refund (devolução) asked / confirmed by the PSP
CREATE TABLE pix_charges (
  txid TEXT PRIMARY KEY CHECK (length(txid) BETWEEN 26 AND 35),
  sale_id TEXT NOT NULL REFERENCES sales (id),
  seq INTEGER NOT NULL CHECK (seq BETWEEN 1 AND 99),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  state TEXT NOT NULL CHECK (state IN ('creating', 'active', 'paid', 'finished', 'cancelling', 'cancelled', 'expired', 'paid_late', 'refunding', 'refunded')),
  -- The PSP's answers: the payload location (what the BR Code points to) and its BR Code.
  location TEXT,
  br_code TEXT,
  expires_at TEXT NOT NULL,
  -- The PIX received: endToEndId (cAut of the card group) and the amount the PSP confirmed.
  e2eid TEXT,
  paid_cents INTEGER,
  paid_at TEXT,
  refund_id TEXT,
  refund_state TEXT CHECK (refund_state IN ('EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_try_at TEXT NOT NULL,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (sale_id, seq)
) WITHOUT ROWID;

-- The loop's work: charges not yet settled, by when they are due.
CREATE INDEX pix_charges_due ON pix_charges (next_try_at) WHERE state IN ('creating', 'active', 'paid', 'cancelling', 'refunding');
