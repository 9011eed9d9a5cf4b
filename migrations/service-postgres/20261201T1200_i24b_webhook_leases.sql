-- A webhook delivery being attempted is leased to the process attempting it, as a queued
-- document is (service/pg-db.ts): leased_by names the process, whose heartbeat in
-- service_processes is the lease. A process that dies mid-delivery leaves it to the others once
-- its lease runs out (BALCAO_LEASE_MS), one that stops gracefully records or releases it; before,
-- the delivery's next attempt was pushed a fixed minute ahead instead. NULL: nobody holds it.
ALTER TABLE webhook_deliveries ADD COLUMN leased_by TEXT;
