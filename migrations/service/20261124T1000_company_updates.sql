-- Company settings change after registration (`balcao company update`: a new CSC, a renewed
-- certificate, the address...), written by another process than the running service. The
-- service keeps each company's credentials decrypted and parsed in memory; settings_version is
-- what tells it, with one cheap read per use, that its copy is stale. Every update bumps it in
-- the same statement that changes the settings.

ALTER TABLE companies ADD COLUMN settings_version INTEGER NOT NULL DEFAULT 1 CHECK (settings_version >= 1);
ALTER TABLE companies ADD COLUMN updated_at TEXT;
UPDATE companies SET updated_at = created_at;
