-- The service database on PostgreSQL (service/pg-store.ts): the same tables as the SQLite set
-- (migrations/service/, up to 20261124T1640), in one first migration, plus what several
-- processes sharing the database need: the processes' leases (service_processes) and, on the
-- rows a process holds, which process holds them.
--
-- Conventions kept from the SQLite set, so both stores answer byte for byte the same: ids are
-- UUID text; instants are UTC ISO-8601 text with milliseconds ('2026-11-22T17:03:05.123Z':
-- fixed width, so text order is time order), written by the service's clock; instants the tax
-- authority wrote (dhEmi, dhRecbto) are kept as it wrote them. Secrets are AES-256-GCM blobs
-- sealed by service/secrets.ts (bytea columns ending in _enc). Only the leases use timestamptz:
-- they are compared with the database's clock (now()), the one clock every process shares.
--
-- The documents, their keys and the webhook outbox (idempotency_keys, webhook_deliveries,
-- nfce_documents, nfce_inutilizacoes, mdfe, nfe_documents) name their company without a foreign
-- key to it: every insert would take a KEY SHARE lock on the company's one row, and with several
-- processes inserting for one company at once those locks pile up on it (MultiXact) until they
-- are what limits the service (measured: 3 processes slower than 1). A row's company always comes
-- from the authenticated token, and no command deletes a company. The settings tables keep theirs.
--
-- Idempotency keys (idempotency_keys.key, the documents' idempotency_key and the manifests'
-- referencia_externa) are BYTEA holding the key's UTF-8: a key is any Unicode text of 1 to 200
-- characters (docs/api.md), U+0000 included, which PostgreSQL's text type cannot hold.

-- One row per running service process. A process renews heartbeat_at every lease/5 (BALCAO_LEASE_MS);
-- a row not renewed for the lease's length is a dead process, and whatever it held (queued
-- documents, manifests in flight, idempotency claims) may be taken by another. A graceful stop
-- deletes its row: what it held is free at once.
CREATE TABLE service_processes (
  id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

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
  csc_enc BYTEA,
  qrcode_versao INTEGER NOT NULL CHECK (qrcode_versao IN (2, 3)),
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  certificado_pfx_enc BYTEA NOT NULL,
  certificado_senha_enc BYTEA NOT NULL,
  certificado_sha256 TEXT NOT NULL,
  certificado_validade TEXT NOT NULL,
  -- JSON of the company's IBS/CBS settings (fiscal/ibscbs/settings.ts); NULL: the defaults.
  ibscbs TEXT CHECK (ibscbs IS NULL OR ibscbs::jsonb IS NOT NULL),
  created_at TEXT NOT NULL,
  settings_version INTEGER NOT NULL DEFAULT 1 CHECK (settings_version >= 1),
  updated_at TEXT NOT NULL,
  CHECK ((csc_id IS NULL) = (csc_enc IS NULL))
);
CREATE INDEX companies_cnpj ON companies (cnpj);

CREATE TABLE api_tokens (
  token_sha256 BYTEA PRIMARY KEY CHECK (length(token_sha256) = 32),
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL
);
CREATE INDEX api_tokens_company ON api_tokens (company_id);

CREATE TABLE replaced_certificates (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  sha256 TEXT NOT NULL,
  not_before TEXT NOT NULL,
  not_after TEXT NOT NULL,
  replaced_at TEXT NOT NULL,
  CHECK (not_before <= not_after)
);
CREATE INDEX replaced_certificates_company ON replaced_certificates (company_id, replaced_at);

-- The rules are service/idempotency-rules.ts's. The primary key is what makes a claim atomic
-- across processes: of two concurrent first claims of a key, one INSERT wins and the other
-- waits for it, then reads the winner's row. claimed_by: the process whose request claimed it
-- (service_processes.id); a key still processing with no document, whose process is gone, is
-- freed by the recovery of its document type.
CREATE TABLE idempotency_keys (
  company_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  key BYTEA NOT NULL CHECK (length(key) BETWEEN 1 AND 800),
  fingerprint TEXT NOT NULL,
  document_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'authorized', 'rejected')),
  claimed_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (company_id, doc_type, key)
);
CREATE INDEX idempotency_keys_processing ON idempotency_keys (doc_type, updated_at) WHERE state = 'processing';

CREATE TABLE company_clock (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  offset_minutes INTEGER NOT NULL DEFAULT 0 CHECK (offset_minutes >= 0),
  updated_at TEXT NOT NULL
);

CREATE TABLE sandbox_authority (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  latency_ms INTEGER NOT NULL DEFAULT 0 CHECK (latency_ms BETWEEN 0 AND 60000),
  disponivel BOOLEAN NOT NULL DEFAULT TRUE,
  updated_at TEXT NOT NULL
);

