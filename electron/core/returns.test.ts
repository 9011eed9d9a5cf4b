// Returns at the terminal with the worker stopped (nothing is sent): what is checked before the
// manager's PIN, what one request writes (the return, its items, its outbox command with a key
// of its own, the audit entry) and the request body the service will get. The exchange with the
// real service is test/terminal-returns.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NfeDocument } from './api-client.ts';
import { decideReturn, decideReturnPoll, DEFAULT_RETRY, returnOutcome } from './outbox-rules.ts';
import { type Failure, type Result } from './failures.ts';
import { createTerminal, type Terminal } from './terminal.ts';

let dir: string;
let terminal: Terminal;
let managerId: string;
const PIN = '2580';
const REASON = 'Cliente devolveu: produto com defeito';
const CHAVE = '35261111222333000181650010000000011000000010';

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-returns-'));
  terminal = await createTerminal({ dataDir: dir, serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 1, startWorker: false, settleWaitMs: 0 });
  terminal.seedDemoCatalog();
  await terminal.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
  managerId = (await terminal.createManager({ name: 'Gerente Ana', pin: PIN })).id;
});

afterEach(async () => {
  await terminal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A finished sale whose receipt the service authorized (set directly: the worker is stopped). */
async function authorizedSale(options: { consumer?: string; removeFirst?: boolean } = {}) {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1005', quantity: '1' }); // removed when asked
  sale = await terminal.addItem(sale.id, { code: '1001', quantity: '3' }); // 3 × 18.90
  sale = await terminal.addItem(sale.id, { code: '1006', quantity: '0.35' }); // 0.35 kg × 14.90 = 5.22 (5.215 rounded up)
  if (options.removeFirst) sale = await terminal.removeItem(sale.id, sale.items[0]!.id);
  if (options.consumer) sale = await terminal.setConsumer(sale.id, options.consumer);
  sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 10_000 });
  const { receipt } = await terminal.finishSale(sale.id);
  const at = new Date().toISOString();
  terminal.store.receipts.updateReceipt(
    receipt.id,
    { state: 'authorized', chave: CHAVE, autorizado_em: at, authorized_seen_at: at, protocolo: '135260000000001' },
    at,
  );
  return { sale, receipt };
}

const auth = { managerId: '', pin: PIN };
const input = (over: object = {}) => ({ ...auth, managerId, reason: REASON, ...over });

