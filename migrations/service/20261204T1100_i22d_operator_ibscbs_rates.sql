-- The IBS/CBS rates the service's operator sets for all its companies (`balcao ibscbs aliquotas`,
-- PUT /api/v1/operador/aliquotas-ibscbs): one row holding the periods as JSON, the
-- RateOverride[] of fiscal/ibscbs/rates.ts, checked before they are written. A company's own
-- rates still win over these (docs/fiscal.md, "Rates by date").

CREATE TABLE operator_ibscbs_rates (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  periods TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
