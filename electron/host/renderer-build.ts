// Keeps renderer/dist in step with the screen's sources for `npm start`: a fresh clone has no
// build, and a stale one would show yesterday's screen. Built with Vite's JS API (a dev tool, so
// imported only when a build is due).

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type RendererBuild =
  | { state: 'missing'; reason: string }
  | { state: 'fresh'; staticDir: string }
  | { state: 'built'; staticDir: string; ms: number };

const SKIP = new Set(['dist', 'node_modules']);

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const STALE_LOCK_MS = 120_000;

/**
 * Two starts at once (parallel tests, a bench beside a test run) must not build into the same
 * folder together: Vite empties it first. mkdir is atomic, so it serves as the lock.
 */
async function withBuildLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `balcao-renderer-build-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock left by a killed build is taken over.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Builds `<repo>/renderer` into `<repo>/renderer/dist` when the build is missing or older than
 * any source of the screen (renderer/ and the API types it imports from electron/api/).
 */
export async function ensureRendererBuilt(repoRoot: string): Promise<RendererBuild> {
  const root = join(repoRoot, 'renderer');
  const configFile = join(root, 'vite.config.ts');
  const staticDir = join(root, 'dist');
  if (!existsSync(configFile) || !existsSync(join(root, 'index.html'))) {
    return { state: 'missing', reason: 'a tela do caixa (renderer/) ainda não existe nesta cópia' };
  }
  const index = join(staticDir, 'index.html');
  const isFresh = () => existsSync(index) && statSync(index).mtimeMs >= Math.max(newestMtime(root), newestMtime(join(repoRoot, 'electron', 'api')));
  if (isFresh()) return { state: 'fresh', staticDir };
  return withBuildLock(root, async () => {
    // Another start may have built it while this one waited for the lock.
    if (isFresh()) return { state: 'fresh', staticDir };
    const started = performance.now();
    const { build } = await import('vite');
    await build({ configFile, root, logLevel: 'warn' });
    if (!existsSync(index)) throw new Error(`a compilação da tela não produziu ${index} (veja build.outDir em renderer/vite.config.ts)`);
    return { state: 'built', staticDir, ms: Math.round(performance.now() - started) };
  });
}
