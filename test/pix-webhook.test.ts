// The API Pix webhook at the service (service/pix/routes.ts) and the terminal that learns from it
// (electron/core/pix/webhook-hints.ts), over real HTTP against a real `balcao service`: the PSP
// simulator's `pix` webhook stored once per endToEndId even when delivered again; a wrong secret
// or a body out of the API Pix refused with nothing stored; one company's PIX never shown to
// another's token; and a terminal whose PSP polling is far off finishes its sale after the
// webhook with ONE read of the charge at the PSP.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { demoEmitter, DEMO_CSC } from '../fiscal/samples.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { testTerminal } from './terminal-fixtures.ts';

describe('the API Pix webhook at the service', () => {
  let service: ServiceProcess;
  let psp: PixPspSimulator;
  let terminal: Terminal;
  let a: ReturnType<typeof api>;
  let b: ReturnType<typeof api>;
  let webhookA: string;

  beforeAll(async () => {
    const dataDir = tempDataDir('balcao-pix-webhook-');
    const companyA = await createCompany(dataDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    const companyB = await createCompany(dataDir, { cnpj: '11444777000161', nome: 'Outra Loja' });
    service = await startService({ dataDir });
    a = api(service.url, companyA.token);
    b = api(service.url, companyB.token);
    const created = await a.post('/api/v1/pix/webhook');
    expect(created.status).toBe(201);
    webhookA = created.body.webhook_url;
    expect(webhookA).toMatch(new RegExp(`^${service.url}/api/v1/pix/webhook/pixwh_[A-Za-z0-9_-]{43}$`));
    psp = await startPixPspSimulator({ webhookUrl: webhookA });
    terminal = await testTerminal({
      serviceUrl: service.url,
      token: companyA.token,
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

  const received = (who: ReturnType<typeof api>, txid: string) => who.get(`/api/v1/pix/recebidos?txid=${txid}`);

  it('finishes the sale after the webhook with one read at the PSP; a redelivery is stored once; another company sees nothing', async () => {
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

    const once = await received(a, charge.txid);
    expect(once.status).toBe(200);
    expect(once.body).toMatchObject({
      webhook_configurado: true,
      data: [{ endToEndId: paid.endToEndId, txid: charge.txid, valor: paid.valor, horario: paid.horario }],
    });

    // The PSP delivers the same notification again (its retry after a lost 200): nothing new.
    const body = { pix: [{ endToEndId: paid.endToEndId, txid: charge.txid, valor: paid.valor, horario: paid.horario }] };
    const again = await api(webhookA).post('/pix', body);
    expect(again).toMatchObject({ status: 200, body: { recebidos: 1, novos: 0 } });
    expect((await received(a, charge.txid)).body.data).toHaveLength(1);

    // Company B's token: not its PIX, and no webhook of its own yet.
    expect((await received(b, charge.txid)).body).toEqual({ webhook_configurado: false, data: [] });
    expect(psp.problems).toEqual([]);
  });

  it('refuses an unknown secret, a replaced one and a body out of the API Pix, storing nothing', async () => {
    const txid = 'naoarmazenado0000000000000000001';
    const pix = { endToEndId: 'E99990001202611280300abcdefghijk', txid, valor: '10.00', horario: '2026-11-28T03:00:00.000Z' };
    const before = (await b.post('/api/v1/pix/webhook')).body.webhook_url as string;
    const current = (await b.post('/api/v1/pix/webhook')).body.webhook_url as string;
    const refusals = [
      [`${service.url}/api/v1/pix/webhook/pixwh_${'A'.repeat(43)}`, { pix: [pix] }, 404],
      [`${service.url}/api/v1/pix/webhook/naoesegredo`, { pix: [pix] }, 404],
      [before, { pix: [pix] }, 404],
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
    expect((await received(b, txid)).body).toEqual({ webhook_configurado: true, data: [] });

    // The same PIX, well formed, at B's current address: B's, and never A's.
    expect((await api(current).post('/pix', { pix: [pix] })).body).toEqual({ recebidos: 1, novos: 1 });
    expect((await received(b, txid)).body.data).toHaveLength(1);
    expect((await received(a, txid)).body.data).toEqual([]);
  });
});
