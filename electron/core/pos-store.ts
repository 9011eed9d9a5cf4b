// The ONE data-access module of the terminal: every SQL statement of the terminal is here, typed
// in and out (rows are plain objects; money in cents, quantities in ten-thousandths). Callers
// compose operations inside `transaction` when several must commit together. Statements are
// prepared once, lazily: finishing a sale runs a handful of them and must stay well under 10 ms
// including the fsync.

import type Database from 'better-sqlite3';
import { openPosDatabase } from './db.ts';
import { reportShareOf, type ReportFacts, type ReportShare } from './report-share.ts';

// =============================================================================================
// Row types

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
export type ReceiptPatch = Partial<
  Pick<
    ReceiptRow,
    | 'state'
    | 'request_json'
    | 'total_cents'
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
    | 'tp_emis'
    | 'signed_xml'
  >
>;

export type OutboxKind = 'emit' | 'cancel' | 'void' | 'return';
export type OutboxState = 'pending' | 'sent' | 'done' | 'blocked' | 'failed';

export type OutboxRow = {
  seq: number;
  kind: OutboxKind;
  receipt_id: string;
  idempotency_key: string;
  payload: string;
  state: OutboxState;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
};

export type OutboxPatch = Partial<Pick<OutboxRow, 'state' | 'payload' | 'attempts' | 'next_attempt_at' | 'last_error' | 'completed_at'>>;

export type ManagerRow = {
  id: string;
  name: string;
  pin_hash: string;
  active: number;
  failed_attempts: number;
  locked_until: number | null;
  created_at: string;
};

export type AuditRow = {
  id: number;
  at: string;
  actor_kind: 'manager' | 'operator' | 'system';
  actor_id: string;
  actor_name: string;
  action: string;
  receipt_id: string | null;
  reason: string | null;
  details: string | null;
};

export type OutboxStats = { live: number; oldestCreatedAt: string | null };

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

// ---- Offline contingency (contingency/*.ts) ----

export type ContingencyPeriodRow = {
  id: number;
  started_at: string;
  /** dhCont on the service's clock (NULL for periods written before it was kept: started_at then). */
  dh_cont: string | null;
  reason: string;
  automatic: number;
  started_by: string | null;
  ended_at: string | null;
  ended_by: string | null;
};

export type ReconciliationKind = 'verificar' | 'cancelar_substituicao' | 'inutilizar';
export type ReconciliationState = 'open' | 'blocked' | 'done';
export type ReconciliationOutcome = 'cancelada_substituicao' | 'inutilizada' | 'ja_cancelada';

export type ReconciliationTaskRow = {
  id: string;
  receipt_id: string;
  serie: number;
  nnf: number;
  idempotency_key: string;
  request_json: string;
  service_id: string | null;
  chave: string | null;
  kind: ReconciliationKind;
  state: ReconciliationState;
  outcome: ReconciliationOutcome | null;
  void_key: string;
  cancel_key: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  protocolo: string | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
};

export type ReconciliationPatch = Partial<
  Pick<
    ReconciliationTaskRow,
    'service_id' | 'chave' | 'kind' | 'state' | 'outcome' | 'attempts' | 'next_attempt_at' | 'last_error' | 'protocolo' | 'resolved_at'
  >
>;

/** Contingency receipts not settled yet (sent or not, or waiting for a person). */
export type ContingencyReceiptStats = { unsettled: number; oldestCreatedAt: string | null };

export type PrintCopyColumn = 'consumidor' | 'estabelecimento' | 'unica' | 'reimpressao';

/** What the printer's log keeps of every job, a receipt's or not: written before the bytes leave, settled after. */
type PrintLogColumns = {
  id: number;
  state: 'sending' | 'printed' | 'failed';
  bytes: number;
  printer: string;
  error: string | null;
  created_at: string;
  finished_at: string | null;
};

export type PrintJobRow = PrintLogColumns & { receipt_id: string; copy: PrintCopyColumn; automatic: number };

/** A job of the till's closing report (printing.ts printReport). */
export type ReportPrintJobRow = PrintLogColumns & { cash_session_id: string };

/** A job that went through: a receipt's copy (receipt_id, copy) or a closing report (cash_session_number). */
export type PrintedJobRow = { receipt_id: string | null; copy: PrintCopyColumn | null; cash_session_number: number | null; printed_at: string };

// ---- Cash sessions (cash-session.ts) ----

export type CashSessionRow = {
  id: string;
  number: number;
  opened_at: string;
  opened_by: string;
  float_cents: number;
  closed_at: string | null;
  closed_by: string | null;
  /** The closing as computed, shown and printed (cash-session.ts CashClosing), JSON. */
  closing_json: string | null;
  report_printed_at: string | null;
  report_print_error: string | null;
};

export type CashMovementKind = 'sangria' | 'suprimento';

export type CashMovementRow = {
  id: number;
  session_id: string;
  kind: CashMovementKind;
  amount_cents: number;
  reason: string;
  manager_id: string | null;
  at: string;
  /** Recorded by the terminal for this receipt (a refund after the closing, or its reversal); null: the cashier's own. */
  receipt_id: string | null;
};

/** A movement owed to (or by) the drawer while no session is open: recorded at the next opening. */
export type OwedCashMovementRow = {
  receipt_id: string;
  kind: CashMovementKind;
  amount_cents: number;
  reason: string;
  manager_id: string | null;
  owed_at: string;
};

/** What the till needs to know of a receipt's sale for a refund: its session, and the cash it kept (cash paid − change). */
export type SaleCashFacts = { session_id: string; session_number: number; session_closed_at: string | null; cash_kept_cents: number };

export type CashCountRow = { session_id: string; tpag: string; expected_cents: number; counted_cents: number };

/** A finished sale of a session with the state of its receipt, for the till's figures. */
export type CashSessionSaleRow = { sale_id: string; total_cents: number; change_cents: number; receipt_state: ReceiptState; tp_emis: number };

// ---- The manager's report (reports.ts, report-share.ts) ----

