// The printer's log: every receipt copy and closing report sent to the printer, and the receipts
// owed an automatic print (printing.ts).

import { StorePart } from './database.ts';
import type { ReceiptRow } from './receipts.ts';

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

export class PrintJobStore extends StorePart {
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
    if (stale.length) this.database.transaction(() => stale.forEach((r) => this.forgetPrintDue(r.id)));
    return stale.length ? this.receiptsToPrintAutomatically(limit) : due;
  }

  /** The automatic print of a receipt is claimed (or no longer owed). */
  forgetPrintDue(receiptId: string): void {
    this.st('DELETE FROM print_due WHERE receipt_id = ?').run(receiptId);
  }
}
