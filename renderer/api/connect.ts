// connectTerminal(): the TerminalApi the screen talks to, whichever carrier brings it. Every
// method of the bridge allow-list becomes a call that resolves with the result or throws a
// TerminalFailure carrying the core's code, field and remedy.

import { BRIDGE_METHODS, type BridgeMethod } from '../../electron/api/bridge-protocol.ts';
import type { TerminalApi } from '../../electron/api/terminal-api.ts';
import type { Carrier, LinkState } from './carrier.ts';
import { electronBridge, electronCarrier } from './electron-carrier.ts';
import { httpCarrier, takeSecret } from './http-carrier.ts';
import { TerminalFailure } from './terminal-failure.ts';

/** The screen API plus the state of the link that carries its events, and where exports are saved. */
export type ScreenTerminal = TerminalApi & { onLink(listener: (state: LinkState) => void): () => void; saveExport: Carrier['saveExport'] };

export class NoTerminalError extends Error {}

// JSON turns a trailing `undefined` into `null`, which the core would read as a value (a limit of
// null is not "the default"): optional arguments left out are dropped instead.
function trimTrailingUndefined(args: unknown[]): unknown[] {
  let end = args.length;
  while (end > 0 && args[end - 1] === undefined) end--;
  return args.slice(0, end);
}

export function terminalOver(carrier: Carrier): ScreenTerminal {
  const methods = {} as Record<BridgeMethod, (...args: unknown[]) => Promise<unknown>>;
  for (const method of BRIDGE_METHODS) {
    methods[method] = async (...args: unknown[]) => {
      const envelope = await carrier.call(method, trimTrailingUndefined(args));
      if ('error' in envelope) throw new TerminalFailure(envelope.error);
      return envelope.result;
    };
  }
  return {
    ...(methods as unknown as Omit<TerminalApi, 'subscribe'>),
    subscribe: (listener) => carrier.onEvent(listener),
    onLink: (listener) => carrier.onLink(listener),
    saveExport: (fileName) => carrier.saveExport(fileName),
  };
}

/** Electron's bridge when present, else the browser-mode host named by the page's address. */
export function connectTerminal(): ScreenTerminal {
  const bridge = electronBridge();
  if (bridge) return terminalOver(electronCarrier(bridge));
  const secret = takeSecret();
  if (!secret) {
    throw new NoTerminalError('Esta página precisa da chave do terminal. Abra o endereço completo que o Balcão mostrou ao iniciar (termina com #chave=…).');
  }
  return terminalOver(httpCarrier(secret));
}
