// How the screen reaches the terminal core when they are not in one process. Two carriers, one
// shape: Electron IPC (electron/main.ts + preload.ts) and the browser-mode host over HTTP and
// WebSocket (electron/host/). Both carry `TerminalApi` calls by method name and answer with an
// envelope, because a thrown error loses its `code` and `field` when it crosses either carrier.

import type { TerminalApi, TerminalErrorData, TerminalEvent } from './terminal-api.ts';

/** Every TerminalApi method the screen may call remotely (`subscribe` travels as events). */
export type BridgeMethod = Exclude<keyof TerminalApi, 'subscribe'>;

/** How many arguments a TerminalApi method declares, its optional ones included. */
type Arity<M extends BridgeMethod> = Required<Parameters<TerminalApi[M]>>['length'];

/**
 * The allow-list both carriers check before calling the core, with the number of arguments each
 * method takes: a name not listed here is refused, whatever the sender, and so is a call with
 * more arguments than the screen API declares (the core's own methods may take more, e.g. a
 * test-only option, and a page must never reach those). The `satisfies` keeps both honest: a
 * method added to TerminalApi and not listed here, or listed with another count, fails the
 * typecheck.
 */
export const BRIDGE_ARITY = {
  findProducts: 2,
  openSale: 0,
  getSale: 1,
  openSales: 0,
  addItem: 2,
  removeItem: 2,
  changeItemQuantity: 3,
  setConsumer: 2,
  addPayment: 2,
  staticPix: 2,
  createPixCharge: 2,
  pixCharge: 1,
  cancelPixCharge: 1,
  simulatePixPayment: 1,
  paidPixWithoutSale: 0,
  finishSaleWithPix: 2,
  refundPix: 2,
  pspSettings: 0,
  savePspSettings: 2,
  testPspConnection: 2,
  removePayment: 2,
  discardSale: 1,
  finishSale: 1,
  recentReceipts: 1,
  getReceipt: 1,
  cancelReceipt: 2,
  correctAndResubmit: 3,
  voidReceipt: 2,
  reprint: 2,
  printReceipt: 1,
  returnReceipt: 2,
  listReturns: 1,
  receiptPreview: 1,
  printerStatus: 0,
  recentPrints: 1,
  getSettings: 0,
  updateSettings: 2,
  importCertificate: 1,
  importCatalogCsv: 2,
  ibptStatus: 0,
  importIbptTable: 1,
  contingencyStatus: 0,
  enterContingency: 1,
  leaveContingency: 1,
  resumeContingencyTask: 2,
  cashSession: 0,
  openCashSession: 1,
  addCashMovement: 1,
  closeCashSession: 1,
  recentCashSessions: 1,
  printCashReport: 1,
  cashReportPdf: 1,
  salesReport: 1,
  salesReportCsv: 1,
  exportDocuments: 1,
  listManagers: 0,
  queueStatus: 0,
} as const satisfies { [M in BridgeMethod]: Arity<M> };

export const BRIDGE_METHODS = Object.keys(BRIDGE_ARITY) as BridgeMethod[];

export const isBridgeMethod = (name: string): name is BridgeMethod => Object.hasOwn(BRIDGE_ARITY, name);

/** What a remote call answers: the method's result, or the terminal's error as data. */
export type BridgeResult = { result: unknown } | { error: TerminalErrorData };

/**
 * Exposed by electron/preload.ts as `window.balcao` (contextBridge). `call` never rejects for a
 * terminal error: it resolves to the envelope, and the renderer turns `error` back into a throw.
 */
export type ElectronBridge = {
  call(method: BridgeMethod, args: unknown[]): Promise<BridgeResult>;
  onEvent(listener: (event: TerminalEvent) => void): () => void;
  /**
   * Asks where to save an export the terminal made (a native save dialog, a USB stick included)
   * and copies it there. Resolves with the path, or null when the manager cancelled.
   */
  saveExport(fileName: string): Promise<{ saved: string | null } | { error: string }>;
};

// ---- Browser mode (electron/host/) ---------------------------------------------------------------
// The host listens on 127.0.0.1 only and prints `http://127.0.0.1:<port>/#chave=<secret>`. The
// secret is random per start; the page keeps it in sessionStorage and drops it from the address.
// Other local pages cannot drive the terminal: they never learn the secret (the fragment is not
// sent anywhere), a cross-origin page cannot send the Authorization header without a CORS
// preflight the host never grants, and the WebSocket checks both the secret and the Origin.

/** The fragment parameter carrying the per-start secret. */
export const SECRET_PARAM = 'chave';

/** `POST {RPC_PATH}/<method>` with `Authorization: Bearer <secret>` and body `{ "args": [...] }` → BridgeResult (200, or 4xx with `error`). */
export const RPC_PATH = '/api/rpc';

/** WebSocket `{EVENTS_PATH}?chave=<secret>`; each message is one JSON TerminalEvent. */
export const EVENTS_PATH = '/api/events';

/**
 * `GET {DOWNLOADS_PATH}/<fileName>` with `Authorization: Bearer <secret>`: a file the terminal
 * made for the manager (DocumentExport.fileName), as a download. Browser mode only; the desktop
 * app saves it where the manager picks (ElectronBridge.saveExport).
 */
export const DOWNLOADS_PATH = '/api/downloads';

/** The names the terminal gives its exports (`nfce-11222333000181-2026-11-01-a-2026-11-30.zip`). */
export const isDownloadName = (name: string): boolean => /^(nfce|mdfe)-[0-9A-Za-z-]{10,80}\.zip$/.test(name);
