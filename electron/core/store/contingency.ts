// Offline contingency: its periods, the receipts issued offline, and the reconciliation tasks of
// online attempts a contingency receipt superseded (contingency/*.ts).

import { StorePart } from './database.ts';
import type { ReceiptRow } from './receipts.ts';

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

export class ContingencyStore extends StorePart {
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

  /** Contingency receipts not yet sent, created in [from, until) (ISO instants, as created_at is written). */
  countUnsentContingencyCreatedBetween(from: string, until: string): number {
    return this.st("SELECT count(*) FROM receipts WHERE tp_emis = 9 AND state = 'pending' AND created_at >= ? AND created_at < ?")
      .pluck()
      .get(from, until) as number;
  }

  /** Contingency receipts still waiting for their verdict, oldest first. */
  pendingContingencyReceipts(limit: number): ReceiptRow[] {
    return this.st("SELECT * FROM receipts WHERE tp_emis = 9 AND state IN ('pending', 'processing') ORDER BY created_at, nnf LIMIT ?").all(
      limit,
    ) as ReceiptRow[];
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
    this.updateColumns('reconciliation_tasks', 'id', id, patch, RECONCILIATION_COLUMNS, updatedAt);
  }
}
