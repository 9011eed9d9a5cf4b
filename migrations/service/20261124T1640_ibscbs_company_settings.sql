-- Tax reform (IBS/CBS): each company's settings, as one JSON value (fiscal/ibscbs/settings.ts):
-- whether a Simples Nacional company (CRT 1, 2, 4) writes the reform groups, the classification
-- (CST, cClassTrib) of items that state none, and the company's own rates for periods. NULL in
-- the rows of companies registered before: the defaults (no opt-in, 000 / 000001, no rates of
-- its own), which is what a registration writes too.

ALTER TABLE companies ADD COLUMN ibscbs TEXT CHECK (ibscbs IS NULL OR json_valid(ibscbs));
