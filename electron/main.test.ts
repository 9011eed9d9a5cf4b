// The Electron binary cannot be installed here, so the shell is checked the next best way: the
// real `build:electron` bundle (dist-electron/main.js as built) runs in plain Node against a
// stand-in for the 'electron' module that records what main.ts asks of Electron and plays the
// part of a renderer. What is real: the bundle and its import.meta.url fix-up (the terminal
// finds its migrations), the terminal core on a real SQLite file, the IPC handler's checks, the
// balcao:// file handler and its CSP, the window's preferences and the navigation guards.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildElectron, repoRoot } from '../bin/build.ts';
import { IPC_CALL } from './ipc-channels.ts';

// Exports what main.ts imports; once the window loads, drives it like a renderer and prints the
// outcome as one JSON line.
const STUB = `
import { readFileSync, existsSync } from 'node:fs';
const listeners = {}, ipc = {}, rec = { windows: [], sent: [], quit: 0, exit: null };
let protocolHandler, permissionRequest, permissionCheck;
export const app = {
  // STUB_LOCK=held: another Balcão already runs on this machine.
  requestSingleInstanceLock: () => process.env.STUB_LOCK !== 'held',
  on: (name, fn) => { (listeners[name] ??= []).push(fn); },
  whenReady: () => Promise.resolve(),
  getPath: (name) => { if (name !== 'userData') throw new Error(name); return process.env.STUB_USER_DATA; },
  getAppPath: () => process.env.STUB_APP_ROOT,
  quit: () => { rec.quit++; finish(); },
  exit: (code) => { rec.exit = code; finish(); },
};
export const protocol = {
  registerSchemesAsPrivileged: (schemes) => { rec.schemes = schemes; },
  handle: (scheme, fn) => { rec.scheme = scheme; protocolHandler = fn; },
};
export const session = { defaultSession: {
  setPermissionRequestHandler: (fn) => { permissionRequest = fn; },
  setPermissionCheckHandler: (fn) => { permissionCheck = fn; },
} };
export const ipcMain = { handle: (channel, fn) => { ipc[channel] = fn; } };
// A stand-in keychain: reversible, and counting what it seals.
export const safeStorage = {
  isEncryptionAvailable: () => true,
  getSelectedStorageBackend: () => 'gnome_libsecret',
  encryptString: (text) => { rec.keychainSealed = (rec.keychainSealed ?? 0) + 1; return Buffer.from('kc:' + text); },
  decryptString: (sealed) => { const t = sealed.toString(); if (!t.startsWith('kc:')) throw new Error('not ours'); return t.slice(3); },
};
export const net = { fetch: async (url) => new Response(readFileSync(new URL(url)), { status: 200, headers: { 'content-type': 'text/html' } }) };
export const dialog = { showErrorBox: (title, text) => { rec.errorBox = text; } };
export class BrowserWindow {
  constructor(options) {
    rec.windows.push(options);
    this.webContents = { send: (channel, payload) => rec.sent.push({ channel, payload }) };
  }
  once() {}
  on() {}
  isDestroyed() { return false; }
  isMinimized() { return false; }
  async loadURL(url) { rec.loaded = url; setTimeout(drive, 0); }
}
async function drive() {
  try {
    const contents = { handlers: {}, on(name, fn) { this.handlers[name] = fn; }, setWindowOpenHandler(fn) { this.open = fn; } };
    for (const fn of listeners['web-contents-created'] ?? []) fn({}, contents);
    let prevented = 0;
    contents.handlers['will-navigate']?.({ preventDefault: () => prevented++ }, 'https://evil.example/');
    rec.navigationPrevented = prevented;
    rec.windowOpen = contents.open?.({ url: 'https://evil.example/' });
    permissionRequest?.({}, 'media', (granted) => { rec.permissionGranted = granted; });
    rec.permissionCheck = permissionCheck?.({}, 'geolocation');

    const page = async (url) => { const r = await protocolHandler({ url }); return { status: r.status, csp: r.headers.get('content-security-policy'), body: await r.text() }; };
    rec.index = await page('balcao://app/index.html');
    rec.escape = await page('balcao://app/..%2f..%2f..%2fetc%2fpasswd');

    const call = ipc[${JSON.stringify(IPC_CALL)}];
    const ours = { senderFrame: { url: 'balcao://app/index.html', parent: null } };
    rec.status = await call(ours, 'queueStatus', []);
    rec.sale = await call(ours, 'openSale', []);
    rec.badDoc = await call(ours, 'setConsumer', [rec.sale.result?.id, '123']);
    rec.noProduct = await call(ours, 'addItem', [rec.sale.result?.id, { code: '1001' }]);
    rec.unknown = await call(ours, 'close', []);
    rec.foreign = await call({ senderFrame: { url: 'https://evil.example/', parent: null } }, 'openSale', []);
    rec.subframe = await call({ senderFrame: { url: 'balcao://app/index.html', parent: {} } }, 'openSale', []);
    rec.noFrame = await call({ senderFrame: null }, 'openSale', []);
    rec.openSales = (await call(ours, 'openSales', [])).result?.length;
  } catch (err) {
    rec.driveError = String(err && err.stack || err);
  }
  let quitPrevented = false;
  for (const fn of listeners['will-quit'] ?? []) fn({ preventDefault: () => { quitPrevented = true; } });
  rec.quitPrevented = quitPrevented;
}
function finish() {
  process.stdout.write('STUB_RESULT ' + JSON.stringify(rec) + '\\n');
  setTimeout(() => process.exit(0), 50);
}
`;

