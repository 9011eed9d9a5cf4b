// A terminal's database put back from a copy never reuses a receipt number, against the real
// service over HTTP (sandbox authority):
//
// 1. The copy is taken mid-day by the terminal's own schedule, after sale 1; sales 2 and 3 are
//    authorized after it; the store restores the copy (`balcao restore`). At the next start the
//    terminal learns from the service that the series is at 3, and the next sale is nº 4,
//    authorized; every number is at the authority once.
// 2. Restored the same way, but the service cannot be reached when the terminal starts: the
//    next sale takes nº 2 again. Once the service is back, the authority answers 539 (the number
//    is another NFC-e's): the sale goes out again under a number above the service's highest and
//    is authorized, never "correct and resend the same number".

import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listBackups } from '../base/node/sqlite-backup.ts';
import { posBackupPlace } from '../electron/core/db.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { closedPort, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { storeCompany, testTerminal } from './terminal-fixtures.ts';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-restored-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

async function sell(terminal: Terminal) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001' });
  await terminal.addPayment(sale.id, { tPag: '01', amountCents: 2000 });
  return (await terminal.finishSale(sale.id)).receipt;
}

const authorized = (t: Terminal, id: string) => t.waitForReceipt(id, (r) => r.state !== 'pending' && r.state !== 'processing', 45_000);

/** The sandbox authority's record: how many NFC-e it authorized under each number of the series. */
function atAuthority(cnpj: string): { number: number; n: number }[] {
  const db = new Database(join(serviceDir, 'sandbox-authority.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT number, count(*) AS n FROM nfe WHERE cnpj = ? AND model = '65' AND serie = 1 GROUP BY number ORDER BY number").all(cnpj) as {
      number: number;
      n: number;
    }[];
  } finally {
    db.close();
  }
}

/** Sales 1 to 3 authorized, the terminal's own copy taken after sale 1 and before sale 2; then closed. Returns that copy. */
async function aDayWithACopyAfterTheFirstSale(dir: string, company: { token: string }): Promise<string> {
  const first = await testTerminal({ dataDir: dir, serviceUrl: service.url, token: company.token, series: 1, backupIntervalMs: 1_000 });
  terminals.push(first);
  expect(await authorized(first, (await sell(first)).id)).toMatchObject({ state: 'authorized', nNF: 1 });
  // The schedule copies every second: a copy holding sale 1, authorized, is the mid-day copy.
  const place = posBackupPlace(dir);
  // That copy itself, kept apart (newer copies may push it out): listBackups is newest first, and
  // the oldest copy may predate the sale.
  let copy: string | undefined;
  await expect
    .poll(
      () =>
        (copy = listBackups(place).find((b) => {
          const db = new Database(b.file, { readonly: true });
          try {
            return db.prepare("SELECT count(*) FROM receipts WHERE state = 'authorized'").pluck().get() === 1;
          } finally {
            db.close();
          }
        })?.file),
      { timeout: 30_000 },
    )
    .toBeDefined();
  const kept = join(tempDataDir('balcao-mid-day-copy-'), basename(copy!));
  copyFileSync(copy!, kept);
  for (let i = 0; i < 2; i++) expect((await authorized(first, (await sell(first)).id)).state).toBe('authorized');
  await first.close();
  terminals.splice(terminals.indexOf(first), 1);
  return kept;
}

describe('a terminal database restored from a copy', () => {
  it('learns at start where the series stands: the next sale is nº 4 and is authorized; no number twice', async () => {
    const company = await storeCompany(serviceDir);
    const dir = tempDataDir('balcao-restored-terminal-');
    const copy = await aDayWithACopyAfterTheFirstSale(dir, company);

    const restored = await runCli(['restore', '--data', dir, '--copia', copy]);
    expect(restored.code).toBe(0);
    expect(readdirSync(dir).some((f) => f.startsWith('pos.sqlite.substituido-'))).toBe(true);

    const again = await testTerminal({ dataDir: dir, serviceUrl: service.url, token: company.token, series: 1, backupIntervalMs: 0 });
    terminals.push(again);
    expect(again.store.sales.countSales('finished')).toBe(1); // the copy's day
    const next = await sell(again);
    expect(next.nNF).toBe(4);
    expect(await authorized(again, next.id)).toMatchObject({ state: 'authorized', nNF: 4, codigoStatus: '100' });
    expect(again.auditLog().find((a) => a.action === 'numeracao_ajustada')?.details).toContain('"proximo_antes":2,"proximo_agora":4');
    expect(atAuthority(company.cnpj)).toEqual([1, 2, 3, 4].map((number) => ({ number, n: 1 })));
  });

  it('started while the service is away, it takes nº 2 again: the 539 sends the sale on under a free number, authorized', async () => {
    const company = await storeCompany(serviceDir);
    const dir = tempDataDir('balcao-restored-offline-');
    const copy = await aDayWithACopyAfterTheFirstSale(dir, company);
    expect((await runCli(['restore', '--data', dir, '--copia', copy])).code).toBe(0);

    // The copy's settings name the service; this start finds it away (the link is down).
    const again = await testTerminal({ dataDir: dir, token: company.token, series: 1, backupIntervalMs: 0, startWorker: false });
    terminals.push(again);
    again.configure({ serviceUrl: `http://127.0.0.1:${await closedPort()}` }, 'o serviço está fora do alcance');
    again.start();
    const sale = await sell(again);
    expect(sale.nNF).toBe(2); // nothing told it otherwise
    again.configure({ serviceUrl: service.url }, 'o serviço voltou');
    const done = await authorized(again, sale.id);
    expect(done).toMatchObject({ state: 'authorized', codigoStatus: '100' });
    expect(done.nNF).toBeGreaterThan(3);
    const taken = again.auditLog(sale.id).filter((a) => a.action === 'numero_em_uso');
    expect(taken.length).toBeGreaterThanOrEqual(1);
    expect(taken[0]!.reason).toMatch(/^O número 2 \(série 1\) já é de outra NFC-e na SEFAZ \(539\): a venda segue com o número \d+\.$/);
    // Each sale once at the authority, no number twice: 1–3 from the lost day, the restored sale's above.
    const numbers = atAuthority(company.cnpj);
    expect(numbers.every((r) => r.n === 1)).toBe(true);
    expect(numbers.map((r) => r.number)).toEqual([1, 2, 3, done.nNF]);
    expect(existsSync(join(dir, 'pos.sqlite'))).toBe(true);
  });
});
