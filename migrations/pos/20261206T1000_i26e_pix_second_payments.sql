-- A charge paid twice (issue 26, docs/pix.md "Paid twice"): the payer's bank sent a second PIX
-- (another endToEndId) for a txid already paid. Only one PIX pays the sale; every other one is
-- refunded automatically, in full, once. One row per such PIX, written the moment it is seen,
-- before the refund is asked; refund_id is fixed (D + the charge's txid, under that PIX's own
-- endToEndId), so asking again after a crash or a lost answer is the same refund.
--   refund_state NULL: the refund is due; EM_PROCESSAMENTO: asked, read until the PSP ends it;
--   DEVOLVIDO / NAO_REALIZADO: ended (NAO_REALIZADO is shown to the manager with the PSP's words).
CREATE TABLE pix_second_payments (
  e2eid TEXT PRIMARY KEY,
  txid TEXT NOT NULL REFERENCES pix_charges (txid),
  paid_cents INTEGER NOT NULL CHECK (paid_cents > 0),
  paid_at TEXT NOT NULL,
  refund_id TEXT NOT NULL,
  refund_state TEXT CHECK (refund_state IN ('EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_try_at TEXT NOT NULL,
  last_error TEXT,
  found_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
