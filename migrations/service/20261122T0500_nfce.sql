-- NFC-e (model 65): the documents the issuance queue works on, and the inutilizações
-- (voided number ranges). Conventions of the first migration: UUID text ids, UTC ISO-8601 text
-- instants with milliseconds (text order is time order), 0/1 booleans. Instants that the tax
-- authority wrote (dhEmi, dhRecbto, dhRegEvento) are kept as it wrote them, with the Brasília
-- offset, because they are part of the fiscal record.

CREATE TABLE nfce_documents (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- The Idempotency-Key / referencia_externa of the request, if any (shown as referencia_externa).
  idempotency_key TEXT,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  -- cNF and dhEmi are fixed when the request is accepted: the worker re-builds the document with
  -- them, so the access key given in the 202 never changes.
  cnf TEXT NOT NULL,
  dh_emi TEXT NOT NULL,
  tp_emis INTEGER NOT NULL CHECK (tp_emis IN (1, 9)),
  contingencia INTEGER NOT NULL CHECK (contingencia IN (0, 1)),
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  -- Exactly one origin: the JSON body (issued here) or the signed XML issued at the terminal in
  -- offline contingency (transmitted unchanged).
  request_json TEXT,
  received_xml TEXT,
  -- The signed NFe, committed BEFORE it is first sent to the authority.
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
  -- nfeProc (signed NFe + protNFe) once authorized; procEventoNFe once cancelled.
  nfe_proc TEXT,
  evento_xml TEXT,
  -- Sends started: incremented and committed before each call to the authority, so a document
  -- with attempts > 0 may have reached it and is consulted before it is sent again.
  attempts INTEGER NOT NULL DEFAULT 0,
  -- When the queue takes it next (processando only).
  next_attempt_at TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((request_json IS NULL) <> (received_xml IS NULL))
);
-- The queue: due documents in order.
CREATE INDEX nfce_documents_due ON nfce_documents (next_attempt_at) WHERE status = 'processando';
CREATE INDEX nfce_documents_company ON nfce_documents (company_id, created_at);
-- A number is consumed by one authorized document for ever (the authority enforces it too; this
-- makes a bug here loud instead of silent).
CREATE UNIQUE INDEX nfce_documents_authorized_number ON nfce_documents (company_id, serie, numero)
  WHERE status IN ('autorizado', 'cancelado');
-- One live document per access key: a contingency XML sent twice is the same receipt.
CREATE UNIQUE INDEX nfce_documents_live_key ON nfce_documents (company_id, chave) WHERE status <> 'rejeitado';

CREATE TABLE nfce_inutilizacoes (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  serie INTEGER NOT NULL,
  numero_inicial INTEGER NOT NULL,
  numero_final INTEGER NOT NULL CHECK (numero_final >= numero_inicial),
  justificativa TEXT NOT NULL,
  protocolo TEXT NOT NULL,
  codigo_status TEXT NOT NULL,
  motivo TEXT NOT NULL,
  -- ProcInutNFe: the signed inutNFe and the authority's retInutNFe.
  xml TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX nfce_inutilizacoes_range ON nfce_inutilizacoes (company_id, serie, numero_inicial, numero_final);
