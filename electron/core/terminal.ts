// The terminal core behind the screen API (electron/api/terminal-api.ts), for one checkout
// issuing in one series: a facade. It owns the parts (the database, the outbox worker, the
// printer, the settings, offline contingency) and hands each call to the module that decides
// it: sales.ts, cancellation.ts, remedies.ts (correction, void), returns.ts, reprint.ts,
// cash-session.ts, reports.ts, accountant-export.ts; what it keeps is waking the worker and
// telling the screen. Plain Node: Electron's main process runs it, so do the browser-mode host,
// the tests and terminal-process.ts.
//
//   const terminal = await createTerminal({ dataDir, serviceUrl, token, series: 1 });
//   const sale = await terminal.openSale(); ... await terminal.finishSale(sale.id);
//   await terminal.close();

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type {
  CancelInput,
  CashMovementInput,
  CashReportPdf,
  CashSessionView,
  CloseCashInput,
  DocumentExport,
  DocumentExportInput,
  OpenCashInput,
  ReportCsv,
  ReportPeriod,
  SalesReport,
  CatalogImportReport,
  IbptImportInput,
  IbptStatusView,
  CertificateView,
  ContingencyStatus,
  CorrectionInput,
  FinishedSale,
  ManagerAuthorization,
  ManagerView,
  PaymentInput,
  PrintedJob,
  PrinterStatusView,
  ProductView,
  QueueStatus,
  ReasonedAuthorization,
  ReceiptView,
  ReceiptPreview,
  ReprintResult,
  ReturnInput,
  ReturnView,
  SaleView,
  SettingsPatch,
  StaticPixView,
  PixChargeView,
  PaidPixWithoutSale,
  PspConnectionTest,
  PspSettingsInput,
  PspSettingsView,
  TerminalApi,
  TerminalEvent,
  TerminalSettings,
  VoidInput,
} from '../api/terminal-api.ts';
import { exportDocuments, EXPORTS_DIR } from './accountant-export.ts';
import { IssuanceClient } from './api-client.ts';
import * as cash from './cash-session.ts';
import type { ReportCompany } from './cash-session.ts';
import { cashSessionRow, closingReportPdf, printClosingReport, saveClosingPdf, type ClosingReportContext } from './closing-report.ts';
import { cancellationInfo, cancelReceipt } from './cancellation.ts';
import { productView, saveProduct, seedDemoCatalog, type ProductInput } from './catalog.ts';
import { Contingency } from './contingency/contingency.ts';
import { supersededAttemptView } from './contingency/reconcile.ts';
import { checked, TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager, createManager, listManagers, SYSTEM_ACTOR, type Actor } from './managers.ts';
import type { RetryPolicy } from './outbox-rules.ts';
import { OutboxWorker } from './outbox-worker.ts';
import { PosStore } from './pos-store.ts';
import type { AuditRow } from './store/managers-audit.ts';
import type { ReceiptRow } from './store/receipts.ts';
import { ReceiptPrinter } from './printing.ts';
import { requestReturn, returnView } from './returns.ts';
import { existingReceipt } from './receipt-row.ts';
import { NEEDS_OPERATOR, correctAndResubmit, requestVoid, type RemediesContext } from './remedies.ts';
import { reportPeriod, salesReport, salesReportCsv } from './reports.ts';
import { RetentionSweep } from './retention.ts';
import { printMissingCopies, reprintReceipt, type Printed, type ReprintContext } from './reprint.ts';
import { SeriesRegistry } from './series-registry.ts';
import { AutoPrint, ReceiptDocuments } from './receipt-documents.ts';
import * as sales from './sales.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import type { PrinterTransport } from '../../native/printer/transports.ts';
import { importCatalogCsv } from './catalog-import.ts';
import { ibptContextNow, ibptStatus, importIbpt } from './ibpt/ibpt.ts';
import { IbptStore } from './ibpt/ibpt-store.ts';
import { fileKeySecretBox, type SecretSealer } from './secret-box.ts';
import { ServiceClock } from './service-clock.ts';
import { settle } from './settle-wait.ts';
import { Settings } from './settings.ts';
import { PixCharges, paidChargePayment } from './pix/charges.ts';
import { PixStore, type PixChargeRow } from './pix/pix-store.ts';
import { PspSettings, type PspSetup } from './pix/psp-settings.ts';
import { pspAudit, pspSettingsView, setupFromScreen, testPspConnection } from './pix/psp-screen.ts';
import { qrSlipEscPos } from './pix/qr-slip.ts';
import { staticPix } from './pix/static-pix.ts';
import type { WebhookPolicy } from './pix/webhook-hints.ts';
import { lockFolder, type FolderLock } from '../../base/node/folder-lock.ts';
import { BackupSchedule, backupIntervalMs, backupOnline } from '../../base/node/sqlite-backup.ts';
import { faultWords } from '../../base/node/system-faults.ts';
import { posBackupPlace } from './db.ts';
import { raiseToService } from './numbering.ts';

export type TerminalOptions = {
  /** Folder of the terminal's database (pos.sqlite). */
  dataDir: string;
  // serviceUrl, token and series SEED the settings of a data directory opened for the first
  // time; afterwards the stored settings win and are changed with updateSettings (settings.ts).
  /** The issuance service; default: the embedded one. */
  serviceUrl?: string;
  /** The company's API token at the service. Without one, nothing is sent until the manager sets it. */
  token?: string;
  /** The series this terminal issues in (0–999); default 1. */
  series?: number;
  /** SHA-256 of an https:// service's certificate, pinned (settings.ts); seeds the settings like the URL. */
  serviceFingerprint?: string | null;
  /** The store's PIX key for the static BR Code (docs/pix.md); seeds the settings like the URL. */
  pixKey?: string;
  /** The store's PSP for dynamic PIX (BALCAO_PIX_*, pix/psp-settings.ts); seeds the settings like the URL. */
  pixPsp?: PspSetup;
  /**
   * The demo's simulated PSP (`balcao start`): its payment control, behind the screen's "Simular
   * pagamento". Never set for a real PSP.
   */
  pixSimulator?: { pay(txid: string): unknown };
  /** How often the service is asked about the PSP's webhook and the PSP read meanwhile (pix/webhook-hints.ts); tests shorten or lengthen it. */
  pixWebhookPolicy?: Partial<WebhookPolicy>;
  /** Epoch milliseconds; default Date.now. Tests move it to cross the cancellation window. */
  clock?: Clock;
  retry?: Partial<RetryPolicy>;
  requestTimeoutMs?: number;
  sendConcurrency?: number;
  pollConcurrency?: number;
  pollWindow?: number;
  healthIntervalMs?: number;
  /** How old the service's word on the tax authority may be when a receipt is first sent online. */
  authorityNewsMaxAgeMs?: number;
  /** Default true. False: commands are queued but not sent until `worker.start()`. */
  startWorker?: boolean;
  /** How long cancel/void wait for the service's answer before returning the pending state. */
  settleWaitMs?: number;
  /** Replaces the printer the settings describe (tests: MemoryPrinter from native/printer/transports.ts). */
  printerTransport?: PrinterTransport;
  /** Seals the secrets at rest; default: a key file in the data directory (secret-box.ts). */
  secretBox?: SecretSealer;
  /** Offline contingency: how long an accepted receipt may wait for the authority before that counts as a failure. */
  authorityTimeoutMs?: number;
  /** Between automatic copies of the database; default BALCAO_BACKUP_INTERVAL_MIN (60 min); 0: none on a schedule. */
  backupIntervalMs?: number;
};

