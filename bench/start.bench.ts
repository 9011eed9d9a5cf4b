// Start-up, as a user meets it: `npm start` to a usable checkout (from spawning `balcao start`
// until Chromium shows the product input "Código ou nome do produto"), cold (fresh data
// directory: demo certificate, company, catalog and manager created, every migration applied)
// and warm (the same directory again); and `balcao service` to its "listening" line.
//
// Both ways of running the command are measured in the same run, alternating so that machine
// noise falls on both alike: compiled (bin/balcao.js → dist/node, what users run) and from the
// TypeScript sources transpiled at start by tsx (how every command ran before the compiled
// build). Medians of several starts. Not counted: launching Chromium (already running, as the
// cashier's browser would be) and the builds themselves (npm ci's prepare step does them; their
// times are printed apart).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { buildNode, ensureRendererBuilt } from '../bin/build.ts';
import { launchChromium, openCheckout, startStore } from '../test/e2e/harness.ts';
import { COMPILED, FROM_SOURCES, startService, tempDataDir, type Launcher } from '../test/helpers/service-process.ts';
import type { BenchFigure, BenchSuite } from './types.ts';

const PRODUCT_INPUT = 'Código ou nome do produto';
const CHECKOUT_TARGET_MS = 1_500;
const SERVICE_TARGET_MS = 800;
const STORE_RUNS = 5;
const SERVICE_RUNS = 7;

type Mode = { name: string; launcher: Launcher };
const MODES: Mode[] = [
  { name: 'compiled', launcher: COMPILED },
  { name: 'from sources (tsx)', launcher: FROM_SOURCES },
];

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

type StoreStart = { readyMs: number; visibleMs: number };

async function startToCheckout(browser: Browser, launcher: Launcher, dataDir: string): Promise<StoreStart> {
  const t0 = performance.now();
  const store = await startStore({ dataDir, launcher });
  const readyMs = performance.now() - t0;
  try {
    if (!store.screen) throw new Error('a tela do caixa não foi compilada (renderer/dist)');
    const page = await openCheckout(browser, store.checkoutUrl);
    await page.getByLabel(PRODUCT_INPUT).waitFor({ state: 'visible', timeout: 30_000 });
    const visibleMs = performance.now() - t0;
    await page.context().close();
    return { readyMs, visibleMs };
  } finally {
    await store.stop();
  }
}

async function serviceListening(launcher: Launcher): Promise<number> {
  const dataDir = tempDataDir('balcao-bench-service-start-');
  try {
    const t0 = performance.now();
    const service = await startService({ dataDir, launcher, env: { BALCAO_LOG_LEVEL: 'warn' } });
    const ms = performance.now() - t0;
    await service.stop();
    return ms;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const suite: BenchSuite = {
  name: 'start',
  async run(): Promise<BenchFigure[]> {
    const build = await buildNode();
    console.log(`  (comando compilado antes da medição: ${build.ms} ms, ${build.inputs} fontes)`);
    const screen = await ensureRendererBuilt();
    if (screen.state === 'built') console.log(`  (tela compilada antes da medição: ${screen.ms} ms)`);
    const browser = await launchChromium();
    const cold = new Map<string, StoreStart[]>(MODES.map((m) => [m.name, []]));
    const warm = new Map<string, StoreStart[]>(MODES.map((m) => [m.name, []]));
    const service = new Map<string, number[]>(MODES.map((m) => [m.name, []]));
    try {
      for (let i = 0; i < STORE_RUNS; i++) {
        for (const mode of MODES) {
          const dataDir = mkdtempSync(join(tmpdir(), 'balcao-bench-start-'));
          try {
            cold.get(mode.name)!.push(await startToCheckout(browser, mode.launcher, dataDir));
            warm.get(mode.name)!.push(await startToCheckout(browser, mode.launcher, dataDir));
          } finally {
            rmSync(dataDir, { recursive: true, force: true });
          }
        }
      }
      for (let i = 0; i < SERVICE_RUNS; i++) {
        for (const mode of MODES) service.get(mode.name)!.push(await serviceListening(mode.launcher));
      }
    } finally {
      await browser.close();
    }
    return MODES.flatMap((mode): BenchFigure[] => {
      const compiled = mode.launcher === COMPILED;
      const c = cold.get(mode.name)!;
      const w = warm.get(mode.name)!;
      return [
        { name: `${mode.name}: cold start → BALCAO_READY`, value: median(c.map((r) => r.readyMs)), unit: 'ms' },
        {
          name: `${mode.name}: cold start → checkout visible`,
          value: median(c.map((r) => r.visibleMs)),
          unit: 'ms',
          ...(compiled && { target: { kind: 'max' as const, value: CHECKOUT_TARGET_MS } }),
        },
        { name: `${mode.name}: warm start → checkout visible`, value: median(w.map((r) => r.visibleMs)), unit: 'ms' },
        {
          name: `${mode.name}: balcao service → listening`,
          value: median(service.get(mode.name)!),
          unit: 'ms',
          ...(compiled && { target: { kind: 'max' as const, value: SERVICE_TARGET_MS } }),
        },
      ];
    });
  },
};
