// The catalog: products by code and GTIN, as the checkout finds them (catalog.ts, catalog-import.ts).

import { StorePart } from './database.ts';

export type ProductRow = {
  code: string;
  gtin: string;
  description: string;
  ncm: string;
  cfop: string;
  unit: string;
  price_cents: number;
  tax_group: string;
  /** IBS/CBS classification, both or neither; null: the company's default applies. */
  ibscbs_cst: string | null;
  ibscbs_cclasstrib: string | null;
  active: number;
  updated_at: string;
};

export class ProductStore extends StorePart {
  upsertProduct(
    p: Omit<ProductRow, 'active' | 'ibscbs_cst' | 'ibscbs_cclasstrib'> & Partial<Pick<ProductRow, 'active' | 'ibscbs_cst' | 'ibscbs_cclasstrib'>>,
  ): void {
    this.st(
      `INSERT INTO products (code, gtin, description, ncm, cfop, unit, price_cents, tax_group, ibscbs_cst, ibscbs_cclasstrib, active, updated_at)
       VALUES (@code, @gtin, @description, @ncm, @cfop, @unit, @price_cents, @tax_group, @ibscbs_cst, @ibscbs_cclasstrib, @active, @updated_at)
       ON CONFLICT (code) DO UPDATE SET gtin = excluded.gtin, description = excluded.description, ncm = excluded.ncm,
         cfop = excluded.cfop, unit = excluded.unit, price_cents = excluded.price_cents, tax_group = excluded.tax_group,
         ibscbs_cst = excluded.ibscbs_cst, ibscbs_cclasstrib = excluded.ibscbs_cclasstrib,
         active = excluded.active, updated_at = excluded.updated_at`,
    ).run({ active: 1, ibscbs_cst: null, ibscbs_cclasstrib: null, ...p });
  }

  /** An active product by its code, else by its GTIN. */
  productByCodeOrGtin(code: string): ProductRow | undefined {
    return (this.st('SELECT * FROM products WHERE code = ? AND active = 1').get(code) ??
      this.st("SELECT * FROM products WHERE gtin = ? AND gtin <> 'SEM GTIN' AND active = 1 ORDER BY code LIMIT 1").get(code)) as ProductRow | undefined;
  }

  /** The catalog's name of each product code it has (active or not). */
  productNames(codes: readonly string[]): Map<string, string> {
    const rows = this.st('SELECT code, description FROM products WHERE code IN (SELECT value FROM json_each(?))').all(JSON.stringify(codes)) as {
      code: string;
      description: string;
    }[];
    return new Map(rows.map((r) => [r.code, r.description]));
  }

  searchProducts(query: string, limit: number): ProductRow[] {
    const like = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.st(
      `SELECT * FROM products WHERE active = 1 AND (code = @q OR gtin = @q OR description LIKE @like ESCAPE '\\')
       ORDER BY description LIMIT @limit`,
    ).all({ q: query, like, limit }) as ProductRow[];
  }

  productExists(code: string): boolean {
    return this.st('SELECT 1 FROM products WHERE code = ?').pluck().get(code) !== undefined;
  }

  countProducts(): number {
    return this.st('SELECT count(*) FROM products').pluck().get() as number;
  }
}
