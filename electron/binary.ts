// The Electron binary, fetched when a desktop command needs it (`npm run electron`,
// `npm run package`). `npm ci` never runs the electron package's install script (package.json
// allowScripts denies it): that script downloads ~100 MB from GitHub, which fails the whole
// install on machines that cannot reach it, although only the desktop shell needs the binary.
// Here the same script runs on demand, and a failure says what to do.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The electron package's folder, or null when it is not installed. */
function electronPackageDir(): string | null {
  try {
    return dirname(require.resolve('electron/package.json'));
  } catch {
    return null;
  }
}

/** The binary the electron package points at (its path.txt), when it is there. */
export function installedElectronBinary(packageDir: string): string | null {
  const pathFile = join(packageDir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const binary = join(packageDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : null;
}

const HELP = `O binário do Electron (o aplicativo de mesa) não está instalado e não pôde ser baixado.
O que fazer:
  - com acesso ao GitHub, rode o comando de novo;
  - atrás de um espelho, defina ELECTRON_MIRROR (ex.: https://npmmirror.com/mirrors/electron/) e rode de novo;
  - sem rede, copie o zip do Electron da mesma versão para o cache (ELECTRON_CACHE ou ~/.cache/electron) e rode de novo.
O caixa funciona sem o Electron no navegador: npm start.`;

export function ensureElectronBinary(): string {
  const packageDir = electronPackageDir();
  if (!packageDir) throw new Error('o pacote electron não está instalado: rode npm ci');
  const present = installedElectronBinary(packageDir);
  if (present) return present;
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  process.stdout.write(`Baixando o Electron ${version}…\n`);
  const result = spawnSync(process.execPath, [join(packageDir, 'install.js')], { cwd: packageDir, stdio: 'inherit' });
  const installed = result.status === 0 ? installedElectronBinary(packageDir) : null;
  if (!installed) throw new Error(HELP);
  return installed;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  try {
    ensureElectronBinary();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
