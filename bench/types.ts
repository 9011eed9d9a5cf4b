// Shapes shared by the benchmark runner and its suites, plus small statistics helpers.

export type BenchFigure = {
  name: string;
  value: number;
  unit: string;
  /** `max`: lower is better and must stay under; `min`: higher is better and must reach. */
  target?: { kind: 'max' | 'min'; value: number };
};

export type BenchSuite = { name: string; run(): Promise<BenchFigure[]> };

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Runs `fn` `n` times, returning each run's duration in milliseconds, sorted. */
export async function timeEach(n: number, fn: (i: number) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out.sort((a, b) => a - b);
}
