// Offline contingency as the terminal runs it: the mode (mode.ts) fed with every exchange of the
// outbox worker and every receipt change, the issuer finishSale uses while it is on, the two
// printed copies of each receipt issued offline, the reconciliation of in-doubt sales
// (reconcile.ts), and the manager's commands. terminal.ts holds one of these and forwards to it.

import { justification as checkJustification } from '../../../fiscal/events.ts';
import type { ContingencySettings, ContingencyStatus, ManagerAuthorization } from '../../api/terminal-api.ts';
import type { AuthoritySituation, IssuanceClient } from '../api-client.ts';
import { checked, TerminalError } from '../errors.ts';
import { actorOfManager, audit, authorizeManager } from '../managers.ts';
import type { Failure } from '../failures.ts';
import type { PosStore } from '../pos-store.ts';
import type { ReconciliationTaskRow } from '../store/contingency.ts';
import type { ManagerRow } from '../store/managers-audit.ts';
import type { OutboxRow } from '../store/outbox.ts';
import type { ReceiptRow } from '../store/receipts.ts';
import type { PrintCopy, ReceiptPrinter } from '../printing.ts';
import { iso, type Clock } from '../../../base/common/clock.ts';
import { type OfflineIssuer } from '../sales.ts';
import { CONTINGENCY_COPIES, type ContingencyCredentials } from './issue.ts';
import { ContingencyMode, transmissionTaskReceipt } from './mode.ts';
import { Reconciler } from './reconcile.ts';

export type ContingencyOptions = {
  store: PosStore;
  clock: Clock;
  /** The service's time as last known: what receipts issued offline are dated with (service-clock.ts). */
  fiscalClock?: Clock;
  client: IssuanceClient;
  printer: ReceiptPrinter;
  serie: () => number;
  settings: () => ContingencySettings;
  credentials: () => { credentials: ContingencyCredentials } | { reason: string };
  authorityTimeoutMs?: number;
  /** Whether an online receipt certainly never reached the service (the worker knows). */
  neverSent?: (receipt: ReceiptRow) => boolean;
  /** Backoff of reconciliation tasks (the outbox's retry policy by default). */
  retry?: { baseMs?: number; capMs?: number };
  /** Something is due in the outbox (receipts issued again offline). */
  wakeWorker: () => void;
  /** A receipt changed here (issued again offline at the start of a period). */
  onReceipt: (receiptId: string) => void;
  /** What became of the online attempt a receipt superseded changed: the receipt's view did, not its state. */
  onTaskChanged: (receiptId: string) => void;
  onStatus: (status: ContingencyStatus) => void;
};

/** Receipts whose missing copies are looked for at start (those issued just before a crash). */
const REPRINT_SCAN_LIMIT = 200;

export class Contingency {
  readonly mode: ContingencyMode;
  readonly reconciler: Reconciler;
  private readonly store: PosStore;
  private readonly clock: Clock;
  private readonly printer: ReceiptPrinter;
  private readonly wakeWorker: () => void;
  private readonly onReceipt: (receiptId: string) => void;
  private readonly onTaskChanged: (receiptId: string) => void;
  private readonly onStatus: (status: ContingencyStatus) => void;
  private readonly printing = new Set<string>();
  private readonly prints = new Set<Promise<void>>();
  private stopped = false;
  private evaluating = false;
  private lastStatus = '';

  constructor(options: ContingencyOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.printer = options.printer;
    this.wakeWorker = options.wakeWorker;
    this.onReceipt = options.onReceipt;
    this.onTaskChanged = options.onTaskChanged;
    this.onStatus = options.onStatus;
    this.mode = new ContingencyMode({
      store: options.store,
      clock: options.clock,
      fiscalClock: options.fiscalClock,
      serie: options.serie,
      settings: options.settings,
      credentials: options.credentials,
      authorityTimeoutMs: options.authorityTimeoutMs,
      neverSent: options.neverSent,
    });
    this.reconciler = new Reconciler({
      store: options.store,
      client: options.client,
      clock: options.clock,
      baseMs: options.retry?.baseMs,
      capMs: options.retry?.capMs,
      // The task shows in the status and beside its receipt (the receipts list).
      onChange: (receiptId) => {
        this.statusChanged();
        if (!this.stopped) this.onTaskChanged(receiptId);
      },
    });
  }

  /** Starts the reconciliation, and prints the copies a crash kept from the printer. */
  start(): void {
    this.reconciler.start();
    for (const r of this.store.contingency.pendingContingencyReceipts(REPRINT_SCAN_LIMIT)) this.printCopies(r);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.reconciler.stop();
    await Promise.allSettled([...this.prints]);
  }

  status(): ContingencyStatus {
    return this.mode.status();
  }

