-- The highest NFC-e number of each series the service holds, for the terminal that owns the
-- series (PUT /api/v1/terminais/{id} answers it in `numeracao`): a terminal whose database was
-- restored from a copy, or copied to a new computer, carries on above it instead of issuing a
-- number the authority already holds. Asked at every start of a terminal: an index, so the
-- answer costs the same on a year of documents as on a day's.
CREATE INDEX nfce_documents_number ON nfce_documents (company_id, serie, numero);
