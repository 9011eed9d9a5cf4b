// Returns at the terminal against the real `balcao service` process over real HTTP (sandbox
// authority): after the cancellation window the terminal refuses to cancel and offers the
// return; the manager's return reaches the service as an NF-e de devolução (model 55) that
// references the receipt's key and is authorized; what is left to return is enforced here,
// naming the field; a receipt without a consumer needs one named; the outbox keeps the command
// with its key.

import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAccessKey } from '../fiscal/access-key.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { api, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { storeCompany, testTerminal } from './terminal-fixtures.ts';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-terminal-returns-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

const PIN = '2580';
const REASON = 'Cliente devolveu: produto com defeito';
const NS = 'http://www.portalfiscal.inf.br/nfe';

async function setup() {
  let offset = 0;
  const company = await storeCompany(serviceDir);
  const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, clock: () => Date.now() + offset, settleWaitMs: 20_000 });
  terminals.push(terminal);
  const manager = await terminal.createManager({ name: 'Gerente Ana', pin: PIN });
  const http = api(service.url, company.token);
  const later = async (minutes: number) => {
    expect((await http.post('/api/v1/sandbox/relogio', { avancar_minutos: minutes })).status).toBe(200);
    offset += minutes * 60_000;
  };
  return { terminal, manager, http, later };
}

/** 2 × café (18.90) and 3 × arroz (27.45), paid in cash; the consumer's CPF when given. */
async function sell(terminal: Terminal, consumer?: string) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001', quantity: '2' });
  sale = await terminal.addItem(sale.id, { code: '1003', quantity: '3' });
  if (consumer) sale = await terminal.setConsumer(sale.id, consumer);
  sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 12_015 });
  const { receipt } = await terminal.finishSale(sale.id);
  const done = await terminal.waitForReceipt(receipt.id, (r) => r.state !== 'pending' && r.state !== 'processing', 30_000);
  expect(done.state).toBe('authorized');
  return { sale: await terminal.getSale(sale.id), receipt: done };
}

