-- The certificates a company signed with before its current one. A1 certificates are renewed
-- every year (`balcao company update --certificado`), while a terminal in offline contingency
-- signs with the certificate the company has at that moment and transmits up to 24 h later:
-- a receipt signed before the renewal arrives after it, and must still be recognised as the
-- company's (service/nfce/accept.ts).
--
-- Only public facts are kept, enough to recognise the certificate in a signed XML and to date
-- it. The replaced .pfx and its password (the private key) are not: the update overwrites them
-- in `companies` and the store scrubs the old bytes from the database files.
--
-- replaced_at is the instant the update committed (same value as the company's updated_at):
-- from then on the certificate is no longer the company's. Companies whose certificate was
-- replaced before this migration have no rows: nothing recorded those certificates.

CREATE TABLE replaced_certificates (
  id INTEGER PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- As companies.certificado_sha256: Node's fingerprint256 (colon-separated upper-case hex).
  sha256 TEXT NOT NULL,
  not_before TEXT NOT NULL,
  not_after TEXT NOT NULL,
  replaced_at TEXT NOT NULL,
  CHECK (not_before <= not_after)
);
CREATE INDEX replaced_certificates_company ON replaced_certificates (company_id, replaced_at);
