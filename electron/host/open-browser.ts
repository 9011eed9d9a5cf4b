// `balcao start --abrir`: the checkout in a Chromium window of its own (--app: no address bar,
// no tabs), with its own profile under the data directory so it shares nothing with the
// user's everyday browser.
//
// The checkout's address carries the host's secret in its fragment, and a command line is
// readable by every local user (`ps`). So the browser is not given the address: it is given a
// small page only this user can read (0600, in the profile's 0700 folder) that sends the window
// on to it.

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/usr/bin/microsoft-edge'];

/** BALCAO_NAVEGADOR, else the first Chromium-family browser found. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.BALCAO_NAVEGADOR) return env.BALCAO_NAVEGADOR;
  return CANDIDATES.find((path) => existsSync(path));
}

const escapeAttribute = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page that sends the window on to `url` at once (with a link, should the refresh be blocked). */
export function launcherPage(url: string): string {
  const href = escapeAttribute(url);
  return `<!doctype html>
<html lang="pt-BR">
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=${href}">
<title>Balcão</title>
<p><a href="${href}">Abrir o caixa</a></p>
</html>
`;
}

/** Writes the launcher page for `url` under `profileDir`, readable by this user only; returns its file URL. */
export function writeLauncher(url: string, profileDir: string): string {
  mkdirSync(profileDir, { recursive: true, mode: 0o700 });
  chmodSync(profileDir, 0o700);
  const file = join(profileDir, 'abrir-caixa.html');
  writeFileSync(file, launcherPage(url), { mode: 0o600 });
  chmodSync(file, 0o600); // `mode` applies only when the file is created
  return pathToFileURL(file).href;
}

export function openAppWindow(executable: string, url: string, profileDir: string): ChildProcess {
  const launcher = writeLauncher(url, profileDir);
  const child = spawn(
    executable,
    [`--app=${launcher}`, `--user-data-dir=${profileDir}`, '--no-first-run', '--no-default-browser-check', '--disable-sync', '--disable-background-networking'],
    { stdio: 'ignore' },
  );
  // A browser that fails to start is reported by the caller through 'error'; never a crash.
  child.on('error', () => undefined);
  return child;
}
