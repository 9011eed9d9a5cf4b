// Browser mode: RPC over `POST /api/rpc/<method>` with the per-start secret as a bearer token,
// events over a WebSocket that reconnects by itself (the host restarts, the laptop sleeps).
// The secret arrives once in the address fragment (#chave=...); the page keeps it in
// sessionStorage and removes it from the address bar, so it is not bookmarked or shared.

import { DOWNLOADS_PATH, EVENTS_PATH, RPC_PATH, SECRET_PARAM, type BridgeResult } from '../../electron/api/bridge-protocol.ts';
import type { TerminalEvent } from '../../electron/api/terminal-api.ts';
import type { Carrier, LinkState, SavedExport } from './carrier.ts';
import { downloadBlob } from './download.ts';
import { isTerminalErrorData } from './terminal-failure.ts';

const STORAGE_KEY = 'balcao.chave';

/** The secret from the fragment (then dropped from the address) or from this tab's storage. */
export function takeSecret(): string | null {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const fromHash = params.get(SECRET_PARAM);
  if (fromHash) {
    window.sessionStorage.setItem(STORAGE_KEY, fromHash);
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    return fromHash;
  }
  return window.sessionStorage.getItem(STORAGE_KEY);
}

const unreachable = (detail: string): BridgeResult => ({
  error: { code: 'servico_indisponivel', message: `Sem comunicação com o terminal (${detail}). Verifique se o Balcão está em execução.` },
});

// Backoff between reconnection attempts: quick at first (a host restart takes a second), then
// capped so a long outage costs one attempt every few seconds.
const RECONNECT_MS = [250, 500, 1000, 2000, 4000];

/** `POST /api/rpc/<method>` → the bridge envelope; transport trouble becomes a terminal error. */
export function rpcCall(origin: string, secret: string): Carrier['call'] {
  return async (method, args) => {
    let response: Response;
    try {
      response = await fetch(new URL(`${RPC_PATH}/${method}`, origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ args }),
      });
    } catch (err) {
      return unreachable((err as Error).message);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      return unreachable(`resposta inválida, HTTP ${response.status}`);
    }
    if (typeof body === 'object' && body !== null) {
      if ('error' in body && isTerminalErrorData(body.error)) return { error: body.error };
      if (response.ok && 'result' in body) return { result: body.result };
    }
    return unreachable(`resposta inesperada, HTTP ${response.status}`);
  };
}

export function httpCarrier(secret: string, origin = window.location.origin): Carrier {
  const eventListeners = new Set<(event: TerminalEvent) => void>();
  const linkListeners = new Set<(state: LinkState) => void>();
  let link: LinkState = 'connecting';
  let attempt = 0;

  const setLink = (state: LinkState) => {
    if (state === link) return;
    link = state;
    for (const l of linkListeners) l(state);
  };

  const wsUrl = new URL(`${EVENTS_PATH}?${SECRET_PARAM}=${encodeURIComponent(secret)}`, origin);
  wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';

  const open = () => {
    const ws = new WebSocket(wsUrl);
    ws.onopen = () => {
      attempt = 0;
      setLink('up');
    };
    ws.onmessage = (message) => {
      let event: TerminalEvent;
      try {
        event = JSON.parse(String(message.data)) as TerminalEvent;
      } catch {
        return; // not ours to show; the next event or a re-fetch brings the truth
      }
      for (const l of eventListeners) l(event);
    };
    ws.onclose = () => {
      setLink('down');
      const delay = RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]!;
      setTimeout(open, delay);
    };
  };
  open();

  // A browser page cannot open a native folder dialog: the file comes as a download, which the
  // browser saves where it saves downloads (or asks, when set to ask: a USB stick included).
  const saveExport = async (fileName: string): Promise<SavedExport> => {
    let res: Response;
    try {
      res = await fetch(new URL(`${DOWNLOADS_PATH}/${encodeURIComponent(fileName)}`, origin), { headers: { authorization: `Bearer ${secret}` } });
    } catch (err) {
      return { error: `Sem comunicação com o terminal (${(err as Error).message})` };
    }
    if (!res.ok) return { error: `O terminal não entregou o arquivo (HTTP ${res.status})` };
    downloadBlob(fileName, await res.blob());
    return { saved: fileName };
  };

  return {
    call: rpcCall(origin, secret),
    saveExport,
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onLink(listener) {
      linkListeners.add(listener);
      listener(link);
      return () => linkListeners.delete(listener);
    },
  };
}