describe('returns through the real service', () => {
  it('after the window: cancel refused locally with remedy devolucao; the return is authorized as an NF-e 55 referencing the receipt', async () => {
    const { terminal, manager, http, later } = await setup();
    const { sale, receipt } = await sell(terminal, '529.982.247-25');
    await later(31);

    const view = await terminal.getReceipt(receipt.id);
    expect(view.cancellation).toMatchObject({ allowed: false, remedy: 'devolucao' });
    await expect(
      terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: PIN, justification: 'Cliente desistiu da compra no caixa' }),
    ).rejects.toMatchObject({
      code: 'prazo_expirado',
      remedy: 'devolucao',
    });

    const [coffee, rice] = sale.items;
    const events: string[] = [];
    terminal.subscribe((e) => {
      if (e.type === 'return') events.push(e.devolucao.state);
    });
    // A wrong PIN is refused before anything is written.
    await expect(
      terminal.returnReceipt(receipt.id, { managerId: manager.id, pin: '0000', reason: REASON, items: [{ itemId: rice!.id, quantity: '2' }] }),
    ).rejects.toMatchObject({
      code: 'pin_invalido',
    });
    expect(await terminal.listReturns(receipt.id)).toEqual([]);

    const ret = await terminal.returnReceipt(receipt.id, { managerId: manager.id, pin: PIN, reason: REASON, items: [{ itemId: rice!.id, quantity: '2' }] });
    expect(ret).toMatchObject({
      receiptId: receipt.id,
      state: 'authorized',
      serie: 1,
      nNF: 1,
      codigoStatus: '100',
      protocolo: expect.stringMatching(/^\d{15}$/),
      totalCents: 5490,
      items: [{ itemId: rice!.id, description: 'Arroz branco tipo 1 5kg', quantity: '2', totalCents: 5490 }],
      attention: null,
    });
    expect(parseAccessKey(ret.chave)).toMatchObject({ model: '55', serie: 1, number: 1 });
    expect(events).toContain('authorized');
    expect(await terminal.listReturns()).toEqual([ret]);

    // At the service: the NF-e references the receipt's key; its XML is the authorized procNFe.
    const row = terminal.store.returns.returnRow(ret.id)!;
    const atService = await http.get(`/api/v1/nfe/${row.service_id}`);
    expect(atService.body).toMatchObject({
      situacao: 'autorizado',
      chave: ret.chave,
      chave_nfce: receipt.chave,
      referencia_externa: row.idempotency_key,
      valor_total: '54.90',
    });
    const xml = (await http.get(`/api/v1/nfe/${row.service_id}/xml`)).text;
    const doc = new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document;
    const texts = (name: string) => Array.from(doc.getElementsByTagNameNS(NS, name)).map((e) => e.textContent);
    expect({
      refNFe: texts('refNFe'),
      mod: texts('mod'),
      finNFe: texts('finNFe'),
      nItem: Array.from(doc.getElementsByTagNameNS(NS, 'det')).length,
      qCom: texts('qCom'),
      CPF: texts('CPF'),
    }).toEqual({
      refNFe: [receipt.chave],
      mod: ['55'],
      finNFe: ['4'],
      nItem: 1,
      qCom: ['2.0000'],
      CPF: ['52998224725'],
    });
    expect(terminal.store.outbox.outboxOf(receipt.id).filter((e) => e.kind === 'return')).toEqual([
      expect.objectContaining({ state: 'done', idempotency_key: row.idempotency_key }),
    ]);
    expect(terminal.auditLog(receipt.id).map((a) => [a.actor_kind, a.action])).toEqual([
      ['manager', 'pin_recusado'],
      ['manager', 'devolucao_solicitada'],
      ['system', 'devolucao_autorizada'],
    ]);

    // More than what is left: refused here, naming the field; nothing is written.
    await expect(
      terminal.returnReceipt(receipt.id, {
        managerId: manager.id,
        pin: PIN,
        reason: REASON,
        items: [
          { itemId: coffee!.id, quantity: '1' },
          { itemId: rice!.id, quantity: '2' },
        ],
      }),
    ).rejects.toMatchObject({ code: 'quantidade_invalida', field: 'items[1].quantity', message: expect.stringMatching(/no máximo 1 UN/) });
    expect(await terminal.listReturns(receipt.id)).toHaveLength(1);

    // The rest (default: everything left) completes the sale's value to the cent.
    const rest = await terminal.returnReceipt(receipt.id, { managerId: manager.id, pin: PIN, reason: REASON });
    expect(rest).toMatchObject({ state: 'authorized', nNF: 2, totalCents: 3780 + 2745 });
    expect(rest.items.map((i) => [i.itemId, i.quantity])).toEqual([
      [coffee!.id, '2'],
      [rice!.id, '1'],
    ]);
    expect(ret.totalCents + rest.totalCents).toBe(12_015);
    await expect(terminal.returnReceipt(receipt.id, { managerId: manager.id, pin: PIN, reason: REASON })).rejects.toMatchObject({
      code: 'quantidade_invalida',
      field: 'items',
    });
  });

  it('a receipt without a consumer needs the person returning the goods; the service takes it as the NF-e dest', async () => {
    const { terminal, manager, http } = await setup();
    const { sale, receipt } = await sell(terminal);
    const input = { managerId: manager.id, pin: PIN, reason: REASON, items: [{ itemId: sale.items[0]!.id, quantity: '1' }] };
    await expect(terminal.returnReceipt(receipt.id, input)).rejects.toMatchObject({ code: 'documento_invalido', field: 'consumer' });
    await expect(terminal.returnReceipt(receipt.id, { ...input, consumer: { document: '111.444.777-35', name: '' } })).rejects.toMatchObject({
      code: 'documento_invalido',
      field: 'consumer.name',
    });
    // Inside the window a partial return is allowed too (the screen offers the cancellation first).
    expect((await terminal.getReceipt(receipt.id)).cancellation.remedy).toBe('cancelar');
    const ret = await terminal.returnReceipt(receipt.id, { ...input, consumer: { document: '111.444.777-35', name: 'Maria Souza' } });
    expect(ret).toMatchObject({ state: 'authorized', totalCents: 1890 });
    const row = terminal.store.returns.returnRow(ret.id)!;
    expect(JSON.parse(row.request_json)).toEqual({
      chave_nfce: receipt.chave,
      itens: [{ numero_item: 1, quantidade: '1' }],
      justificativa: REASON,
      destinatario: { cpf: '11144477735', nome: 'Maria Souza' },
    });
    const xml = (await http.get(`/api/v1/nfe/${row.service_id}/xml`)).text;
    expect(xml).toContain('<CPF>11144477735</CPF>');
    // A cancelled receipt has nothing to return.
    const other = await sell(terminal, '52998224725');
    await terminal.cancelReceipt(other.receipt.id, { managerId: manager.id, pin: PIN, justification: 'Cliente desistiu da compra no caixa' });
    await expect(terminal.returnReceipt(other.receipt.id, { managerId: manager.id, pin: PIN, reason: REASON })).rejects.toMatchObject({
      code: 'estado_invalido',
    });
  });
});
