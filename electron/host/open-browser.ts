// `balcao start --abrir`: the checkout in a Chromium window of its own (--app: no address bar,
// no tabs), with its own profile under the data directory so it shares nothing with the
// user's everyday browser.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/usr/bin/microsoft-edge'];

/** BALCAO_NAVEGADOR, else the first Chromium-family browser found. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.BALCAO_NAVEGADOR) return env.BALCAO_NAVEGADOR;
  return CANDIDATES.find((path) => existsSync(path));
}

export function openAppWindow(executable: string, url: string, profileDir: string): ChildProcess {
  const child = spawn(
    executable,
    [`--app=${url}`, `--user-data-dir=${profileDir}`, '--no-first-run', '--no-default-browser-check', '--disable-sync', '--disable-background-networking'],
    { stdio: 'ignore' },
  );
  // A browser that fails to start is reported by the caller through 'error'; never a crash.
  child.on('error', () => undefined);
  return child;
}
