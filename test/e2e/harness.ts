// End-to-end harness: the real `balcao start` (embedded sandbox service + terminal core +
// browser-mode host) in a child process, and a real Chromium driven by playwright-core.
//
//   const store = await startStore();              // fresh data directory, free ports
//   const browser = await launchChromium();
//   const page = await openCheckout(browser, store.checkoutUrl);
//   ...
//   await screenshot(page, 'venda-finalizada');     // test-output/e2e/venda-finalizada.png
//   await browser.close(); await store.stop();
//
// Every store started here is stopped by its test and, as a safety net, killed when the test
// process exits.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium, type Browser, type Page } from 'playwright-core';
import { COMPILED, repoRoot, tempDataDir, type Exit, type Launcher } from '../helpers/service-process.ts';
import { BRASILIA_TZ } from '../../base/common/brasilia.ts';

/** What `balcao start` prints after `BALCAO_READY `. */
export type StoreReady = {
  checkoutUrl: string;
  serviceUrl: string;
  dataDir: string;
  printerDir: string;
  companyId: string;
  manager: { name: string; pin: string };
  /** False when the screen (renderer/) is not built: the host then serves only the API. */
  screen: boolean;
};

export type Store = StoreReady & {
  /** The demo company's API token at the service. */
  token: string;
  /** The host's origin (`http://127.0.0.1:<port>`) and the per-start secret of the checkout URL. */
  origin: string;
  secret: string;
  /** Every stdout/stderr line so far. */
  output: string[];
  /** SIGTERM and wait for the exit (SIGKILL after `timeoutMs`, then throws). */
  stop(timeoutMs?: number): Promise<Exit>;
};

export type StartStoreOptions = {
  /** Default: a fresh temporary directory (removed when the test process exits). */
  dataDir?: string;
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** Default: COMPILED (bin/balcao.js). */
  launcher?: Launcher;
  /** The demo company's CNPJ (`balcao start --cnpj`); default the demo's numeric one. */
  cnpj?: string;
  /**
   * Default true: once ready, the till is opened (float R$ 0,00) over the screen's own bridge, as
   * a cashier does first thing; no sale finishes without it. False: the test opens it itself.
   */
  openTill?: boolean;
};

export const READY_PREFIX = 'BALCAO_READY ';
export const screenshotDir = join(repoRoot, 'test-output', 'e2e');

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function exitOf(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** `balcao start --data DIR --port 0 --terminal-port 0`, resolved once it prints BALCAO_READY. */
export async function startStore(options: StartStoreOptions = {}): Promise<Store> {
  const dataDir = options.dataDir ?? tempDataDir('balcao-e2e-');
  const args = ['start', '--data', dataDir, '--port', '0', '--terminal-port', '0', ...(options.cnpj ? ['--cnpj', options.cnpj] : [])];
  const child = spawn(process.execPath, [...(options.launcher ?? COMPILED), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = exitOf(child);
  void exited.then(() => running.delete(child));
  const output: string[] = [];
  // A bound on a hang, not a pace: idle, the store is ready in a few seconds; with both cores
  // taken by another load, a start was seen to print nothing for over 60 s.
  const timeoutMs = options.readyTimeoutMs ?? 150_000;

  const ready = await new Promise<StoreReady>((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${message}\n--- saída ---\n${output.join('\n')}`));
    };
    const timer = setTimeout(() => fail(`balcao start não ficou pronto em ${timeoutMs} ms`), timeoutMs);
    createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      if (line.startsWith(READY_PREFIX)) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice(READY_PREFIX.length)) as StoreReady);
      }
    });
    void exited.then(({ code, signal }) => fail(`balcao start terminou antes de ficar pronto (código ${code}, sinal ${signal})`));
  });

  const { token } = JSON.parse(readFileSync(join(dataDir, 'demo-company.json'), 'utf8')) as { token: string };
  const url = new URL(ready.checkoutUrl);
  const secret = new URLSearchParams(url.hash.slice(1)).get('chave') ?? '';
  if (options.openTill !== false) await openTillOverBridge(url.origin, secret);
  return {
    ...ready,
    token,
    origin: url.origin,
    secret,
    output,
    async stop(timeoutMs = 60_000) {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([exited, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))]);
      clearTimeout(timer);
      if (result === 'timeout') {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`balcao start não terminou em ${timeoutMs} ms após SIGTERM`);
      }
      return result;
    },
  };
}

/** The till opened through the bridge the screen uses, unless a previous start left it open. */
async function openTillOverBridge(origin: string, secret: string): Promise<void> {
  const call = async (method: string, args: unknown[]) => {
    const res = await fetch(`${origin}/api/rpc/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  if ((await call('cashSession', [])) === null) await call('openCashSession', [{ floatCents: 0, operator: 'Caixa de teste' }]);
}

export const CHROMIUM_PATH = process.env.BALCAO_CHROMIUM ?? '/usr/bin/chromium';

/** Headless Chromium (Debian's), quiet: no sync, no updates, no background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

/** A new page (own context: no state shared between tests) at the checkout URL (with its #chave). */
export async function openCheckout(browser: Browser, checkoutUrl: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'pt-BR', timezoneId: BRASILIA_TZ });
  const page = await context.newPage();
  await page.goto(checkoutUrl);
  return page;
}

/** Saves a full-page PNG under test-output/e2e/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name.replace(/[^a-z0-9_-]+/gi, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
