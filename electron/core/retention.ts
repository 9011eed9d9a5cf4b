// How long the checkout keeps its receipts' documents, and letting go of them after that.
//
// The terminal needs a receipt's documents to sell (nothing old), cancel (30 minutes), correct a
// rejection or transmit a contingency receipt (until it is settled), reprint (any time: the
// service keeps the authorized XML five years and the terminal fetches it again) and report
// (the daily totals, which stay). So, for a receipt older than the retention period (Gerente →
// Configurações → Retenção, RetentionSettings.days, 90 by default) that is settled (authorized,
// cancelled or voided), whose authorized XML the service holds, with nothing left to send or
// read for it, the terminal deletes the XML it keeps and empties the request bodies it sent
// (store/retention.ts pruneReceiptDocuments). The receipt, its sale, items, payments and audit stay: they
// are small, and the audit log is append-only. SQLite reuses the freed pages, so the file stops
// growing at about one retention period of documents.
//
// It runs between sales, a small batch at a time (RetentionSweep), and remembers where it
// stopped (the `retention_mark` setting): each batch costs the same however many receipts were
// pruned before.

import type { RetentionSettings } from '../api/terminal-api.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import type { PosStore } from './pos-store.ts';
import type { RetentionCandidateRow } from './store/retention.ts';

const DAY_MS = 24 * 3600_000;

/** Receipts judged per transaction: a few milliseconds, so a sale never waits long behind it. */
export const RETENTION_BATCH = 100;

type Mark = { createdAt: string; id: string };

/** Whether the receipt's documents can go (its age aside). */
export function settled(r: RetentionCandidateRow): boolean {
  if (r.live_outbox || r.live_task) return false;
  if (r.state === 'voided') return true;
  // Authorized or cancelled: the service holds the XML, and the report has read it.
  return (r.state === 'authorized' || r.state === 'cancelled') && r.at_service === 1 && r.bucket !== 'pending';
}

/**
 * One batch: the next receipts older than the retention period, in order of creation; the
 * settled ones lose their documents. Returns how many receipts were looked at (0: nothing is old
 * enough now). A receipt not settled yet when its turn comes keeps its documents.
 */
export function pruneBatch(store: PosStore, clock: Clock, retention: RetentionSettings, limit = RETENTION_BATCH): { seen: number; pruned: number } {
  const before = iso(clock() - retention.days * DAY_MS);
  return store.transaction(() => {
    const raw = store.settings.settingValue('retention_mark');
    const mark: Mark = raw ? (JSON.parse(raw) as Mark) : { createdAt: '', id: '' };
    const batch = store.retention.retentionCandidates(mark, before, limit);
    if (!batch.length) return { seen: 0, pruned: 0 };
    let pruned = 0;
    for (const r of batch) {
      if (!settled(r)) continue;
      store.retention.pruneReceiptDocuments(r.id);
      pruned++;
    }
    const last = batch[batch.length - 1]!;
    store.settings.putSetting('retention_mark', JSON.stringify({ createdAt: last.created_at, id: last.id }), iso(clock()));
    return { seen: batch.length, pruned };
  });
}

/** Runs the batches between sales: one every `everyMs`, back to back (one per tick) while there is a backlog. */
export class RetentionSweep {
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(private readonly options: { store: PosStore; clock: Clock; settings: () => RetentionSettings; everyMs?: number }) {}

  start(): void {
    this.#schedule(this.options.everyMs ?? 10_000);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      let full = false;
      try {
        full = pruneBatch(this.options.store, this.options.clock, this.options.settings()).seen === RETENTION_BATCH;
      } catch {
        // A busy or failing database: the next turn tries again.
      }
      this.#schedule(full ? 50 : (this.options.everyMs ?? 10_000));
    }, ms);
    this.#timer.unref();
  }
}
