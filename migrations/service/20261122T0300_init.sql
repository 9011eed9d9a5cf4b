-- Service database, first migration: companies and their credentials, API tokens, the
-- idempotency keys of every document type, the sandbox controls and the webhooks (settings and
-- delivery outbox). The NFC-e and MDF-e document tables come in later migrations.
--
-- Conventions: ids are UUID text; instants are UTC ISO-8601 text with milliseconds
-- ('2026-11-22T17:03:05.123Z': fixed width, so text order is time order); secrets are
-- AES-256-GCM blobs sealed by service/secrets.ts (columns ending in _enc); booleans are 0/1.

CREATE TABLE companies (
  id TEXT PRIMARY KEY,
  cnpj TEXT NOT NULL,
  ie TEXT NOT NULL,
  nome TEXT NOT NULL,
  fantasia TEXT,
  logradouro TEXT NOT NULL,
  numero TEXT NOT NULL,
  complemento TEXT,
  bairro TEXT NOT NULL,
  codigo_municipio TEXT NOT NULL,
  municipio TEXT NOT NULL,
  uf TEXT NOT NULL,
  cep TEXT NOT NULL,
  telefone TEXT,
  crt INTEGER NOT NULL CHECK (crt IN (1, 2, 3, 4)),
  csc_id TEXT,
  csc_enc BLOB,
  qrcode_versao INTEGER NOT NULL CHECK (qrcode_versao IN (2, 3)),
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  certificado_pfx_enc BLOB NOT NULL,
  certificado_senha_enc BLOB NOT NULL,
  -- Public facts of the certificate, kept in clear so a contingency XML signed at the terminal
  -- can be matched to the company, and expiry shown, without decrypting the .pfx.
  certificado_sha256 TEXT NOT NULL,
  certificado_validade TEXT NOT NULL,
  created_at TEXT NOT NULL,
  CHECK ((csc_id IS NULL) = (csc_enc IS NULL))
);
-- Not unique: one CNPJ may be registered in homologação and in produção, or twice for tests.
CREATE INDEX companies_cnpj ON companies (cnpj);

-- Only the SHA-256 of a token is stored; the token itself is shown once, at creation.
CREATE TABLE api_tokens (
  token_sha256 BLOB PRIMARY KEY CHECK (length(token_sha256) = 32),
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX api_tokens_company ON api_tokens (company_id);

-- One row per (company, document type, key), for every document type (service/idempotency.ts).
-- state: processing (locked, also while the outcome is unknown), authorized (replays; stays so
-- after a cancellation or closing), rejected (freed: the next claim is a new attempt).
-- document_id is the document of the latest attempt, bound at claim time.
CREATE TABLE idempotency_keys (
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  doc_type TEXT NOT NULL,
  key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
  fingerprint TEXT NOT NULL,
  document_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'authorized', 'rejected')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (company_id, doc_type, key)
) WITHOUT ROWID;
-- The restart recovery lists the keys still locked.
CREATE INDEX idempotency_keys_processing ON idempotency_keys (doc_type, updated_at) WHERE state = 'processing';

-- Sandbox mode only: how far this company's clock runs ahead of real time.
CREATE TABLE company_clock (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  offset_minutes INTEGER NOT NULL DEFAULT 0 CHECK (offset_minutes >= 0),
  updated_at TEXT NOT NULL
);

-- Sandbox mode only: behaviour of this company's simulated tax authority. No row = defaults.
CREATE TABLE sandbox_authority (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  latency_ms INTEGER NOT NULL DEFAULT 0 CHECK (latency_ms BETWEEN 0 AND 60000),
  disponivel INTEGER NOT NULL DEFAULT 1 CHECK (disponivel IN (0, 1)),
  updated_at TEXT NOT NULL
);

CREATE TABLE webhooks (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  segredo_enc BLOB NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Outbox: an event is inserted in the same transaction as the state change it reports, and
-- delivered at least once from here. payload is the exact body POSTed on every attempt (the
-- event id inside it never changes; the signature covers it byte for byte).
CREATE TABLE webhook_deliveries (
  event_id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  tipo TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  last_error TEXT,
  delivered_at TEXT,
  gave_up_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
  WHERE delivered_at IS NULL AND gave_up_at IS NULL;

-- A value sealed with the master key when the database was created: a different key (a lost
-- master.key, a wrong BALCAO_MASTER_KEY) is refused at start instead of failing at the first
-- issuance.
CREATE TABLE master_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed BLOB NOT NULL,
  created_at TEXT NOT NULL
);
