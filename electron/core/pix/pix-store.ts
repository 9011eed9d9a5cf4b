// The dynamic PIX charges in pos.sqlite (migrations/pos/*_i26_pix_charges.sql): their own SQL,
// on the terminal's one database (PosStore's connection and transactions), kept apart from
// pos-store.ts so the PIX record reads on its own.

import type { PosStore } from '../pos-store.ts';

export type PixChargeState = 'creating' | 'active' | 'paid' | 'finished' | 'cancelling' | 'cancelled' | 'expired' | 'paid_late' | 'refunding' | 'refunded';

export type PixChargeRow = {
  txid: string;
  sale_id: string;
  seq: number;
  amount_cents: number;
  state: PixChargeState;
  location: string | null;
  br_code: string | null;
  expires_at: string;
  e2eid: string | null;
  paid_cents: number | null;
  paid_at: string | null;
  refund_id: string | null;
  refund_state: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO' | null;
  attempts: number;
  next_try_at: string;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** When the customer's QR slip was claimed (written before it printed); null: never. */
  qr_slip_at: string | null;
  qr_slip_error: string | null;
};

/** What a decision changes in a charge (charge-rules.ts); `updated_at` is set by the store. */
export type PixChargePatch = Partial<
  Omit<PixChargeRow, 'txid' | 'sale_id' | 'seq' | 'amount_cents' | 'created_at' | 'updated_at' | 'qr_slip_at' | 'qr_slip_error'>
>;

/** States the charge loop still works on. */
export const UNSETTLED: readonly PixChargeState[] = ['creating', 'active', 'paid', 'cancelling', 'refunding'];
/** States the loop still reads now and then, until their next_try_at is NEVER (charge-rules.ts, WATCH_AFTER_MS). */
const WORKED: readonly PixChargeState[] = [...UNSETTLED, 'cancelled', 'expired', 'finished'];

/** The txid of a sale's `seq`-th charge: its UUID's 32 hex digits and two digits of sequence. */
export const chargeTxid = (saleId: string, seq: number): string => `${saleId.replace(/-/g, '')}${String(seq).padStart(2, '0')}`;

/** A second PIX of a charge paid twice (migrations/pos/*_i26e_pix_second_payments.sql): refunded automatically. */
export type SecondPaymentRow = {
  e2eid: string;
  txid: string;
  paid_cents: number;
  paid_at: string;
  refund_id: string;
  refund_state: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO' | null;
  attempts: number;
  next_try_at: string;
  last_error: string | null;
  found_at: string;
  updated_at: string;
};

/** next_try_at of a charge (or a second PIX's refund) the loop is done with. */
export const NEVER = '9999-12-31T00:00:00.000Z';

const IN_SESSION = '(s.cash_session_id = @session OR (s.cash_session_id IS NULL AND c.created_at >= @openedAt))';

export class PixStore {
  constructor(private readonly pos: PosStore) {}

  transaction<T>(fn: () => T): T {
    return this.pos.transaction(fn);
  }

  charge(txid: string): PixChargeRow | undefined {
    return this.pos.db.prepare('SELECT * FROM pix_charges WHERE txid = ?').get(txid) as PixChargeRow | undefined;
  }

  /** The sale's charges, newest first. */
  chargesOfSale(saleId: string): PixChargeRow[] {
    return this.pos.db.prepare('SELECT * FROM pix_charges WHERE sale_id = ? ORDER BY seq DESC').all(saleId) as PixChargeRow[];
  }

  /** Writes a new charge in state `creating` (before the PSP is asked); its txid. */
  insertCharge(input: { saleId: string; amountCents: number; expiresAt: string; at: string }): PixChargeRow {
    const seq = ((this.pos.db.prepare('SELECT max(seq) AS seq FROM pix_charges WHERE sale_id = ?').get(input.saleId) as { seq: number | null }).seq ?? 0) + 1;
    const txid = chargeTxid(input.saleId, seq);
    this.pos.db
      .prepare(
        `INSERT INTO pix_charges (txid, sale_id, seq, amount_cents, state, expires_at, next_try_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'creating', ?, ?, ?, ?)`,
      )
      .run(txid, input.saleId, seq, input.amountCents, input.expiresAt, input.at, input.at, input.at);
    return this.charge(txid)!;
  }

