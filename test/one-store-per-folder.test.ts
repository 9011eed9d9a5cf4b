// One store per data folder (base/node/folder-lock.ts), with the real command: a second service
// on a folder a service holds is refused, naming the holder's process, while the company
// command still changes settings beside the running service; a second terminal on a terminal's
// folder is refused too, in the same process and from another one. (`balcao start`:
// test/start.test.ts.)

import { afterAll, describe, expect, it } from 'vitest';
import { FolderInUseError } from '../base/node/folder-lock.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { createCompany, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

const services: ServiceProcess[] = [];
const terminals: Terminal[] = [];
afterAll(async () => {
  for (const t of terminals) await t.close();
  for (const s of services) await s.stop();
});

describe('one store per data folder', () => {
  it('a second service on the same folder is refused, naming the first; the company command still works beside it', async () => {
    const dir = tempDataDir('balcao-one-service-');
    const first = await startService({ dataDir: dir });
    services.push(first);
    const second = await runCli(['service', '--port', '0', '--data', dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `O serviço de emissão não pôde iniciar: A pasta de dados ${dir} já está em uso por balcao service (processo ${first.pid}, nesta máquina`,
    );
    const company = await createCompany(dir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    const health = await fetch(`${first.url}/healthz`, { headers: { authorization: `Bearer ${company.token}` } });
    expect(health.status).toBe(200);
  });

  it('a second terminal on the same folder is refused, in this process and from another', async () => {
    const dir = tempDataDir('balcao-one-terminal-');
    const first = await createTerminal({ dataDir: dir, startWorker: false });
    terminals.push(first);
    await expect(createTerminal({ dataDir: dir, startWorker: false })).rejects.toBeInstanceOf(FolderInUseError);
    const other = await runCli(['terminal', 'vendas', '--data', dir, '--token', 'blc_x', '--serie', '1', '--quantidade', '1']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`A pasta de dados ${dir} já está em uso por `);
    expect(other.stderr).toContain(`(processo ${process.pid}, nesta máquina`);
    await first.close();
    terminals.length = 0;
    // Closed, the folder is free again.
    const again = await createTerminal({ dataDir: dir, startWorker: false });
    await again.close();
  });
});
