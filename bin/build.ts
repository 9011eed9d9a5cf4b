// The compiled JavaScript Balcão runs: one esbuild bundle per entry point, so no command pays for
// transpiling TypeScript at start.
//
//   dist/node/<build>/   the `balcao` command (bin/cli.ts: service, terminal, start, company…)
//                        and the NFC-e signing thread (service/nfce/signer.worker.ts), split
//                        into shared chunks so each subcommand loads only what it uses
//   dist-electron/       the Electron shell: main.js (ESM) and preload.cjs (self-contained)
//   renderer/dist/       the checkout screen (Vite), built by renderer/vite.config.ts
//
// `npm ci` builds all three (the `prepare` script). `bin/balcao.js` rebuilds the command's bundle
// when a source it was built from has changed (bin/compiled.js), and `balcao start` the screen
// when one of its sources is newer than the build, so an edit is what runs next.
// Each command build goes to a new folder named in dist/node/current.json, so a running service
// never finds the chunks it loads lazily (a subcommand, the signing thread) replaced under it.
//
// npm packages stay imports (node_modules ships beside the code, native better-sqlite3 among
// them). Modules that find files next to themselves (migrations/, fiscal/schemas/, fonts) use
// import.meta.url; bundled, it would name the bundle. The plugin below gives each module its
// source location back, relative to the bundle, so those paths resolve the same from sources,
// from dist/ and inside the packaged app. import.meta.filename is left alone: it still names
// the bundle, which is how a module tells that it runs compiled (service/nfce/signer.ts).

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { freshNodeBuild } from './compiled.js';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export const nodeBuildsDir = join(repoRoot, 'dist', 'node');

/** Builds kept beside the current one, for processes still running an older one. */
const KEEP_BUILDS = 3;