/** Where the service's clock offset is kept between runs (service-clock.ts). */
const SERVICE_CLOCK_KEY = 'relogio_servico';

/** The offset an earlier run kept, if any. */
function keptClockOffset(store: PosStore): number | null {
  const raw = store.settings.settingValue(SERVICE_CLOCK_KEY);
  const offset = raw === undefined ? undefined : (JSON.parse(raw) as { offsetMs?: unknown }).offsetMs;
  return typeof offset === 'number' && Number.isFinite(offset) ? offset : null;
}

/** How old a reading of the service's clock may be when the screen shows a cancellation window. */
const CLOCK_FRESH_MS = 1_000;
const CLOCK_SYNC_TIMEOUT_MS = 2_000;
/** A service found down this recently is not asked again for the time (the worker probes it). */
const CLOCK_SYNC_OFFLINE_MS = 10_000;

export class Terminal implements TerminalApi {
  readonly store: PosStore;
  readonly client: IssuanceClient;
  readonly worker: OutboxWorker;
  /** The receipt printer (also used by offline contingency to print its two copies). */
  readonly printer: ReceiptPrinter;
  /** The fiscal XML behind each receipt (cached authorized nfeProc) and its preview. */
  readonly documents: ReceiptDocuments;
  private readonly autoPrint: AutoPrint;
  /** Settings, company profile, certificate; `settings.contingencyCredentials()` for offline issuance. */
  readonly settings: Settings;
  /** How this checkout reaches the store's PSP for dynamic PIX (null config: no dynamic PIX here). */
  readonly psp: PspSettings;
  /** The dynamic PIX charges and the loop that follows them at the PSP (pix/charges.ts). */
  private readonly pixCharges: PixCharges;
  private readonly pixStore: PixStore;
  private readonly pixSimulator: TerminalOptions['pixSimulator'];
  /** Offline contingency (contingency/*.ts): the mode, the issuer while it is on, the reconciliation. */
  readonly contingency: Contingency;
  readonly clock: Clock;
  /** The service's clock, learned from its answers: the cancellation window runs on it. */
  readonly serviceClock: ServiceClock;
  /** The series this checkout claims at the service (several checkouts in one store). */
  readonly seriesRegistry: SeriesRegistry;
  readonly dataDir: string;
  /** The imported IBPT tables (ibpt/ibpt.ts): each item's vTotTrib. */
  readonly ibpt: IbptStore;
  private readonly ctx: sales.SalesContext;
  private startWorker: boolean;
  private readonly listeners = new Set<(event: TerminalEvent) => void>();
  private readonly settleWaitMs: number;
  private closed = false;
  private readonly checkpointTimer: NodeJS.Timeout;
  private readonly retention: RetentionSweep;
  private clockSync: Promise<void> | undefined;
  /** Copies of pos.sqlite on a schedule (base/node/sqlite-backup.ts); the last one's failure, in words, until one works. */
  private readonly backups: BackupSchedule;
  private backupProblem: string | null = null;

  /** The hold on the data folder, let go when the terminal closes (createTerminal takes it). */
  private readonly folderLock: FolderLock | undefined;