  /** Resolves once the copies of every receipt issued so far have been handed to the printer and settled. */
  async printsSettled(): Promise<void> {
    while (this.prints.size) await Promise.allSettled([...this.prints]);
    await this.printer.idle();
  }

  private statusChanged(): void {
    if (this.stopped) return;
    try {
      const status = this.mode.status();
      // Many receipt changes leave the status as it was: the screen hears only real changes.
      const text = JSON.stringify(status);
      if (text === this.lastStatus) return;
      this.lastStatus = text;
      this.onStatus(status);
    } catch {
      // a listener failing must not break the core
    }
  }

  // -------------------------------------------------------------------------------------------
  // What the worker and the receipts tell

  observeExchange(failure: Failure | null): void {
    this.mode.detector.exchange(failure);
    this.evaluate();
  }

  /** The service said what it last learned of the tax authority. */
  observeAuthority(situation: AuthoritySituation): void {
    this.mode.detector.authority(situation);
    this.evaluate();
  }

  /** Enters or leaves now if the latest news calls for it (before a sale picks its issuer). */
  evaluateNow(): void {
    this.evaluate();
  }

  observeReceipt(r: ReceiptRow): void {
    this.mode.detector.receipt(r.id, r.state, this.clock());
    // Leaving first, when this news calls for it: the screen then hears the period end with its
    // count, not a period still on with nothing left to transmit.
    this.evaluate();
    if (r.tp_emis === 9) {
      // A substitute authorized lets its reconciliation go on; the pending count changed.
      if (r.state === 'authorized') this.reconciler.wake();
      this.statusChanged();
    }
  }

  /** Enters or leaves when the counts call for it. Never inside another transaction. */
  private evaluate(): void {
    if (this.stopped || this.evaluating) return;
    if (this.store.db.inTransaction) {
      setImmediate(() => this.evaluate());
      return;
    }
    this.evaluating = true;
    const heldBack = this.mode.cannotEnterReason;
    try {
      const d = this.mode.decide();
      if (!d) {
        // Entering was called for and could not be (or that ended): nothing else changed that
        // the screen would hear of, and the cashier must know the terminal will not go offline.
        if (this.mode.cannotEnterReason !== heldBack) this.statusChanged();
        return;
      }
      if ('enter' in d) this.enterNow({ automatic: true, reason: d.enter, manager: null });
      else this.leaveNow(null);
    } catch (err) {
      // Entering failed (the company profile refused by the builder, a database error): the
      // status says why; the next failed exchange tries again.
      this.mode.noteCannotEnter(err instanceof TerminalError ? err.message : `Falha ao entrar em contingência: ${(err as Error).message}`);
      this.statusChanged();
    } finally {
      this.evaluating = false;
    }
  }

  private enterNow(input: { automatic: boolean; reason: string; manager: ManagerRow | null }): void {
    const { reissued } = this.mode.enter(input);
    for (const r of reissued) {
      this.onReceipt(r.id);
      this.printCopies(r);
    }
    this.reconciler.wake();
    this.wakeWorker();
    this.statusChanged();
  }

  private leaveNow(manager: ManagerRow | null): void {
    this.mode.leave(manager);
    this.wakeWorker();
    this.statusChanged();
  }

  // -------------------------------------------------------------------------------------------
  // Selling

  /** The issuer for the next sale while a period is open; undefined otherwise. Throws past a limit. */
  offlineIssuer(): OfflineIssuer | undefined {
    return this.mode.offlineIssuer();
  }

  /** A sale was just finished offline: print its two copies and tell the status. */
  issued(r: ReceiptRow): void {
    this.printCopies(r);
    this.statusChanged();
  }

