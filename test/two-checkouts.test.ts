// Two checkouts of one store against one `balcao service` over real HTTPS: the service with the
// certificate it generated (`--tls`, loopback here; beyond loopback it is the only way it
// listens), each terminal pinning that certificate's SHA-256 fingerprint as the service printed
// it. Each checkout issues in its own series, claimed at the service; they sell at the same time
// and no number is shared; a series the other checkout holds is refused (in the settings, and
// for a checkout seeded with it at its first start); a terminal pinning another certificate
// sends nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceiptView } from '../electron/api/terminal-api.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { TerminalError } from '../electron/core/errors.ts';
import { readDb } from './helpers/nfce.ts';
import { startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, storeCompany, testTerminal } from './terminal-fixtures.ts';

const SALES = 12;

let service: ServiceProcess;
let serviceDir: string;
let fingerprint: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-two-checkouts-');
  service = await startService({ dataDir: serviceDir, args: ['--tls'] });
  const listening = service.output.map((l) => JSON.parse(l) as { msg?: string; tls?: { sha256: string; origem: string } }).find((l) => l.msg === 'listening')!;
  expect(listening.tls?.origem).toBe('gerado');
  fingerprint = listening.tls!.sha256;
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

async function checkout(token: string, series: number, pin = fingerprint): Promise<Terminal> {
  const t = await testTerminal({ serviceUrl: service.url, token, series, serviceFingerprint: pin });
  terminals.push(t);
  return t;
}

async function sell(t: Terminal, n: number): Promise<ReceiptView> {
  let sale = await t.openSale();
  sale = await t.addItem(sale.id, { code: ['1001', '1002', '1003', '1004'][n % 4]! });
  sale = await t.addPayment(sale.id, { tPag: '01', amountCents: sale.totalCents });
  return (await t.finishSale(sale.id)).receipt;
}

const settled = (t: Terminal, ids: string[]) =>
  eventually(
    `${ids.length} NFC-e autorizadas`,
    async () => {
      const views = await Promise.all(ids.map((id) => t.getReceipt(id)));
      return views.every((v) => v.state === 'authorized') && views;
    },
    60_000,
  );

describe('two checkouts, one service, over HTTPS with the pinned certificate', () => {
  it('the service speaks only HTTPS with the certificate it printed', () => {
    expect(service.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('each sells in its own series at the same time, and no number is shared', async () => {
    const company = await storeCompany(serviceDir);
    const [a, b] = [await checkout(company.token, 1), await checkout(company.token, 2)];
    // Both registered their series at the service on start (read in its database: this test's
    // own fetch would not trust the service's certificate, which only the terminals pin).
    await eventually('as duas séries registradas', () =>
      readDb(
        serviceDir,
        (db) =>
          (db.prepare('SELECT serie FROM terminal_series WHERE company_id = ? ORDER BY serie').pluck().all(company.companyId) as number[]).join(',') === '1,2',
      ),
    );

    const sold = await Promise.all(
      [a, b].map(async (t) => {
        const receipts: ReceiptView[] = [];
        for (let n = 0; n < SALES; n++) receipts.push(await sell(t, n));
        return receipts;
      }),
    );
    const [fromA, fromB] = await Promise.all([
      settled(
        a,
        sold[0]!.map((r) => r.id),
      ),
      settled(
        b,
        sold[1]!.map((r) => r.id),
      ),
    ]);
    expect(fromA.map((r) => [r.serie, r.nNF])).toEqual(Array.from({ length: SALES }, (_, i) => [1, i + 1]));
    expect(fromB.map((r) => [r.serie, r.nNF])).toEqual(Array.from({ length: SALES }, (_, i) => [2, i + 1]));

    // The service's record: every receipt authorized once, no (series, number) twice, no key twice.
    const docs = readDb(serviceDir, (db) =>
      db.prepare("SELECT serie, numero, chave FROM nfce_documents WHERE company_id = ? AND status = 'autorizado'").all(company.companyId),
    ) as {
      serie: number;
      numero: number;
      chave: string;
    }[];
    expect(docs).toHaveLength(2 * SALES);
    expect(new Set(docs.map((d) => `${d.serie}/${d.numero}`)).size).toBe(2 * SALES);
    expect(new Set(docs.map((d) => d.chave)).size).toBe(2 * SALES);
    expect(new Set([...fromA, ...fromB].map((r) => r.chave))).toEqual(new Set(docs.map((d) => d.chave)));

    // Checkout B's manager picks the series A uses: refused, naming it; nothing changed.
    const manager = await b.createManager({ name: 'Gerente B', pin: '2580' });
    const clash = await b.updateSettings({ series: 1 }, { managerId: manager.id, pin: '2580' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(clash).toBeInstanceOf(TerminalError);
    expect(clash).toMatchObject({
      code: 'serie_em_uso',
      field: 'series',
      message: expect.stringMatching(/^A série 1 já é usada por outro caixa desta empresa/),
    });
    expect(b.serie).toBe(2);
    expect((await settled(b, [(await sell(b, 99)).id]))[0]).toMatchObject({ serie: 2, nNF: SALES + 1 });
  });

  it('a checkout seeded at its first start with a series another one holds sells nothing until the manager picks another', async () => {
    const company = await storeCompany(serviceDir);
    const first = await checkout(company.token, 5);
    await eventually('a série 5 registrada', () =>
      readDb(serviceDir, (db) => db.prepare('SELECT 1 FROM terminal_series WHERE company_id = ? AND serie = 5').get(company.companyId)),
    );
    const second = await checkout(company.token, 5);
    const refused = await eventually('a série recusada pelo serviço', async () => {
      const err = await sell(second, 1).then(
        () => undefined,
        (e: unknown) => e,
      );
      return err instanceof TerminalError && err.code === 'serie_em_uso' && err;
    });
    expect(refused.message).toMatch(/^A série 5 já é usada por outro caixa desta empresa/);
    expect(second.store.receipts.countReceiptsIn(['pending', 'processing', 'authorized'])).toBe(0);
    const manager = await second.createManager({ name: 'Gerente', pin: '2580' });
    await second.updateSettings({ series: 6 }, { managerId: manager.id, pin: '2580' });
    expect((await sell(second, 2)).serie).toBe(6);
    expect((await sell(first, 3)).serie).toBe(5);
  });

  it('a checkout pinning another certificate never talks to this service', async () => {
    const company = await storeCompany(serviceDir);
    const wrong = 'AB:'.repeat(31) + 'AB';
    const t = await checkout(company.token, 7, wrong);
    const receipt = await sell(t, 0);
    const status = await eventually('o erro do certificado', async () => {
      const s = await t.queueStatus();
      return s.lastError?.includes('Certificado do serviço de emissão não reconhecido') && s;
    });
    expect(status.lastError).toContain(fingerprint);
    expect((await t.getReceipt(receipt.id)).state).toBe('pending');
    expect(readDb(serviceDir, (db) => db.prepare('SELECT count(*) FROM nfce_documents WHERE company_id = ?').pluck().get(company.companyId))).toBe(0);
    expect(readDb(serviceDir, (db) => db.prepare('SELECT count(*) FROM terminals WHERE company_id = ?').pluck().get(company.companyId))).toBe(0);
  });
});
