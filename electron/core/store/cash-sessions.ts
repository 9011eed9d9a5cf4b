// The till: cash sessions, sangrias and suprimentos, what is owed to the drawer, the closing
// counts, and the session's sales and payments as its figures need them (cash-session.ts).

import { StorePart } from './database.ts';
import type { ReceiptState } from './receipts.ts';

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

export class CashSessionStore extends StorePart {
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
}
