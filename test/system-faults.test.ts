// Faults of the machine at start, through the real `balcao` command: a data folder the user may
// not write to, a port another program holds. Each refuses to start with one sentence in
// Portuguese that names the place and says what to do, and the system's English words only as
// the technical detail. (A full disk mid-day: electron/ipc.test.ts for the cashier's screen,
// service/http/errors.test.ts for the service's answer.)
//
// Tests usually run as root, whom no folder permission stops: the commands then run as `nobody`
// (uid 65534), as a store's ordinary user would.

import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, tempDataDir, type CliResult } from './helpers/service-process.ts';

const NOBODY = 65534;

/** `balcao <args>` to completion, as an unprivileged user when the tests run as root. */
function balcao(args: string[]): Promise<CliResult> {
  const asRoot = process.getuid?.() === 0;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'balcao.js'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, HOME: '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asRoot && { uid: NOBODY, gid: NOBODY }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A folder the command's user can enter but not write to. */
function readOnlyFolder(): string {
  const parent = tempDataDir('balcao-faults-');
  chmodSync(parent, 0o755);
  const dir = join(parent, 'dados');
  mkdirSync(dir);
  chmodSync(dir, 0o555);
  return dir;
}

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

describe('faults at start, in words', () => {
  it('the service on a folder it may not write to', async () => {
    const dir = readOnlyFolder();
    const r = await balcao(['service', '--port', '0', '--data', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`O serviço de emissão não pôde iniciar: Sem permissão para gravar na pasta de dados (${dir}`);
    expect(r.stderr).toContain('Ajuste as permissões da pasta ou use outra.');
    expect(r.stderr).not.toMatch(/^Error|EACCES: permission denied.*\n.*at /m);
  });

  it('the terminal on a folder it may not write to', async () => {
    const dir = readOnlyFolder();
    const r = await balcao(['terminal', 'gerente', '--data', dir, '--nome', 'Ana', '--pin', '2580']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^O terminal não pôde continuar: Sem permissão para gravar na pasta de dados \(/);
    expect(r.stderr).toContain(dir);
    expect(r.stderr).toContain('detalhe técnico: EACCES');
  });

  it('the service on a port another program holds', async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dir = tempDataDir('balcao-faults-port-');
    chmodSync(dir, 0o777);
    const r = await balcao(['service', '--port', String(port), '--data', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`A porta ${port} já está em uso por outro programa: feche esse programa ou escolha outra porta (--port).`);
  });
});
