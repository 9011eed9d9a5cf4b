// `npm run build:electron`: bundles the Electron entry points into dist-electron/ with esbuild.
//   main.js      ESM (the package is "type": "module"), our TypeScript inlined, npm packages left
//                as imports (node_modules ships with the app: native better-sqlite3 among them)
//   preload.cjs  one self-contained CommonJS script: a sandboxed preload may require only 'electron'
//
// Modules that find files next to themselves (migrations/migrate.ts reads migrations/, fiscal
// loads fonts and tables) use import.meta.url; once bundled it would name dist-electron/main.js.
// The plugin below gives each bundled module its original location back, relative to the
// bundle, so the same paths resolve in a checkout and inside the packaged app.

import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

function ownImportMetaUrl(outDir: string): Plugin {
  return {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const fromBundle = relative(outDir, args.path).split(sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
}

export async function buildElectron(outDir = join(repoRoot, 'dist-electron')): Promise<{ main: string; preload: string }> {
  const main = join(outDir, 'main.js');
  const preload = join(outDir, 'preload.cjs');
  const common: BuildOptions = { bundle: true, platform: 'node', target: 'node22', sourcemap: true, logLevel: 'warning', external: ['electron'] };
  await build({ ...common, entryPoints: [join(repoRoot, 'electron', 'main.ts')], outfile: main, format: 'esm', packages: 'external', plugins: [ownImportMetaUrl(dirname(main))] });
  await build({ ...common, entryPoints: [join(repoRoot, 'electron', 'preload.ts')], outfile: preload, format: 'cjs' });
  return { main, preload };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { main, preload } = await buildElectron(process.argv[2]);
  console.log(`Electron: ${relative(process.cwd(), main)}, ${relative(process.cwd(), preload)}`);
}
