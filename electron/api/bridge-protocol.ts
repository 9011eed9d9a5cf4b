// How the screen reaches the terminal core when they are not in one process. Two carriers, one
// shape: Electron IPC (electron/main.ts + preload.ts) and the browser-mode host over HTTP and
// WebSocket (electron/host/). Both carry `TerminalApi` calls by method name and answer with an
// envelope, because a thrown error loses its `code` and `field` when it crosses either carrier.

import type { TerminalApi, TerminalErrorData, TerminalEvent } from './terminal-api.ts';

/** Every TerminalApi method the screen may call remotely (`subscribe` travels as events). */
export type BridgeMethod = Exclude<keyof TerminalApi, 'subscribe'>;

/**
 * The allow-list both carriers check before calling the core: a name not listed here is refused,
 * whatever the sender. `satisfies` keeps it complete — a method added to TerminalApi and not
 * listed here fails the typecheck below.
 */
export const BRIDGE_METHODS = [
  'findProducts',
  'openSale',
  'getSale',
  'openSales',
  'addItem',
  'removeItem',
  'setConsumer',
  'addPayment',
  'removePayment',
  'discardSale',
  'finishSale',
  'recentReceipts',
  'getReceipt',
  'cancelReceipt',
  'correctAndResubmit',
  'voidReceipt',
  'reprint',
  'returnReceipt',
  'listReturns',
  'receiptPreview',
  'printerStatus',
  'recentPrints',
  'getSettings',
  'updateSettings',
  'importCertificate',
  'importCatalogCsv',
  'contingencyStatus',
  'enterContingency',
  'leaveContingency',
  'resumeContingencyTask',
  'listManagers',
  'queueStatus',
] as const satisfies readonly BridgeMethod[];

type Missing = Exclude<BridgeMethod, (typeof BRIDGE_METHODS)[number]>;
const complete: [Missing] extends [never] ? true : Missing = true;
void complete;

export const isBridgeMethod = (name: string): name is BridgeMethod => (BRIDGE_METHODS as readonly string[]).includes(name);

/** What a remote call answers: the method's result, or the terminal's error as data. */
export type BridgeResult = { result: unknown } | { error: TerminalErrorData };

/**
 * Exposed by electron/preload.ts as `window.balcao` (contextBridge). `call` never rejects for a
 * terminal error: it resolves to the envelope, and the renderer turns `error` back into a throw.
 */
export type ElectronBridge = {
  call(method: BridgeMethod, args: unknown[]): Promise<BridgeResult>;
  onEvent(listener: (event: TerminalEvent) => void): () => void;
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
