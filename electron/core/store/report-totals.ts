// The manager's report: each receipt's share and the daily totals it adds to (reports.ts,
// report-share.ts; migrations/pos/20261203T0900_i27_report_totals.sql).

import { StorePart, type PosDatabase } from './database.ts';
import type { ReceiptRow, ReceiptState, ReportShares } from './receipts.ts';
import { reportShareOf, type ReportFacts, type ReportShare } from '../report-share.ts';

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

export class ReportStore extends StorePart implements ReportShares {
  /** `receiptXml`: the receipt's authorized XML, when the terminal has it (ReceiptStore.receiptXml). */
  constructor(
    database: PosDatabase,
    private readonly receiptXml: (receiptId: string) => string | undefined,
  ) {
    super(database);
  }

  receiptAdded(receiptId: string, createdAt: string): void {
    // An online receipt just written counts nowhere until its verdict (report-share.ts).
    this.st("INSERT INTO report_receipts (receipt_id, bucket, created_at) VALUES (?, 'none', ?)").run(receiptId, createdAt);
  }

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
}
