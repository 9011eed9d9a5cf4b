// One program per data folder: the second is refused with the first named; the hold ends with
// the holder, however it ends (closed, or killed without a chance to clean up).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { describeProcess, FolderInUseError, lockFolder } from './folder-lock.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'balcao-lock-'));
  dirs.push(d);
  return d;
};

describe('lockFolder', () => {
  it('refuses a second holder in the same process, naming the first; free again once released', () => {
    const dir = folder();
    const first = lockFolder(dir, 'balcao start');
    let refused: unknown;
    try {
      lockFolder(dir, 'balcao service');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(FolderInUseError);
    expect((refused as FolderInUseError).holder).toMatchObject({ pid: process.pid, programa: 'balcao start' });
    expect((refused as Error).message).toMatch(
      new RegExp(`^A pasta de dados ${dir} já está em uso por balcao start \\(processo ${process.pid}, nesta máquina, desde `),
    );
    first.release();
    first.release(); // idempotent
    lockFolder(dir, 'balcao service').release();
  });

  it('is let go by a process that dies without releasing it (SIGKILL)', async () => {
    const dir = folder();
    const source = fileURLToPath(new URL('./folder-lock.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const { lockFolder } = await import(${JSON.stringify(source)}); lockFolder(${JSON.stringify(dir)}, 'balcao terminal vendas'); console.log('held'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('../..', import.meta.url)) },
    );
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    expect(() => lockFolder(dir)).toThrow(`balcao terminal vendas (processo ${child.pid}`);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    lockFolder(dir).release();
  });

  it('describes the balcao command running', () => {
    expect(describeProcess(['/usr/bin/node', '/app/bin/balcao.js', 'service', '--data', 'x'])).toBe('balcao service');
    expect(describeProcess(['/usr/bin/node', '/app/bin/balcao.js', 'terminal', 'vendas', '--data', 'x'])).toBe('balcao terminal vendas');
  });
});
