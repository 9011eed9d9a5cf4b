// What a carrier does for the screen: one call by method name answering the bridge envelope,
// and a stream of events. Two implementations: Electron IPC (window.balcao) and the browser-mode
// host over HTTP and WebSocket (electron/api/bridge-protocol.ts fixes both).

import type { BridgeMethod, BridgeResult } from '../../electron/api/bridge-protocol.ts';
import type { TerminalEvent } from '../../electron/api/terminal-api.ts';

/** Whether the screen currently hears the terminal's events (the page is "connected"). */
export type LinkState = 'connecting' | 'up' | 'down';

/** Where an export ended up: the path the manager chose (desktop), the browser's download, or nothing (cancelled). */
export type SavedExport = { saved: string | null } | { error: string };

export type Carrier = {
  call(method: BridgeMethod, args: unknown[]): Promise<BridgeResult>;
  onEvent(listener: (event: TerminalEvent) => void): () => void;
  onLink(listener: (state: LinkState) => void): () => void;
  /** Hands an export the terminal made (DocumentExport.fileName) to the manager: a save dialog (desktop) or a download (browser). */
  saveExport(fileName: string): Promise<SavedExport>;
};