CREATE TABLE webhooks (
  company_id TEXT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  segredo_enc BYTEA NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- The outbox. A delivery is leased by pushing next_attempt_at ahead (FOR UPDATE SKIP LOCKED:
-- two processes never take the same one), as on SQLite.
CREATE TABLE webhook_deliveries (
  event_id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
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

CREATE TABLE master_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed BYTEA NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE nfce_documents (
  -- Queue order among documents due at the same instant (SQLite's rowid).
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  idempotency_key BYTEA,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  cnf TEXT NOT NULL,
  dh_emi TEXT NOT NULL,
  tp_emis INTEGER NOT NULL CHECK (tp_emis IN (1, 9)),
  contingencia BOOLEAN NOT NULL,
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  request_json TEXT,
  received_xml TEXT,
  signed_xml TEXT,
  qrcode TEXT,
  url_consulta TEXT NOT NULL,
  valor_total TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processando', 'autorizado', 'rejeitado', 'cancelado')),
  codigo_status TEXT,
  motivo TEXT,
  protocolo TEXT,
  autorizado_em TEXT,
  cancelado_em TEXT,
  protocolo_cancelamento TEXT,
  nfe_proc TEXT,
  evento_xml TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_error TEXT,
  -- The process whose queue holds it (service_processes.id), from taken to verdict or
  -- postponement; NULL when free. A holder that stopped renewing its lease loses it.
  leased_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((request_json IS NULL) <> (received_xml IS NULL))
);
CREATE INDEX nfce_documents_due ON nfce_documents (next_attempt_at, seq) WHERE status = 'processando';
CREATE INDEX nfce_documents_company ON nfce_documents (company_id, created_at);
CREATE UNIQUE INDEX nfce_documents_authorized_number ON nfce_documents (company_id, serie, numero)
  WHERE status IN ('autorizado', 'cancelado');
CREATE UNIQUE INDEX nfce_documents_live_key ON nfce_documents (company_id, chave) WHERE status <> 'rejeitado';

CREATE TABLE nfce_inutilizacoes (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  serie INTEGER NOT NULL,
  numero_inicial INTEGER NOT NULL,
  numero_final INTEGER NOT NULL CHECK (numero_final >= numero_inicial),
  justificativa TEXT NOT NULL,
  protocolo TEXT NOT NULL,
  codigo_status TEXT NOT NULL,
  motivo TEXT NOT NULL,
  xml TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX nfce_inutilizacoes_range ON nfce_inutilizacoes (company_id, serie, numero_inicial, numero_final);

CREATE TABLE mdfe (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL,
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  c_mdf TEXT NOT NULL CHECK (length(c_mdf) = 8),
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  placa TEXT NOT NULL,
  uf_inicio TEXT NOT NULL,
  uf_fim TEXT NOT NULL,
  situacao TEXT NOT NULL CHECK (situacao IN ('processando', 'autorizado', 'rejeitado', 'encerrado', 'cancelado')),
  status TEXT,
  motivo TEXT,
  protocolo TEXT,
  emitido_em TEXT NOT NULL,
  autorizado_em TEXT,
  encerrado_em TEXT,
  cancelado_em TEXT,
  referencia_externa BYTEA,
  qrcode TEXT NOT NULL,
  valor_carga TEXT NOT NULL,
  xml TEXT NOT NULL,
  prot_xml TEXT,
  -- The process whose request is issuing it while processando (service_processes.id): another
  -- process's recovery settles it only once that process is gone.
  issued_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((situacao = 'processando') = (status IS NULL)),
  CHECK (situacao IN ('processando', 'rejeitado') OR protocolo IS NOT NULL)
);
CREATE INDEX mdfe_company_emitido ON mdfe (company_id, emitido_em, seq);
CREATE INDEX mdfe_company_numero ON mdfe (company_id, serie, numero);
CREATE INDEX mdfe_processando ON mdfe (seq) WHERE situacao = 'processando';

CREATE TABLE mdfe_documentos (
  mdfe_id TEXT NOT NULL REFERENCES mdfe (id) ON DELETE CASCADE,
  ordem INTEGER NOT NULL,
  tipo TEXT NOT NULL CHECK (tipo IN ('CTe', 'NFe')),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  codigo_municipio_descarga TEXT NOT NULL,
  PRIMARY KEY (mdfe_id, ordem)
);

CREATE TABLE mdfe_eventos (
  mdfe_id TEXT NOT NULL REFERENCES mdfe (id) ON DELETE CASCADE,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  status TEXT NOT NULL,
  motivo TEXT NOT NULL,
  protocolo TEXT,
  registrado_em TEXT NOT NULL,
  dados TEXT NOT NULL,
  xml TEXT NOT NULL,
  PRIMARY KEY (mdfe_id, tp_evento, n_seq)
);

CREATE TABLE nfe_documents (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  tipo TEXT NOT NULL CHECK (tipo IN ('devolucao')),
  idempotency_key BYTEA,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  nfce_id TEXT NOT NULL REFERENCES nfce_documents (id),
  chave_nfce TEXT NOT NULL CHECK (length(chave_nfce) = 44),
  dh_emi TEXT NOT NULL,
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  justificativa TEXT NOT NULL,
  request_json TEXT NOT NULL,
  signed_xml TEXT NOT NULL,
  valor_total TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processando', 'autorizado', 'rejeitado')),
  codigo_status TEXT,
  motivo TEXT,
  protocolo TEXT,
  autorizado_em TEXT,
  nfe_proc TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_error TEXT,
  -- As nfce_documents.leased_by.
  leased_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX nfe_documents_due ON nfe_documents (next_attempt_at, seq) WHERE status = 'processando';
CREATE INDEX nfe_documents_nfce ON nfe_documents (company_id, chave_nfce);
CREATE INDEX nfe_documents_company ON nfe_documents (company_id, created_at);
CREATE UNIQUE INDEX nfe_documents_live_number ON nfe_documents (company_id, serie, numero) WHERE status <> 'rejeitado';

CREATE TABLE nfe_items (
  document_id TEXT NOT NULL REFERENCES nfe_documents (id) ON DELETE CASCADE,
  numero_item INTEGER NOT NULL CHECK (numero_item BETWEEN 1 AND 990),
  codigo TEXT NOT NULL,
  descricao TEXT NOT NULL,
  unidade TEXT NOT NULL,
  quantidade_units BIGINT NOT NULL CHECK (quantidade_units > 0),
  valor TEXT NOT NULL,
  PRIMARY KEY (document_id, numero_item)
);
