// The terminal's store: one part per kind of record (store/*.ts), each with its own SQL, typed in
// and out, all sharing one database and its transaction helpers (store/database.ts). Every SQL
// statement of the terminal is in one of these parts. Callers compose operations of several
// parts inside `transaction` when they must commit together.

import type Database from 'better-sqlite3';
import { openPosDatabase } from './db.ts';
import { CashSessionStore } from './store/cash-sessions.ts';
import { ContingencyStore } from './store/contingency.ts';
import { PosDatabase } from './store/database.ts';
import { ManagerAuditStore } from './store/managers-audit.ts';
import { OutboxStore } from './store/outbox.ts';
import { PrintJobStore } from './store/print-jobs.ts';
import { ProductStore } from './store/products.ts';
import { ReceiptStore } from './store/receipts.ts';
import { ReportStore } from './store/report-totals.ts';
import { RetentionStore } from './store/retention.ts';
import { ReturnStore } from './store/returns.ts';
import { SaleStore } from './store/sales.ts';
import { SeriesStore } from './store/series.ts';
import { SettingsStore } from './store/settings-secrets.ts';

export class PosStore {
  readonly #database: PosDatabase;
  /** The NFC-e series and their next numbers. */
  readonly series: SeriesStore;
  readonly products: ProductStore;
  /** Sales, their items and payments. */
  readonly sales: SaleStore;
  /** Receipts and their authorized XML. */
  readonly receipts: ReceiptStore;
  /** The manager's report: each receipt's share and the daily totals. */
  readonly report: ReportStore;
  readonly retention: RetentionStore;
  readonly outbox: OutboxStore;
  /** Contingency periods, receipts issued offline, reconciliation tasks. */
  readonly contingency: ContingencyStore;
  readonly returns: ReturnStore;
  /** Managers and the audit log. */
  readonly managers: ManagerAuditStore;
  /** Cash sessions, movements and counts. */
  readonly cash: CashSessionStore;
  /** Settings and sealed secrets. */
  readonly settings: SettingsStore;
  /** The printer's log and the automatic prints owed. */
  readonly printLog: PrintJobStore;

  constructor(db: Database.Database) {
    const database = (this.#database = new PosDatabase(db));
    this.series = new SeriesStore(database);
    this.products = new ProductStore(database);
    this.sales = new SaleStore(database);
    this.report = new ReportStore(database, (receiptId) => this.receipts.receiptXml(receiptId));
    this.receipts = new ReceiptStore(database, this.report);
    this.retention = new RetentionStore(database);
    this.outbox = new OutboxStore(database);
    this.contingency = new ContingencyStore(database);
    this.returns = new ReturnStore(database);
    this.managers = new ManagerAuditStore(database);
    this.cash = new CashSessionStore(database);
    this.settings = new SettingsStore(database);
    this.printLog = new PrintJobStore(database);
  }

  static open(dataDir: string): PosStore {
    return new PosStore(openPosDatabase(dataDir));
  }

  /** The connection itself: for backups, pragmas and tests; the parts hold the SQL. */
  get db(): Database.Database {
    return this.#database.db;
  }

  close(): void {
    this.#database.close();
  }

  /** Runs `fn` in one IMMEDIATE transaction (store/database.ts). */
  transaction<T>(fn: () => T): T {
    return this.#database.transaction(fn);
  }

  /** A transaction committed without its own fsync, for what the service told the outbox worker (store/database.ts). */
  relaxedTransaction<T>(fn: () => T): T {
    return this.#database.relaxedTransaction(fn);
  }

  /** Copies the WAL into the database between sales (store/database.ts). */
  checkpointIfDue(minChanges?: number): boolean {
    return this.#database.checkpointIfDue(minChanges);
  }
}
