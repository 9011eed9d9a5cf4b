// The screen's only door to the terminal: `window.balcao` (ElectronBridge), exposed through the
// context bridge. Sandboxed preloads may require nothing but 'electron', so this file imports
// only types and the channel names (inlined by the bundler; see bin/build.ts).

import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { BridgeMethod, BridgeResult, ElectronBridge } from './api/bridge-protocol.ts';
import type { TerminalEvent } from './api/terminal-api.ts';
import { IPC_CALL, IPC_EVENT, IPC_SAVE_EXPORT } from './ipc-channels.ts';

const bridge: ElectronBridge = {
  call: (method: BridgeMethod, args: unknown[]) => ipcRenderer.invoke(IPC_CALL, method, args) as Promise<BridgeResult>,
  onEvent(listener: (event: TerminalEvent) => void) {
    // The IPC event object (with its sender) never reaches the page: only the payload.
    const relay = (_e: IpcRendererEvent, event: TerminalEvent) => listener(event);
    ipcRenderer.on(IPC_EVENT, relay);
    return () => {
      ipcRenderer.removeListener(IPC_EVENT, relay);
    };
  },
  saveExport: (fileName: string) => ipcRenderer.invoke(IPC_SAVE_EXPORT, fileName) as Promise<{ saved: string | null } | { error: string }>,
};

contextBridge.exposeInMainWorld('balcao', bridge);