  update(txid: string, patch: PixChargePatch, at: string): void {
    const keys = Object.keys(patch) as (keyof PixChargePatch)[];
    const sets = [...keys.map((k) => `${k} = @${k}`), 'updated_at = @updated_at'].join(', ');
    this.pos.db.prepare(`UPDATE pix_charges SET ${sets} WHERE txid = @txid`).run({ ...patch, updated_at: at, txid });
  }

  /**
   * Claims the customer's QR slip of an active charge: true once per charge, ever. Committed by
   * the caller before the slip's bytes leave, so it prints at most once, across restarts too.
   */
  claimQrSlip(txid: string, at: string): boolean {
    return this.pos.db.prepare("UPDATE pix_charges SET qr_slip_at = ? WHERE txid = ? AND state = 'active' AND qr_slip_at IS NULL").run(at, txid).changes === 1;
  }

  qrSlipFailed(txid: string, error: string): void {
    this.pos.db.prepare('UPDATE pix_charges SET qr_slip_error = ? WHERE txid = ?').run(error, txid);
  }

  /** Unsettled charges due at or before `at`, oldest due first. */
  dueCharges(at: string, limit = 20): PixChargeRow[] {
    return this.pos.db
      .prepare(
        `SELECT * FROM pix_charges WHERE state IN (${WORKED.map(() => '?').join(', ')}) AND next_try_at <= ? AND next_try_at < ? ORDER BY next_try_at LIMIT ?`,
      )
      .all(...WORKED, at, NEVER, limit) as PixChargeRow[];
  }

  /** When the next charge (or a second PIX's refund) is due, or undefined when none is. */
  nextDue(): string | undefined {
    const row = this.pos.db
      .prepare(
        `SELECT min(at) AS at FROM (
           SELECT min(next_try_at) AS at FROM pix_charges WHERE state IN (${WORKED.map(() => '?').join(', ')}) AND next_try_at < @never
           UNION ALL SELECT min(next_try_at) FROM pix_second_payments WHERE next_try_at < @never)`,
      )
      .get(...WORKED, { never: NEVER }) as { at: string | null };
    return row.at ?? undefined;
  }

