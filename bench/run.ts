// `npm run bench`: runs every benchmark suite, prints its figures next to the previous run's and
// the target, and saves this run for the next comparison. Figures, not pass/fail: these machines
// are shared and noisy, so speed lives here and never in timed unit tests.
//
// A suite is a module under bench/ exporting `suite: BenchSuite`. `npm run bench -- fiscal` runs
// only suites whose name contains "fiscal".

import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchFigure, BenchSuite } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const resultsFile = join(here, 'results', 'last.json');

type Saved = Record<string, { value: number; unit: string; at: string }>;

function load(): Saved {
  return existsSync(resultsFile) ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as Saved) : {};
}

function verdict(f: BenchFigure): string {
  if (!f.target) return '';
  const ok = f.target.kind === 'max' ? f.value <= f.target.value : f.value >= f.target.value;
  return `${ok ? 'meets' : 'MISSES'} target ${f.target.kind === 'max' ? '<=' : '>='} ${f.target.value} ${f.unit}`;
}

const fmt = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3));

async function main(): Promise<void> {
  const filter = process.argv[2] ?? '';
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
  const previous = load();
  const current: Saved = { ...previous };
  for (const file of files) {
    const { suite } = (await import(pathToFileURL(join(here, file)).href)) as { suite: BenchSuite };
    if (!suite.name.includes(filter)) continue;
    console.log(`\n== ${suite.name} ==`);
    const figures = await suite.run();
    for (const f of figures) {
      const id = `${suite.name} / ${f.name}`;
      const before = previous[id];
      const delta = before ? ` (before ${fmt(before.value)}, ${before.value ? (((f.value - before.value) / before.value) * 100).toFixed(1) : '∞'}%)` : '';
      console.log(`  ${f.name.padEnd(58)} ${fmt(f.value).padStart(10)} ${f.unit.padEnd(12)}${delta}  ${verdict(f)}`);
      current[id] = { value: f.value, unit: f.unit, at: new Date().toISOString() };
    }
  }
  mkdirSync(dirname(resultsFile), { recursive: true });
  writeFileSync(resultsFile, JSON.stringify(current, null, 2));
  console.log(`\nSaved to ${resultsFile} for the next comparison.`);
}

await main();
