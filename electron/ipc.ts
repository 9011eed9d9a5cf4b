// The dispatch both carriers share: Electron IPC (electron/main.ts) and the browser-mode host
// (electron/host/server.ts). One place decides which calls reach the core and how an outcome
// becomes a BridgeResult, so the two carriers cannot drift apart. Plain Node: tested without
// Electron.

import { BRIDGE_ARITY, isBridgeMethod, type BridgeResult } from './api/bridge-protocol.ts';
import type { TerminalApi, TerminalErrorData } from './api/terminal-api.ts';
import { TerminalError } from './core/errors.ts';
import { systemFault } from '../base/node/system-faults.ts';

/**
 * The envelope plus the HTTP status the host answers with (IPC uses only `body`). A TerminalError
 * is an answer the screen shows (422); anything else is our fault (500) and its details stay in
 * the log, never in the envelope. A fault of the machine (full disk, read-only or forbidden
 * folder, failing disk: base/node/system-faults.ts) is still a 500, but the screen gets the
 * sentence that says what to do (`falha_sistema`) instead of "Erro interno do terminal".
 */
export type Dispatched = { status: 200 | 400 | 404 | 422 | 500; body: BridgeResult };

export const INTERNAL_ERROR: TerminalErrorData = Object.freeze({ code: 'erro_servico', message: 'Erro interno do terminal' });

const refused = (status: 400 | 404, error: TerminalErrorData): Dispatched => ({ status, body: { error } });

export type DispatchOptions = {
  /** Told about every error that is not a TerminalError (with its stack), for the log. */
  onInternalError?: (err: unknown, method: string) => void;
  /** The terminal's data folder, named in the words of a fault of the machine. */
  dataDir?: string;
};

/** Calls `terminal[method](...args)` if `method` is on the allow-list, and wraps the outcome. */
export async function dispatch(terminal: TerminalApi, method: unknown, args: unknown, options: DispatchOptions = {}): Promise<Dispatched> {
  // The allow-list is checked on the name itself, so neither `subscribe` nor anything inherited
  // (constructor, __proto__, close, the core's admin methods) can be reached from a screen.
  if (typeof method !== 'string' || !isBridgeMethod(method)) {
    return refused(404, { code: 'nao_encontrado', message: `Operação desconhecida: ${String(method).slice(0, 60)}` });
  }
  if (!Array.isArray(args) || args.length > BRIDGE_ARITY[method]) {
    return refused(400, {
      code: 'estado_invalido',
      message: `Argumentos da chamada inválidos: ${method} aceita uma lista de até ${BRIDGE_ARITY[method]}`,
      field: 'args',
    });
  }
  try {
    const fn = terminal[method] as (...a: unknown[]) => Promise<unknown>;
    const result = await fn.apply(terminal, args);
    // `undefined` does not survive JSON: the envelope always carries a value.
    return { status: 200, body: { result: result === undefined ? null : result } };
  } catch (err) {
    if (err instanceof TerminalError) return { status: 422, body: { error: err.toJSON() } };
    options.onInternalError?.(err, method);
    const fault = systemFault(err, { path: options.dataDir });
    if (fault) return { status: 500, body: { error: { code: 'falha_sistema', message: fault.message } } };
    return { status: 500, body: { error: { ...INTERNAL_ERROR } } };
  }
}
