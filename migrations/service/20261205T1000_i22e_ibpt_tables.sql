-- The IBPT tables ("De Olho no Imposto", Lei 12.741/2012) whoever runs the service imported
-- (`balcao ibpt import --servico`, issue 22), for all its companies: dated data, one row per
-- published file (UF and versão) with its validity, chave and fonte, and the rates of its NCM
-- lines. An NFC-e sent as JSON takes each item's vTotTrib from the table of its company's UF in
-- force on dhEmi's day (service/nfce/accept.ts; fiscal/ibpt/table.ts chooses). The terminal keeps
-- the same two tables (migrations/pos). Importing the same UF and versão again replaces it.

CREATE TABLE ibpt_tables (
  id TEXT PRIMARY KEY,
  uf TEXT NOT NULL CHECK (length(uf) = 2),
  versao TEXT NOT NULL,
  vigencia_inicio TEXT NOT NULL,
  vigencia_fim TEXT NOT NULL CHECK (vigencia_fim >= vigencia_inicio),
  chave TEXT NOT NULL,
  fonte TEXT NOT NULL,
  file_name TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  UNIQUE (uf, versao)
);

-- Rates in percent at scale 2 (13.45 % → 1345); ex '' when the line has none.
CREATE TABLE ibpt_rates (
  table_id TEXT NOT NULL REFERENCES ibpt_tables (id) ON DELETE CASCADE,
  ncm TEXT NOT NULL,
  ex TEXT NOT NULL,
  nacionalfederal INTEGER NOT NULL,
  importadosfederal INTEGER NOT NULL,
  estadual INTEGER NOT NULL,
  municipal INTEGER NOT NULL,
  PRIMARY KEY (table_id, ncm, ex)
) WITHOUT ROWID;
