// Sales, their items and their payments, from the open sale to the finished one (sales.ts).
// Money in cents, quantities in ten-thousandths.

import type { Classification } from '../../../fiscal/ibscbs/classification.ts';
import type { CardInput } from '../../api/terminal-api.ts';
import { StorePart } from './database.ts';

export type SaleRow = {
  id: string;
  state: 'open' | 'finished' | 'discarded';
  opened_at: string;
  finished_at: string | null;
  consumer_doc: string | null;
  total_cents: number | null;
  change_cents: number | null;
};

export type SaleItemRow = {
  id: number;
  sale_id: string;
  product_code: string;
  gtin: string;
  description: string;
  ncm: string;
  cfop: string;
  unit: string;
  tax_group: string;
  ibscbs_cst: string | null;
  ibscbs_cclasstrib: string | null;
  quantity_units: number;
  unit_price_cents: number;
  total_cents: number;
  added_at: string;
  removed_at: string | null;
};

export type CardColumns = {
  card_tp_integra: string | null;
  card_cnpj: string | null;
  card_tband: string | null;
  card_caut: string | null;
};

export type SalePaymentRow = CardColumns & {
  id: number;
  sale_id: string;
  tpag: string;
  amount_cents: number;
  added_at: string;
};

/** A sale as its NFC-e request is built from it (sales.ts buildNfceRequest), in the domain's terms. */
export type SaleForRequest = { id: string; consumerDoc: string | null; lines: SaleLine[]; payments: SalePayment[] };

/** An item still on the sale. */
export type SaleLine = {
  productCode: string;
  gtin: string;
  description: string;
  ncm: string;
  cfop: string;
  unit: string;
  taxGroup: string;
  /** The product's own IBS/CBS classification; undefined: the company's default applies. */
  classification: Classification | undefined;
  quantityUnits: number;
  unitPriceCents: number;
  totalCents: number;
};

export type SalePayment = { tPag: string; amountCents: number; card: CardInput | null };

/** The IBS/CBS classification a product or sale item row carries, if any (both columns or neither). */
export function classificationOf(row: { ibscbs_cst: string | null; ibscbs_cclasstrib: string | null }): Classification | undefined {
  return row.ibscbs_cst !== null && row.ibscbs_cclasstrib !== null ? { CST: row.ibscbs_cst, cClassTrib: row.ibscbs_cclasstrib } : undefined;
}

/** The card group a payment row carries, if any. */
export function cardOf(p: CardColumns): CardInput | null {
  if (p.card_tp_integra === null) return null;
  return {
    tpIntegra: p.card_tp_integra as '1' | '2',
    ...(p.card_cnpj !== null && { cnpj: p.card_cnpj }),
    ...(p.card_tband !== null && { tBand: p.card_tband }),
    ...(p.card_caut !== null && { cAut: p.card_caut }),
  };
}

/** The sale's rows as its request is built from them: the items not removed, the payments in order. */
export function saleForRequestOf(
  sale: Pick<SaleRow, 'id' | 'consumer_doc'>,
  items: readonly SaleItemRow[],
  payments: readonly SalePaymentRow[],
): SaleForRequest {
  return {
    id: sale.id,
    consumerDoc: sale.consumer_doc,
    lines: items
      .filter((i) => i.removed_at === null)
      .map((i) => ({
        productCode: i.product_code,
        gtin: i.gtin,
        description: i.description,
        ncm: i.ncm,
        cfop: i.cfop,
        unit: i.unit,
        taxGroup: i.tax_group,
        classification: classificationOf(i),
        quantityUnits: i.quantity_units,
        unitPriceCents: i.unit_price_cents,
        totalCents: i.total_cents,
      })),
    payments: payments.map((p) => ({ tPag: p.tpag, amountCents: p.amount_cents, card: cardOf(p) })),
  };
}

export class SaleStore extends StorePart {
  /** The sale as its request is built from it (saleForRequestOf); undefined when there is no such sale. */
  saleForRequest(saleId: string): SaleForRequest | undefined {
    const sale = this.sale(saleId);
    return sale && saleForRequestOf(sale, this.items(saleId), this.payments(saleId));
  }

  insertSale(id: string, openedAt: string): void {
    this.st("INSERT INTO sales (id, state, opened_at) VALUES (?, 'open', ?)").run(id, openedAt);
  }

