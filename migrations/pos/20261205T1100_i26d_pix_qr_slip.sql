-- The customer's PIX QR slip (issue 26, docs/pix.md "At the checkout"): when the manager turns
-- on "Imprimir QR Code PIX para o cliente", a charge that becomes active prints a short slip
-- with its QR Code on the thermal printer, once. qr_slip_at is the claim, written before the
-- bytes leave (as print_jobs is for receipts): a restart, or the loop seeing the charge again,
-- never prints it a second time (at most once; a failed slip is not retried, the QR is on the
-- screen). qr_slip_error: the printer's words when the slip did not come out.
ALTER TABLE pix_charges ADD COLUMN qr_slip_at TEXT;
ALTER TABLE pix_charges ADD COLUMN qr_slip_error TEXT;