  constructor(store: PosStore, options: TerminalOptions, folderLock?: FolderLock) {
    this.store = store;
    this.folderLock = folderLock;
    this.dataDir = options.dataDir;
    this.clock = options.clock ?? Date.now;
    this.settleWaitMs = options.settleWaitMs ?? 5_000;
    const box = options.secretBox ?? fileKeySecretBox(options.dataDir);
    this.psp = new PspSettings(store, box, this.clock);
    if (options.pixPsp) this.psp.save(options.pixPsp, { replace: false });
    this.pixStore = new PixStore(store);
    this.pixCharges = new PixCharges({
      pix: this.pixStore,
      psp: this.psp,
      clock: this.clock,
      sale: (saleId) => {
        const sale = store.sales.sale(saleId);
        if (!sale) throw new TerminalError('nao_encontrado', 'Venda não encontrada', { field: 'saleId' });
        return sales.saleView(store, sale, this.ctx.uf?.());
      },
      merchant: () => {
        const company = this.settings.company();
        return company && { name: company.xFant?.trim() || company.xNome, city: company.address.xMun };
      },
      pixKey: () => this.settings.pix.key,
      settle: (charge, pspCnpj) => this.settlePixCharge(charge, pspCnpj),
      onChange: (charge) => {
        this.emit({ type: 'pix', charge });
        // The status bar's warning of PIX waiting for the manager follows them.
        if (charge.state === 'paid_late') this.emit({ type: 'queue', status: this.queueStatusNow() });
        this.printQrSlip(charge);
      },
      simulated: options.pixSimulator !== undefined,
      received: (txid) => this.client.pixReceived(txid),
      ...(options.pixWebhookPolicy && { webhookPolicy: options.pixWebhookPolicy }),
    });
    this.pixSimulator = options.pixSimulator;
    this.settings = new Settings({
      store,
      clock: this.clock,
      box,
      seed: {
        serviceUrl: options.serviceUrl,
        token: options.token,
        series: options.series,
        serviceFingerprint: options.serviceFingerprint,
        pixKey: options.pixKey,
      },
    });
    this.ibpt = new IbptStore(store.db);
    this.ctx = {
      store,
      clock: this.clock,
      serie: this.settings.series,
      uf: () => this.settings.company()?.address.UF,
      ibpt: () => ibptContextNow(this.ibpt, this.settings.company()?.address.UF, this.clock),
      scaleLabels: () => this.settings.scaleLabels(),
      cashSession: () => cash.requireOpenSession(store).id,
    };
    store.series.ensureSeries(this.ctx.serie);
    this.serviceClock = new ServiceClock(
      this.clock,
      () => {
        this.refreshCancellationWindows();
        if (!this.closed && this.listeners.size) this.emit({ type: 'queue', status: this.queueStatusNow() });
      },
      {
        seed: keptClockOffset(store),
        keep: (offsetMs) => {
          if (this.closed) return;
          try {
            store.settings.putSetting(SERVICE_CLOCK_KEY, JSON.stringify({ offsetMs }), iso(this.clock()));
          } catch {
            // kept next time; an exchange never fails for this (a full disk is told elsewhere)
          }
        },
      },
    );
    this.client = new IssuanceClient({
      baseUrl: this.settings.serviceUrl,
      token: this.settings.token,
      timeoutMs: options.requestTimeoutMs,
      fingerprint256: this.settings.serviceFingerprint,
      onAnswerDated: (date) => this.serviceClock.observe(date),
    });
    this.seriesRegistry = new SeriesRegistry({
      settings: this.settings,
      client: this.client,
      onNumbering: (numbering) => raiseToService(store, this.clock, numbering),
    });
    this.worker = new OutboxWorker({
      store,
      client: this.client,
      clock: this.clock,
      retry: options.retry,
      sendConcurrency: options.sendConcurrency,
      pollConcurrency: options.pollConcurrency,
      pollWindow: options.pollWindow,
      healthIntervalMs: options.healthIntervalMs,
      authorityNewsMaxAgeMs: options.authorityNewsMaxAgeMs,
      onReceiptChanged: (id) => this.emitReceipt(id),
      onReturnChanged: (id) => this.emitReturn(id),
      onStatusChanged: () => this.emit({ type: 'queue', status: this.queueStatusNow() }),
      onExchange: (failure) => this.contingency.observeExchange(failure),
      onAuthority: (situation) => this.contingency.observeAuthority(situation),
      // A number the authority holds under another key: learn where the series stand again.
      onNumberTaken: () => {
        if (!this.closed) this.seriesRegistry.start();
      },
    });
    this.printer = new ReceiptPrinter({
      store,
      clock: this.clock,
      dataDir: options.dataDir,
      settings: this.settings.printer,
      transport: options.printerTransport,
      onStatus: (status) => {
        if (!this.closed) this.emit({ type: 'printer', status });
      },
    });
    this.documents = new ReceiptDocuments({ store, client: this.client, clock: this.clock });
    this.autoPrint = new AutoPrint({ store, printer: this.printer, documents: this.documents });
    this.contingency = new Contingency({
      store,
      clock: this.clock,
      client: this.client,
      printer: this.printer,
      serie: () => this.ctx.serie,
      // What the terminal signs itself is dated on the service's clock, not the PC's (service-clock.ts).
      fiscalClock: () => this.serviceClock.fiscalNow(),
      settings: () => this.settings.contingencySettings(),
      credentials: () => this.settings.credentials(),
      authorityTimeoutMs: options.authorityTimeoutMs,
      neverSent: (r) => this.worker.neverSent(r.id),
      retry: options.retry,
      wakeWorker: () => this.worker.wake(),
      onReceipt: (id) => this.emitReceipt(id),
      onTaskChanged: (id) => this.showReceipt(id),
      onStatus: (status) => {
        if (!this.closed) this.emit({ type: 'contingency', status });
      },
    });
    this.startWorker = options.startWorker !== false;
    this.startWorkerIfConfigured();
    // Dynamic PIX charges are followed with or without the service (the PSP is another party).
    if (this.startWorker) this.pixCharges.start();
    // Between sales, not inside them: see PosStore.checkpointIfDue.
    this.checkpointTimer = setInterval(() => {
      try {
        this.store.checkpointIfDue();
      } catch {
        // a busy or failing database: the next tick (or SQLite's own checkpoint) catches up
      }
    }, 1000);
    this.checkpointTimer.unref();
    // Old settled receipts' documents, let go between sales (retention.ts).
    this.retention = new RetentionSweep({ store, clock: this.clock, settings: () => this.settings.retention });
    this.retention.start();
    const place = posBackupPlace(options.dataDir);
    this.backups = new BackupSchedule(
      () => backupOnline(store.db, place),
      place,
      options.backupIntervalMs ?? backupIntervalMs(),
      (outcome) => {
        const problem = outcome.ok ? null : `A cópia de segurança automática do terminal falhou: ${faultWords(outcome.error, { path: place.dir })}`;
        if (problem === this.backupProblem || this.closed) return;
        this.backupProblem = problem;
        this.emit({ type: 'queue', status: this.queueStatusNow() });
      },
    );
    this.backups.start();
  }

  /** The series receipts are numbered in now. */
  get serie(): number {
    return this.ctx.serie;
  }

  /** Starts sending (and printing) when the terminal was created with `startWorker: false`. */
  start(): void {
    this.startWorker = true;
    this.startWorkerIfConfigured();
    this.pixCharges.start();
  }

  /** Without a token nothing can be sent: the worker waits for the manager to set one. */
  private startWorkerIfConfigured(): void {
    if (!this.startWorker || this.closed || this.worker.isRunning || this.settings.token === '') return;
    this.worker.start();
    this.contingency.start();
    this.seriesRegistry.start();
    // Receipts authorized while the terminal was down (or before it printed them).
    this.autoPrint.schedule();
  }