let dir: string;
let result: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let userData: string;
let main: string;
let appRoot: string;

/** Runs the bundled main.js against the stub; what it asked of Electron, as recorded. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function runBundle(env: Record<string, string>): Record<string, any> {
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, main], {
    cwd: dir,
    env: { ...process.env, STUB_APP_ROOT: appRoot, BALCAO_SERVICE_URL: 'http://127.0.0.1:9', BALCAO_TOKEN: 'blc_teste', BALCAO_DATA: '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const line = run.stdout.split('\n').find((l) => l.startsWith('STUB_RESULT '));
  if (!line) throw new Error(`o main.js empacotado não terminou como esperado (código ${run.status}):\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(line.slice('STUB_RESULT '.length));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-electron-'));
  ({ main } = await buildElectron(join(dir, 'app', 'dist-electron')));
  appRoot = join(dir, 'app');
  // As packaged: node_modules beside dist-electron/.
  symlinkSync(join(repoRoot, 'node_modules'), join(appRoot, 'node_modules'));
  mkdirSync(join(appRoot, 'renderer', 'dist'), { recursive: true });
  writeFileSync(join(appRoot, 'renderer', 'dist', 'index.html'), '<!doctype html><title>Caixa</title>');
  userData = join(dir, 'userData');
  writeFileSync(join(dir, 'electron-stub.mjs'), STUB);
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `export async function resolve(specifier, context, next) {
      return specifier === 'electron' ? { url: ${JSON.stringify(pathToFileURL(join(dir, 'electron-stub.mjs')).href)}, shortCircuit: true } : next(specifier, context);
    }`,
  );
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`);
  result = runBundle({ STUB_USER_DATA: userData });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('electron/main.ts, bundled', () => {
  it('starts the terminal core under userData and loads the screen from balcao://app', () => {
    expect(result.driveError).toBeUndefined();
    expect(result.errorBox).toBeUndefined();
    expect(result.loaded).toBe('balcao://app/index.html');
    expect(result.schemes).toEqual([{ scheme: 'balcao', privileges: expect.objectContaining({ standard: true, secure: true }) }]);
  });

  it('opens one hardened window', () => {
    expect(result.windows).toHaveLength(1);
    expect(result.windows[0].webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      preload: join(dir, 'app', 'dist-electron', 'preload.cjs'),
    });
    expect(result.windows[0].kiosk).toBe(false);
  });

  it('blocks navigation, new windows and permission requests', () => {
    expect(result.navigationPrevented).toBe(1);
    expect(result.windowOpen).toEqual({ action: 'deny' });
    expect(result.permissionGranted).toBe(false);
    expect(result.permissionCheck).toBe(false);
  });

  it('serves the screen with its CSP and nothing outside the screen folder', () => {
    expect(result.index).toMatchObject({ status: 200, body: '<!doctype html><title>Caixa</title>' });
    expect(result.index.csp).toContain("script-src 'self'");
    expect(result.escape.status).toBe(404);
    expect(result.escape.body).not.toContain('root:');
  });

  it('answers IPC for allow-listed methods from our own top frame only, in the shared envelope', () => {
    expect(result.status).toMatchObject({ result: { pending: 0, needsAttention: 0 } });
    expect(result.sale.result).toMatchObject({ state: 'open' });
    expect(result.badDoc).toMatchObject({ error: { code: 'documento_invalido', field: 'consumer' } });
    // A production terminal starts with an empty catalog: no demo products here.
    expect(result.noProduct).toMatchObject({ error: { code: 'produto_nao_encontrado' } });
    expect(result.unknown).toMatchObject({ error: { code: 'nao_encontrado' } });
    for (const refused of [result.foreign, result.subframe, result.noFrame]) expect(refused).toMatchObject({ error: { message: 'Origem não autorizada' } });
    // Only the one sale opened from our own frame exists.
    expect(result.openSales).toBe(1);
  });

  it('seals secrets at rest with the OS keychain (safeStorage), not a key file', () => {
    // BALCAO_TOKEN seeds the settings: the token is stored sealed by the keychain.
    expect(result.keychainSealed).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(userData, 'terminal', 'segredos.key'))).toBe(false);
  });

  it('a second instance leaves at once: no window, no terminal core on the same database', () => {
    const secondData = join(dir, 'second');
    const second = runBundle({ STUB_USER_DATA: secondData, STUB_LOCK: 'held' });
    expect(second.quit).toBe(1);
    expect(second.windows).toEqual([]);
    expect(second.loaded).toBeUndefined();
    expect(existsSync(join(secondData, 'terminal'))).toBe(false);
  });

  it('closes the terminal before quitting', () => {
    expect(result.quitPrevented).toBe(true);
    expect(result.quit).toBe(1);
  });
});
