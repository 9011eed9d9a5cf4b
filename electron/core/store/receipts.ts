// Receipts (NFC-e) as the terminal issued them: numbering, state, the service's and the
// authority's word, and the authorized XML fetched for them. A change to what a receipt's share
// of the report depends on moves the report's totals in the same transaction (ReportShares).

import { StorePart, type PosDatabase } from './database.ts';

export type ReceiptState = 'pending' | 'processing' | 'authorized' | 'rejected' | 'needs_attention' | 'cancelling' | 'cancelled' | 'voiding' | 'voided';

export type ReceiptRow = {
  id: string;
  sale_id: string;
  serie: number;
  nnf: number;
  idempotency_key: string;
  state: ReceiptState;
  tp_emis: number;
  signed_xml: string | null;
  request_json: string;
  total_cents: number;
  service_id: string | null;
  chave: string | null;
  codigo_status: string | null;
  motivo: string | null;
  protocolo: string | null;
  autorizado_em: string | null;
  authorized_seen_at: string | null;
  cancelado_em: string | null;
  qrcode: string | null;
  url_consulta: string | null;
  attention: string | null;
  corrections: number;
  created_at: string;
  updated_at: string;
};

/**
 * What a receipt knows of the service's and the authority's word, cleared: for a new attempt
 * under a new number (contingency/reconcile.ts, numbering.ts).
 */
export const NO_VERDICT = Object.freeze({ service_id: null, codigo_status: null, motivo: null, protocolo: null, attention: null });

/** Columns a state change may set (everything but identity and numbering). */
const PATCH_COLUMNS = [
  'state',
  'request_json',
  'total_cents',
  'service_id',
  'chave',
  'codigo_status',
  'motivo',
  'protocolo',
  'autorizado_em',
  'authorized_seen_at',
  'cancelado_em',
  'qrcode',
  'url_consulta',
  'attention',
  'corrections',
  'tp_emis',
  'signed_xml',
] as const;
export type ReceiptPatch = Partial<Pick<ReceiptRow, (typeof PATCH_COLUMNS)[number]>>;

/** What a receipt's writes tell the report (report-totals.ts ReportStore), in their transaction. */
export interface ReportShares {
  /** A receipt was written: it counts nowhere until its verdict. */
  receiptAdded(receiptId: string, createdAt: string): void;
  /** What the receipt's share depends on (its state, tpEmis, XML) may have changed. */
  refreshReportShare(receiptId: string): unknown;
}

/** The columns `updateReceipt` may set (interpolated into SQL: only these can reach it). */
const RECEIPT_COLUMNS = new Set<string>(PATCH_COLUMNS);
/** The receipt's columns its share of the report depends on (report-share.ts ShareInput). */
const SHARE_COLUMNS = new Set<string>(['state', 'tp_emis', 'signed_xml']);

export class ReceiptStore extends StorePart {
  constructor(
    database: PosDatabase,
    private readonly shares: ReportShares,
  ) {
    super(database);
  }

  insertReceipt(
    r: Omit<
      ReceiptRow,
      | 'tp_emis'
      | 'signed_xml'
      | 'service_id'
      | 'chave'
      | 'codigo_status'
      | 'motivo'
      | 'protocolo'
      | 'autorizado_em'
      | 'authorized_seen_at'
      | 'cancelado_em'
      | 'qrcode'
      | 'url_consulta'
      | 'attention'
      | 'corrections'
    >,
  ): void {
    this.st(
      `INSERT INTO receipts (id, sale_id, serie, nnf, idempotency_key, state, request_json, total_cents, created_at, updated_at)
       VALUES (@id, @sale_id, @serie, @nnf, @idempotency_key, @state, @request_json, @total_cents, @created_at, @updated_at)`,
    ).run(r);
    this.shares.receiptAdded(r.id, r.created_at);
  }

  receipt(id: string): ReceiptRow | undefined {
    return this.st('SELECT * FROM receipts WHERE id = ?').get(id) as ReceiptRow | undefined;
  }

  receiptBySale(saleId: string): ReceiptRow | undefined {
    return this.st('SELECT * FROM receipts WHERE sale_id = ?').get(saleId) as ReceiptRow | undefined;
  }

  recentReceipts(limit: number): ReceiptRow[] {
    return this.st('SELECT * FROM receipts ORDER BY created_at DESC, nnf DESC LIMIT ?').all(limit) as ReceiptRow[];
  }

  allReceipts(): ReceiptRow[] {
    return this.st('SELECT * FROM receipts ORDER BY serie, nnf').all() as ReceiptRow[];
  }

  countReceiptsIn(states: readonly ReceiptState[]): number {
    return this.st(`SELECT count(*) FROM receipts WHERE state IN (${states.map(() => '?').join(', ')})`)
      .pluck()
      .get(...states) as number;
  }

  updateReceipt(id: string, patch: ReceiptPatch, updatedAt: string): void {
    const cols = this.updateColumns('receipts', 'id', id, patch, RECEIPT_COLUMNS, updatedAt);
    if (cols.some((c) => SHARE_COLUMNS.has(c))) this.shares.refreshReportShare(id);
  }

  /**
   * Gives a receipt another number and idempotency key: when a sale whose online attempt is in
   * doubt is issued again in contingency (contingency/reconcile.ts), in the transaction that
   * records the old ones in its reconciliation task; when the authority says its number is
   * another NFC-e's (numbering.ts).
   */
  renumberReceipt(id: string, to: { serie: number; nnf: number; idempotency_key: string }, updatedAt: string): void {
    const r = this.st('UPDATE receipts SET serie = @serie, nnf = @nnf, idempotency_key = @idempotency_key, updated_at = @updated_at WHERE id = @id').run({
      ...to,
      updated_at: updatedAt,
      id,
    });
    if (r.changes !== 1) throw new Error(`NFC-e ${id} não encontrada para renumerar`);
  }

  receiptXml(receiptId: string): string | undefined {
    return this.st('SELECT xml FROM receipt_xml WHERE receipt_id = ?').pluck().get(receiptId) as string | undefined;
  }

  putReceiptXml(receiptId: string, xml: string, at: string): void {
    this.st(
      'INSERT INTO receipt_xml (receipt_id, xml, fetched_at) VALUES (?, ?, ?) ON CONFLICT (receipt_id) DO UPDATE SET xml = excluded.xml, fetched_at = excluded.fetched_at',
    ).run(receiptId, xml, at);
    this.shares.refreshReportShare(receiptId);
  }
}
