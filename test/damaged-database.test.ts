// A damaged database is never used silently. With the real command: 16 KiB of garbage in the
// middle of the terminal's pos.sqlite, and in the service's service.sqlite, and a truncated
// service.sqlite: each start is refused in Portuguese, naming the file, what is wrong and what
// to do, the newest copy named with the command that restores it. That command (balcao restore)
// puts the copy back with the damaged file kept beside it, and the terminal starts again with
// the sales of the copy. `balcao backup` made the copy, while the terminal was open.

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTerminal } from '../electron/core/terminal.ts';
import { runCli, startService, tempDataDir } from './helpers/service-process.ts';
import { openTill } from './terminal-fixtures.ts';

/** 16 KiB of garbage in the middle of `file`. */
function garbageInTheMiddle(file: string): void {
  const at = Math.floor(statSync(file).size / 2 / 4096) * 4096 + 512;
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, randomBytes(16384), 0, 16384, at);
  } finally {
    closeSync(fd);
  }
}

describe('a damaged database at start', () => {
  it('pos.sqlite: refused in words naming the newest copy; the copy restored, the terminal starts with its sales', async () => {
    const dir = tempDataDir('balcao-damaged-pos-');
    const terminal = await createTerminal({ dataDir: dir, startWorker: false, backupIntervalMs: 0 });
    terminal.seedDemoCatalog();
    await openTill(terminal);
    for (let i = 0; i < 120; i++) {
      let sale = await terminal.openSale();
      sale = await terminal.addItem(sale.id, { code: '1001', quantity: String(1 + (i % 3)) });
      await terminal.addPayment(sale.id, { tPag: '01', amountCents: sale.totalCents });
      terminal.finishSaleNow(sale.id);
    }
    // A copy by hand while the terminal is open.
    const backup = await runCli(['backup', '--data', dir]);
    expect(backup.code).toBe(0);
    const copy = /Cópia do banco do terminal: (\S+) \(verificada\)\./.exec(backup.stdout)?.[1];
    expect(copy).toMatch(new RegExp(`^${join(dir, 'copias')}/pos-.*\\.sqlite$`));
    await terminal.close();

    garbageInTheMiddle(join(dir, 'pos.sqlite'));
    const refused = await runCli(['terminal', 'vendas', '--data', dir, '--token', 'blc_x', '--serie', '1', '--quantidade', '121']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`O banco de dados do terminal (${join(dir, 'pos.sqlite')}) está danificado: `);
    expect(refused.stderr).toContain('nada foi alterado nele');
    expect(refused.stderr).toContain(`Restaure a cópia de segurança mais recente, ${copy} (de `);
    expect(refused.stderr).toContain(`balcao restore --data ${dir} --copia ${copy}`);
    expect(refused.stderr).not.toMatch(/database disk image is malformed\n\s+at /);

    const restored = await runCli(['restore', '--data', dir, '--copia', copy!]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(`Banco do terminal restaurado de ${copy}`);
    expect(readdirSync(dir).filter((f) => f.startsWith('pos.sqlite.substituido-'))).toHaveLength(1);
    const again = await createTerminal({ dataDir: dir, startWorker: false, backupIntervalMs: 0 });
    expect(again.store.sales.countSales('finished')).toBe(120);
    await again.close();
  });

  it('service.sqlite: garbage in the middle, or truncated, refused in words; without a copy, it says so', async () => {
    const dir = tempDataDir('balcao-damaged-service-');
    const service = await startService({ dataDir: dir });
    await service.stop();
    const file = join(dir, 'service.sqlite');
    garbageInTheMiddle(file);
    const garbage = await runCli(['service', '--port', '0', '--data', dir]);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toContain(`O banco de dados do serviço de emissão (${file}) está danificado: `);
    expect(garbage.stderr).toContain(`Não há cópia de segurança em ${join(dir, 'copias')}: não apague o arquivo e chame o suporte.`);

    truncateSync(file, Math.floor(statSync(file).size / 3));
    const truncated = await runCli(['service', '--port', '0', '--data', dir]);
    expect(truncated.code).toBe(1);
    expect(truncated.stderr).toContain(`O banco de dados do serviço de emissão (${file}) está danificado: o arquivo está truncado`);
  });
});
