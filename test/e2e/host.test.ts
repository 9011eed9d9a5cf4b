// Smoke test of browser mode in a real Chromium. First against the host alone, serving a small
// fixture page (so it does not depend on the screen being built): the page's own script reads
// the secret from the fragment, calls the core over RPC and receives its events over the
// WebSocket under the host's CSP, which also blocks an inline script; a page of another origin
// cannot call the host. Then the whole `balcao start` stack: the checkout URL shows the screen's
// product input and a call from the page reaches the demo store's terminal.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTerminal, type Terminal } from '../../electron/core/terminal.ts';
import { openAppWindow } from '../../electron/host/open-browser.ts';
import { startBrowserHost, type BrowserHost } from '../../electron/host/server.ts';
import { launchChromium, openCheckout, screenshot, startStore, type Store } from './harness.ts';

const FIXTURE_HTML = `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>Caixa de teste</title>
<script>window.inlineRan = true;</script>
<script type="module" src="/app.js"></script></head>
<body><h1>Caixa de teste</h1><pre id="produtos"></pre><pre id="eventos"></pre></body></html>`;

// What the real screen does, reduced: secret from the fragment, RPC with the bearer, events.
const FIXTURE_JS = `
const secret = new URLSearchParams(location.hash.slice(1)).get('chave');
history.replaceState(null, '', location.pathname);
sessionStorage.setItem('chave', secret);
const call = async (method, args) => {
  const res = await fetch('/api/rpc/' + method, { method: 'POST', headers: { authorization: 'Bearer ' + secret, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
  return res.json();
};
window.call = call;
const ws = new WebSocket('ws://' + location.host + '/api/events?chave=' + encodeURIComponent(secret));
window.events = [];
ws.onmessage = (m) => { window.events.push(JSON.parse(m.data)); document.getElementById('eventos').textContent = window.events.length + ' eventos'; };
ws.onopen = () => { window.socketOpen = true; };
const found = await call('findProducts', ['café']);
document.getElementById('produtos').textContent = found.result.map((p) => p.code + ' ' + p.description).join('\\n');
`;

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('browser mode in Chromium (host with a fixture page)', () => {
  let dir: string;
  let terminal: Terminal;
  let host: BrowserHost;
  let foreign: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-e2e-host-'));
    const staticDir = join(dir, 'tela');
    mkdirSync(staticDir);
    writeFileSync(join(staticDir, 'index.html'), FIXTURE_HTML);
    writeFileSync(join(staticDir, 'app.js'), FIXTURE_JS);
    terminal = await createTerminal({ dataDir: join(dir, 'terminal'), serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 1, startWorker: false });
    terminal.seedDemoCatalog();
    await terminal.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
    host = await startBrowserHost({ terminal, staticDir });
    // Another local page (think: any site the cashier's browser visits) on another origin.
    foreign = createServer((_req, res) => res.end('<!doctype html><title>outra origem</title>'));
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => foreign?.close(resolve));
    await host?.close();
    await terminal?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the page, calls the core and gets its events under the CSP; inline script is blocked', async () => {
    const page = await openCheckout(browser, host.url);
    await expect.poll(() => page.textContent('#produtos')).toContain('1001 Café');
    // The secret left the address bar once read.
    expect(page.url()).toBe(`${host.origin}/`);
    expect(await page.evaluate(() => (window as unknown as { inlineRan?: boolean }).inlineRan)).toBeUndefined();
    await expect.poll(() => page.evaluate(() => (window as unknown as { socketOpen?: boolean }).socketOpen)).toBe(true);

    const receiptId = await page.evaluate(async () => {
      type Call = (method: string, args: unknown[]) => Promise<{ result: { id: string; totalCents: number; receipt: { id: string } } }>;
      const call = (window as unknown as { call: Call }).call;
      const sale = (await call('openSale', [])).result;
      const withItem = (await call('addItem', [sale.id, { code: '1001' }])).result;
      await call('addPayment', [sale.id, { tPag: '01', amountCents: withItem.totalCents }]);
      return (await call('finishSale', [sale.id])).result.receipt.id;
    });
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { events: { type: string; receipt?: { id: string } }[] }).events.map((e) => e.receipt?.id)))
      .toContain(receiptId);
    await screenshot(page, 'host-fixture');
    await page.context().close();
  });

  it('gives a page of another origin no way to call the host', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`);
    const before = (await terminal.openSales()).length;
    const outcome = await page.evaluate(
      async ({ origin, secret }) => {
        try {
          const res = await fetch(`${origin}/api/rpc/openSale`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
            body: '{"args":[]}',
          });
          return `status ${res.status}`;
        } catch (err) {
          return `blocked: ${(err as Error).name}`;
        }
      },
      { origin: host.origin, secret: host.secret },
    );
    // Even knowing the secret, the preflight is never granted, so the request is never sent.
    expect(outcome).toBe('blocked: TypeError');
    expect((await terminal.openSales()).length).toBe(before);
    await context.close();
  });
});

describe('browser mode in Chromium (balcao start)', () => {
  let store: Store;

  beforeAll(async () => {
    store = await startStore();
  });

  afterAll(async () => {
    if (store) expect((await store.stop()).code).toBe(0);
  });

  it('serves the checkout screen and answers a call from the page with the demo catalog', async () => {
    const page = await openCheckout(browser, store.checkoutUrl);
    expect(store.screen).toBe(true);
    await page.getByLabel('Código ou nome do produto').waitFor({ state: 'visible' });
    const products = await page.evaluate(
      async ({ origin, secret }) => {
        const res = await fetch(`${origin}/api/rpc/findProducts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: '{"args":["",50]}',
        });
        return ((await res.json()) as { result: { code: string }[] }).result.map((p) => p.code);
      },
      { origin: store.origin, secret: store.secret },
    );
    expect(products).toEqual(expect.arrayContaining(['1001', '1002', '1010']));
    await screenshot(page, 'checkout-start');
    await page.context().close();
  });

  it("--abrir keeps the secret off the browser's command line: a launcher only this user reads sends the window on", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-abrir-'));
    try {
      // A stand-in browser that records its command line, as `ps` would show it.
      const argsFile = join(dir, 'args.txt');
      const fakeBrowser = join(dir, 'navegador.sh');
      writeFileSync(fakeBrowser, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\n`, { mode: 0o700 });
      const profile = join(dir, 'perfil');
      const child = openAppWindow(fakeBrowser, store.checkoutUrl, profile);
      await new Promise((resolve) => child.on('exit', resolve));
      const args = readFileSync(argsFile, 'utf8');
      expect(args).not.toContain(store.secret);
      const launcher = /^--app=(file:\/\/.+)$/m.exec(args)?.[1];
      expect(launcher).toBeDefined();
      expect(statSync(fileURLToPath(launcher!)).mode & 0o777).toBe(0o600);
      expect(statSync(profile).mode & 0o777).toBe(0o700);

      // The real browser, given the launcher, lands on the checkout with the secret working.
      const page = await (await browser.newContext()).newPage();
      await page.goto(launcher!);
      await page.getByLabel('Código ou nome do produto').waitFor({ state: 'visible' });
      expect(new URL(page.url()).origin).toBe(store.origin);
      await page.context().close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
