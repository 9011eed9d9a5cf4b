-- The deployment's technical responsible (infRespTec, NT 2018.005; fiscal/resp-tec.ts): one row
-- for every company of the service, set by `balcao responsavel-tecnico definir`. The CSRT the UF
-- issued is sealed under the master key (service/secrets.ts, purpose `deployment/csrt`), like
-- the companies' CSC and certificate; its id and the sealed token go together or not at all.

CREATE TABLE technical_responsible (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cnpj TEXT NOT NULL,
  contact TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  csrt_id INTEGER,
  csrt_sealed BYTEA,
  updated_at TEXT NOT NULL,
  CHECK ((csrt_id IS NULL) = (csrt_sealed IS NULL))
);
