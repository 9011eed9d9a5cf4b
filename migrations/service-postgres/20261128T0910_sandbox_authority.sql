-- The sandbox tax authority's memory (service/authority/sandbox-pg-memory.ts), in a schema of
-- its own: it plays another system, as its own SQLite file does beside service.sqlite
-- (service/authority/sandbox-store.ts has the same tables). In the shared database every
-- service process sees the same authority: a document one process had authorized is
-- "duplicidade" to another, and a consultation from any process finds it.
--
-- Its decisions about one CNPJ are serialized by a transaction-level advisory lock on that CNPJ
-- (SQLite's BEGIN IMMEDIATE, per emitter). Protocol numbers come from a sequence: gaps (a
-- rejected decision that drew one) are allowed, as at SEFAZ.

CREATE SCHEMA sandbox_autoridade;

CREATE SEQUENCE sandbox_autoridade.protocolo;

CREATE TABLE sandbox_autoridade.nfe (
  access_key TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  model TEXT NOT NULL,
  serie INTEGER NOT NULL,
  number INTEGER NOT NULL,
  tp_emis INTEGER NOT NULL,
  c_stat TEXT NOT NULL,
  x_motivo TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  authorized_at_ms BIGINT NOT NULL,
  prot_nfe TEXT NOT NULL,
  cancelled_at TEXT,
  cancel_event TEXT,
  cancel_n_prot TEXT
);
CREATE UNIQUE INDEX nfe_number ON sandbox_autoridade.nfe (cnpj, model, serie, number);

-- Every NF-e/NFC-e the authority received and judged past its stateless checks, with its
-- answer (100, 204, 539, ...): what an authority counts, and what tests count to prove a
-- document was sent once.
CREATE TABLE sandbox_autoridade.nfe_recepcao (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  access_key TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  c_stat TEXT NOT NULL,
  received_at TEXT NOT NULL
);
CREATE INDEX nfe_recepcao_key ON sandbox_autoridade.nfe_recepcao (access_key);

CREATE TABLE sandbox_autoridade.nfe_event (
  access_key TEXT NOT NULL,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  company_id TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  ret_evento TEXT NOT NULL,
  PRIMARY KEY (access_key, tp_evento, n_seq)
);

CREATE TABLE sandbox_autoridade.voided_range (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  model TEXT NOT NULL,
  serie INTEGER NOT NULL,
  first_number INTEGER NOT NULL,
  last_number INTEGER NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  ret_inut TEXT NOT NULL
);
CREATE INDEX voided_range_series ON sandbox_autoridade.voided_range (cnpj, model, serie, first_number);

CREATE TABLE sandbox_autoridade.mdfe (
  access_key TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  cnpj TEXT NOT NULL,
  serie INTEGER NOT NULL,
  number INTEGER NOT NULL,
  plate TEXT NOT NULL,
  uf_ini TEXT NOT NULL,
  uf_fim TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('autorizado', 'encerrado', 'cancelado')),
  c_stat TEXT NOT NULL,
  x_motivo TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  received_at TEXT NOT NULL,
  authorized_at_ms BIGINT NOT NULL,
  prot_mdfe TEXT NOT NULL,
  closed_at TEXT,
  cancelled_at TEXT
);
CREATE UNIQUE INDEX mdfe_number ON sandbox_autoridade.mdfe (cnpj, serie, number);
CREATE INDEX mdfe_open_plate ON sandbox_autoridade.mdfe (cnpj, plate, state);

CREATE TABLE sandbox_autoridade.mdfe_event (
  access_key TEXT NOT NULL,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  company_id TEXT NOT NULL,
  n_prot TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  ret_evento TEXT NOT NULL,
  PRIMARY KEY (access_key, tp_evento, n_seq)
);
