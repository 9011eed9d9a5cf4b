-- The accountant's export (GET /api/v1/nfce/exportacao, service/nfce/export.ts) selects a
-- company's NFC-e by their emission day in Brasília, which is ide/dhEmi, written with its own
-- offset ('2026-11-22T14:03:05-03:00'). Text order is not time order across offsets, so the
-- export compares julianday(dh_emi), which SQLite reads with the offset; this index serves
-- exactly that expression (a query must spell it the same way to use it).

CREATE INDEX nfce_documents_emissao ON nfce_documents (company_id, julianday(dh_emi));
