// Electron's main process: one window showing the checkout screen (renderer/dist) and the
// terminal core behind it. Deliberately thin: the decisions live in shell-policy.ts and the
// dispatch in ipc.ts (both tested in Node); this file wires them to Electron.
//
// Hardening (Electron security checklist): context isolation, sandbox, no Node in the renderer;
// the screen comes from our own balcao:// scheme with a CSP on every response; navigation, new
// windows, webviews and permission requests are refused; IPC answers one channel, only for
// allow-listed methods, only to our own top frame.

import { app, BrowserWindow, dialog, ipcMain, net, protocol, safeStorage, session, type IpcMainInvokeEvent } from 'electron';
import { copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TerminalEvent } from './api/terminal-api.ts';
import { keychainSecretBox, type SecretSealer } from '../base/node/secret-box.ts';
import { faultWords } from '../base/node/system-faults.ts';
import { createTerminal, type Terminal } from './core/terminal.ts';
import { isDownloadName } from './api/bridge-protocol.ts';
import { IPC_CALL, IPC_EVENT, IPC_SAVE_EXPORT } from './ipc-channels.ts';
import { dispatch } from './ipc.ts';
import {
  APP_INDEX_URL,
  APP_SCHEME,
  ELECTRON_RESPONSE_HEADERS,
  isAppUrl,
  resolveAppFile,
  secureWebPreferences,
  shellOptions,
  useKeychain,
} from './shell-policy.ts';

protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

let terminal: Terminal | undefined;
let window: BrowserWindow | undefined;

if (!app.requestSingleInstanceLock()) {
  // Two terminals on one database would race for the same numbers: the second one just leaves.
  app.quit();
} else {
  app.on('second-instance', () => {
    if (window?.isMinimized()) window.restore();
    window?.focus();
  });
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (e) => e.preventDefault());
    contents.on('will-redirect', (e) => e.preventDefault());
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', (e) => {
    if (!terminal) return;
    // Let the outbox worker finish its calls in flight and close the database, then quit.
    e.preventDefault();
    const closing = terminal;
    terminal = undefined;
    void closing.close().finally(() => app.quit());
  });
  app.whenReady().then(start).catch(fail);
}

async function start(): Promise<void> {
  const options = shellOptions(process.argv, process.env, app.getPath('userData'));
  // The folder (or asar) holding package.json: dist-electron/ and renderer/dist/ sit in it.
  const appRoot = app.getAppPath();
  const screenDir = join(appRoot, 'renderer', 'dist');

  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(screenDir, request.url);
    if (!file || !existsSync(file)) return new Response('Não encontrado', { status: 404, headers: ELECTRON_RESPONSE_HEADERS });
    const res = await net.fetch(pathToFileURL(file).href);
    const headers = new Headers(res.headers);
    for (const [name, value] of Object.entries(ELECTRON_RESPONSE_HEADERS)) headers.set(name, value);
    return new Response(res.body, { status: res.status, headers });
  });

  terminal = await createTerminal({ dataDir: options.dataDir, ...options.seed, ...keychainBox() });
  const core = terminal;

  ipcMain.handle(IPC_CALL, (event: IpcMainInvokeEvent, method: unknown, args: unknown) => {
    // Only our own screen, in the window's top frame, may call the core.
    const frame = event.senderFrame;
    if (!frame || frame.parent !== null || !isAppUrl(frame.url)) {
      return { error: { code: 'estado_invalido', message: 'Origem não autorizada' } };
    }
    return dispatch(core, method, args, { onInternalError: (err, name) => console.error(`erro interno em ${name}:`, err), dataDir: core.dataDir }).then(
      (out) => out.body,
    );
  });

  // The accountant's export, saved where the manager picks (a folder, a USB stick): only a file
  // the terminal made, named as it names them, and only for our own screen.
  ipcMain.handle(IPC_SAVE_EXPORT, async (event: IpcMainInvokeEvent, fileName: unknown) => {
    const frame = event.senderFrame;
    if (!frame || frame.parent !== null || !isAppUrl(frame.url)) return { error: 'Origem não autorizada' };
    if (typeof fileName !== 'string' || !isDownloadName(fileName)) return { error: 'Arquivo desconhecido' };
    const source = join(core.exportsDir, fileName);
    if (!existsSync(source)) return { error: 'Arquivo não encontrado' };
    const options = {
      title: 'Salvar exportação para o contador',
      defaultPath: join(app.getPath('documents'), fileName),
      filters: [{ name: 'ZIP', extensions: ['zip'] }],
    };
    const chosen = window ? await dialog.showSaveDialog(window, options) : await dialog.showSaveDialog(options);
    if (chosen.canceled || !chosen.filePath) return { saved: null };
    try {
      await copyFile(source, chosen.filePath);
      return { saved: chosen.filePath };
    } catch (err) {
      return { error: `Não foi possível gravar em ${chosen.filePath}: ${(err as Error).message}` };
    }
  });

  window = new BrowserWindow({
    width: 1280,
    height: 800,
    kiosk: options.kiosk,
    autoHideMenuBar: true,
    title: 'Balcão',
    show: false,
    webPreferences: secureWebPreferences(join(appRoot, 'dist-electron', 'preload.cjs')),
  });
  window.once('ready-to-show', () => window?.show());
  const unsubscribe = core.subscribe((event: TerminalEvent) => {
    if (window && !window.isDestroyed()) window.webContents.send(IPC_EVENT, event);
  });
  window.on('closed', () => {
    unsubscribe();
    window = undefined;
  });
  await window.loadURL(APP_INDEX_URL);
}

/**
 * Secrets at rest (token, CSC, certificate and its password) sealed by the OS keychain where
 * Electron offers a real one (shell-policy.ts useKeychain); otherwise the core's default, a 0600
 * key file in the data directory.
 */
function keychainBox(): { secretBox?: SecretSealer } {
  const available = safeStorage.isEncryptionAvailable();
  const linuxBackend = process.platform === 'linux' && available ? safeStorage.getSelectedStorageBackend() : undefined;
  if (!useKeychain({ platform: process.platform, available, linuxBackend })) return {};
  return { secretBox: keychainSecretBox(safeStorage) };
}

function fail(err: unknown): void {
  dialog.showErrorBox('Balcão', `O terminal não pôde iniciar: ${faultWords(err)}`);
  app.exit(1);
}
