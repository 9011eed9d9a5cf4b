// The Electron shell's decisions that need no Electron: where the screen is loaded from, which
// URLs and files count as ours, the window's web preferences, the CSP, and the start options.
// electron/main.ts only wires these to Electron's APIs, so what matters is tested in Node.

import { isAbsolute, join, relative, resolve } from 'node:path';
import { contentSecurityPolicy } from './content-security-policy.ts';
import { pspSetupFromEnv, type PspSetup } from './core/pix/psp-settings.ts';

/**
 * The screen is served from a privileged custom scheme rather than file://: a file:// page
 * shares its origin with every local file, while balcao://app is an origin of its own whose
 * every response passes through our handler (which adds the CSP).
 */
export const APP_SCHEME = 'balcao';
export const APP_HOST = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`;

/** Same policy as browser mode minus the WebSocket: in Electron events come over IPC. */
export const ELECTRON_CSP = contentSecurityPolicy();

export const ELECTRON_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': ELECTRON_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/** True for a URL of the screen itself (balcao://app/...), the only sender IPC answers. */
export function isAppUrl(url: string | undefined | null): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/**
 * The file under `rootDir` a balcao://app URL names, or null for anything outside it (`..`,
 * encoded slashes, NUL bytes, another scheme or host). "/" is index.html.
 */
export function resolveAppFile(rootDir: string, url: string): string | null {
  if (!isAppUrl(url)) return null;
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return null;
  }
  if (path.includes('\0') || path.includes('\\')) return null;
  if (path === '' || path.endsWith('/')) path += 'index.html';
  const root = resolve(rootDir);
  const file = resolve(root, `.${path}`);
  const rel = relative(root, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return file;
}

/** The BrowserWindow's webPreferences: the renderer gets no Node, no remote, only the preload's bridge. */
export function secureWebPreferences(preloadPath: string) {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
  } as const;
}

export type ShellOptions = {
  /** Full screen, no window chrome: a dedicated checkout station. */
  kiosk: boolean;
  /** Where the terminal keeps its database, its key and the virtual printer's output. */
  dataDir: string;
  /**
   * First-start settings (later the stored settings win; the manager changes them on screen):
   * BALCAO_SERVICE_URL, BALCAO_TOKEN, BALCAO_SERIE, BALCAO_SERVICE_FINGERPRINT (the SHA-256 of the
   * service's certificate that `balcao service` prints, for a service on the store's network),
   * BALCAO_PIX_CHAVE (the store's PIX key, docs/pix.md), and the store's PSP for dynamic PIX
   * (BALCAO_PIX_URL and the others core/pix/psp-settings.ts reads).
   */
  seed: { serviceUrl?: string; token?: string; series?: number; serviceFingerprint?: string; pixKey?: string; pixPsp?: PspSetup };
};

export function shellOptions(argv: readonly string[], env: NodeJS.ProcessEnv, userDataDir: string): ShellOptions {
  const series = env.BALCAO_SERIE;
  const pixPsp = pspSetupFromEnv(env);
  if (series !== undefined && !/^[0-9]{1,3}$/.test(series)) throw new Error('BALCAO_SERIE: deve ser um número de 0 a 999');
  return {
    kiosk: argv.includes('--kiosk') || env.BALCAO_KIOSK === '1',
    dataDir: env.BALCAO_DATA ? resolve(env.BALCAO_DATA) : join(userDataDir, 'terminal'),
    seed: {
      ...(env.BALCAO_SERVICE_URL && { serviceUrl: env.BALCAO_SERVICE_URL }),
      ...(env.BALCAO_TOKEN && { token: env.BALCAO_TOKEN }),
      ...(series !== undefined && { series: Number(series) }),
      ...(env.BALCAO_SERVICE_FINGERPRINT && { serviceFingerprint: env.BALCAO_SERVICE_FINGERPRINT }),
      ...(env.BALCAO_PIX_CHAVE && { pixKey: env.BALCAO_PIX_CHAVE }),
      ...(pixPsp && { pixPsp }),
    },
  };
}

/** What Electron's safeStorage says of itself: availability and, on Linux, its backend. */
export type KeychainFacts = { platform: NodeJS.Platform; available: boolean; linuxBackend?: string };

/**
 * Whether the OS keychain (safeStorage) should seal the terminal's secrets. On Linux without a
 * secret service, Electron still reports encryption available but uses its "basic_text" backend,
 * a password written in Electron itself: anyone with a copy of the database could open what it
 * sealed. The core's 0600 key file is better then (a copied database alone is useless).
 */
export function useKeychain(facts: KeychainFacts): boolean {
  if (!facts.available) return false;
  if (facts.platform !== 'linux') return true;
  return facts.linuxBackend !== undefined && facts.linuxBackend !== 'basic_text' && facts.linuxBackend !== 'unknown';
}