describe('requesting a return', () => {
  it('writes the return, its items, an outbox command with its own key and the audit entry; the body maps items to nItem', async () => {
    const { sale, receipt } = await authorizedSale({ consumer: '52998224725', removeFirst: true });
    const [, coffee, bread] = sale.items;
    const ret = await terminal.returnReceipt(
      receipt.id,
      input({
        items: [
          { itemId: bread!.id, quantity: '0.35' },
          { itemId: coffee!.id, quantity: '1' },
        ],
      }),
    );
    expect(ret).toMatchObject({
      receiptId: receipt.id,
      state: 'pending',
      serie: null,
      nNF: null,
      chave: null,
      totalCents: 522 + 1890,
      items: [
        { itemId: coffee!.id, quantity: '1', totalCents: 1890 },
        { itemId: bread!.id, quantity: '0.35', totalCents: 522 },
      ],
    });
    const row = terminal.store.returns.returnRow(ret.id)!;
    // The removed item is not on the receipt: coffee is nItem 1, bread nItem 2.
    expect(JSON.parse(row.request_json)).toEqual({
      chave_nfce: CHAVE,
      itens: [
        { numero_item: 2, quantidade: '0.35' },
        { numero_item: 1, quantidade: '1' },
      ],
      justificativa: REASON,
      destinatario: { cpf: '52998224725' },
    });
    const commands = terminal.store.outbox.outboxOf(receipt.id).filter((e) => e.kind === 'return');
    expect(commands).toEqual([expect.objectContaining({ state: 'pending', idempotency_key: row.idempotency_key, payload: row.request_json })]);
    expect(row.idempotency_key).not.toBe(terminal.store.receipts.receipt(receipt.id)!.idempotency_key);
    expect(terminal.auditLog(receipt.id)).toEqual([expect.objectContaining({ actor_kind: 'manager', action: 'devolucao_solicitada', reason: REASON })]);
    expect((await terminal.queueStatus()).pending).toBeGreaterThanOrEqual(1);
    // One return of a receipt at a time.
    await expect(terminal.returnReceipt(receipt.id, input({ items: [{ itemId: coffee!.id, quantity: '1' }] }))).rejects.toMatchObject({
      code: 'estado_invalido',
      message: expect.stringMatching(/em andamento/),
    });
  });

  it('checks everything before the PIN, naming the field, and writes nothing when refused', async () => {
    const { sale, receipt } = await authorizedSale({ removeFirst: true });
    const [removed, coffee] = sale.items;
    const cases: [object, string, string][] = [
      [{ reason: 'curto' }, 'justificativa_invalida', 'reason'],
      [{ items: [] }, 'quantidade_invalida', 'items'],
      [{ items: [{ itemId: removed!.id, quantity: '1' }] }, 'quantidade_invalida', 'items[0].itemId'],
      [{ items: [{ itemId: coffee!.id, quantity: '3.0001' }] }, 'quantidade_invalida', 'items[0].quantity'],
      [{ items: [{ itemId: coffee!.id, quantity: '0' }] }, 'quantidade_invalida', 'items[0].quantity'],
      [{ items: [{ itemId: coffee!.id, quantity: '1,5' }] }, 'quantidade_invalida', 'items[0].quantity'],
      [
        {
          items: [
            { itemId: coffee!.id, quantity: '1' },
            { itemId: coffee!.id, quantity: '1' },
          ],
        },
        'quantidade_invalida',
        'items[1].itemId',
      ],
      // No consumer on the receipt: one must be named.
      [{}, 'documento_invalido', 'consumer'],
      [{ consumer: { document: '123', name: 'Maria' } }, 'documento_invalido', 'consumer'],
      [{ consumer: { document: '11144477735', name: 'M' } }, 'documento_invalido', 'consumer.name'],
    ];
    for (const [over, code, field] of cases) {
      await expect(terminal.returnReceipt(receipt.id, input({ pin: '0000', ...over })), JSON.stringify(over)).rejects.toMatchObject({ code, field });
    }
    // Only now is the PIN asked: a wrong one is the only audit entry.
    await expect(terminal.returnReceipt(receipt.id, input({ pin: '0000', consumer: { document: '11144477735', name: 'Maria' } }))).rejects.toMatchObject({
      code: 'pin_invalido',
    });
    expect(terminal.auditLog(receipt.id).map((a) => a.action)).toEqual(['pin_recusado']);
    expect(await terminal.listReturns()).toEqual([]);
    expect(terminal.store.outbox.outboxOf(receipt.id).map((e) => e.kind)).toEqual(['emit']);
  });

  it('only an authorized receipt; the consumer of the receipt cannot be replaced; by default every item left comes back', async () => {
    const { receipt } = await authorizedSale({ consumer: '52998224725' });
    await expect(terminal.returnReceipt(receipt.id, input({ consumer: { document: '11144477735', name: 'Outra Pessoa' } }))).rejects.toMatchObject({
      code: 'documento_invalido',
      field: 'consumer.document',
    });
    const all = await terminal.returnReceipt(receipt.id, input({ consumer: { document: '529.982.247-25', name: 'José da Silva' } }));
    expect(all.items.map((i) => i.quantity)).toEqual(['1', '3', '0.35']);
    expect(all.totalCents).toBe(949 + 5670 + 522);
    expect(JSON.parse(terminal.store.returns.returnRow(all.id)!.request_json).destinatario).toEqual({ cpf: '52998224725', nome: 'José da Silva' });

    let sale = await terminal.openSale();
    sale = await terminal.addItem(sale.id, { code: '1001' });
    sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: 1890 });
    const pending = (await terminal.finishSale(sale.id)).receipt;
    await expect(terminal.returnReceipt(pending.id, input())).rejects.toMatchObject({ code: 'estado_invalido' });
    await expect(terminal.returnReceipt('nao-existe', input())).rejects.toMatchObject({ code: 'nao_encontrado' });
  });
});

