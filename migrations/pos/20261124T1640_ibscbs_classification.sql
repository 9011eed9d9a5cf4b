-- Tax reform (IBS/CBS): each product's classification, its CST and cClassTrib (the catalog,
-- catalog.ts), both or neither; NULL: the company's default classification applies (the
-- service's, or this terminal's company profile when it issues offline). A sale item copies them
-- when it is added, like the rest of the product's fiscal facts.

ALTER TABLE products ADD COLUMN ibscbs_cst TEXT CHECK (ibscbs_cst IS NULL OR length(ibscbs_cst) = 3);
ALTER TABLE products ADD COLUMN ibscbs_cclasstrib TEXT CHECK (ibscbs_cclasstrib IS NULL OR length(ibscbs_cclasstrib) = 6);
ALTER TABLE sale_items ADD COLUMN ibscbs_cst TEXT CHECK (ibscbs_cst IS NULL OR length(ibscbs_cst) = 3);
ALTER TABLE sale_items ADD COLUMN ibscbs_cclasstrib TEXT CHECK (ibscbs_cclasstrib IS NULL OR length(ibscbs_cclasstrib) = 6);
