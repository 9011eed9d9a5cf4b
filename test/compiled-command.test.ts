// The `balcao` command runs compiled JavaScript (bin/build.ts → dist/node), rebuilt when a source
// changed. Checked on a copy of the repository's tracked files (sharing node_modules), so the
// builds made here never race the test run's own dist/node.

import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nfceBody } from './helpers/nfce.ts';
import { api, createCompany, repoRoot, startService, tempDataDir } from './helpers/service-process.ts';

function copyOfRepository(): string {
  const copy = tempDataDir('balcao-copy-');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(repoRoot, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(copy, file));
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
  return copy;
}

const currentBuild = (root: string): string => (JSON.parse(readFileSync(join(root, 'dist', 'node', 'current.json'), 'utf8')) as { build: string }).build;

function balcao(root: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'balcao.js'), ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe('the compiled command', () => {
  let root: string;
  beforeAll(() => {
    root = copyOfRepository();
  });

  it('is built on first use when missing, reused while fresh, rebuilt after a source changes', () => {
    expect(existsSync(join(root, 'dist'))).toBe(false);
    expect(balcao(root, '--help')).toContain('Uso: balcao');
    const first = currentBuild(root);
    expect(existsSync(join(root, 'dist', 'node', first, 'cli.js'))).toBe(true);
    expect(existsSync(join(root, 'dist', 'node', first, 'signer.worker.js'))).toBe(true);

    balcao(root, '--help');
    expect(currentBuild(root)).toBe(first);

    // An edit (here only the mtime) to a module the command is built from.
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'fiscal', 'money.ts'), later, later);
    balcao(root, '--help');
    const second = currentBuild(root);
    expect(second).not.toBe(first);
    // The previous build stays for processes still running it.
    expect(readdirSync(join(root, 'dist', 'node'))).toEqual(expect.arrayContaining([first, second]));
  });
});

describe('the compiled screen', () => {
  // Run as a test run builds it on the way: in a process whose NODE_ENV is "test".
  function ensureScreen(root: string): { state: string } {
    const script = "const { ensureRendererBuilt } = await import('./bin/build.ts'); console.log(JSON.stringify(await ensureRendererBuilt()));";
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, NODE_ENV: 'test' },
    });
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout.trim().split('\n').pop()!) as { state: string };
  }
  const bundle = (root: string): string => {
    const assets = join(root, 'renderer', 'dist', 'assets');
    return readdirSync(assets)
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(assets, f), 'utf8'))
      .join('');
  };

  it("is React's production build whoever builds it, and is rebuilt when the base code it imports changes", () => {
    const root = copyOfRepository();
    expect(ensureScreen(root).state).toBe('built');
    // React's development builds: the DOM greets developers with this line, the JSX runtime is jsxDEV.
    expect(bundle(root)).not.toContain('react.dev/link/react-devtools');
    expect(bundle(root)).not.toContain('jsxDEV');
    expect(ensureScreen(root).state).toBe('fresh');

    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'base', 'common', 'money.ts'), later, later);
    expect(ensureScreen(root).state).toBe('built');
  });
});

describe('the compiled service', () => {
  it('signs NFC-e on its worker thread (the worker is an entry of the build)', async () => {
    const dataDir = tempDataDir();
    const { token } = await createCompany(dataDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    const service = await startService({ dataDir, env: { BALCAO_LOG_LEVEL: 'info' } });
    try {
      const client = api(service.url, token);
      const accepted = await client.post<{ id: string }>('/api/v1/nfce', nfceBody(1));
      expect(accepted.status).toBe(202);
      await expect.poll(async () => (await client.get<{ status: string }>(`/api/v1/nfce/${accepted.body.id}`)).body.status).toBe('autorizado');
      expect(service.output.filter((line) => line.includes('thread de assinatura'))).toEqual([]);
    } finally {
      await service.stop();
    }
  });
});