  /**
   * Prints the consumer's and the store's copy, each once: a copy already sent to the printer
   * (even if that failed: then the manager reprints) is not sent again. Rendered after the
   * sale returns, so finishing never waits for the printer.
   */
  private printCopies(r: ReceiptRow): void {
    if (this.stopped || !r.signed_xml || this.printing.has(r.id)) return;
    const xml = r.signed_xml;
    const sent = new Set(this.store.printLog.printJobs(r.id).map((j) => j.copy));
    const copies = CONTINGENCY_COPIES.filter((c) => !sent.has(c));
    if (!copies.length) return;
    this.printing.add(r.id);
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        for (const copy of copies) {
          if (this.stopped) return;
          try {
            await this.printer.print(await this.printer.render(r.id, copy as PrintCopy, xml, { copy }));
          } catch {
            // The printer's status shows the problem; the job stays in the print log as failed.
          }
        }
      })
      .finally(() => {
        this.printing.delete(r.id);
        this.prints.delete(run);
      });
    this.prints.add(run);
  }

  // -------------------------------------------------------------------------------------------
  // The manager's commands

  async enter(input: ManagerAuthorization & { justification: string }): Promise<ContingencyStatus> {
    const reason = checked('justificativa_invalida', 'justification', () => checkJustification(input?.justification, 'justification'));
    const open = this.mode.period();
    if (open) throw new TerminalError('estado_invalido', `O terminal já está em contingência desde ${open.started_at}`);
    // Asked before the PIN: no point authorizing what cannot be done.
    this.mode.assertCanIssue();
    const manager = await authorizeManager(this.store, this.clock, input, 'contingencia');
    this.enterNow({ automatic: false, reason, manager });
    return this.status();
  }

  async leave(auth: ManagerAuthorization): Promise<ContingencyStatus> {
    if (!this.mode.period()) throw new TerminalError('estado_invalido', 'O terminal não está em contingência');
    const manager = await authorizeManager(this.store, this.clock, auth, 'contingencia');
    this.leaveNow(manager);
    return this.status();
  }

  /**
   * Sends a stalled item of `status().openTasks` on again, once the manager has fixed what the
   * service refused (the terminal's token or service address, the service's company settings):
   * a reconciliation task, or a contingency receipt the service refused before the authority saw
   * it. The same idempotency keys go out again. A receipt the authority rejected cannot be sent
   * again: it was signed and handed to the consumer as it is.
   */
  async resumeTask(taskId: string, auth: ManagerAuthorization): Promise<ContingencyStatus> {
    // Asked before the PIN (no point authorizing what cannot be done) and again after it, in the
    // transaction: the item may have moved on while the PIN was being checked.
    const first = resumableTask(this.store, taskId);
    const manager = await authorizeManager(this.store, this.clock, auth, 'retomar pendência', first.receiptId);
    const now = this.clock();
    const at = iso(now);
    const target = this.store.transaction(() => {
      const t = resumableTask(this.store, taskId);
      if (t.kind === 'reconciliation') {
        this.store.contingency.updateReconciliationTask(t.task.id, { state: 'open', attempts: 0, next_attempt_at: now, last_error: null }, at);
      } else {
        this.store.receipts.updateReceipt(t.receiptId, { state: 'pending', attention: null }, at);
        this.store.outbox.updateOutbox(t.entry.seq, { state: 'pending', attempts: 0, next_attempt_at: now, last_error: null }, at);
      }
      audit(this.store, () => now, { actor: actorOfManager(manager), action: 'pendencia_retomada', receiptId: t.receiptId, details: { pendencia: taskId } });
      return t;
    });
    if (target.kind === 'reconciliation') this.reconciler.wake();
    else {
      this.onReceipt(target.receiptId);
      this.wakeWorker();
    }
    this.statusChanged();
    return this.status();
  }
}

type Resumable = { kind: 'reconciliation'; receiptId: string; task: ReconciliationTaskRow } | { kind: 'transmission'; receiptId: string; entry: OutboxRow };

/** What `taskId` (an id of ContingencyStatus.openTasks) names, if a manager can send it on again. */
function resumableTask(store: PosStore, taskId: string): Resumable {
  if (typeof taskId !== 'string' || !taskId) throw new TerminalError('nao_encontrado', 'Pendência não informada', { field: 'taskId' });
  const receiptId = transmissionTaskReceipt(taskId);
  if (receiptId === undefined) {
    const task = store.contingency.reconciliationTask(taskId);
    if (!task || task.state === 'done') throw new TerminalError('nao_encontrado', 'Pendência não encontrada (ou já resolvida)', { field: 'taskId' });
    if (task.state !== 'blocked')
      throw new TerminalError('estado_invalido', 'Esta pendência não está parada: o terminal já está tratando dela', { field: 'taskId' });
    return { kind: 'reconciliation', receiptId: task.receipt_id, task };
  }
  const receipt = store.receipts.receipt(receiptId);
  if (!receipt || receipt.tp_emis !== 9 || (receipt.state !== 'needs_attention' && receipt.state !== 'rejected')) {
    throw new TerminalError('nao_encontrado', 'Pendência não encontrada (ou já resolvida)', { field: 'taskId' });
  }
  if (receipt.state === 'rejected') {
    throw new TerminalError(
      'estado_invalido',
      `A NFC-e de contingência nº ${receipt.nnf} foi rejeitada pela SEFAZ e não pode ser reenviada: ela foi assinada e entregue ao consumidor como está. A venda precisa de uma nova NFC-e; procure o responsável fiscal.`,
      { field: 'taskId' },
    );
  }
  const entry = store.outbox.liveOutbox(receipt.id, 'emit');
  if (!entry || entry.state !== 'blocked')
    throw new TerminalError('estado_invalido', 'Esta NFC-e não está parada: o terminal já está tratando dela', { field: 'taskId' });
  return { kind: 'transmission', receiptId: receipt.id, entry };
}
