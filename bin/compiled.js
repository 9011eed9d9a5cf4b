// Which compiled build of the `balcao` command to run (bin/build.ts writes them). Plain
// JavaScript, because it runs before anything is compiled: it only reads files.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const buildsDir = join(repoRoot, 'dist', 'node');

/**
 * The folder of the current build when every source it was built from still has the mtime it
 * had then (an edit, a checkout or a deleted file makes it stale); null when stale or missing.
 * @returns {string | null}
 */
export function freshNodeBuild() {
  let dir;
  /** @type {Record<string, number>} */
  let inputs;
  try {
    const current = /** @type {{ build: string }} */ (JSON.parse(readFileSync(join(buildsDir, 'current.json'), 'utf8')));
    dir = join(buildsDir, current.build);
    inputs = /** @type {{ inputs: Record<string, number> }} */ (JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8'))).inputs;
  } catch {
    return null;
  }
  for (const [file, mtime] of Object.entries(inputs)) {
    if (statSync(join(repoRoot, file), { throwIfNoEntry: false })?.mtimeMs !== mtime) return null;
  }
  return dir;
}

/**
 * The URL of the command's compiled entry point, building it first when it is missing or stale.
 * Building needs the development dependencies (esbuild, and tsx to read bin/build.ts), which a
 * checkout has after `npm ci`.
 * @returns {Promise<string>}
 */
export async function compiledCli() {
  const fresh = freshNodeBuild();
  if (fresh) return pathToFileURL(join(fresh, 'cli.js')).href;
  let tsImport;
  try {
    ({ tsImport } = await import('tsx/esm/api'));
  } catch {
    throw new Error('o Balcão não está compilado (dist/node) e as ferramentas de compilação não estão instaladas: rode npm ci');
  }
  /** @type {{ ensureNodeBuild(): Promise<{ dir: string }> }} */
  const builder = await tsImport('./build.ts', import.meta.url);
  const { dir } = await builder.ensureNodeBuild();
  return pathToFileURL(join(dir, 'cli.js')).href;
}
