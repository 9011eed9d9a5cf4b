// The counter with a 50,000-product catalog, measured as the screen uses it: through the real
// browser-mode host (HTTP RPC, electron/host/server.ts) in front of an in-process terminal core
// on a real SQLite file. No issuance service: nothing here is sent (the worker is not started).
//
// - scan: a scanner reading 20 codes a second for 15 s (300 items) into one sale. Each add is sent
//   when its scan happens but waits for the previous one, as the screen does (renderer/state/
//   sale-store.ts keeps adds in scan order). Figures: items kept (all 300, in order), scan-to-line
//   latency p50/p99, and the longest backlog of scans waiting (0–1 means the counter keeps up).
// - scan on the screen: the same 20 codes a second, typed into the real checkout screen in
//   headless Chromium as a scanner types (digits, then Enter) into another sale. Figures: lines
//   on screen and in the core (all 300, in scan order) and how long after the last scan the
//   last line showed (what the cashier waits for before F2).
// - search: findProducts for 300 name queries of 2–14 characters (what a cashier types), over
//   the host, p50/p99; target < 50 ms. Beside it, the core's own time (in-process call).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPC_PATH, SECRET_PARAM } from '../electron/api/bridge-protocol.ts';
import { ensureRendererBuilt } from '../bin/build.ts';
import type { SaleView } from '../electron/api/terminal-api.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { startBrowserHost } from '../electron/host/server.ts';
import { launchChromium, openCheckout } from '../test/e2e/harness.ts';
import { percentile, timeEach, type BenchFigure, type BenchSuite } from './types.ts';

const CATALOG = 50_000;
const SCANS_PER_SECOND = 20;
const SCAN_SECONDS = 15;
const SEARCHES = 300;

const NOUNS = [
  'Biscoito',
  'Café',
  'Arroz',
  'Feijão',
  'Macarrão',
  'Sabão',
  'Detergente',
  'Refrigerante',
  'Suco',
  'Leite',
  'Iogurte',
  'Queijo',
  'Chocolate',
  'Farinha',
  'Açúcar',
  'Óleo',
  'Molho',
  'Sabonete',
  'Shampoo',
  'Papel higiênico',
];
const KINDS = [
  'integral',
  'tradicional',
  'light',
  'zero',
  'recheado',
  'em pó',
  'líquido',
  'extra forte',
  'tipo 1',
  'orgânico',
  'sem lactose',
  'de morango',
  'de uva',
  'de laranja',
  'de coco',
];
const BRANDS = [
  'Bom Dia',
  'Serra Azul',
  'Vale Verde',
  'Boa Mesa',
  'Sol Nascente',
  'Dona Benta',
  'Tio João',
  'Primor',
  'Estrela',
  'Aurora',
  'Ypê',
  'Nativa',
  'Camponesa',
  'Paulista',
  'Real',
];
const SIZES = ['200g', '500g', '1kg', '5kg', '1L', '2L', '350ml', '90g', '140g', '12 un'];

/** GTIN-13 with a valid check digit (GS1 mod 10), prefix 789 (Brazil). */
export function gtin13(n: number): string {
  const body = `789${String(n).padStart(9, '0')}`;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}

export function description(n: number): string {
  return `${NOUNS[n % NOUNS.length]} ${KINDS[Math.floor(n / NOUNS.length) % KINDS.length]} ${BRANDS[Math.floor(n / 300) % BRANDS.length]} ${SIZES[Math.floor(n / 4500) % SIZES.length]} ${n}`;
}

/** `count` products with valid fiscal data, saved through the catalog's own checks. */
export function buildCatalog(terminal: Terminal, count: number): void {
  terminal.store.transaction(() => {
    for (let n = 1; n <= count; n++) {
      terminal.saveProduct({
        code: `P${n}`,
        gtin: gtin13(n),
        description: description(n),
        ncm: '19059020',
        cfop: '5102',
        unit: 'UN',
        price: 100 + ((n * 37) % 5000),
        taxGroup: 'SN102',
      });
    }
  });
}

/** What a cashier types to find a product by name: word prefixes and short fragments. */
function queries(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const pick = (list: readonly string[]) => list[(i * 7 + out.length * 3) % list.length]!;
    switch (i % 5) {
      case 0:
        out.push(
          pick(NOUNS)
            .slice(0, 2 + (i % 5))
            .toLowerCase(),
        );
        break;
      case 1:
        out.push(`${pick(NOUNS)} ${pick(KINDS)}`.toLowerCase());
        break;
      case 2:
        out.push(pick(BRANDS).toLowerCase());
        break;
      case 3:
        out.push(`${pick(KINDS)} ${pick(BRANDS)}`.slice(0, 14).toLowerCase());
        break;
      default:
        out.push(i % 10 === 4 ? 'xarope de bordo' : pick(SIZES)); // one with no match at all
    }
  }
  return out;
}

type Rpc = (method: string, args: unknown[]) => Promise<unknown>;