  /** Records each second PIX of a charge once (by its endToEndId), its refund due at `at`; the ones new. */
  recordSecondPayments(txid: string, pix: { e2eid: string; paidCents: number; paidAt: string }[], at: string): SecondPaymentRow[] {
    const insert = this.pos.db.prepare(
      `INSERT OR IGNORE INTO pix_second_payments (e2eid, txid, paid_cents, paid_at, refund_id, next_try_at, found_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return pix.filter((p) => insert.run(p.e2eid, txid, p.paidCents, p.paidAt, `D${txid}`, at, at, at).changes === 1).map((p) => this.secondPayment(p.e2eid)!);
  }

  secondPayment(e2eid: string): SecondPaymentRow | undefined {
    return this.pos.db.prepare('SELECT * FROM pix_second_payments WHERE e2eid = ?').get(e2eid) as SecondPaymentRow | undefined;
  }

  /** Second PIX whose refund is due at or before `at`. */
  dueSecondPayments(at: string, limit = 20): SecondPaymentRow[] {
    return this.pos.db
      .prepare('SELECT * FROM pix_second_payments WHERE next_try_at <= ? AND next_try_at < ? ORDER BY next_try_at LIMIT ?')
      .all(at, NEVER, limit) as SecondPaymentRow[];
  }

  /** Every second PIX of the charge, oldest first. */
  secondPaymentsOf(txid: string): SecondPaymentRow[] {
    return this.pos.db.prepare('SELECT * FROM pix_second_payments WHERE txid = ? ORDER BY paid_at').all(txid) as SecondPaymentRow[];
  }

  updateSecondPayment(e2eid: string, patch: Partial<Pick<SecondPaymentRow, 'refund_state' | 'attempts' | 'next_try_at' | 'last_error'>>, at: string): void {
    const keys = Object.keys(patch);
    const sets = [...keys.map((k) => `${k} = @${k}`), 'updated_at = @updated_at'].join(', ');
    this.pos.db.prepare(`UPDATE pix_second_payments SET ${sets} WHERE e2eid = @e2eid`).run({ ...patch, updated_at: at, e2eid });
  }

  /**
   * Charges whose PIX is on a sale that will never be made: its receipt cancelled, or its number
   * voided. Their money goes back to the payer (the refund is due).
   */
  chargesOfUndoneSales(): PixChargeRow[] {
    return this.pos.db
      .prepare(
        `SELECT c.* FROM pix_charges c JOIN receipts r ON r.sale_id = c.sale_id
         WHERE c.state = 'finished' AND r.state IN ('cancelled', 'voided')`,
      )
      .all() as PixChargeRow[];
  }

  /**
   * The manager's list: PIX no sale took (paid_late), refunds under way, and refunds ended since
   * `since`; a sale's own PIX refunded because its NFC-e was cancelled is among them too, and a
   * charge paid twice (its second PIX refunded automatically) while that is recent or not done.
   */
  paidWithoutSale(since: string): PixChargeRow[] {
    return this.pos.db
      .prepare(
        `SELECT * FROM pix_charges WHERE state IN ('paid_late', 'refunding') OR (state = 'refunded' AND updated_at >= @since)
           OR txid IN (SELECT txid FROM pix_second_payments WHERE updated_at >= @since OR refund_state IS NOT 'DEVOLVIDO')
         ORDER BY state = 'paid_late' DESC, paid_at DESC`,
      )
      .all({ since }) as PixChargeRow[];
  }

  /**
   * What the PSP confirmed for the PIX of a cash session's sales: every PIX received (second ones
   * too) and what was refunded of them (DEVOLVIDO), in cents. A sale joins its session when it is
   * finished; a charge of a sale never finished (given up, discarded) counts in the session open
   * when the charge was made.
   */
  confirmedInSession(sessionId: string, openedAt: string): { confirmedCents: number; refundedCents: number } {
    return this.pos.db
      .prepare(
        `WITH received AS (
           SELECT c.paid_cents AS paid, CASE WHEN c.refund_state = 'DEVOLVIDO' THEN c.paid_cents ELSE 0 END AS refunded
             FROM pix_charges c JOIN sales s ON s.id = c.sale_id WHERE ${IN_SESSION} AND c.e2eid IS NOT NULL
           UNION ALL
           SELECT p.paid_cents, CASE WHEN p.refund_state = 'DEVOLVIDO' THEN p.paid_cents ELSE 0 END
             FROM pix_second_payments p JOIN pix_charges c ON c.txid = p.txid JOIN sales s ON s.id = c.sale_id WHERE ${IN_SESSION})
         SELECT coalesce(sum(paid), 0) AS confirmedCents, coalesce(sum(refunded), 0) AS refundedCents FROM received`,
      )
      .get({ session: sessionId, openedAt }) as { confirmedCents: number; refundedCents: number };
  }

  /** How many charges wait for the manager (the status bar's warning, read with every queue status). */
  paidLateCount(): number {
    return this.pos.db.prepare("SELECT count(*) FROM pix_charges WHERE state = 'paid_late'").pluck().get() as number;
  }

  /** Charges paid after the cashier gave up, for the manager. */
  paidLate(): PixChargeRow[] {
    return this.pos.db.prepare("SELECT * FROM pix_charges WHERE state = 'paid_late' ORDER BY paid_at").all() as PixChargeRow[];
  }

  /** Charges being created or waiting for payment (asked of the service's webhook, webhook-hints.ts). */
  openCharges(): PixChargeRow[] {
    return this.pos.db.prepare(`SELECT * FROM pix_charges WHERE state IN ('creating', 'active') ORDER BY created_at`).all() as PixChargeRow[];
  }
}