export type ReportTotalsRow = { count: number; total_cents: number; change_cents: number };
export type ReportPaymentRow = { tpag: string; count: number; amount_cents: number };
export type ReportHourRow = { hour: number; count: number; total_cents: number };
export type ReportProductRow = { code: string; description: string; unit: string; quantity_units: number; total_cents: number };
/** A cancelled or contingency receipt of the report's period, with what the lists show of it. */
export type ReportListedRow = {
  receipt_id: string;
  bucket: 'sale' | 'cancelled';
  dh_emi: string;
  tp_emis: number;
  vnf_cents: number;
  serie: number;
  nnf: number;
  chave: string | null;
  state: ReceiptState;
};
/** A receipt without a fiscal document yet, as the report lists it. */
export type UnsettledReceiptRow = Pick<ReceiptRow, 'id' | 'serie' | 'nnf' | 'chave' | 'state' | 'total_cents' | 'created_at'>;

/** A receipt as the retention judges it (retention.ts). */
export type RetentionCandidateRow = {
  id: string;
  created_at: string;
  state: ReceiptState;
  at_service: number;
  bucket: ReportShare['bucket'] | null;
  live_outbox: number;
  live_task: number;
};

// Whitelists for the generic updates: the column names are interpolated into SQL, so only
// these can ever reach it.
const RECEIPT_COLUMNS = new Set<string>([
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
]);
/** The receipt's columns its share of the report depends on (report-share.ts ShareInput). */
const SHARE_COLUMNS = new Set<string>(['state', 'tp_emis', 'signed_xml']);

/** The figures a share adds to the daily totals (what is kept to take them out again). */
const factsOf = (s: ReportFacts): ReportFacts => ({
  day: s.day,
  hour: s.hour,
  dhEmi: s.dhEmi,
  tpEmis: s.tpEmis,
  vNFCents: s.vNFCents,
  vTrocoCents: s.vTrocoCents,
  payments: s.payments,
  items: s.items,
});

const OUTBOX_COLUMNS = new Set<string>(['state', 'payload', 'attempts', 'next_attempt_at', 'last_error', 'completed_at']);
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
const RECONCILIATION_COLUMNS = new Set<string>([
  'service_id',
  'chave',
  'kind',
  'state',
  'outcome',
  'attempts',
  'next_attempt_at',
  'last_error',
  'protocolo',
  'resolved_at',
]);

// =============================================================================================

