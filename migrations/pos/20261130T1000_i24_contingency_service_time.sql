-- The dhCont of a contingency period on the issuance service's clock as the terminal last knew
-- it (electron/core/service-clock.ts), which is what the receipts issued in it carry; started_at
-- stays the PC's own instant, which the period's limits (maxHours) are counted on. NULL for the
-- periods written before: their dhCont was started_at.
ALTER TABLE contingency_periods ADD COLUMN dh_cont TEXT;
