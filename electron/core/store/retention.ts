// What the retention reads and lets go of: settled receipts' documents past the period
// (electron/core/retention.ts decides which).

import { StorePart } from './database.ts';
import type { ReceiptState } from './receipts.ts';
import type { ReportShare } from '../report-share.ts';

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

export class RetentionStore extends StorePart {
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
}