  /** Stops the worker (letting calls in flight finish) and closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.checkpointTimer);
    this.retention.stop();
    await this.backups.stop();
    this.seriesRegistry.stop();
    await this.worker.stop();
    await this.pixCharges.stop();
    await this.contingency.stop();
    await this.autoPrint.stop();
    this.listeners.clear();
    await this.client.close();
    this.store.close();
    this.folderLock?.release();
  }

  // -------------------------------------------------------------------------------------------
  // Events

  subscribe(listener: (event: TerminalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: TerminalEvent): void {
    // A receipt cancelled or voided: a PIX it was paid with is refunded (the PIX loop finds which).
    if (event.type === 'receipt' && (event.receipt.state === 'cancelled' || event.receipt.state === 'voided')) this.pixCharges.wake();
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // a screen's listener failing must not break the core
      }
    }
  }

  private emitReceipt(id: string): void {
    if (this.closed) return;
    const row = this.store.receipts.receipt(id);
    if (row) this.contingency.observeReceipt(row);
    if (row?.state === 'authorized') this.autoPrint.schedule();
    if (row && this.listeners.size) this.emit({ type: 'receipt', receipt: this.view(row) });
  }

  /** The screen hears a receipt's view again (nothing else needs to know: its state did not change). */
  private showReceipt(id: string): void {
    if (this.closed || this.listeners.size === 0) return;
    const row = this.store.receipts.receipt(id);
    if (row) this.emit({ type: 'receipt', receipt: this.view(row) });
  }

  /** Service time minus ours for the cancellation window; 0 (the window's own fallback) until known. */
  private get serviceOffsetMs(): number {
    return this.serviceClock.offsetMs ?? 0;
  }

