-- The lists of the API (GET /api/v1/nfce, /nfe, /mdfe, /nfce/inutilizacoes; service/paging.ts):
-- each filter served by an index whose columns are the filter's, then the order of the list, so a
-- page reads only its own rows however many the company has, and a deep page (keyset: after the
-- last row's instant and rowid) costs what the first does. SQLite appends the rowid to every
-- index entry, which is the tie-break of the order; the stores name the index of each query
-- (INDEXED BY).
--
-- NFC-e and NF-e are listed newest first by ide/dhEmi, as the export reads it: julianday(dh_emi),
-- which takes the offset dhEmi is written with (nfce_documents_emissao, 20261125T0900_exports.sql,
-- already serves the list without filters). A query must spell julianday(dh_emi) to use these.

CREATE INDEX nfce_documents_status_emissao ON nfce_documents (company_id, status, julianday(dh_emi));
CREATE INDEX nfce_documents_serie_emissao ON nfce_documents (company_id, serie, julianday(dh_emi));
CREATE INDEX nfce_documents_serie_status_emissao ON nfce_documents (company_id, serie, status, julianday(dh_emi));
CREATE INDEX nfce_documents_chave ON nfce_documents (company_id, chave, julianday(dh_emi));
CREATE INDEX nfce_documents_referencia ON nfce_documents (company_id, idempotency_key, julianday(dh_emi)) WHERE idempotency_key IS NOT NULL;
-- Nothing reads the documents by company and reception instant.
DROP INDEX nfce_documents_company;

-- The cancellation's own answer beside the authorization's (the document shows both): the
-- retEvento's cStat and xMotivo. Filled from the stored event of documents cancelled before.
ALTER TABLE nfce_documents ADD COLUMN cancelamento_codigo_status TEXT;
ALTER TABLE nfce_documents ADD COLUMN cancelamento_motivo TEXT;
UPDATE nfce_documents
   SET cancelamento_codigo_status = substr(evento_xml, instr(evento_xml, '<cStat>') + 7, instr(evento_xml, '</cStat>') - instr(evento_xml, '<cStat>') - 7),
       cancelamento_motivo = substr(evento_xml, instr(evento_xml, '<xMotivo>') + 9, instr(evento_xml, '</xMotivo>') - instr(evento_xml, '<xMotivo>') - 9)
 WHERE status = 'cancelado' AND instr(evento_xml, '<retEvento') > 0;

CREATE INDEX nfe_documents_emissao ON nfe_documents (company_id, julianday(dh_emi));
CREATE INDEX nfe_documents_status_emissao ON nfe_documents (company_id, status, julianday(dh_emi));
CREATE INDEX nfe_documents_serie_emissao ON nfe_documents (company_id, serie, julianday(dh_emi));
CREATE INDEX nfe_documents_chave ON nfe_documents (company_id, chave, julianday(dh_emi));
CREATE INDEX nfe_documents_chave_nfce ON nfe_documents (company_id, chave_nfce, julianday(dh_emi));
CREATE INDEX nfe_documents_referencia ON nfe_documents (company_id, idempotency_key, julianday(dh_emi)) WHERE idempotency_key IS NOT NULL;
-- Superseded: the returns of an NFC-e are read through nfe_documents_chave_nfce.
DROP INDEX nfe_documents_nfce;
DROP INDEX nfe_documents_company;

-- MDF-e: newest first by emitido_em (UTC text, fixed width: text order is time order), then seq
-- (mdfe_company_emitido, 20261122T0510_mdfe.sql, serves the list without filters).
CREATE INDEX mdfe_company_situacao ON mdfe (company_id, situacao, emitido_em, seq);
CREATE INDEX mdfe_company_status ON mdfe (company_id, status, emitido_em, seq);
CREATE INDEX mdfe_company_uf_inicio ON mdfe (company_id, uf_inicio, emitido_em, seq);
CREATE INDEX mdfe_company_uf_fim ON mdfe (company_id, uf_fim, emitido_em, seq);
-- A manifest by its access key (GET /api/v1/mdfe/chave/{chave}, the não-encerrados query).
CREATE INDEX mdfe_company_chave ON mdfe (company_id, chave, emitido_em, seq);

-- Inutilizações: newest first by registration.
CREATE INDEX nfce_inutilizacoes_registro ON nfce_inutilizacoes (company_id, created_at);
CREATE INDEX nfce_inutilizacoes_serie_registro ON nfce_inutilizacoes (company_id, serie, created_at);