function rpcTo(origin: string, secret: string): Rpc {
  return async (method, args) => {
    const res = await fetch(`${origin}${RPC_PATH}/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
}

async function scan(rpc: Rpc): Promise<{ kept: number; expected: number; inOrder: boolean; latencies: number[]; maxBacklog: number }> {
  const sale = (await rpc('openSale', [])) as SaleView;
  const total = SCANS_PER_SECOND * SCAN_SECONDS;
  const codes = Array.from({ length: total }, (_, i) => gtin13(1 + ((i * 7919) % CATALOG)));
  const latencies: number[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  let maxBacklog = 0;
  const start = performance.now();
  const done: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / SCANS_PER_SECOND;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    const scannedAt = performance.now();
    waiting++;
    maxBacklog = Math.max(maxBacklog, waiting);
    chain = chain.then(async () => {
      await rpc('addItem', [sale.id, { code: codes[i] }]);
      waiting--;
      latencies.push(performance.now() - scannedAt);
    });
    done.push(chain);
  }
  await Promise.all(done);
  const final = (await rpc('getSale', [sale.id])) as SaleView;
  const inOrder = final.items.every((item, i) => item.gtin === codes[i]);
  await rpc('discardSale', [sale.id]); // the screen, opened next, would otherwise resume this sale
  return { kept: final.items.length, expected: total, inOrder, latencies: latencies.sort((a, b) => a - b), maxBacklog };
}

/** The scan run through the checkout screen in Chromium, typed as a scanner types. */
async function scanOnScreen(
  terminal: Terminal,
  checkoutUrl: string,
): Promise<{ onScreen: number; inCore: number; expected: number; inOrder: boolean; lastLineMs: number }> {
  const browser = await launchChromium();
  try {
    const page = await openCheckout(browser, checkoutUrl);
    const input = page.getByLabel('Código ou nome do produto');
    await input.waitFor({ state: 'visible', timeout: 30_000 });
    await input.focus();
    const total = SCANS_PER_SECOND * SCAN_SECONDS;
    const codes = Array.from({ length: total }, (_, i) => gtin13(1 + ((i * 7907 + 13) % CATALOG)));
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / SCANS_PER_SECOND;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      await page.keyboard.type(codes[i]!);
      await page.keyboard.press('Enter');
    }
    const lastScan = performance.now();
    const rows = page.getByRole('table').locator('tbody tr');
    const deadline = lastScan + 60_000;
    while ((await rows.count()) < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const lastLineMs = performance.now() - lastScan;
    const onScreen = await rows.count();
    const open = await terminal.openSales();
    const items = open.length === 1 ? open[0]!.items : [];
    return { onScreen, inCore: items.length, expected: total, inOrder: items.length === total && items.every((item, i) => item.gtin === codes[i]), lastLineMs };
  } finally {
    await browser.close();
  }
}

export const suite: BenchSuite = {
  name: 'catalog-search',
  async run(): Promise<BenchFigure[]> {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-catalog-'));
    const terminal = await createTerminal({ dataDir: dir, token: 'bench', series: 1, startWorker: false });
    const screen = await ensureRendererBuilt();
    const host = await startBrowserHost({ terminal, staticDir: screen.state === 'missing' ? join(dir, 'sem-tela') : screen.staticDir });
    try {
      buildCatalog(terminal, CATALOG);
      const rpc = rpcTo(host.origin, host.secret);
      const qs = queries(SEARCHES);
      for (const q of qs.slice(0, 20)) await rpc('findProducts', [q, 8]); // warm-up
      const overHost = await timeEach(SEARCHES, (i) => rpc('findProducts', [qs[i], 8]));
      const inProcess = await timeEach(SEARCHES, (i) => terminal.findProducts(qs[i]!, 8));
      const s = await scan(rpc);
      if (!s.inOrder) throw new Error('os itens da venda não estão na ordem em que foram lidos');
      const typed = screen.state === 'missing' ? undefined : await scanOnScreen(terminal, `${host.origin}/#${SECRET_PARAM}=${host.secret}`);
      if (typed && !typed.inOrder) throw new Error('na tela, os itens da venda não ficaram na ordem em que foram lidos');
      if (!typed) console.log('  (sem tela compilada: leitura pela tela não medida)');
      return [
        { name: `search over host p50 (${CATALOG} products)`, value: percentile(overHost, 50), unit: 'ms', target: { kind: 'max', value: 50 } },
        { name: `search over host p99 (${CATALOG} products)`, value: percentile(overHost, 99), unit: 'ms', target: { kind: 'max', value: 50 } },
        { name: 'search in core p50', value: percentile(inProcess, 50), unit: 'ms' },
        { name: 'search in core p99', value: percentile(inProcess, 99), unit: 'ms' },
        { name: `scan ${SCANS_PER_SECOND}/s: items kept of ${s.expected}`, value: s.kept, unit: 'items', target: { kind: 'min', value: s.expected } },
        { name: 'scan-to-line p50', value: percentile(s.latencies, 50), unit: 'ms' },
        { name: 'scan-to-line p99', value: percentile(s.latencies, 99), unit: 'ms', target: { kind: 'max', value: 1000 / SCANS_PER_SECOND } },
        { name: 'scan backlog max', value: s.maxBacklog, unit: 'scans', target: { kind: 'max', value: 2 } },
        ...(typed
          ? [
              {
                name: `screen scan ${SCANS_PER_SECOND}/s: lines on screen of ${typed.expected}`,
                value: typed.onScreen,
                unit: 'items',
                target: { kind: 'min' as const, value: typed.expected },
              },
              {
                name: `screen scan ${SCANS_PER_SECOND}/s: items in the sale of ${typed.expected}`,
                value: typed.inCore,
                unit: 'items',
                target: { kind: 'min' as const, value: typed.expected },
              },
              { name: 'screen scan: last line after last scan', value: typed.lastLineMs, unit: 'ms' },
            ]
          : []),
      ];
    } finally {
      await host.close();
      await terminal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