  /**
   * Before the screen shows (or acts on) how long a receipt can still be cancelled: when the
   * service's clock was last read more than CLOCK_FRESH_MS ago, read it now (one dated health
   * check, CLOCK_SYNC_TIMEOUT_MS at most), so the countdown and the button follow the clock the
   * service will judge by, not the one of the last exchange. A service known to be down is not
   * waited for: the window then runs on what was last known (cancellation.ts).
   */
  private syncServiceClock(): Promise<void> {
    const seen = this.serviceClock.observedAt;
    const worker = this.worker.state;
    if (this.closed || this.settings.token === '' || (seen !== null && this.clock() - seen < CLOCK_FRESH_MS)) return Promise.resolve();
    if (worker.online === false && worker.lastContactAt !== null && this.clock() - worker.lastContactAt < CLOCK_SYNC_OFFLINE_MS) return Promise.resolve();
    // The answer's Date is all that is wanted (client → serviceClock.observe); the outcome
    // itself is the worker's business.
    this.clockSync ??= this.client
      .health({ timeoutMs: CLOCK_SYNC_TIMEOUT_MS })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.clockSync = undefined));
    return this.clockSync;
  }

  /** The service's clock moved: the screen's countdowns of recent receipts are stale. */
  private refreshCancellationWindows(): void {
    if (this.closed || this.listeners.size === 0) return;
    for (const r of this.store.receipts.recentReceipts(50)) if (r.state === 'authorized') this.emit({ type: 'receipt', receipt: this.view(r) });
  }

  private emitReturn(id: string): void {
    if (this.closed || this.listeners.size === 0) return;
    const row = this.store.returns.returnRow(id);
    if (row) this.emit({ type: 'return', devolucao: returnView(this.store, row) });
  }

  // -------------------------------------------------------------------------------------------
  // Catalog (administration, not the screen API)

  saveProduct(input: ProductInput): ProductView {
    return productView(checked('estado_invalido', 'product', () => saveProduct(this.store, input, iso(this.clock()))));
  }

  seedDemoCatalog(): void {
    seedDemoCatalog(this.store, iso(this.clock()));
  }

  async findProducts(query: string, limit = 20): Promise<ProductView[]> {
    const q = typeof query === 'string' ? query.trim() : '';
    return this.store.products.searchProducts(q, Math.max(1, Math.min(200, limit))).map(productView);
  }

  // -------------------------------------------------------------------------------------------
  // Sales

  async openSale(): Promise<SaleView> {
    return sales.openSale(this.ctx);
  }

  async getSale(saleId: string): Promise<SaleView> {
    const sale = this.store.sales.sale(saleId);
    if (!sale) throw new TerminalError('nao_encontrado', 'Venda não encontrada');
    return sales.saleView(this.store, sale, this.ctx.uf?.());
  }

  async openSales(): Promise<SaleView[]> {
    return this.store.sales.openSales().map((s) => sales.saleView(this.store, s, this.ctx.uf?.()));
  }

  async addItem(saleId: string, input: { code: string; quantity?: string }): Promise<SaleView> {
    return sales.addItem(this.ctx, saleId, input);
  }

  async removeItem(saleId: string, itemId: number): Promise<SaleView> {
    return sales.removeItem(this.ctx, saleId, itemId);
  }

  async changeItemQuantity(saleId: string, itemId: number, quantity: string): Promise<SaleView> {
    return sales.changeItemQuantity(this.ctx, saleId, itemId, quantity);
  }

  async setConsumer(saleId: string, document: string | null): Promise<SaleView> {
    return sales.setConsumer(this.ctx, saleId, document);
  }

  async addPayment(saleId: string, payment: PaymentInput): Promise<SaleView> {
    return sales.addPayment(this.ctx, saleId, payment);
  }

  async staticPix(saleId: string, amountCents: number): Promise<StaticPixView> {
    return staticPix(this.settings, await this.getSale(saleId), amountCents);
  }

  /** A dynamic PIX charge (tPag 17) of `amountCents` of the open sale at the store's PSP. */
  async createPixCharge(saleId: string, amountCents: number): Promise<PixChargeView> {
    return this.pixCharges.create(saleId, amountCents);
  }

  async pixCharge(txid: string): Promise<PixChargeView> {
    return this.pixCharges.get(txid);
  }

  /** The cashier gives up on an unpaid charge (removed at the PSP; a PIX that came meanwhile goes to the manager). */
  async cancelPixCharge(txid: string): Promise<PixChargeView> {
    return this.pixCharges.cancel(txid);
  }

  async simulatePixPayment(txid: string): Promise<PixChargeView> {
    const charge = this.pixCharges.get(txid);
    if (!this.pixSimulator) throw new TerminalError('estado_invalido', 'Simular pagamento só existe na loja de demonstração (PSP simulado)');
    if (charge.state !== 'active') throw new TerminalError('estado_invalido', 'Só uma cobrança aguardando pagamento pode ser paga', { field: 'txid' });
    try {
      this.pixSimulator.pay(txid);
    } catch (err) {
      throw new TerminalError('estado_invalido', `PSP simulado: ${(err as Error).message}`, { field: 'txid' });
    }
    this.pixCharges.wake(); // read it now rather than at the next poll
    return charge;
  }

  async pspSettings(): Promise<PspSettingsView> {
    return pspSettingsView(this.psp, this.settings.pix.key);
  }

  /**
   * The manager's PSP (Gerente › PIX (PSP)): the whole form validated before the PIN is checked
   * (nothing written when a field is wrong), then the PSP, the PIX key and the QR printing saved
   * in one transaction with one audit entry (no secret in it). The PIX loop picks the new PSP up
   * at its next round (it compares the stored configuration).
   */
  async savePspSettings(input: PspSettingsInput, auth: ManagerAuthorization): Promise<PspSettingsView> {
    const setup = setupFromScreen(input, this.storedPsp());
    const pixKey = typeof input.pixKey === 'string' ? input.pixKey.trim() : '';
    if (!pixKey)
      throw new TerminalError('configuracao_invalida', 'Chave PIX da loja: obrigatória para o PIX dinâmico (é quem recebe as cobranças)', { field: 'pix.key' });
    const pix = this.settings.prepare({ pix: { key: pixKey } });
    const manager = await authorizeManager(this.store, this.clock, auth, 'pix_psp');
    const view = this.store.transaction(() => {
      const before = pspSettingsView(this.psp, this.settings.pix.key);
      this.psp.save(setup, { replace: true });
      this.psp.setPrintQr(input.printQr === true);
      pix.commit();
      const after = pspSettingsView(this.psp, this.settings.pix.key);
      audit(this.store, this.clock, { actor: actorOfManager(manager), action: 'pix_psp_configurado', details: pspAudit(before, input, after) });
      return after;
    });
    this.pixCharges.wake();
    return view;
  }

  async testPspConnection(input: PspSettingsInput, auth: ManagerAuthorization): Promise<PspConnectionTest> {
    const setup = setupFromScreen(input, this.storedPsp());
    await authorizeManager(this.store, this.clock, auth, 'pix_psp_teste');
    return testPspConnection(setup);
  }

  /** The stored PSP with its secrets, or null (none, or secrets this computer cannot open: the manager enters them again). */
  private storedPsp(): PspSetup | null {
    try {
      return this.psp.config();
    } catch {
      return null;
    }
  }

  /**
   * The customer's QR slip of a charge that is active, when the manager turned it on
   * (pix/qr-slip.ts): claimed on the charge's row before it prints, so the loop seeing the charge
   * again, or a restart, never prints it twice. A printer failure is kept on the charge and shown
   * in the printer's status; the QR is on the screen anyway.
   */
  private printQrSlip(charge: PixChargeView): void {
    if (charge.state !== 'active' || !charge.brCode || charge.qrSlipPrinted || !this.psp.printQr) return;
    if (Date.parse(charge.expiresAt) <= this.clock()) return;
    const company = this.settings.company();
    const escpos = qrSlipEscPos(charge, company ? company.xFant?.trim() || company.xNome : '', this.printer.settings);
    if (!escpos) return;
    this.printer
      .printSlip(escpos, () => this.pixStore.claimQrSlip(charge.txid, new Date(this.clock()).toISOString()))
      .catch((err: unknown) => this.pixStore.qrSlipFailed(charge.txid, (err as Error).message));
  }

  /** Charges paid after the cashier gave up (or that the sale could not take): the manager finishes or refunds them. */
  async paidLatePixCharges(): Promise<PixChargeView[]> {
    return this.pixCharges.paidLate();
  }

  /** Gerente › PIX pagos sem venda: what waits for the manager, and the refunds of the last day. */
  async paidPixWithoutSale(): Promise<PaidPixWithoutSale[]> {
    const since = new Date(this.clock() - 24 * 3600_000).toISOString();
    return this.pixStore.paidWithoutSale(since).map((c) => {
      const sale = this.store.sales.sale(c.sale_id);
      const view = sale && sales.saleView(this.store, sale, this.ctx.uf?.());
      return {
        ...this.pixCharges.view(c),
        sale: { id: c.sale_id, state: view?.state ?? 'discarded', totalCents: view?.totalCents ?? 0, remainingCents: view?.remainingCents ?? 0 },
      };
    });
  }

  /**
   * "Concluir venda": the sale of a PIX paid after the cashier gave up takes it as its payment
   * and, paid in full, is finished with its NFC-e. The charge goes back to `paid` in one
   * transaction with the audit entry; the PIX loop then settles it as any paid charge (the line
   * once, by its endToEndId), so a second click, or a restart, never finishes it twice.
   */
  async finishSaleWithPix(txid: string, auth: ManagerAuthorization): Promise<PixChargeView> {
    const manager = await authorizeManager(this.store, this.clock, auth, 'pix_concluir_venda');
    const row = this.store.transaction(() => {
      const charge = this.pixCharges.resume(txid, (c) => {
        const sale = this.store.sales.sale(c.sale_id);
        if (sale?.state !== 'open')
          throw new TerminalError('estado_invalido', 'A venda desta cobrança não está mais aberta (concluída de outra forma ou cancelada): devolva o PIX', {
            field: 'txid',
          });
      });
      audit(this.store, this.clock, {
        actor: actorOfManager(manager),
        action: 'pix_venda_concluida',
        details: { txid, saleId: charge.sale_id, e2eid: charge.e2eid, paidCents: charge.paid_cents },
      });
      return charge;
    });
    this.emit({ type: 'queue', status: this.queueStatusNow() });
    return this.pixCharges.view(row);
  }

  /** "Devolver": a PIX paid after the cashier gave up goes back to the payer (API Pix devolução), its state recorded. */
  async refundPix(txid: string, auth: ManagerAuthorization): Promise<PixChargeView> {
    const manager = await authorizeManager(this.store, this.clock, auth, 'pix_devolver');
    const row = this.store.transaction(() => {
      const charge = this.pixCharges.refundLate(txid);
      audit(this.store, this.clock, {
        actor: actorOfManager(manager),
        action: 'pix_devolvido',
        details: { txid, saleId: charge.sale_id, e2eid: charge.e2eid, paidCents: charge.paid_cents, refundId: charge.refund_id },
      });
      return charge;
    });
    this.emit({ type: 'queue', status: this.queueStatusNow() });
    return this.pixCharges.view(row);
  }

  /** Resolves with the charge once `done(view)` holds, or as it is after `timeoutMs`. */
  waitForPixCharge(txid: string, done: (c: PixChargeView) => boolean, timeoutMs: number): Promise<PixChargeView> {
    return settle({
      read: () => this.pixCharges.get(txid),
      done,
      timeoutMs,
      clock: this.clock,
      onNews: (news) => this.subscribe((e) => e.type === 'pix' && e.charge.txid === txid && news()),
      stopped: () => this.closed,
    });
  }

  /**
   * A paid charge onto its sale: the payment line (tPag 17, tpIntegra 1, the PSP's CNPJ, the
   * endToEndId in cAut) unless a crash left it there already, then the sale finished when that
   * pays it in full. Each step is its own transaction and each is skipped when already done, so a
   * restart between them completes the sale once.
   */
  private async settlePixCharge(charge: PixChargeRow, pspCnpj: string): Promise<void> {
    const sale = await this.getSale(charge.sale_id);
    const hasLine = sale.payments.some((p) => p.card?.cAut === charge.e2eid);
    if (sale.state !== 'open') {
      if (hasLine) return;
      throw new Error('a venda não está mais aberta');
    }
    const after = hasLine ? sale : await this.addPayment(sale.id, paidChargePayment(charge, pspCnpj));
    if (after.remainingCents === 0) await this.finishSale(sale.id);
  }

  async removePayment(saleId: string, paymentId: number): Promise<SaleView> {
    return sales.removePayment(this.ctx, saleId, paymentId);
  }

  async discardSale(saleId: string): Promise<SaleView> {
    return sales.discardSale(this.ctx, saleId);
  }

  /** Synchronous core of finishSale: on disk when it returns. */
  finishSaleNow(saleId: string): FinishedSale {
    // What the service last said (the authority is down, say) is acted on before choosing how
    // to issue: a sale is never sent online when contingency is called for.
    this.contingency.evaluateNow();
    // Another checkout of the company holds this one's series (series-registry.ts): no number is taken.
    this.seriesRegistry.assertFree();
    const { sale, receipt } = sales.finishSale(this.ctx, saleId, this.contingency.offlineIssuer());
    this.worker.wake();
    if (receipt.tp_emis === 9) this.contingency.issued(receipt);
    const view = this.view(receipt);
    this.emit({ type: 'receipt', receipt: view });
    return { sale: sales.saleView(this.store, sale, this.ctx.uf?.()), receipt: view };
  }

  /** finishSaleNow, once a first claim of this checkout's series is answered (series-registry.ts). */
  async finishSale(saleId: string): Promise<FinishedSale> {
    await this.seriesRegistry.beforeSale();
    return this.finishSaleNow(saleId);
  }

  // -------------------------------------------------------------------------------------------
  // Receipts

  view(r: ReceiptRow): ReceiptView {
    const needsOperator = NEEDS_OPERATOR.includes(r.state);
    return {
      id: r.id,
      saleId: r.sale_id,
      serie: r.serie,
      nNF: r.nnf,
      state: r.state,
      totalCents: r.total_cents,
      createdAt: r.created_at,
      chave: r.chave,
      protocolo: r.protocolo,
      codigoStatus: r.codigo_status,
      motivo: r.motivo,
      autorizadoEm: r.autorizado_em,
      canceladoEm: r.cancelado_em,
      qrcode: r.qrcode,
      urlConsulta: r.url_consulta,
      contingency: r.tp_emis === 9,
      attention: r.attention,
      cancellation: cancellationInfo(r, this.clock(), this.serviceOffsetMs),
      // A contingency receipt was signed and printed as it is: it cannot be corrected.
      canCorrect: needsOperator && r.tp_emis === 1,
      // A number issued in contingency must never be voided (docs/fiscal.md, "Offline contingency").
      canVoid: needsOperator && r.tp_emis === 1,
      superseded: r.tp_emis === 9 ? this.store.contingency.supersededAttempts(r.id).map(supersededAttemptView) : [],
    };
  }

  private receiptRow(receiptId: string): ReceiptRow {
    return existingReceipt(this.store, receiptId);
  }

  async recentReceipts(limit = 50): Promise<ReceiptView[]> {
    await this.syncServiceClock();
    return this.store.receipts.recentReceipts(Math.max(1, Math.min(500, limit))).map((r) => this.view(r));
  }

  async getReceipt(receiptId: string): Promise<ReceiptView> {
    await this.syncServiceClock();
    return this.view(this.receiptRow(receiptId));
  }

  /** Resolves with the receipt once `done(view)` holds, or as it is after `timeoutMs` (settle-wait.ts). */
  waitForReceipt(receiptId: string, done: (r: ReceiptView) => boolean, timeoutMs: number): Promise<ReceiptView> {
    return settle({
      read: () => this.view(this.receiptRow(receiptId)),
      done,
      timeoutMs,
      clock: this.clock,
      onNews: (news) => this.subscribe((e) => e.type === 'receipt' && e.receipt.id === receiptId && news()),
      stopped: () => this.closed,
    });
  }

  /**
   * Manager-authorized cancellation. The window is checked before the PIN (no point asking for
   * it) and again when the command is written. `skipLocalWindowCheck` is not part of the screen
   * API: tests use it to see the service refuse a late cancellation.
   */
  async cancelReceipt(receiptId: string, input: CancelInput, options: { skipLocalWindowCheck?: boolean } = {}): Promise<ReceiptView> {
    await this.syncServiceClock();
    await cancelReceipt(this.store, this.clock, receiptId, input, { serviceOffsetMs: this.serviceOffsetMs, ...options });
    this.worker.wake();
    this.emitReceipt(receiptId);
    return this.waitForReceipt(receiptId, (v) => v.state !== 'cancelling', this.settleWaitMs);
  }

  // -------------------------------------------------------------------------------------------
  // Correction and void of a rejected receipt: remedies.ts

  async correctAndResubmit(receiptId: string, correction: CorrectionInput, auth: ReasonedAuthorization): Promise<ReceiptView> {
    await correctAndResubmit(this.remediesCtx, receiptId, correction, auth);
    this.worker.wake();
    this.emitReceipt(receiptId);
    return this.getReceipt(receiptId);
  }

  async voidReceipt(receiptId: string, input: VoidInput): Promise<ReceiptView> {
    await requestVoid(this.remediesCtx, receiptId, input);
    this.worker.wake();
    this.emitReceipt(receiptId);
    return this.waitForReceipt(receiptId, (v) => v.state !== 'voiding', this.settleWaitMs);
  }

  private get remediesCtx(): RemediesContext {
    return { store: this.store, clock: this.clock, sales: this.ctx };
  }

  // -------------------------------------------------------------------------------------------
  // Printing from the screen: reprint.ts

  async reprint(receiptId: string, auth: ReasonedAuthorization): Promise<ReprintResult> {
    return this.printed(await reprintReceipt(this.reprintCtx, receiptId, auth));
  }

  async printReceipt(receiptId: string): Promise<ReprintResult> {
    return this.printed(await printMissingCopies(this.reprintCtx, receiptId));
  }

  private get reprintCtx(): ReprintContext {
    return { store: this.store, clock: this.clock, printer: this.printer, documents: this.documents };
  }

  private printed({ receipt, escpos }: Printed): ReprintResult {
    return { receipt: this.view(receipt), escposBase64: Buffer.from(escpos).toString('base64') };
  }

  // -------------------------------------------------------------------------------------------
  // Managers, audit, queue

  async createManager(input: { name: string; pin: string }): Promise<ManagerView> {
    return createManager(this.store, this.clock, input);
  }

  async listManagers(): Promise<ManagerView[]> {
    return listManagers(this.store);
  }

  auditLog(receiptId?: string): AuditRow[] {
    return this.store.managers.auditLog(receiptId);
  }

  private queueStatusNow(): QueueStatus {
    const w = this.worker.state;
    const stats = this.store.outbox.outboxStats();
    const now = this.clock();
    const oldest = stats.oldestCreatedAt === null ? null : Date.parse(stats.oldestCreatedAt);
    return {
      online: w.online,
      lastContactAt: w.lastContactAt === null ? null : iso(w.lastContactAt),
      lastError: w.lastError,
      pending: stats.live,
      oldestPendingAt: stats.oldestCreatedAt,
      oldestPendingAgeSeconds: oldest === null ? null : Math.max(0, Math.floor((now - oldest) / 1000)),
      needsAttention: this.store.receipts.countReceiptsIn(NEEDS_OPERATOR),
      contingency: this.contingencyStatusNow(),
      alerts: [this.serviceClock.alert(), this.worker.machineFault, this.backupProblem, this.paidLateAlert()].filter((a): a is string => a !== null),
      serviceNotices: w.notices,
    };
  }

  /** PIX received that no sale took: the manager finishes the sale or refunds them. */
  private paidLateAlert(): string | null {
    const n = this.pixStore.paidLateCount();
    if (n === 0) return null;
    return `${n === 1 ? '1 cobrança PIX paga' : `${n} cobranças PIX pagas`} sem venda: o gerente conclui a venda ou devolve (F10 › PIX pagos sem venda)`;
  }

  async queueStatus(): Promise<QueueStatus> {
    return this.queueStatusNow();
  }

  // -------------------------------------------------------------------------------------------
  // Printer and preview

  async receiptPreview(receiptId: string): Promise<ReceiptPreview> {
    return this.documents.preview(this.receiptRow(receiptId), this.printer);
  }

  async printerStatus(): Promise<PrinterStatusView> {
    return this.printer.status();
  }

  async recentPrints(limit = 20): Promise<PrintedJob[]> {
    return this.printer.recent(limit);
  }

  // -------------------------------------------------------------------------------------------
  // Settings, certificate, catalog import (manager-authorized)

  async getSettings(): Promise<TerminalSettings> {
    return this.settings.view();
  }

  /**
   * Validated whole before the PIN is checked; a change of what the service knows of this
   * checkout (its series above all) is claimed there before anything is saved
   * (series-registry.ts); applied live (service, token, pin, series, printer).
   */
  async updateSettings(patch: SettingsPatch, auth: ManagerAuthorization): Promise<TerminalSettings> {
    const prepared = this.settings.prepare(patch);
    const manager = await authorizeManager(this.store, this.clock, auth, 'configuracoes');
    if (prepared.touchesSeries) await this.seriesRegistry.claimBeforeSaving(prepared.after);
    return this.applySettings(prepared, actorOfManager(manager), null);
  }

  /**
   * Not part of the screen API: settings the local process that runs the terminal owns (the
   * service URL `npm start` just bound, the CLI's explicit flags), applied without a PIN and
   * audited as the system with `reason`.
   */
  configure(patch: SettingsPatch, reason: string): TerminalSettings {
    return this.applySettings(this.settings.prepare(patch), SYSTEM_ACTOR, reason);
  }

  private applySettings(prepared: ReturnType<Settings['prepare']>, actor: Actor, reason: string | null): TerminalSettings {
    const { change } = this.store.transaction(() => {
      const done = prepared.commit();
      audit(this.store, this.clock, { actor, action: 'configuracoes_alteradas', reason, details: done.audit });
      return done;
    });
    if (change.serviceUrl !== undefined || change.token !== undefined || change.serviceFingerprint !== undefined) {
      this.client.reconfigure({ baseUrl: change.serviceUrl, token: change.token, fingerprint256: change.serviceFingerprint });
      this.worker.serviceChanged();
    }
    if (change.series !== undefined) {
      this.store.series.ensureSeries(change.series);
      this.ctx.serie = change.series;
    }
    if (change.printer !== undefined) this.printer.reconfigure(change.printer);
    // What the service knows of this checkout follows the settings (claimed already when a
    // manager changed them; the system's own changes are claimed now, in the background).
    if (prepared.touchesSeries && this.worker.isRunning) this.seriesRegistry.start();
    this.startWorkerIfConfigured();
    return this.settings.view();
  }

  async importCertificate(input: ManagerAuthorization & { pfxBase64: string; password: string }): Promise<CertificateView> {
    const candidate = this.settings.checkCertificate(input?.pfxBase64, input?.password);
    const manager = await authorizeManager(this.store, this.clock, input, 'certificado');
    return this.store.transaction(() => {
      const view = this.settings.storeCertificate(candidate);
      audit(this.store, this.clock, { actor: actorOfManager(manager), action: 'certificado_importado', details: view });
      return view;
    });
  }

  async importCatalogCsv(csv: string, auth: ManagerAuthorization): Promise<CatalogImportReport> {
    return importCatalogCsv(this.store, this.clock, csv, auth);
  }

  async ibptStatus(): Promise<IbptStatusView> {
    return ibptStatus(this.ibpt, this.ctx.uf?.(), this.clock);
  }

  async importIbptTable(input: IbptImportInput): Promise<IbptStatusView> {
    return importIbpt({ store: this.store, ibpt: this.ibpt, clock: this.clock, uf: this.ctx.uf?.() }, input);
  }

  // -------------------------------------------------------------------------------------------
  // Cash sessions (cash-session.ts)

  private get cashCtx(): cash.CashContext {
    return { store: this.store, clock: this.clock, pinAboveCents: () => this.settings.cash.pinAboveCents };
  }

  private reportCompany(): ReportCompany | undefined {
    const company = this.settings.company();
    return company ? { name: company.xFant ?? company.xNome, cnpj: company.cnpj } : undefined;
  }

  private cashView(row: Parameters<typeof cash.cashSessionView>[1]): CashSessionView {
    return cash.cashSessionView(this.store, row, this.settings.cash.pinAboveCents, this.reportCompany());
  }

  private get closingCtx(): ClosingReportContext {
    return { store: this.store, clock: this.clock, printer: this.printer, dataDir: this.dataDir, company: () => this.reportCompany() };
  }

  async cashSession(): Promise<CashSessionView | null> {
    const open = this.store.cash.openCashSession();
    return open ? this.cashView(open) : null;
  }

  async openCashSession(input: OpenCashInput): Promise<CashSessionView> {
    return this.cashView(cash.openCashSession(this.cashCtx, input));
  }

  async addCashMovement(input: CashMovementInput): Promise<CashSessionView> {
    return this.cashView(await cash.addCashMovement(this.cashCtx, input));
  }

  /** Closed and on disk before the report is printed; a printer failure is shown, not thrown. */
  async closeCashSession(input: CloseCashInput): Promise<CashSessionView> {
    const closed = cash.closeCashSession(this.cashCtx, input);
    await Promise.all([printClosingReport(this.closingCtx, closed.id), saveClosingPdf(this.closingCtx, closed.id)]);
    return this.cashView(cashSessionRow(this.store, closed.id));
  }

  async recentCashSessions(limit = 10): Promise<CashSessionView[]> {
    const n = Number.isInteger(limit) ? Math.max(1, Math.min(100, limit)) : 10;
    return this.store.cash.recentCashSessions(n).map((r) => this.cashView(r));
  }

  async printCashReport(sessionId: string): Promise<CashSessionView> {
    const row = cashSessionRow(this.store, sessionId);
    if (!row.closed_at) throw new TerminalError('estado_invalido', 'Este caixa ainda está aberto: o relatório sai no fechamento');
    await printClosingReport(this.closingCtx, row.id);
    const after = cashSessionRow(this.store, row.id);
    if (after.report_print_error) throw new TerminalError('impressora', after.report_print_error);
    return this.cashView(after);
  }

  async cashReportPdf(sessionId: string): Promise<CashReportPdf> {
    return closingReportPdf(this.closingCtx, sessionId);
  }

  // -------------------------------------------------------------------------------------------
  // Reports and the accountant's export (reports.ts)

  async salesReport(input: ManagerAuthorization & ReportPeriod): Promise<SalesReport> {
    reportPeriod(input);
    await authorizeManager(this.store, this.clock, input, 'relatorio');
    return salesReport(this.store, this.documents, this.clock, input);
  }

  async salesReportCsv(input: ManagerAuthorization & ReportPeriod): Promise<ReportCsv> {
    return salesReportCsv(await this.salesReport(input));
  }

  /** Where exportDocuments saves its files (the browser-mode host serves them from here). */
  get exportsDir(): string {
    return join(this.dataDir, EXPORTS_DIR);
  }

  /** The accountant's ZIP of the period, saved in exportsDir (accountant-export.ts). */
  async exportDocuments(input: DocumentExportInput): Promise<DocumentExport> {
    return exportDocuments(
      { store: this.store, clock: this.clock, client: this.client, exportsDir: this.exportsDir, cnpj: () => this.settings.company()?.cnpj },
      input,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Offline contingency (contingency/contingency.ts)

  private contingencyStatusNow(): ContingencyStatus {
    return this.contingency.status();
  }

  async contingencyStatus(): Promise<ContingencyStatus> {
    return this.contingencyStatusNow();
  }

  async enterContingency(input: ManagerAuthorization & { justification: string }): Promise<ContingencyStatus> {
    return this.contingency.enter(input);
  }

  async leaveContingency(auth: ManagerAuthorization): Promise<ContingencyStatus> {
    return this.contingency.leave(auth);
  }

  async resumeContingencyTask(taskId: string, auth: ManagerAuthorization): Promise<ContingencyStatus> {
    return this.contingency.resumeTask(taskId, auth);
  }

  // -------------------------------------------------------------------------------------------
  // Returns (NF-e de devolução): returns.ts

  /** Manager-authorized; resolves once the service's verdict is known, or as it is after settleWaitMs. */
  async returnReceipt(receiptId: string, input: ReturnInput): Promise<ReturnView> {
    const id = await requestReturn({ store: this.store, clock: this.clock }, receiptId, input);
    this.worker.wake();
    this.emitReturn(id);
    return this.waitForReturn(id, (v) => v.state !== 'pending' && v.state !== 'processing', this.settleWaitMs);
  }

  async listReturns(receiptId?: string): Promise<ReturnView[]> {
    return this.store.returns.list(receiptId).map((r) => returnView(this.store, r));
  }

  /** Resolves with the return once `done(view)` holds, or as it is after `timeoutMs` (settle-wait.ts). */
  waitForReturn(returnId: string, done: (r: ReturnView) => boolean, timeoutMs: number): Promise<ReturnView> {
    return settle({
      read: () => {
        const row = this.store.returns.returnRow(returnId);
        if (!row) throw new TerminalError('nao_encontrado', 'Devolução não encontrada');
        return returnView(this.store, row);
      },
      done,
      timeoutMs,
      clock: this.clock,
      onNews: (news) => this.subscribe((e) => e.type === 'return' && e.devolucao.id === returnId && news()),
      stopped: () => this.closed,
    });
  }
}

/**
 * Holds the data folder (one terminal per folder: base/node/folder-lock.ts; a second one is
 * refused naming the first), opens (creating or migrating) its database and starts its worker.
 */
export async function createTerminal(options: TerminalOptions): Promise<Terminal> {
  mkdirSync(options.dataDir, { recursive: true });
  const lock = lockFolder(options.dataDir);
  let store: PosStore | undefined;
  try {
    store = PosStore.open(options.dataDir);
    return new Terminal(store, options, lock);
  } catch (err) {
    store?.close();
    lock.release();
    throw err;
  }
}
