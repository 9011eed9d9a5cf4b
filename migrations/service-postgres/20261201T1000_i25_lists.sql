-- The lists of the API (GET /api/v1/nfce, /nfe, /mdfe, /nfce/inutilizacoes; service/paging.ts),
-- as migrations/service/20261201T1000_i25_lists.sql does on SQLite: each filter served by an
-- index whose columns are the filter's, then the order of the list (the instant, then seq, the
-- tie-break), so a page reads only its own rows and a deep page (keyset: the row comparison
-- (instant, seq) < (…)) costs what the first does.
--
-- NFC-e and NF-e are listed newest first by ide/dhEmi: balcao_instant(dh_emi) (20261128T0920).

-- nfce_documents_emissao gains seq (the export's range reads it as before).
DROP INDEX nfce_documents_emissao;
CREATE INDEX nfce_documents_emissao ON nfce_documents (company_id, balcao_instant(dh_emi), seq);
CREATE INDEX nfce_documents_status_emissao ON nfce_documents (company_id, status, balcao_instant(dh_emi), seq);
CREATE INDEX nfce_documents_serie_emissao ON nfce_documents (company_id, serie, balcao_instant(dh_emi), seq);
CREATE INDEX nfce_documents_serie_status_emissao ON nfce_documents (company_id, serie, status, balcao_instant(dh_emi), seq);
CREATE INDEX nfce_documents_chave ON nfce_documents (company_id, chave, balcao_instant(dh_emi), seq);
CREATE INDEX nfce_documents_referencia ON nfce_documents (company_id, idempotency_key, balcao_instant(dh_emi), seq) WHERE idempotency_key IS NOT NULL;
-- Nothing reads the documents by company and reception instant.
DROP INDEX nfce_documents_company;

-- The cancellation's own answer beside the authorization's: the retEvento's cStat and xMotivo,
-- filled from the stored event of documents cancelled before.
ALTER TABLE nfce_documents ADD COLUMN cancelamento_codigo_status TEXT;
ALTER TABLE nfce_documents ADD COLUMN cancelamento_motivo TEXT;
UPDATE nfce_documents
   SET cancelamento_codigo_status = substring(evento_xml FROM '<cStat>([^<]*)</cStat>'),
       cancelamento_motivo = substring(evento_xml FROM '<xMotivo>([^<]*)</xMotivo>')
 WHERE status = 'cancelado' AND strpos(evento_xml, '<retEvento') > 0;

CREATE INDEX nfe_documents_emissao ON nfe_documents (company_id, balcao_instant(dh_emi), seq);
CREATE INDEX nfe_documents_status_emissao ON nfe_documents (company_id, status, balcao_instant(dh_emi), seq);
CREATE INDEX nfe_documents_serie_emissao ON nfe_documents (company_id, serie, balcao_instant(dh_emi), seq);
CREATE INDEX nfe_documents_chave ON nfe_documents (company_id, chave, balcao_instant(dh_emi), seq);
CREATE INDEX nfe_documents_chave_nfce ON nfe_documents (company_id, chave_nfce, balcao_instant(dh_emi), seq);
CREATE INDEX nfe_documents_referencia ON nfe_documents (company_id, idempotency_key, balcao_instant(dh_emi), seq) WHERE idempotency_key IS NOT NULL;
DROP INDEX nfe_documents_nfce;
DROP INDEX nfe_documents_company;

CREATE INDEX mdfe_company_situacao ON mdfe (company_id, situacao, emitido_em, seq);
CREATE INDEX mdfe_company_status ON mdfe (company_id, status, emitido_em, seq);
CREATE INDEX mdfe_company_uf_inicio ON mdfe (company_id, uf_inicio, emitido_em, seq);
CREATE INDEX mdfe_company_uf_fim ON mdfe (company_id, uf_fim, emitido_em, seq);
-- A manifest by its access key (GET /api/v1/mdfe/chave/{chave}, the não-encerrados query).
CREATE INDEX mdfe_company_chave ON mdfe (company_id, chave, emitido_em, seq);

-- Inutilizações get the insertion sequence the other lists break ties with (SQLite's rowid).
ALTER TABLE nfce_inutilizacoes ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE INDEX nfce_inutilizacoes_registro ON nfce_inutilizacoes (company_id, created_at, seq);
CREATE INDEX nfce_inutilizacoes_serie_registro ON nfce_inutilizacoes (company_id, serie, created_at, seq);
DROP INDEX nfce_inutilizacoes_created;