  sale(id: string): SaleRow | undefined {
    return this.st('SELECT * FROM sales WHERE id = ?').get(id) as SaleRow | undefined;
  }

  openSales(): SaleRow[] {
    return this.st("SELECT * FROM sales WHERE state = 'open' ORDER BY opened_at, id").all() as SaleRow[];
  }

  setConsumer(saleId: string, doc: string | null): void {
    this.st('UPDATE sales SET consumer_doc = ? WHERE id = ?').run(doc, saleId);
  }

  discardSale(saleId: string): void {
    this.st("UPDATE sales SET state = 'discarded' WHERE id = ? AND state = 'open'").run(saleId);
  }

  /** `cashSessionId`: the session open when it finished (null only for callers without one: unit tests of sales.ts). */
  markSaleFinished(saleId: string, finishedAt: string, totalCents: number, changeCents: number, cashSessionId: string | null = null): void {
    const r = this.st(
      "UPDATE sales SET state = 'finished', finished_at = ?, total_cents = ?, change_cents = ?, cash_session_id = ? WHERE id = ? AND state = 'open'",
    ).run(finishedAt, totalCents, changeCents, cashSessionId, saleId);
    if (r.changes !== 1) throw new Error(`venda ${saleId} não está aberta`);
  }

  /** After a correction of a finished sale's payments. */
  updateSaleChange(saleId: string, changeCents: number): void {
    this.st('UPDATE sales SET change_cents = ? WHERE id = ?').run(changeCents, saleId);
  }

  /** Open sales that have an item on them (an empty open sale is nothing to finish). */
  openSalesWithItems(): number {
    return this.st(
      "SELECT count(*) FROM sales s WHERE s.state = 'open' AND EXISTS (SELECT 1 FROM sale_items i WHERE i.sale_id = s.id AND i.removed_at IS NULL)",
    )
      .pluck()
      .get() as number;
  }

  countSales(state?: SaleRow['state']): number {
    return (
      state === undefined ? this.st('SELECT count(*) FROM sales').pluck().get() : this.st('SELECT count(*) FROM sales WHERE state = ?').pluck().get(state)
    ) as number;
  }

  // -------------------------------------------------------------------------------------------
  // Items

  insertItem(item: Omit<SaleItemRow, 'id' | 'removed_at'>): number {
    const r = this.st(
      `INSERT INTO sale_items (sale_id, product_code, gtin, description, ncm, cfop, unit, tax_group, ibscbs_cst,
         ibscbs_cclasstrib, quantity_units, unit_price_cents, total_cents, added_at)
       VALUES (@sale_id, @product_code, @gtin, @description, @ncm, @cfop, @unit, @tax_group, @ibscbs_cst,
         @ibscbs_cclasstrib, @quantity_units, @unit_price_cents, @total_cents, @added_at)`,
    ).run(item);
    return Number(r.lastInsertRowid);
  }

  items(saleId: string): SaleItemRow[] {
    return this.st('SELECT * FROM sale_items WHERE sale_id = ? ORDER BY id').all(saleId) as SaleItemRow[];
  }

  /** False when the item is not in the sale or was already removed. */
  markItemRemoved(saleId: string, itemId: number, at: string): boolean {
    return this.st('UPDATE sale_items SET removed_at = ? WHERE id = ? AND sale_id = ? AND removed_at IS NULL').run(at, itemId, saleId).changes === 1;
  }

  // -------------------------------------------------------------------------------------------
  // Payments

  insertPayment(p: Omit<SalePaymentRow, 'id'>): number {
    const r = this.st(
      `INSERT INTO sale_payments (sale_id, tpag, amount_cents, card_tp_integra, card_cnpj, card_tband, card_caut, added_at)
       VALUES (@sale_id, @tpag, @amount_cents, @card_tp_integra, @card_cnpj, @card_tband, @card_caut, @added_at)`,
    ).run(p);
    return Number(r.lastInsertRowid);
  }

  payments(saleId: string): SalePaymentRow[] {
    return this.st('SELECT * FROM sale_payments WHERE sale_id = ? ORDER BY id').all(saleId) as SalePaymentRow[];
  }

  deletePayment(saleId: string, paymentId: number): boolean {
    return this.st('DELETE FROM sale_payments WHERE id = ? AND sale_id = ?').run(paymentId, saleId).changes === 1;
  }

  deletePayments(saleId: string): void {
    this.st('DELETE FROM sale_payments WHERE sale_id = ?').run(saleId);
  }
}
