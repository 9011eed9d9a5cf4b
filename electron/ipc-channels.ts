// The IPC channel names shared by electron/main.ts and electron/preload.ts. Kept in a module of
// its own, with no imports, because the sandboxed preload is bundled alone and must stay tiny.

/** `ipcRenderer.invoke(IPC_CALL, method, args)` → BridgeResult. */
export const IPC_CALL = 'balcao:call';

/** `webContents.send(IPC_EVENT, event)`: one TerminalEvent. */
export const IPC_EVENT = 'balcao:event';

/** `ipcRenderer.invoke(IPC_SAVE_EXPORT, fileName)` → { saved: path | null } | { error }: the native save dialog. */
export const IPC_SAVE_EXPORT = 'balcao:save-export';
