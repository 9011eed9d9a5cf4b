// `npm start` on a fresh data directory: the embedded service comes up in sandbox mode with a
// demo company whose token works, and a second start keeps the same company and data.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDataDir } from './helpers/service-process.ts';

async function startOnce(dataDir: string): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'balcao.js'), 'start'], {
    cwd: repoRoot,
    env: { ...process.env, BALCAO_DATA: dataDir, BALCAO_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('npm start não ficou pronto em 30 s'));
    }, 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /"msg":"listening"/.test(line) ? /"url":"([^"]+)"/.exec(line) : null;
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`npm start terminou com código ${code}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('balcao start', () => {
  it('starts a sandbox store with a demo company, and keeps it on the next start', async () => {
    const dataDir = tempDataDir('balcao-start-');
    const first = await startOnce(dataDir);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo-company.json'), 'utf8')) as { company_id: string; token: string };
    const ask = (url: string) =>
      fetch(`${url}/api/v1/sandbox/autoridade`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' },
        body: '{}',
      });
    expect((await ask(first.url)).status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await startOnce(dataDir);
    const again = JSON.parse(readFileSync(join(dataDir, 'demo-company.json'), 'utf8')) as { company_id: string };
    expect(again.company_id).toBe(demo.company_id);
    expect((await ask(second.url)).status).toBe(200);
    expect(await second.stop()).toBe(0);
  });
});
