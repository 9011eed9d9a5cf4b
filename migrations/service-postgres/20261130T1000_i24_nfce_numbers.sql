-- The highest NFC-e number of each series the service holds, for the terminal that owns the
-- series (PUT /api/v1/terminais/{id} answers it in `numeracao`): see the SQLite migration of the
-- same name.
CREATE INDEX nfce_documents_number ON nfce_documents (company_id, serie, numero);