export class PosStore {
  readonly db: Database.Database;
  private readonly cache = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.db = db;
  }

  static open(dataDir: string): PosStore {
    return new PosStore(openPosDatabase(dataDir));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private changesAtCheckpoint = 0;

  /**
   * Copies the WAL into the database (PASSIVE: never waits for readers) once `minChanges` rows
   * changed since the last time. Called from a timer between sales, never from a sale's path:
   * the commit of a finished sale then only appends to the WAL and fsyncs it.
   */
  checkpointIfDue(minChanges = 500): boolean {
    const total = this.st('SELECT total_changes()').pluck().get() as number;
    if (total - this.changesAtCheckpoint < minChanges) return false;
    this.st('PRAGMA wal_checkpoint(PASSIVE)').all();
    this.changesAtCheckpoint = total;
    return true;
  }

  private st(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /** Runs `fn` in one IMMEDIATE transaction (the write lock is taken first: no upgrade deadlock). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * A transaction committed without its own fsync (synchronous=NORMAL for this commit only), for
   * what the outbox worker learns from the service: a power cut may lose the last of these, and
   * the worker then asks again with the same key and learns the same thing. WAL is written in
   * order, so the next FULL commit (the next finished sale) makes these durable too. Sales,
   * corrections, cancellation requests and every screen action use `transaction`.
   */
  relaxedTransaction<T>(fn: () => T): T {
    this.st('PRAGMA synchronous = NORMAL').run();
    try {
      return this.transaction(fn);
    } finally {
      this.st('PRAGMA synchronous = FULL').run();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Series and numbering

  ensureSeries(serie: number): void {
    this.st('INSERT OR IGNORE INTO series (serie, next_nnf) VALUES (?, 1)').run(serie);
  }

  /** Takes the next number of the series; call inside the transaction that uses it. */
  takeNextNumber(serie: number): number {
    const row = this.st('UPDATE series SET next_nnf = next_nnf + 1 WHERE serie = ? RETURNING next_nnf - 1 AS nnf').get(serie) as { nnf: number } | undefined;
    if (!row) throw new Error(`série ${serie} não cadastrada neste terminal`);
    return row.nnf;
  }

  /** Moves the series' next number up to `next` (never down); true when it moved (numbering.ts). */
  raiseNextNumber(serie: number, next: number): boolean {
    return this.st('UPDATE series SET next_nnf = ? WHERE serie = ? AND next_nnf < ?').run(next, serie, next).changes === 1;
  }

  nextNumber(serie: number): number | undefined {
    return this.st('SELECT next_nnf FROM series WHERE serie = ?').pluck().get(serie) as number | undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Products

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

  // -------------------------------------------------------------------------------------------
  // Sales

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

  // -------------------------------------------------------------------------------------------
  // Receipts

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
    // An online receipt just written counts nowhere until its verdict (report-share.ts).
    this.st("INSERT INTO report_receipts (receipt_id, bucket, created_at) VALUES (?, 'none', ?)").run(r.id, r.created_at);
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
    const cols = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    for (const c of cols) if (!RECEIPT_COLUMNS.has(c)) throw new Error(`coluna não atualizável: ${c}`);
    const sql = `UPDATE receipts SET ${[...cols.map((c) => `${c} = @${c}`), 'updated_at = @updated_at'].join(', ')} WHERE id = @id`;
    this.st(sql).run({ ...patch, updated_at: updatedAt, id });
    if (cols.some((c) => SHARE_COLUMNS.has(c))) this.refreshReportShare(id);
  }

  // -------------------------------------------------------------------------------------------
  // The manager's report: each receipt's share and the daily totals (reports.ts, report-share.ts)

  /**
   * Recomputes the receipt's share of the report from its state and XML and moves the daily
   * totals with it. Called by the writes that change either (updateReceipt, putReceiptXml), in
   * their transaction; the report calls it for the shares still pending.
   */
  refreshReportShare(receiptId: string): ReportShare['bucket'] {
    const r = this.st('SELECT state, tp_emis, signed_xml, created_at FROM receipts WHERE id = ?').get(receiptId) as
      Pick<ReceiptRow, 'state' | 'tp_emis' | 'signed_xml' | 'created_at'> | undefined;
    if (!r) throw new Error(`NFC-e ${receiptId} não encontrada`);
    const prev = this.st('SELECT bucket, facts FROM report_receipts WHERE receipt_id = ?').get(receiptId) as
      { bucket: ReportShare['bucket']; facts: string | null } | undefined;
    // A share whose figures the retention let go is settled for good (a receipt past the
    // retention period changes no more; its XML fetched again for a reprint changes nothing).
    if ((prev?.bucket === 'sale' || prev?.bucket === 'cancelled') && prev.facts === null) return prev.bucket;
    const next = reportShareOf(r, () => this.receiptXml(receiptId));
    const facts = next.bucket === 'sale' || next.bucket === 'cancelled' ? factsOf(next) : undefined;
    const json = facts ? JSON.stringify(facts) : null;
    if (prev && prev.bucket === next.bucket && prev.facts === json) return next.bucket;
    if (prev?.bucket === 'sale' && prev.facts) this.addToReportDays(JSON.parse(prev.facts) as ReportFacts, -1);
    if (next.bucket === 'sale') this.addToReportDays(facts!, 1);
    this.st(
      `INSERT INTO report_receipts (receipt_id, bucket, created_at, day, dh_emi, tp_emis, vnf_cents, facts)
       VALUES (@receipt_id, @bucket, @created_at, @day, @dh_emi, @tp_emis, @vnf_cents, @facts)
       ON CONFLICT (receipt_id) DO UPDATE SET bucket = excluded.bucket, day = excluded.day, dh_emi = excluded.dh_emi,
         tp_emis = excluded.tp_emis, vnf_cents = excluded.vnf_cents, facts = excluded.facts`,
    ).run({
      receipt_id: receiptId,
      bucket: next.bucket,
      created_at: r.created_at,
      day: facts?.day ?? null,
      dh_emi: facts?.dhEmi ?? null,
      tp_emis: facts?.tpEmis ?? null,
      vnf_cents: facts?.vNFCents ?? null,
      facts: json,
    });
    return next.bucket;
  }

  private addToReportDays(f: ReportFacts, sign: 1 | -1): void {
    this.st(
      `INSERT INTO report_days (day, count, total_cents, change_cents) VALUES (?, ?, ?, ?)
       ON CONFLICT (day) DO UPDATE SET count = count + excluded.count, total_cents = total_cents + excluded.total_cents,
         change_cents = change_cents + excluded.change_cents`,
    ).run(f.day, sign, sign * f.vNFCents, sign * f.vTrocoCents);
    const payment = this.st(
      `INSERT INTO report_day_payments (day, tpag, count, amount_cents) VALUES (?, ?, ?, ?)
       ON CONFLICT (day, tpag) DO UPDATE SET count = count + excluded.count, amount_cents = amount_cents + excluded.amount_cents`,
    );
    for (const [tPag, cents] of f.payments) payment.run(f.day, tPag, sign, sign * cents);
    this.st(
      `INSERT INTO report_day_hours (day, hour, count, total_cents) VALUES (?, ?, ?, ?)
       ON CONFLICT (day, hour) DO UPDATE SET count = count + excluded.count, total_cents = total_cents + excluded.total_cents`,
    ).run(f.day, f.hour, sign, sign * f.vNFCents);
    // The description and unit: as the latest receipt added wrote them.
    const product = this.st(
      `INSERT INTO report_day_products (day, code, description, unit, quantity_units, total_cents) VALUES (@day, @code, @description, @unit, @q, @cents)
       ON CONFLICT (day, code) DO UPDATE SET quantity_units = quantity_units + excluded.quantity_units, total_cents = total_cents + excluded.total_cents,
         description = CASE WHEN @sign > 0 THEN excluded.description ELSE description END,
         unit = CASE WHEN @sign > 0 THEN excluded.unit ELSE unit END`,
    );
    for (const [code, description, unit, units, cents] of f.items)
      product.run({ day: f.day, code, description, unit, q: sign * units, cents: sign * cents, sign });
    if (sign < 0) {
      this.st('DELETE FROM report_days WHERE day = ? AND count = 0').run(f.day);
      this.st('DELETE FROM report_day_payments WHERE day = ? AND count = 0').run(f.day);
      this.st('DELETE FROM report_day_hours WHERE day = ? AND count = 0').run(f.day);
      this.st('DELETE FROM report_day_products WHERE day = ? AND quantity_units = 0 AND total_cents = 0').run(f.day);
    }
  }

  /** Receipts created before `until`, after `after` (created_at, id), whose share is still to be read, oldest first. */
  pendingReportReceipts(after: { createdAt: string; id: string }, until: string, limit: number): ReceiptRow[] {
    return this.st(
      `SELECT r.* FROM report_receipts f JOIN receipts r ON r.id = f.receipt_id
        WHERE f.bucket = 'pending' AND (f.created_at, f.receipt_id) > (?, ?) AND f.created_at < ? ORDER BY f.created_at, f.receipt_id LIMIT ?`,
    ).all(after.createdAt, after.id, until, limit) as ReceiptRow[];
  }

  /** The sales of the Brasília days [de, ate] (AAAA-MM-DD), added up. */
  reportTotals(de: string, ate: string): ReportTotalsRow {
    return this.st(
      `SELECT coalesce(sum(count), 0) AS count, coalesce(sum(total_cents), 0) AS total_cents, coalesce(sum(change_cents), 0) AS change_cents
         FROM report_days WHERE day BETWEEN ? AND ?`,
    ).get(de, ate) as ReportTotalsRow;
  }

  reportPayments(de: string, ate: string): ReportPaymentRow[] {
    return this.st(
      'SELECT tpag, sum(count) AS count, sum(amount_cents) AS amount_cents FROM report_day_payments WHERE day BETWEEN ? AND ? GROUP BY tpag ORDER BY tpag',
    ).all(de, ate) as ReportPaymentRow[];
  }

  reportHours(de: string, ate: string): ReportHourRow[] {
    return this.st(
      'SELECT hour, sum(count) AS count, sum(total_cents) AS total_cents FROM report_day_hours WHERE day BETWEEN ? AND ? GROUP BY hour ORDER BY hour',
    ).all(de, ate) as ReportHourRow[];
  }

  /** Each product's quantity and total; its description and unit as the latest day wrote them. */
  reportProducts(de: string, ate: string): ReportProductRow[] {
    // SQLite: the bare columns of a max() aggregate come from the row that has the maximum.
    return this.st(
      `SELECT code, description, unit, max(day) AS day, sum(quantity_units) AS quantity_units, sum(total_cents) AS total_cents
         FROM report_day_products WHERE day BETWEEN ? AND ? GROUP BY code`,
    ).all(de, ate) as ReportProductRow[];
  }

  /** The cancelled and the contingency receipts of the days [de, ate], in order of emission. */
  reportListed(de: string, ate: string): ReportListedRow[] {
    return this.st(
      `SELECT f.receipt_id, f.bucket, f.dh_emi, f.tp_emis, f.vnf_cents, r.serie, r.nnf, r.chave, r.state
         FROM report_receipts f INDEXED BY report_receipts_listed JOIN receipts r ON r.id = f.receipt_id
        WHERE f.day BETWEEN ? AND ? AND (f.bucket = 'cancelled' OR (f.bucket = 'sale' AND f.tp_emis = 9))
        ORDER BY f.day, f.dh_emi, r.nnf`,
    ).all(de, ate) as ReportListedRow[];
  }

  /** Receipts created in [from, until) still without a fiscal document: waiting for a verdict, or for a person. */
  unsettledReceiptsCreatedBetween(from: string, until: string): UnsettledReceiptRow[] {
    return this.st(
      `SELECT id, serie, nnf, chave, state, total_cents, created_at FROM receipts INDEXED BY receipts_unsettled
        WHERE state IN ('pending', 'processing', 'rejected', 'needs_attention') AND created_at >= ? AND created_at < ?
          AND NOT (tp_emis = 9 AND signed_xml IS NOT NULL AND state IN ('pending', 'processing'))
        ORDER BY created_at, nnf`,
    ).all(from, until) as UnsettledReceiptRow[];
  }

  // -------------------------------------------------------------------------------------------
  // Retention (retention.ts)

  /**
   * Receipts created in [after, before) in (created_at, id) order, with what decides whether
   * their documents can go: their state, whether the service has them, whether anything is
   * still to be sent or read for them.
   */
  retentionCandidates(after: { createdAt: string; id: string }, before: string, limit: number): RetentionCandidateRow[] {
    return this.st(
      `SELECT r.id, r.created_at, r.state, r.service_id IS NOT NULL AS at_service, f.bucket,
              EXISTS (SELECT 1 FROM outbox o WHERE o.receipt_id = r.id AND o.state IN ('pending', 'sent', 'blocked')) AS live_outbox,
              EXISTS (SELECT 1 FROM reconciliation_tasks t WHERE t.receipt_id = r.id AND t.state <> 'done') AS live_task
         FROM receipts r INDEXED BY receipts_recent LEFT JOIN report_receipts f ON f.receipt_id = r.id
        WHERE (r.created_at, r.id) > (?, ?) AND r.created_at < ? ORDER BY r.created_at, r.id LIMIT ?`,
    ).all(after.createdAt, after.id, before, limit) as RetentionCandidateRow[];
  }

  /**
   * Lets go of a settled receipt's documents: its authorized XML (the service keeps it; a
   * reprint fetches it again), the request bodies sent for it, the signed XML of a contingency
   * receipt the service holds, and the figures its report share kept (the daily totals stay).
   */
  pruneReceiptDocuments(receiptId: string): void {
    this.st('DELETE FROM receipt_xml WHERE receipt_id = ?').run(receiptId);
    this.st(`UPDATE receipts SET request_json = '', signed_xml = CASE WHEN service_id IS NULL THEN signed_xml END WHERE id = ?`).run(receiptId);
    this.st(`UPDATE outbox SET payload = '' WHERE receipt_id = ? AND state IN ('done', 'failed')`).run(receiptId);
    this.st(`UPDATE reconciliation_tasks SET request_json = '' WHERE receipt_id = ? AND state = 'done'`).run(receiptId);
    this.st(`UPDATE report_receipts SET facts = NULL WHERE receipt_id = ? AND bucket IN ('sale', 'cancelled')`).run(receiptId);
  }

  // -------------------------------------------------------------------------------------------
  // Outbox

  insertOutbox(e: Omit<OutboxRow, 'seq' | 'attempts' | 'last_error' | 'completed_at' | 'updated_at'>): number {
    const r = this.st(
      `INSERT INTO outbox (kind, receipt_id, idempotency_key, payload, state, next_attempt_at, created_at, updated_at)
       VALUES (@kind, @receipt_id, @idempotency_key, @payload, @state, @next_attempt_at, @created_at, @created_at)`,
    ).run(e);
    return Number(r.lastInsertRowid);
  }

  outboxEntry(seq: number): OutboxRow | undefined {
    return this.st('SELECT * FROM outbox WHERE seq = ?').get(seq) as OutboxRow | undefined;
  }

  /** The live (pending, sent or blocked) command of a kind for a receipt. */
  liveOutbox(receiptId: string, kind: OutboxKind): OutboxRow | undefined {
    return this.st("SELECT * FROM outbox WHERE receipt_id = ? AND kind = ? AND state IN ('pending', 'sent', 'blocked')").get(receiptId, kind) as
      OutboxRow | undefined;
  }

  outboxOf(receiptId: string): OutboxRow[] {
    return this.st('SELECT * FROM outbox WHERE receipt_id = ? ORDER BY seq').all(receiptId) as OutboxRow[];
  }

  allOutbox(): OutboxRow[] {
    return this.st('SELECT * FROM outbox ORDER BY seq').all() as OutboxRow[];
  }

  /** Commands in `state` due at `now`, oldest first. */
  dueOutbox(state: 'pending' | 'sent', now: number, limit: number): OutboxRow[] {
    // Sends: walking (state, seq) and stopping at `limit` beats sorting every due row while a
    // long queue drains (they are all due). Polls: few are due at a time among many waiting.
    const sql =
      state === 'pending'
        ? "SELECT * FROM outbox INDEXED BY outbox_state_seq WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY seq LIMIT ?"
        : "SELECT * FROM outbox INDEXED BY outbox_state_due WHERE state = 'sent' AND next_attempt_at <= ? ORDER BY seq LIMIT ?";
    return this.st(sql).all(now, limit) as OutboxRow[];
  }

  /** The oldest `limit` commands in `state`, due or not. */
  oldestOutbox(state: 'pending' | 'sent', limit: number): OutboxRow[] {
    return this.st('SELECT * FROM outbox INDEXED BY outbox_state_seq WHERE state = ? ORDER BY seq LIMIT ?').all(state, limit) as OutboxRow[];
  }

  /** When the next command in `state` falls due, or undefined when there is none. */
  nextDueAt(state: 'pending' | 'sent'): number | undefined {
    return (this.st('SELECT min(next_attempt_at) FROM outbox WHERE state = ?').pluck().get(state) as number | null) ?? undefined;
  }

  outboxStats(): OutboxStats {
    const row = this.st("SELECT count(*) AS live, min(created_at) AS oldest FROM outbox WHERE state IN ('pending', 'sent')").get() as {
      live: number;
      oldest: string | null;
    };
    return { live: row.live, oldestCreatedAt: row.oldest };
  }

  updateOutbox(seq: number, patch: OutboxPatch, updatedAt: string): void {
    const cols = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    for (const c of cols) if (!OUTBOX_COLUMNS.has(c)) throw new Error(`coluna não atualizável: ${c}`);
    const sql = `UPDATE outbox SET ${[...cols.map((c) => `${c} = @${c}`), 'updated_at = @updated_at'].join(', ')} WHERE seq = @seq`;
    this.st(sql).run({ ...patch, updated_at: updatedAt, seq });
  }

  // -------------------------------------------------------------------------------------------
  // Offline contingency: periods, receipts issued offline, reconciliation tasks

  openContingencyPeriod(): ContingencyPeriodRow | undefined {
    return this.st('SELECT * FROM contingency_periods WHERE ended_at IS NULL').get() as ContingencyPeriodRow | undefined;
  }

  insertContingencyPeriod(p: Pick<ContingencyPeriodRow, 'started_at' | 'dh_cont' | 'reason' | 'automatic' | 'started_by'>): number {
    const r = this.st(
      'INSERT INTO contingency_periods (started_at, dh_cont, reason, automatic, started_by) VALUES (@started_at, @dh_cont, @reason, @automatic, @started_by)',
    ).run(p);
    return Number(r.lastInsertRowid);
  }

  endContingencyPeriod(id: number, endedAt: string, endedBy: string | null): void {
    this.st('UPDATE contingency_periods SET ended_at = ?, ended_by = ? WHERE id = ? AND ended_at IS NULL').run(endedAt, endedBy, id);
  }

  contingencyPeriods(): ContingencyPeriodRow[] {
    return this.st('SELECT * FROM contingency_periods ORDER BY id').all() as ContingencyPeriodRow[];
  }

  /** Online receipts (tpEmis 1) whose outcome is not known yet: the in-doubt sales when contingency begins. */
  unsettledOnlineReceipts(): ReceiptRow[] {
    return this.st("SELECT * FROM receipts WHERE tp_emis = 1 AND state IN ('pending', 'processing') ORDER BY created_at, nnf").all() as ReceiptRow[];
  }

  contingencyReceiptStats(): ContingencyReceiptStats {
    const row = this.st(
      `SELECT count(*) AS n, min(created_at) AS oldest FROM receipts INDEXED BY receipts_contingency
       WHERE tp_emis = 9 AND state IN ('pending', 'processing', 'rejected', 'needs_attention')`,
    ).get() as { n: number; oldest: string | null };
    return { unsettled: row.n, oldestCreatedAt: row.oldest };
  }

  /** Contingency receipts the service or the authority refused: they wait for a person. */
  refusedContingencyReceipts(): ReceiptRow[] {
    return this.st("SELECT * FROM receipts WHERE tp_emis = 9 AND state IN ('rejected', 'needs_attention') ORDER BY created_at, nnf").all() as ReceiptRow[];
  }

  /** Contingency receipts still waiting for their verdict, oldest first. */
  /** Contingency receipts not yet sent, created in [from, until) (ISO instants, as created_at is written). */
  countUnsentContingencyCreatedBetween(from: string, until: string): number {
    return this.st("SELECT count(*) FROM receipts WHERE tp_emis = 9 AND state = 'pending' AND created_at >= ? AND created_at < ?")
      .pluck()
      .get(from, until) as number;
  }

  pendingContingencyReceipts(limit: number): ReceiptRow[] {
    return this.st("SELECT * FROM receipts WHERE tp_emis = 9 AND state IN ('pending', 'processing') ORDER BY created_at, nnf LIMIT ?").all(
      limit,
    ) as ReceiptRow[];
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

  insertReconciliationTask(t: Omit<ReconciliationTaskRow, 'attempts' | 'last_error' | 'protocolo' | 'outcome' | 'resolved_at' | 'updated_at'>): void {
    this.st(
      `INSERT INTO reconciliation_tasks (id, receipt_id, serie, nnf, idempotency_key, request_json, service_id, chave, kind, state,
         void_key, cancel_key, next_attempt_at, created_at, updated_at)
       VALUES (@id, @receipt_id, @serie, @nnf, @idempotency_key, @request_json, @service_id, @chave, @kind, @state,
         @void_key, @cancel_key, @next_attempt_at, @created_at, @created_at)`,
    ).run(t);
  }

  reconciliationTask(id: string): ReconciliationTaskRow | undefined {
    return this.st('SELECT * FROM reconciliation_tasks WHERE id = ?').get(id) as ReconciliationTaskRow | undefined;
  }

  reconciliationTasks(): ReconciliationTaskRow[] {
    return this.st('SELECT * FROM reconciliation_tasks ORDER BY created_at, serie, nnf').all() as ReconciliationTaskRow[];
  }

  /** Tasks not done (open or waiting for a person), oldest first. */
  liveReconciliationTasks(): ReconciliationTaskRow[] {
    return this.st("SELECT * FROM reconciliation_tasks WHERE state <> 'done' ORDER BY created_at, serie, nnf").all() as ReconciliationTaskRow[];
  }

  dueReconciliationTasks(now: number, limit: number): ReconciliationTaskRow[] {
    return this.st("SELECT * FROM reconciliation_tasks WHERE state = 'open' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?").all(
      now,
      limit,
    ) as ReconciliationTaskRow[];
  }

  nextReconciliationDueAt(): number | undefined {
    return (this.st("SELECT min(next_attempt_at) FROM reconciliation_tasks WHERE state = 'open'").pluck().get() as number | null) ?? undefined;
  }

  /** The online attempts a receipt issued in contingency superseded (normally one), oldest first. */
  supersededAttempts(receiptId: string): ReconciliationTaskRow[] {
    return this.st('SELECT * FROM reconciliation_tasks WHERE receipt_id = ? ORDER BY created_at, serie, nnf').all(receiptId) as ReconciliationTaskRow[];
  }

  /** Superseded online attempts found cancelled (by our substitution, or already), their task created in [from, until). */
  cancelledAttemptsBetween(from: string, until: string): ReconciliationTaskRow[] {
    return this.st(
      `SELECT * FROM reconciliation_tasks INDEXED BY reconciliation_tasks_cancelled
        WHERE outcome IN ('cancelada_substituicao', 'ja_cancelada') AND created_at >= ? AND created_at < ?
        ORDER BY created_at, serie, nnf`,
    ).all(from, until) as ReconciliationTaskRow[];
  }

  supersededXml(taskId: string): string | undefined {
    return (this.st('SELECT xml FROM reconciliation_tasks WHERE id = ?').pluck().get(taskId) as string | null | undefined) ?? undefined;
  }

  putSupersededXml(taskId: string, xml: string): void {
    this.st('UPDATE reconciliation_tasks SET xml = ? WHERE id = ?').run(xml, taskId);
  }

  updateReconciliationTask(id: string, patch: ReconciliationPatch, updatedAt: string): void {
    const cols = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    for (const c of cols) if (!RECONCILIATION_COLUMNS.has(c)) throw new Error(`coluna não atualizável: ${c}`);
    const sql = `UPDATE reconciliation_tasks SET ${[...cols.map((c) => `${c} = @${c}`), 'updated_at = @updated_at'].join(', ')} WHERE id = @id`;
    this.st(sql).run({ ...patch, updated_at: updatedAt, id });
  }

  // -------------------------------------------------------------------------------------------
  // Returns (returns.ts)

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
  returns(receiptId?: string, limit = 200): ReturnRow[] {
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
    const cols = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    for (const c of cols) if (!RETURN_COLUMNS.has(c)) throw new Error(`coluna não atualizável: ${c}`);
    const sql = `UPDATE returns SET ${[...cols.map((c) => `${c} = @${c}`), 'updated_at = @updated_at'].join(', ')} WHERE id = @id`;
    this.st(sql).run({ ...patch, updated_at: updatedAt, id });
  }

  updateReturnItemTotal(returnId: string, saleItemId: number, totalCents: number): void {
    this.st('UPDATE return_items SET total_cents = ? WHERE return_id = ? AND sale_item_id = ?').run(totalCents, returnId, saleItemId);
  }

  // -------------------------------------------------------------------------------------------
  // Managers and audit

  insertManager(m: Omit<ManagerRow, 'active' | 'failed_attempts' | 'locked_until'>): void {
    this.st('INSERT INTO managers (id, name, pin_hash, created_at) VALUES (@id, @name, @pin_hash, @created_at)').run(m);
  }

  manager(id: string): ManagerRow | undefined {
    return this.st('SELECT * FROM managers WHERE id = ?').get(id) as ManagerRow | undefined;
  }

  activeManagers(): ManagerRow[] {
    return this.st('SELECT * FROM managers WHERE active = 1 ORDER BY name, id').all() as ManagerRow[];
  }

  setManagerPinState(id: string, failedAttempts: number, lockedUntil: number | null): void {
    this.st('UPDATE managers SET failed_attempts = ?, locked_until = ? WHERE id = ?').run(failedAttempts, lockedUntil, id);
  }

  appendAudit(a: Omit<AuditRow, 'id'>): void {
    this.st(
      `INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, action, receipt_id, reason, details)
       VALUES (@at, @actor_kind, @actor_id, @actor_name, @action, @receipt_id, @reason, @details)`,
    ).run(a);
  }

  auditLog(receiptId?: string): AuditRow[] {
    return (
      receiptId === undefined
        ? this.st('SELECT * FROM audit_log ORDER BY id').all()
        : this.st('SELECT * FROM audit_log WHERE receipt_id = ? ORDER BY id').all(receiptId)
    ) as AuditRow[];
  }

  // -------------------------------------------------------------------------------------------
  // Cash sessions (cash-session.ts)

  openCashSession(): CashSessionRow | undefined {
    return this.st('SELECT * FROM cash_sessions WHERE closed_at IS NULL').get() as CashSessionRow | undefined;
  }

  cashSession(id: string): CashSessionRow | undefined {
    return this.st('SELECT * FROM cash_sessions WHERE id = ?').get(id) as CashSessionRow | undefined;
  }

  /** Newest first. */
  recentCashSessions(limit: number): CashSessionRow[] {
    return this.st('SELECT * FROM cash_sessions ORDER BY number DESC LIMIT ?').all(limit) as CashSessionRow[];
  }

  nextCashSessionNumber(): number {
    return (this.st('SELECT coalesce(max(number), 0) + 1 FROM cash_sessions').pluck().get() as number) ?? 1;
  }

  insertCashSession(s: Pick<CashSessionRow, 'id' | 'number' | 'opened_at' | 'opened_by' | 'float_cents'>): void {
    this.st('INSERT INTO cash_sessions (id, number, opened_at, opened_by, float_cents) VALUES (@id, @number, @opened_at, @opened_by, @float_cents)').run(s);
  }

  closeCashSession(id: string, closedAt: string, closedBy: string, closingJson: string): void {
    const r = this.st('UPDATE cash_sessions SET closed_at = ?, closed_by = ?, closing_json = ? WHERE id = ? AND closed_at IS NULL').run(
      closedAt,
      closedBy,
      closingJson,
      id,
    );
    if (r.changes !== 1) throw new Error(`caixa ${id} não está aberto`);
  }

  /** The closing report came out (`at`) or failed (`error`). */
  setCashReportPrint(id: string, at: string | null, error: string | null): void {
    this.st('UPDATE cash_sessions SET report_printed_at = ?, report_print_error = ? WHERE id = ?').run(at, error, id);
  }

  insertCashMovement(m: Omit<CashMovementRow, 'id' | 'receipt_id'> & { receipt_id?: string | null }): number {
    const r = this.st(
      `INSERT INTO cash_movements (session_id, kind, amount_cents, reason, manager_id, at, receipt_id)
       VALUES (@session_id, @kind, @amount_cents, @reason, @manager_id, @at, @receipt_id)`,
    ).run({ receipt_id: null, ...m });
    return Number(r.lastInsertRowid);
  }

  /** The session a receipt's sale finished in and the cash the sale kept; undefined for a sale of no session. */
  saleCashFacts(receiptId: string): SaleCashFacts | undefined {
    return this.st(
      `SELECT s.cash_session_id AS session_id, c.number AS session_number, c.closed_at AS session_closed_at,
              coalesce((SELECT sum(p.amount_cents) FROM sale_payments p WHERE p.sale_id = s.id AND p.tpag = '01'), 0) - coalesce(s.change_cents, 0) AS cash_kept_cents
         FROM receipts r JOIN sales s ON s.id = r.sale_id JOIN cash_sessions c ON c.id = s.cash_session_id
        WHERE r.id = ?`,
    ).get(receiptId) as SaleCashFacts | undefined;
  }

  /** What the drawers gave back for a receipt so far: its sangrias minus its suprimentos. */
  refundedCents(receiptId: string): number {
    return this.st("SELECT coalesce(sum(CASE kind WHEN 'sangria' THEN amount_cents ELSE -amount_cents END), 0) FROM cash_movements WHERE receipt_id = ?")
      .pluck()
      .get(receiptId) as number;
  }

  owedCashMovement(receiptId: string): OwedCashMovementRow | undefined {
    return this.st('SELECT * FROM cash_movements_owed WHERE receipt_id = ?').get(receiptId) as OwedCashMovementRow | undefined;
  }

  owedCashMovements(): OwedCashMovementRow[] {
    return this.st('SELECT * FROM cash_movements_owed ORDER BY owed_at, receipt_id').all() as OwedCashMovementRow[];
  }

  putOwedCashMovement(m: OwedCashMovementRow): void {
    this.st(
      `INSERT INTO cash_movements_owed (receipt_id, kind, amount_cents, reason, manager_id, owed_at)
       VALUES (@receipt_id, @kind, @amount_cents, @reason, @manager_id, @owed_at)
       ON CONFLICT (receipt_id) DO UPDATE SET kind = excluded.kind, amount_cents = excluded.amount_cents, reason = excluded.reason,
         manager_id = excluded.manager_id, owed_at = excluded.owed_at`,
    ).run(m);
  }

  deleteOwedCashMovement(receiptId: string): void {
    this.st('DELETE FROM cash_movements_owed WHERE receipt_id = ?').run(receiptId);
  }

  cashMovements(sessionId: string): (CashMovementRow & { manager_name: string | null })[] {
    return this.st(
      'SELECT m.*, g.name AS manager_name FROM cash_movements m LEFT JOIN managers g ON g.id = m.manager_id WHERE m.session_id = ? ORDER BY m.id',
    ).all(sessionId) as (CashMovementRow & { manager_name: string | null })[];
  }

  insertCashCount(c: CashCountRow): void {
    this.st('INSERT INTO cash_counts (session_id, tpag, expected_cents, counted_cents) VALUES (@session_id, @tpag, @expected_cents, @counted_cents)').run(c);
  }

  cashCounts(sessionId: string): CashCountRow[] {
    return this.st('SELECT * FROM cash_counts WHERE session_id = ? ORDER BY tpag').all(sessionId) as CashCountRow[];
  }

  /** The session's finished sales, with their receipts' states. */
  cashSessionSales(sessionId: string): CashSessionSaleRow[] {
    return this.st(
      `SELECT s.id AS sale_id, s.total_cents, coalesce(s.change_cents, 0) AS change_cents, r.state AS receipt_state, r.tp_emis
         FROM sales s JOIN receipts r ON r.sale_id = s.id
        WHERE s.cash_session_id = ? AND s.state = 'finished' ORDER BY s.finished_at, s.id`,
    ).all(sessionId) as CashSessionSaleRow[];
  }

  /** Payments of the session's finished sales (as cashSessionSales lists them) whose receipt is in none of `excludedStates`, summed per tPag. */
  cashSessionPayments(sessionId: string, excludedStates: readonly ReceiptState[]): { tpag: string; amount_cents: number }[] {
    return this.st(
      `SELECT p.tpag, sum(p.amount_cents) AS amount_cents
         FROM sales s JOIN receipts r ON r.sale_id = s.id JOIN sale_payments p ON p.sale_id = s.id
        WHERE s.cash_session_id = ? AND s.state = 'finished' AND r.state NOT IN (SELECT value FROM json_each(?))
        GROUP BY p.tpag ORDER BY p.tpag`,
    ).all(sessionId, JSON.stringify(excludedStates)) as { tpag: string; amount_cents: number }[];
  }

  // -------------------------------------------------------------------------------------------
  // Settings and sealed secrets (settings.ts)

  settingValue(key: string): string | undefined {
    return this.st('SELECT value FROM settings WHERE key = ?').pluck().get(key) as string | undefined;
  }

  putSetting(key: string, json: string, at: string): void {
    this.st(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    ).run(key, json, at);
  }

  deleteSetting(key: string): void {
    this.st('DELETE FROM settings WHERE key = ?').run(key);
  }

  sealedSecret(name: string): Buffer | undefined {
    return this.st('SELECT sealed FROM secrets WHERE name = ?').pluck().get(name) as Buffer | undefined;
  }

  putSealedSecret(name: string, sealed: Buffer, at: string): void {
    this.st(
      'INSERT INTO secrets (name, sealed, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at',
    ).run(name, sealed, at);
  }

  deleteSecret(name: string): void {
    this.st('DELETE FROM secrets WHERE name = ?').run(name);
  }

  // -------------------------------------------------------------------------------------------
  // Authorized XML and print jobs (printing.ts)

  receiptXml(receiptId: string): string | undefined {
    return this.st('SELECT xml FROM receipt_xml WHERE receipt_id = ?').pluck().get(receiptId) as string | undefined;
  }

  putReceiptXml(receiptId: string, xml: string, at: string): void {
    this.st(
      'INSERT INTO receipt_xml (receipt_id, xml, fetched_at) VALUES (?, ?, ?) ON CONFLICT (receipt_id) DO UPDATE SET xml = excluded.xml, fetched_at = excluded.fetched_at',
    ).run(receiptId, xml, at);
    this.refreshReportShare(receiptId);
  }

  insertPrintJob(job: Pick<PrintJobRow, 'receipt_id' | 'copy' | 'automatic' | 'state' | 'bytes' | 'printer' | 'created_at'>): number {
    const r = this.st(
      `INSERT INTO print_jobs (receipt_id, copy, automatic, state, bytes, printer, created_at)
       VALUES (@receipt_id, @copy, @automatic, @state, @bytes, @printer, @created_at)`,
    ).run(job);
    return Number(r.lastInsertRowid);
  }

  finishPrintJob(id: number, state: 'printed' | 'failed', error: string | null, at: string): void {
    this.st('UPDATE print_jobs SET state = ?, error = ?, finished_at = ? WHERE id = ?').run(state, error, at, id);
  }

  printJobs(receiptId: string): PrintJobRow[] {
    return this.st('SELECT * FROM print_jobs WHERE receipt_id = ? ORDER BY id').all(receiptId) as PrintJobRow[];
  }

  insertReportPrintJob(job: Pick<ReportPrintJobRow, 'cash_session_id' | 'state' | 'bytes' | 'printer' | 'created_at'>): number {
    const r = this.st(
      `INSERT INTO report_print_jobs (cash_session_id, state, bytes, printer, created_at)
       VALUES (@cash_session_id, @state, @bytes, @printer, @created_at)`,
    ).run(job);
    return Number(r.lastInsertRowid);
  }

  finishReportPrintJob(id: number, state: 'printed' | 'failed', error: string | null, at: string): void {
    this.st('UPDATE report_print_jobs SET state = ?, error = ?, finished_at = ? WHERE id = ?').run(state, error, at, id);
  }

  /** The latest jobs that went through, receipts' and closing reports', newest first. */
  recentPrintedJobs(limit: number): PrintedJobRow[] {
    return this.st(
      `SELECT receipt_id, copy, cash_session_number, printed_at FROM (
         SELECT * FROM (
           SELECT receipt_id, copy, NULL AS cash_session_number, finished_at AS printed_at, id FROM print_jobs
            WHERE state = 'printed' ORDER BY finished_at DESC, id DESC LIMIT @limit)
         UNION ALL
         SELECT * FROM (
           SELECT NULL, NULL, s.number, j.finished_at, j.id FROM report_print_jobs j JOIN cash_sessions s ON s.id = j.cash_session_id
            WHERE j.state = 'printed' ORDER BY j.finished_at DESC, j.id DESC LIMIT @limit))
       ORDER BY printed_at DESC, id DESC LIMIT @limit`,
    ).all({ limit }) as PrintedJobRow[];
  }

  lastPrintedAt(): string | null {
    return (
      (this.st(
        `SELECT max(at) FROM (SELECT max(finished_at) AS at FROM print_jobs WHERE state = 'printed'
           UNION ALL SELECT max(finished_at) FROM report_print_jobs WHERE state = 'printed')`,
      )
        .pluck()
        .get() as string | null) ?? null
    );
  }

  /**
   * Receipts owed an automatic print (print_due, queued by a trigger when an online receipt is
   * authorized), oldest first. Entries of receipts no longer authorized (cancelled before the
   * print) are dropped: they are not printed.
   */
  receiptsToPrintAutomatically(limit: number): ReceiptRow[] {
    const due = this.st('SELECT r.* FROM print_due d JOIN receipts r ON r.id = d.receipt_id ORDER BY d.queued_at, r.nnf LIMIT ?').all(limit) as ReceiptRow[];
    const stale = due.filter((r) => r.state !== 'authorized');
    // Written only when there is something to drop: this runs whenever a receipt is authorized.
    if (stale.length) this.transaction(() => stale.forEach((r) => this.forgetPrintDue(r.id)));
    return stale.length ? this.receiptsToPrintAutomatically(limit) : due;
  }

  /** The automatic print of a receipt is claimed (or no longer owed). */
  forgetPrintDue(receiptId: string): void {
    this.st('DELETE FROM print_due WHERE receipt_id = ?').run(receiptId);
  }
}