export function sourceLocationPlugin(outDir: string): Plugin {
  return {
    name: 'source-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.tsx?$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const fromBundle = relative(outDir, args.path).split(sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
}

const nodeOptions: BuildOptions = {
  bundle: true,
  platform: 'node',
  // The oldest runtime we support (package.json engines); Electron's Node is newer.
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

export type NodeBuild = { dir: string; cli: string; inputs: number; ms: number };

/**
 * Builds the `balcao` command into a new folder under dist/node and makes it the current one.
 * The build records every source file it read with its mtime (dist/node/<build>/build.json):
 * bin/compiled.js compares them to tell a stale build.
 */
export async function buildNode(): Promise<NodeBuild> {
  const { build } = await import('esbuild');
  const started = performance.now();
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const dir = join(nodeBuildsDir, id);
  const result = await build({
    ...nodeOptions,
    entryPoints: { cli: join(repoRoot, 'bin', 'cli.ts'), 'signer.worker': join(repoRoot, 'service', 'nfce', 'signer.worker.ts') },
    outdir: dir,
    splitting: true,
    // Flat: entries and chunks side by side, so a module finds the worker entry beside itself.
    chunkNames: 'chunk-[hash]',
    metafile: true,
    absWorkingDir: repoRoot,
    plugins: [sourceLocationPlugin(dir)],
  });
  // Metafile paths are relative to absWorkingDir, with forward slashes on every system.
  const inputs: Record<string, number> = {};
  for (const input of Object.keys(result.metafile.inputs)) inputs[input] = statSync(join(repoRoot, input)).mtimeMs;
  writeFileSync(join(dir, 'build.json'), JSON.stringify({ inputs }) + '\n');
  // Published by a rename: a reader sees the old build or the new one, never half of either.
  const current = join(nodeBuildsDir, 'current.json');
  writeFileSync(`${current}.${process.pid}`, JSON.stringify({ build: id }) + '\n');
  renameSync(`${current}.${process.pid}`, current);
  removeOldBuilds(id);
  return { dir, cli: join(dir, 'cli.js'), inputs: Object.keys(inputs).length, ms: Math.round(performance.now() - started) };
}

function removeOldBuilds(current: string): void {
  const builds = readdirSync(nodeBuildsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== current)
    .map((e) => ({ name: e.name, mtime: statSync(join(nodeBuildsDir, e.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of builds.slice(KEEP_BUILDS - 1)) rmSync(join(nodeBuildsDir, old.name), { recursive: true, force: true });
}

/** The current build of the command, built first under a lock when it is missing or stale. */
export async function ensureNodeBuild(): Promise<{ dir: string; built: NodeBuild | null }> {
  const fresh = freshNodeBuild();
  if (fresh) return { dir: fresh, built: null };
  return withBuildLock(nodeBuildsDir, async () => {
    // Another process may have built it while this one waited for the lock.
    const again = freshNodeBuild();
    if (again) return { dir: again, built: null };
    const built = await buildNode();
    return { dir: built.dir, built };
  });
}

/** The Electron entry points: main.js (ESM) and preload.cjs, one self-contained CommonJS
 * script, since a sandboxed preload may require only 'electron'. */
export async function buildElectron(outDir = join(repoRoot, 'dist-electron')): Promise<{ main: string; preload: string }> {
  const { build } = await import('esbuild');
  const main = join(outDir, 'main.js');
  const preload = join(outDir, 'preload.cjs');
  const common: BuildOptions = { ...nodeOptions, external: ['electron'] };
  await build({ ...common, entryPoints: [join(repoRoot, 'electron', 'main.ts')], outfile: main, plugins: [sourceLocationPlugin(dirname(main))] });
  await build({ ...common, packages: undefined, entryPoints: [join(repoRoot, 'electron', 'preload.ts')], outfile: preload, format: 'cjs' });
  return { main, preload };
}

export type RendererBuild = { state: 'missing'; reason: string } | { state: 'fresh'; staticDir: string } | { state: 'built'; staticDir: string; ms: number };

const rendererRoot = join(repoRoot, 'renderer');
const NOT_SOURCES = new Set(['dist', 'node_modules']);

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (NOT_SOURCES.has(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** What the screen's bundle is made of: renderer/, the API types of electron/api/ and base/common/, which it imports. */
const RENDERER_SOURCES = [rendererRoot, join(repoRoot, 'electron', 'api'), join(repoRoot, 'base', 'common')];

/**
 * Builds renderer/ into renderer/dist with Vite when the build is missing or older than any
 * source of the screen (RENDERER_SOURCES).
 */
export async function ensureRendererBuilt(): Promise<RendererBuild> {
  const configFile = join(rendererRoot, 'vite.config.ts');
  const staticDir = join(rendererRoot, 'dist');
  if (!existsSync(configFile) || !existsSync(join(rendererRoot, 'index.html'))) {
    return { state: 'missing', reason: 'a tela do caixa (renderer/) não existe nesta cópia' };
  }
  const index = join(staticDir, 'index.html');
  const isFresh = () => existsSync(index) && statSync(index).mtimeMs >= Math.max(...RENDERER_SOURCES.map(newestMtime));
  if (isFresh()) return { state: 'fresh', staticDir };
  return withBuildLock(rendererRoot, async () => {
    if (isFresh()) return { state: 'fresh', staticDir };
    const started = performance.now();
    await viteBuild(configFile);
    if (!existsSync(index)) throw new Error(`a compilação da tela não produziu ${index} (veja build.outDir em renderer/vite.config.ts)`);
    return { state: 'built', staticDir, ms: Math.round(performance.now() - started) };
  });
}

/**
 * Vite in a process of its own with NODE_ENV=production: Vite and its React plugin choose the
 * production build by the NODE_ENV of the process that builds, and a test run (NODE_ENV=test)
 * building on the way got React's development runtime.
 */
async function viteBuild(configFile: string): Promise<void> {
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [vite, 'build', '--config', configFile, '--logLevel', 'warn'],
      { cwd: rendererRoot, env: { ...process.env, NODE_ENV: 'production' } },
      (err, _stdout, stderr) => (err ? reject(new Error(`a compilação da tela falhou: ${stderr || err.message}`)) : resolve()),
    );
  });
}

const STALE_LOCK_MS = 120_000;

/**
 * One build of a folder at a time: parallel tests, or a bench beside a test run, start many
 * processes that may all find it stale, and Vite empties its output first. mkdir is atomic, so
 * it serves as the lock; a lock left by a killed build is taken over.
 */
async function withBuildLock<T>(folder: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `balcao-build-${createHash('sha256').update(folder).digest('hex').slice(0, 16)}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
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

const targets = {
  node: buildNode,
  electron: () => buildElectron(),
  renderer: async () => {
    // Always from scratch here (npm ci, or by hand), whatever the mtimes say.
    const { build } = await import('vite');
    await build({ configFile: join(rendererRoot, 'vite.config.ts'), root: rendererRoot, logLevel: 'warn' });
  },
} as const;
type Target = keyof typeof targets;

// `node --import tsx bin/build.ts [node|electron|renderer…]` (all three by default).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((t) => !(t in targets));
  if (unknown.length) {
    console.error(`Alvo desconhecido: ${unknown.join(', ')} (use ${Object.keys(targets).join(', ')})`);
    process.exit(2);
  }
  for (const target of (asked.length ? asked : Object.keys(targets)) as Target[]) {
    const t0 = performance.now();
    await targets[target]();
    console.log(`${target}: compilado em ${Math.round(performance.now() - t0)} ms`);
  }
}