describe("the decisions on the service's answers (outbox-rules.ts)", () => {
  const half = () => 0.5;
  const fail = (f: Failure): Result<never> => ({ ok: false, failure: f });
  const http = (status: number, code: string, extra: object = {}): Failure => ({
    kind: 'http',
    status,
    code,
    message: 'mensagem do serviço',
    details: [],
    ...extra,
  });
  const doc = (situacao: NfeDocument['situacao'], over: Partial<NfeDocument> = {}): NfeDocument => ({
    id: 'n1',
    tipo: 'devolucao',
    situacao,
    status: situacao === 'processando' ? null : situacao === 'autorizado' ? '100' : '539',
    motivo: situacao === 'rejeitado' ? 'Duplicidade' : null,
    serie: 1,
    numero: 7,
    chave: '35261111222333000181550010000000071000000070',
    chave_nfce: CHAVE,
    protocolo: situacao === 'autorizado' ? '135260000000002' : null,
    autorizado_em: situacao === 'autorizado' ? '2026-11-23T10:00:00-03:00' : null,
    valor_total: '54.90',
    nfce_id: 'c1',
    emitido_em: '2026-11-23T09:59:00-03:00',
    justificativa: 'Cliente devolveu as mercadorias',
    ambiente: 'homologacao',
    referencia_externa: null,
    criado_em: '2026-11-23T09:59:00-03:00',
    itens: [],
    ...over,
  });

  it('202 is polled, 200 is the verdict, 409 follows the document in flight, transport failures retry, a refusal is final', () => {
    const accepted = { id: 'n1', tipo: 'devolucao', situacao: 'processando', serie: 1, numero: 7, chave: doc('processando').chave, message: 'ok' } as const;
    expect(decideReturn({ ok: true, value: { status: 202, replay: false, body: accepted } }, DEFAULT_RETRY, half)).toMatchObject({
      action: 'accepted',
      accepted,
    });
    expect(decideReturn({ ok: true, value: { status: 200, replay: true, body: doc('autorizado') } }, DEFAULT_RETRY, half)).toMatchObject({ action: 'settled' });
    expect(decideReturn(fail(http(409, 'em_processamento', { documentId: 'n1', retryAfterSeconds: 1 })), DEFAULT_RETRY, half)).toMatchObject({
      action: 'poll',
      serviceId: 'n1',
    });
    expect(decideReturn(fail({ kind: 'network', failure: 'timeout', message: 'rede' }), DEFAULT_RETRY, half)).toMatchObject({
      action: 'retry',
      transport: true,
    });
    expect(decideReturn(fail(http(503, 'servico_indisponivel')), DEFAULT_RETRY, half)).toMatchObject({ action: 'retry' });
    const refused = decideReturn(
      fail(http(422, 'validacao', { details: [{ field: 'itens[0].quantidade', message: 'maior que o disponível' }] })),
      DEFAULT_RETRY,
      half,
    );
    expect(refused).toEqual({
      action: 'refused',
      message: 'O serviço de emissão recusou a devolução: a SEFAZ não aceitaria os dados do documento (item 1, quantidade: maior que o disponível).',
    });
    expect(decideReturn(fail(http(404, 'nao_encontrado')), DEFAULT_RETRY, half)).toMatchObject({ action: 'refused' });
  });

  it('polls while processando, resends (same key) when the service forgot the id, and maps the verdicts', () => {
    expect(decideReturnPoll({ ok: true, value: doc('processando') }, 0, DEFAULT_RETRY, half)).toMatchObject({ action: 'poll' });
    expect(decideReturnPoll({ ok: true, value: doc('rejeitado') }, 3, DEFAULT_RETRY, half)).toMatchObject({ action: 'final' });
    expect(decideReturnPoll(fail(http(404, 'nao_encontrado')), 0, DEFAULT_RETRY, half)).toMatchObject({ action: 'resend' });
    expect(returnOutcome(doc('autorizado'))).toEqual({
      patch: {
        state: 'authorized',
        service_id: 'n1',
        serie: 1,
        nnf: 7,
        chave: doc('autorizado').chave,
        codigo_status: '100',
        motivo: null,
        total_cents: 5490,
        protocolo: '135260000000002',
        autorizado_em: '2026-11-23T10:00:00-03:00',
        attention: null,
      },
      final: true,
    });
    expect(returnOutcome(doc('rejeitado'))).toMatchObject({
      patch: { state: 'rejected', attention: expect.stringMatching(/539.*nova devolução/) },
      final: true,
    });
    expect(returnOutcome(doc('processando'))).toMatchObject({ patch: { state: 'processing' }, final: false });
  });
});
