// The terminal's product catalog: what the cashier can sell. Each product carries the fiscal
// facts its receipt line needs (GTIN, NCM, CFOP, unit, tax group), checked when it is saved so a
// bad registration is found at the back office, not at the counter.
//
// A tax group is a named `imposto` block of the NFC-e request (docs/api.md, "NFC-e": det[].imposto).
// The names are ours; the blocks are what the builder accepts (fiscal/nfce/build.ts). Which
// ones apply depends on the store's tax regime (CRT): the Simples Nacional groups (CSOSN) for
// CRT 1 and 4, the regime-normal ones (CST) otherwise.
//
// Tax reform: a product may carry its IBS/CBS classification (CST and cClassTrib, checked
// against fiscal/ibscbs/classification.ts); without one, the company's default applies. It
// travels in the request as det[].imposto.IBSCBS whatever the regime: the issuer decides whether
// the NFC-e carries the groups (CRT 3, or a Simples company that opted in).

import { assertCfop, assertNcm } from '../../fiscal/br/catalogs.ts';
import { assertGtinOrSemGtin } from '../../fiscal/br/documents.ts';
import { FieldError, IssueCollector } from '../../fiscal/errors.ts';
import { checkClassification, type Classification } from '../../fiscal/ibscbs/classification.ts';
import { toCents } from '../../fiscal/money.ts';
import type { NfceItem } from '../../fiscal/nfce/types.ts';
import { DEMO_PRODUCTS } from '../../fiscal/samples.ts';
import type { ProductView } from '../api/terminal-api.ts';
import type { PosStore } from './pos-store.ts';
import type { ProductRow } from './store/products.ts';

export const TAX_GROUPS: Readonly<Record<string, NfceItem['imposto']>> = Object.freeze({
  /** Simples Nacional, taxed without ICMS credit (CSOSN 102): the common case of a small shop. */
  SN102: { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } } },
  /** Simples Nacional, ICMS charged before by substitution (CSOSN 500). */
  SN500: { ICMS: { ICMSSN500: { orig: '0', CSOSN: '500' } } },
  /** Regime normal, exempt (CST 40), PIS/COFINS not taxed. */
  ISENTO40: {
    ICMS: { ICMS40: { orig: '0', CST: '40' } },
    PIS: { PISNT: { CST: '07' } },
    COFINS: { COFINSNT: { CST: '07' } },
  },
  /** Regime normal, not taxed (CST 41), PIS/COFINS not taxed. */
  NAOTRIB41: {
    ICMS: { ICMS40: { orig: '0', CST: '41' } },
    PIS: { PISNT: { CST: '07' } },
    COFINS: { COFINSNT: { CST: '07' } },
  },
});

export function taxGroupOf(name: string): NfceItem['imposto'] {
  const group = TAX_GROUPS[name];
  if (!group) throw new FieldError('taxGroup', `grupo de tributação desconhecido: ${name}; conhecidos: ${Object.keys(TAX_GROUPS).join(', ')}`);
  // A copy: the request JSON is built from it and must never share objects with the table.
  return JSON.parse(JSON.stringify(group)) as NfceItem['imposto'];
}

export type ProductInput = {
  code: string;
  gtin: string;
  description: string;
  ncm: string;
  cfop: string;
  unit: string;
  /** Decimal string ("18.90") or integer cents. */
  price: string | number;
  taxGroup: string;
  /** IBS/CBS classification; absent or null: the company's default. */
  ibsCbs?: Classification | null;
  active?: boolean;
};

/** Checks a product and returns its row; throws FieldError naming every bad field. */
export function productRow(input: ProductInput, now: string): ProductRow {
  const issues = new IssueCollector();
  const cap = <T>(f: () => T) => issues.capture(f);
  const code = cap(() => {
    if (typeof input.code !== 'string' || !/^[!-\u00ff]([ -\u00ff]{0,58}[!-\u00ff])?$/.test(input.code)) {
      throw new FieldError('code', 'código do produto: de 1 a 60 caracteres, sem espaços nas pontas');
    }
    return input.code;
  });
  const gtin = cap(() => assertGtinOrSemGtin(input.gtin, 'gtin'));
  const description = cap(() => {
    const d = typeof input.description === 'string' ? input.description.trim() : '';
    if (d.length < 1 || d.length > 120) throw new FieldError('description', 'descrição: de 1 a 120 caracteres');
    return d;
  });
  const ncm = cap(() => assertNcm(input.ncm, 'ncm'));
  const cfop = cap(() => {
    const v = assertCfop(input.cfop, 'cfop');
    if (!v.startsWith('5')) throw new FieldError('cfop', 'NFC-e só admite CFOP de saída interna (5xxx)');
    return v;
  });
  const unit = cap(() => {
    if (typeof input.unit !== 'string' || !/^[!-\u00ff]{1,6}$/.test(input.unit)) throw new FieldError('unit', 'unidade: de 1 a 6 caracteres');
    return input.unit;
  });
  const price = cap(() => {
    const cents = typeof input.price === 'number' ? BigInt(Number.isSafeInteger(input.price) ? input.price : -1) : toCents(input.price, 'price');
    if (cents <= 0n || cents > BigInt(Number.MAX_SAFE_INTEGER)) throw new FieldError('price', 'preço deve ser maior que zero');
    return Number(cents);
  });
  const taxGroup = cap(() => (taxGroupOf(input.taxGroup), input.taxGroup));
  const ibsCbs = input.ibsCbs === undefined || input.ibsCbs === null ? null : checkClassification(input.ibsCbs, 'ibsCbs', issues);
  issues.throwIfAny();
  return {
    code: code!,
    gtin: gtin!,
    description: description!,
    ncm: ncm!,
    cfop: cfop!,
    unit: unit!,
    price_cents: price!,
    tax_group: taxGroup!,
    ibscbs_cst: ibsCbs?.CST ?? null,
    ibscbs_cclasstrib: ibsCbs?.cClassTrib ?? null,
    active: input.active === false ? 0 : 1,
    updated_at: now,
  };
}

export function saveProduct(store: PosStore, input: ProductInput, now: string): ProductRow {
  const row = productRow(input, now);
  store.products.upsertProduct(row);
  return row;
}

export function productView(row: ProductRow): ProductView {
  return { code: row.code, gtin: row.gtin, description: row.description, unit: row.unit, priceCents: row.price_cents };
}

/** The demo catalog of fiscal/samples.ts (Simples Nacional, CFOP 5102), for tests and `npm start`. */
export function seedDemoCatalog(store: PosStore, now: string): void {
  store.transaction(() => {
    for (const p of DEMO_PRODUCTS) {
      saveProduct(
        store,
        { code: p.cProd, gtin: p.cEAN, description: p.xProd, ncm: p.NCM, cfop: '5102', unit: p.uCom, price: p.vUnCom, taxGroup: 'SN102' },
        now,
      );
    }
  });
}
