// Returns of goods (devolução, an NF-e referring to the receipt) and their items (returns.ts).

import { StorePart } from './database.ts';

export type ReturnState = 'pending' | 'processing' | 'authorized' | 'rejected' | 'needs_attention';

export type ReturnRow = {
  id: string;
  receipt_id: string;
  idempotency_key: string;
  state: ReturnState;
  request_json: string;
  reason: string;
  total_cents: number;
  manager_id: string;
  service_id: string | null;
  serie: number | null;
  nnf: number | null;
  chave: string | null;
  protocolo: string | null;
  codigo_status: string | null;
  motivo: string | null;
  autorizado_em: string | null;
  attention: string | null;
  created_at: string;
  updated_at: string;
};

/** Columns a return's state change may set. */
export type ReturnPatch = Partial<
  Pick<ReturnRow, 'state' | 'total_cents' | 'service_id' | 'serie' | 'nnf' | 'chave' | 'protocolo' | 'codigo_status' | 'motivo' | 'autorizado_em' | 'attention'>
>;

export type ReturnItemRow = { return_id: string; sale_item_id: number; quantity_units: number; total_cents: number };

const RETURN_COLUMNS = new Set<string>([
  'state',
  'total_cents',
  'service_id',
  'serie',
  'nnf',
  'chave',
  'protocolo',
  'codigo_status',
  'motivo',
  'autorizado_em',
  'attention',
]);

export class ReturnStore extends StorePart {
  insertReturn(
    r: Pick<ReturnRow, 'id' | 'receipt_id' | 'idempotency_key' | 'state' | 'request_json' | 'reason' | 'total_cents' | 'manager_id' | 'created_at'>,
  ): void {
    this.st(
      `INSERT INTO returns (id, receipt_id, idempotency_key, state, request_json, reason, total_cents, manager_id, created_at, updated_at)
       VALUES (@id, @receipt_id, @idempotency_key, @state, @request_json, @reason, @total_cents, @manager_id, @created_at, @created_at)`,
    ).run(r);
  }

  insertReturnItem(item: ReturnItemRow): void {
    this.st(
      'INSERT INTO return_items (return_id, sale_item_id, quantity_units, total_cents) VALUES (@return_id, @sale_item_id, @quantity_units, @total_cents)',
    ).run(item);
  }

  returnRow(id: string): ReturnRow | undefined {
    return this.st('SELECT * FROM returns WHERE id = ?').get(id) as ReturnRow | undefined;
  }

  returnByKey(idempotencyKey: string): ReturnRow | undefined {
    return this.st('SELECT * FROM returns WHERE idempotency_key = ?').get(idempotencyKey) as ReturnRow | undefined;
  }

  /** Newest first; of one receipt when given. */
  list(receiptId?: string, limit = 200): ReturnRow[] {
    return (
      receiptId === undefined
        ? this.st('SELECT * FROM returns ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit)
        : this.st('SELECT * FROM returns WHERE receipt_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(receiptId, limit)
    ) as ReturnRow[];
  }

  returnItems(returnId: string): ReturnItemRow[] {
    return this.st('SELECT * FROM return_items WHERE return_id = ? ORDER BY sale_item_id').all(returnId) as ReturnItemRow[];
  }

  /** Units of each sale item brought back by the receipt's returns that are not rejected or refused. */
  returnedUnits(receiptId: string): Map<number, number> {
    const rows = this.st(
      `SELECT i.sale_item_id, sum(i.quantity_units) AS units FROM return_items i JOIN returns r ON r.id = i.return_id
        WHERE r.receipt_id = ? AND r.state IN ('pending', 'processing', 'authorized') GROUP BY i.sale_item_id`,
    ).all(receiptId) as { sale_item_id: number; units: number }[];
    return new Map(rows.map((r) => [r.sale_item_id, r.units]));
  }

  updateReturn(id: string, patch: ReturnPatch, updatedAt: string): void {
    this.updateColumns('returns', 'id', id, patch, RETURN_COLUMNS, updatedAt);
  }

  updateReturnItemTotal(returnId: string, saleItemId: number, totalCents: number): void {
    this.st('UPDATE return_items SET total_cents = ? WHERE return_id = ? AND sale_item_id = ?').run(totalCents, returnId, saleItemId);
  }
}
