-- As migrations/service/20261206T0900_i26f_pix_webhook.sql, on PostgreSQL.
-- The API Pix webhook (docs/pix.md, "The webhook"): the PSP tells the service a PIX arrived, by
-- POST <webhookUrl>/pix. A real PSP authenticates to the receiver with mutual TLS, which the
-- service's API port does not ask; the webhook URL carries a per-company secret instead, kept
-- here only as its SHA-256 (like the API tokens), so a leaked database opens no receiver.
CREATE TABLE pix_webhook_secrets (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  secret_sha256 BYTEA NOT NULL UNIQUE CHECK (octet_length(secret_sha256) = 32),
  created_at TEXT NOT NULL
);

-- The PIX the PSP reported, once per company and endToEndId (a redelivery changes nothing). The
-- terminal reads them by txid and confirms each with one read at the PSP: the PSP stays the
-- source of truth, this is only the hint that makes the sale finish sooner.
CREATE TABLE pix_received (
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  end_to_end_id TEXT NOT NULL CHECK (char_length(end_to_end_id) = 32),
  txid TEXT,
  valor TEXT NOT NULL,
  horario TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (company_id, end_to_end_id)
);
CREATE INDEX pix_received_txid ON pix_received (company_id, txid);
