-- NF-e (model 55) issued by the service: today only the return of goods sold with an NFC-e
-- (NF-e de devolução, finNFe 4, tpNF 0), queued and authorized like the NFC-e. Conventions of
-- the first migration: UUID text ids, UTC ISO-8601 text instants with milliseconds, 0/1
-- booleans; instants the tax authority wrote (dhEmi, dhRecbto) are kept as it wrote them.
--
-- Numbering: the service owns the model 55 sequence of each company and series. A number is
-- allocated when a return is accepted; a number the authority rejected was not consumed there
-- and is given to the next return (service/nfe/sqlite-store.ts nextNumber).

CREATE TABLE nfe_documents (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  tipo TEXT NOT NULL CHECK (tipo IN ('devolucao')),
  -- The Idempotency-Key / referencia_externa of the request, if any (shown as referencia_externa).
  idempotency_key TEXT,
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  -- The NFC-e the goods were sold with.
  nfce_id TEXT NOT NULL REFERENCES nfce_documents (id),
  chave_nfce TEXT NOT NULL CHECK (length(chave_nfce) = 44),
  dh_emi TEXT NOT NULL,
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  justificativa TEXT NOT NULL,
  request_json TEXT NOT NULL,
  -- Signed when the return is accepted, committed with it, before it is first sent.
  signed_xml TEXT NOT NULL,
  valor_total TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processando', 'autorizado', 'rejeitado')),
  codigo_status TEXT,
  motivo TEXT,
  protocolo TEXT,
  autorizado_em TEXT,
  -- nfeProc (signed NFe + protNFe) once authorized.
  nfe_proc TEXT,
  -- Sends started, committed before each call to the authority (consulted first when > 0).
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- The queue: due documents in order.
CREATE INDEX nfe_documents_due ON nfe_documents (next_attempt_at) WHERE status = 'processando';
CREATE INDEX nfe_documents_nfce ON nfe_documents (company_id, chave_nfce);
CREATE INDEX nfe_documents_company ON nfe_documents (company_id, created_at);
-- A number belongs to at most one live (processing or authorized) document; a rejected one's
-- number is free again.
CREATE UNIQUE INDEX nfe_documents_live_number ON nfe_documents (company_id, serie, numero) WHERE status <> 'rejeitado';

-- The items a return brings back: which NFC-e item (nItem), how much (in ten-thousandths of the
-- unit, as qCom has 4 decimals) and its value. What is still returnable of an NFC-e item is what
-- was sold minus these, over the returns that are processing or authorized.
CREATE TABLE nfe_items (
  document_id TEXT NOT NULL REFERENCES nfe_documents (id) ON DELETE CASCADE,
  numero_item INTEGER NOT NULL CHECK (numero_item BETWEEN 1 AND 990),
  codigo TEXT NOT NULL,
  descricao TEXT NOT NULL,
  unidade TEXT NOT NULL,
  quantidade_units INTEGER NOT NULL CHECK (quantidade_units > 0),
  valor TEXT NOT NULL,
  PRIMARY KEY (document_id, numero_item)
);
