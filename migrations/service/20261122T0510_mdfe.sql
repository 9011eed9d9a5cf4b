-- MDF-e (model 58): the manifests, the CT-e/NF-e keys each one carries, and their events
-- (110112 closing, 110111 cancellation). Conventions of the first migration: UUID text ids, UTC
-- ISO-8601 text instants with milliseconds (text order is time order). The fiscal record itself
-- (dhEmi, dhRecbto, dhRegEvento with the Brasília offset) is in the XML columns.
--
-- Every issuance attempt is its own row: a rejected one stays (situacao 'rejeitado', its cStat
-- in status) and does not consume the number; the next attempt at the same number reuses its
-- cMDF, so the access key is the same one again.

CREATE TABLE mdfe (
  -- Insertion order: the tie-break of "newest first" between manifests of the same instant.
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  serie INTEGER NOT NULL CHECK (serie BETWEEN 0 AND 999),
  numero INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 999999999),
  c_mdf TEXT NOT NULL CHECK (length(c_mdf) = 8),
  ambiente TEXT NOT NULL CHECK (ambiente IN ('homologacao', 'producao')),
  placa TEXT NOT NULL,
  uf_inicio TEXT NOT NULL,
  uf_fim TEXT NOT NULL,
  -- 'processando' is transient: committed before the manifest is sent, so a process stopped
  -- mid-call leaves a trace that the restart recovery settles by consulting the authority.
  situacao TEXT NOT NULL CHECK (situacao IN ('processando', 'autorizado', 'rejeitado', 'encerrado', 'cancelado')),
  -- The authority's cStat of the authorization (100) or of the rejection; NULL while processing.
  status TEXT,
  motivo TEXT,
  protocolo TEXT,
  -- dhEmi, from the company clock: what the de/ate filters compare (as a Brasília day).
  emitido_em TEXT NOT NULL,
  autorizado_em TEXT,
  encerrado_em TEXT,
  cancelado_em TEXT,
  -- The Idempotency-Key / referencia_externa of the request, if any (shown as referencia_externa).
  referencia_externa TEXT,
  qrcode TEXT NOT NULL,
  valor_carga TEXT NOT NULL,
  -- The signed MDFe, committed before it is sent; protMDFe once the authority answered.
  xml TEXT NOT NULL,
  prot_xml TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((situacao = 'processando') = (status IS NULL)),
  CHECK (situacao IN ('processando', 'rejeitado') OR protocolo IS NOT NULL)
);
-- The list: one company's manifests, newest first.
CREATE INDEX mdfe_company_emitido ON mdfe (company_id, emitido_em, seq);
-- The cMDF reuse of the next attempt at a number.
CREATE INDEX mdfe_company_numero ON mdfe (company_id, serie, numero);
-- The restart recovery.
CREATE INDEX mdfe_processando ON mdfe (seq) WHERE situacao = 'processando';

-- The CT-e / NF-e keys of the manifest, in the order of the document (infMunDescarga, then
-- infCTe before infNFe within each municipality).
CREATE TABLE mdfe_documentos (
  mdfe_id TEXT NOT NULL REFERENCES mdfe (id) ON DELETE CASCADE,
  ordem INTEGER NOT NULL,
  tipo TEXT NOT NULL CHECK (tipo IN ('CTe', 'NFe')),
  chave TEXT NOT NULL CHECK (length(chave) = 44),
  codigo_municipio_descarga TEXT NOT NULL,
  PRIMARY KEY (mdfe_id, ordem)
) WITHOUT ROWID;

-- Events the authority registered (cStat 135). A rejected event changes nothing and is not kept:
-- the refusal is the answer to the call.
CREATE TABLE mdfe_eventos (
  mdfe_id TEXT NOT NULL REFERENCES mdfe (id) ON DELETE CASCADE,
  tp_evento TEXT NOT NULL,
  n_seq INTEGER NOT NULL,
  status TEXT NOT NULL,
  motivo TEXT NOT NULL,
  protocolo TEXT,
  registrado_em TEXT NOT NULL,
  -- JSON of what the caller sent: {uf, codigo_municipio, data} or {justificativa}.
  dados TEXT NOT NULL,
  -- procEventoMDFe: the signed eventoMDFe and its retEventoMDFe.
  xml TEXT NOT NULL,
  PRIMARY KEY (mdfe_id, tp_evento, n_seq)
) WITHOUT ROWID;
