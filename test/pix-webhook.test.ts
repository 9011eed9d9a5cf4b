// The API Pix webhook at the service (service/pix/routes.ts) and the terminal that learns from it
// (electron/core/pix/webhook-hints.ts), over real HTTP against a real `balcao service`. On both
// stores: a PIX delivered again is stored once per endToEndId; a wrong or replaced secret, or a
// body out of the central bank's API Pix, is refused with nothing stored; one company's PIX is
// never shown to another's token. Then a terminal whose PSP polling is ten minutes off finishes
// its sale after the PSP simulator's webhook reached the service, with ONE read at the PSP.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { demoEmitter, DEMO_CSC } from '../fiscal/samples.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';
import { testTerminal } from './terminal-fixtures.ts';

type Client = ReturnType<typeof api>;
const received = (who: Client, txid: string) => who.get(`/api/v1/pix/recebidos?txid=${txid}`);
const newWebhook = async (who: Client): Promise<string> => {
  const created = await who.post('/api/v1/pix/webhook');
  expect(created.status).toBe(201);
  return created.body.webhook_url as string;
};

describe.each(STORES)('the API Pix webhook receiver, on %s', (store) => {
  let storage: TestStorage;
  let service: ServiceProcess;
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    storage = await testStorage(store);
    const companyA = await createCompany(storage);
    const companyB = await createCompany(storage, { cnpj: '11444777000161', nome: 'Outra Loja' });
    service = await startService({ dataDir: storage.dataDir, database: storage.database });
    a = api(service.url, companyA.token);
    b = api(service.url, companyB.token);
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  it('stores a PIX once however often it is delivered, refuses wrong secrets and bodies, and shows it to its company only', async () => {
    const txid = 'cobrancadeteste00000000000000001';
    const pix = { endToEndId: 'E99990001202611280300abcdefghijk', txid, valor: '10.00', horario: '2026-11-28T03:00:00.000Z' };
    const stored = () => storage.db.value<number>('SELECT count(*) FROM pix_received');
    expect(await received(b, txid)).toMatchObject({ status: 200, body: { webhook_configurado: false, data: [] } });
    const replaced = await newWebhook(b);
    const current = await newWebhook(b);
    expect(current).toMatch(new RegExp(`^${service.url}/api/v1/pix/webhook/pixwh_[A-Za-z0-9_-]{43}$`));
    const refusals = [
      [`${service.url}/api/v1/pix/webhook/pixwh_${'A'.repeat(43)}`, { pix: [pix] }, 404],
      [`${service.url}/api/v1/pix/webhook/naoesegredo`, { pix: [pix] }, 404],
      [replaced, { pix: [pix] }, 404],
      [current, { pix: [{ ...pix, valor: '10,00' }] }, 400],
      [current, { pix: [{ ...pix, horario: undefined }] }, 400],
      [current, { pix: [{ ...pix, endToEndId: 'E123' }] }, 400],
      [current, { pix: [] }, 400],
      [current, { outra: 1 }, 400],
    ] as const;
    for (const [url, body, status] of refusals) {
      const answer = await api(url).post('/pix', body);
      expect(answer.status, `${url} ${JSON.stringify(body)}`).toBe(status);
      expect(answer.body.error.code).toBe(status === 404 ? 'nao_encontrado' : 'requisicao_invalida');
    }
    expect(await stored()).toBe(0);
    expect((await received(b, txid)).body).toEqual({ webhook_configurado: true, data: [] });

    // Delivered, then delivered again (the PSP's retry after a lost 200): one record.
    expect((await api(current).post('/pix', { pix: [pix] })).body).toEqual({ recebidos: 1, novos: 1 });
    expect((await api(current).post('/pix', { pix: [pix] })).body).toEqual({ recebidos: 1, novos: 0 });
    expect(await stored()).toBe(1);
    expect((await received(b, txid)).body.data).toEqual([{ ...pix, recebido_em: expect.stringMatching(/-03:00$/) }]);
    // The secret is in the address, never in the service's log lines.
    await expect.poll(() => service.output.some((l) => l.includes('/api/v1/pix/webhook/[oculto]/pix')), { timeout: 30_000 }).toBe(true);
    expect(service.output.join('\n')).not.toContain(current.split('/').at(-1));
    // Company A's token: not its PIX.
    expect((await received(a, txid)).body).toEqual({ webhook_configurado: false, data: [] });
  });
});

describe('a terminal learns of a PIX from the webhook', () => {
  let service: ServiceProcess;
  let psp: PixPspSimulator;
  let terminal: Terminal;
  let client: Client;

  beforeAll(async () => {
    const dataDir = tempDataDir('balcao-pix-webhook-');
    const company = await createCompany(dataDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    service = await startService({ dataDir });
    client = api(service.url, company.token);
    psp = await startPixPspSimulator({ webhookUrl: await newWebhook(client) });
    terminal = await testTerminal({
      serviceUrl: service.url,
      token: company.token,
      pixKey: '12345678000195',
      pixPsp: psp.terminalSetup,
      // The PSP read only after ten minutes: a sale finished sooner was finished by the webhook's hint.
      pixWebhookPolicy: { askMs: 200, pollFirstMs: 600_000, pollCapMs: 600_000 },
    });
    terminal.configure({ company: { ...profileOfEmitter(demoEmitter()), cscToken: DEMO_CSC.token } }, 'teste webhook PIX');
  });

  afterAll(async () => {
    await terminal?.close();
    await psp?.close();
    await service?.stop();
  });

  it('finishes the sale after the simulator posted the PIX to the service, reading the charge at the PSP once', async () => {
    const sale = await terminal.addItem((await terminal.openSale()).id, { code: '7891000100103' });
    const charge = await terminal.createPixCharge(sale.id, sale.remainingCents);
    await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'active', 60_000);
    const reads = () => psp.requests.filter((r) => r === `GET /cob/${charge.txid}`).length;
    const readsBefore = reads();

    const paid = psp.pay(charge.txid);
    const finished = await terminal.waitForPixCharge(charge.txid, (c) => c.state === 'finished', 60_000);
    expect(finished.e2eid).toBe(paid.endToEndId);
    expect(reads() - readsBefore).toBe(1);
    expect(psp.webhookAttempts).toEqual([{ txid: charge.txid, outcome: '200' }]);
    expect(terminal.store.receipts.receiptBySale(sale.id)).toBeDefined();
    expect((await received(client, charge.txid)).body).toMatchObject({
      webhook_configurado: true,
      data: [{ endToEndId: paid.endToEndId, txid: charge.txid, valor: paid.valor, horario: paid.horario }],
    });
    expect(psp.problems).toEqual([]);
  });
});
