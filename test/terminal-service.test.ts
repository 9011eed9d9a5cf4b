// The terminal core against the real `balcao service` process over real HTTP (sandbox
// authority): a sale reaches autorizado; a 391 rejection is corrected and resubmitted with the
// same number and key and authorized; a cancellation inside the window works; outside it the
// terminal refuses, and when forced the service refuses too; an abandoned number is voided; the
// queue survives the service being down.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Terminal } from '../electron/core/terminal.ts';
import { api, closedPort, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { eventually, storeCompany, testTerminal } from './terminal-fixtures.ts';
import { ACCESS_KEY } from '../base/common/access-key.ts';

let service: ServiceProcess;
let serviceDir: string;
const terminals: Terminal[] = [];

beforeAll(async () => {
  serviceDir = tempDataDir('balcao-terminal-service-');
  service = await startService({ dataDir: serviceDir });
});

afterAll(async () => {
  for (const t of terminals) await t.close();
  await service?.stop();
});

/** A terminal of its own company (own CNPJ, own sandbox clock), with a manager. */
async function setup(options: { pollWindow?: number } = {}) {
  const company = await storeCompany(serviceDir);
  const terminal = await testTerminal({
    serviceUrl: service.url,
    token: company.token,
    series: 1,
    ...(options.pollWindow !== undefined && { pollWindow: options.pollWindow, pollConcurrency: 1 }),
  });
  terminals.push(terminal);
  const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
  return { terminal, company, manager, http: api(service.url, company.token) };
}

async function sell(terminal: Terminal, payment: Parameters<Terminal['addPayment']>[1] | 'cash' = 'cash') {
  let sale = await terminal.openSale();
  sale = await terminal.addItem(sale.id, { code: '1001', quantity: '2' });
  sale = await terminal.addItem(sale.id, { code: '1006', quantity: '0.35' });
  sale = await terminal.addPayment(sale.id, payment === 'cash' ? { tPag: '01', amountCents: 5000 } : payment);
  return terminal.finishSale(sale.id);
}

const settled = (t: Terminal, id: string, states: string[]) => t.waitForReceipt(id, (r) => states.includes(r.state), 30_000);

describe('the connection to the service', () => {
  it('a new address is probed at once: the status follows the service there, not the old address, without waiting for the next health check', async () => {
    const company = await storeCompany(serviceDir);
    // Left pointing at the service's previous address, where nothing listens any more (a
    // restart on another port), with the health check as far apart as in a store.
    const terminal = await testTerminal({ serviceUrl: `http://127.0.0.1:${await closedPort()}`, token: company.token, series: 1, healthIntervalMs: 60_000 });
    terminals.push(terminal);
    await eventually('fora do ar no endereço antigo', async () => (await terminal.queueStatus()).online === false);
    terminal.configure({ serviceUrl: service.url }, 'o serviço voltou em outro endereço');
    await eventually('online no endereço novo', async () => (await terminal.queueStatus()).online === true, 5_000);
    expect((await terminal.queueStatus()).lastError).toBeNull();
  });
});

describe('the service’s warnings for the manager', () => {
  it('from 1 December on its clock, a regime-normal company’s terminal is told in words that next year’s CBS is missing; the operator’s one command clears it', async () => {
    const company = await storeCompany(serviceDir);
    const crt3 = await runCli(['company', 'update', '--data', serviceDir, '--empresa', company.companyId, '--crt', '3']);
    expect(crt3.code, crt3.stderr).toBe(0);
    const toDecember = Math.ceil((Date.parse('2026-12-01T12:00:00-03:00') - Date.now()) / 60_000);
    if (toDecember > 0) expect((await api(service.url, company.token).post('/api/v1/sandbox/relogio', { avancar_minutos: toDecember })).status).toBe(200);
    const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1 });
    terminals.push(terminal);
    const operator = (periods: string) => runCli(['ibscbs', 'aliquotas', '--data', serviceDir, '--periodos', periods]);
    try {
      await eventually('o aviso chega ao terminal', async () => (await terminal.queueStatus()).serviceNotices.length > 0);
      expect((await terminal.queueStatus()).serviceNotices).toEqual([
        expect.stringMatching(/^Alíquotas do IBS\/CBS de 202[78]: .*alíquota provisória do Balcão \(CBS 8,80 %\).*Peça ao operador do serviço de emissão/),
      ]);
      expect((await operator('2027-01-01..2028-12-31 cbs=8.80')).code).toBe(0);
      await eventually('o aviso sai do terminal', async () => (await terminal.queueStatus()).serviceNotices.length === 0);
    } finally {
      await operator('');
    }
  });
});

describe('issuing through the real service', () => {
  it('a sale reaches autorizado: the service has it with our number, key and total', async () => {
    const { terminal, http, manager } = await setup();
    const { receipt } = await sell(terminal);
    expect(receipt.state).toBe('pending');
    const done = await settled(terminal, receipt.id, ['authorized', 'rejected', 'needs_attention']);
    expect(done).toMatchObject({ state: 'authorized', nNF: 1, serie: 1, codigoStatus: '100', attention: null, canCorrect: false });
    expect(done.chave).toMatch(ACCESS_KEY);
    expect(done.protocolo).toMatch(/^[0-9]{15}$/);
    expect(done.cancellation).toMatchObject({ allowed: true, remedy: 'cancelar' });
    expect(done.cancellation.secondsLeft).toBeGreaterThan(28 * 60);

    const row = terminal.store.receipts.receipt(receipt.id)!;
    const atService = await http.get(`/api/v1/nfce/${row.service_id}`);
    expect(atService.status).toBe(200);
    expect(atService.body).toMatchObject({
      status: 'autorizado',
      numero: 1,
      serie: 1,
      chave: done.chave,
      valor_total: '43.02', // 2 × 18.90 + 0.35 × 14.90 (5.215 → 5.22)
      referencia_externa: row.idempotency_key,
    });
    expect(terminal.store.outbox.outboxOf(receipt.id)).toEqual([expect.objectContaining({ kind: 'emit', state: 'done' })]);

    const status = await terminal.queueStatus();
    expect(status).toMatchObject({ online: true, pending: 0, needsAttention: 0, oldestPendingAt: null, lastError: null });

    // A second copy is the manager's: a wrong PIN prints nothing.
    const asked = { managerId: manager.id, pin: '0000', reason: 'Cliente pediu segunda via' };
    await expect(terminal.reprint(receipt.id, asked)).rejects.toMatchObject({ code: 'pin_invalido' });
    const reprint = await terminal.reprint(receipt.id, { ...asked, pin: '2580' });
    expect(Buffer.from(reprint.escposBase64, 'base64').length).toBeGreaterThan(500);
    expect(terminal.auditLog(receipt.id)).toEqual([
      expect.objectContaining({ actor_kind: 'manager', action: 'pin_recusado', reason: 'reimpressao' }),
      expect.objectContaining({ actor_kind: 'manager', actor_name: 'Gerente Ana', action: 'reimpressao', reason: 'Cliente pediu segunda via' }),
    ]);
  });

  it('a 391 rejection is corrected (card data) and resubmitted with the same nNF and key, then authorized', async () => {
    const { terminal, http, manager } = await setup();
    // A card payment without its card group: the authority rejects it with 391.
    const { receipt } = await sell(terminal, { tPag: '03', amountCents: 4302 });
    const rejected = await settled(terminal, receipt.id, ['authorized', 'rejected', 'needs_attention']);
    expect(rejected).toMatchObject({ state: 'rejected', codigoStatus: '391', nNF: 1, canCorrect: true, canVoid: true });
    expect(rejected.attention).toMatch(/391.*mesmo/);
    const key = terminal.store.receipts.receipt(receipt.id)!.idempotency_key;
    const rejectedAtService = terminal.store.receipts.receipt(receipt.id)!.service_id!;
    expect((await http.get(`/api/v1/nfce/${rejectedAtService}`)).body).toMatchObject({ status: 'rejeitado', codigo_status: '391', numero: 1 });
    expect((await terminal.queueStatus()).needsAttention).toBe(1);

    const correction = { payments: [{ tPag: '03' as const, amountCents: 4302, card: { tpIntegra: '2' as const, tBand: '01' } }] };
    const auth = { managerId: manager.id, pin: '2580', reason: 'Dados do cartão informados (rejeição 391)' };
    // The manager's PIN is checked before anything changes.
    await expect(terminal.correctAndResubmit(receipt.id, correction, { ...auth, pin: '1111' })).rejects.toMatchObject({ code: 'pin_invalido' });
    expect(terminal.store.receipts.receipt(receipt.id)).toMatchObject({ state: 'rejected', corrections: 0 });
    const corrected = await terminal.correctAndResubmit(receipt.id, correction, auth);
    expect(corrected).toMatchObject({ state: 'pending', nNF: 1, attention: null });
    const authorized = await settled(terminal, receipt.id, ['authorized', 'rejected', 'needs_attention']);
    expect(authorized).toMatchObject({ state: 'authorized', nNF: 1, codigoStatus: '100' });

    const row = terminal.store.receipts.receipt(receipt.id)!;
    expect(row.idempotency_key).toBe(key);
    expect(row.corrections).toBe(1);
    expect(row.service_id).not.toBe(rejectedAtService); // a new attempt at the service, replacing the rejected one
    const atService = await http.get(`/api/v1/nfce/${row.service_id}`);
    expect(atService.body).toMatchObject({ status: 'autorizado', numero: 1, referencia_externa: key });
    // The same key now replays the authorized receipt: nothing new can be issued under it.
    const replay = await http.post('/api/v1/nfce', JSON.parse(row.request_json), { headers: { 'idempotency-key': key } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: row.service_id, idempotent_replay: true });
    expect(terminal.store.outbox.outboxOf(receipt.id)).toEqual([expect.objectContaining({ kind: 'emit', state: 'done', idempotency_key: key })]);
    expect(terminal.auditLog(receipt.id)).toEqual([
      expect.objectContaining({ actor_kind: 'manager', action: 'pin_recusado', reason: 'correcao' }),
      expect.objectContaining({
        actor_kind: 'manager',
        actor_name: 'Gerente Ana',
        action: 'correcao_reenvio',
        reason: 'Dados do cartão informados (rejeição 391)',
      }),
    ]);
    const details = JSON.parse(terminal.auditLog(receipt.id)[1]!.details!);
    expect(details.rejeicao).toMatchObject({ codigo_status: '391' });
    expect(details.depois.payments[0].card).toEqual({ tpIntegra: '2', tBand: '01' });
  });

  it('a manager cancels inside the window; the number stays consumed', async () => {
    const { terminal, manager, http } = await setup();
    const { receipt } = await sell(terminal);
    await settled(terminal, receipt.id, ['authorized']);
    await expect(
      terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '0000', justification: 'Cliente desistiu da compra no caixa' }),
    ).rejects.toMatchObject({
      code: 'pin_invalido',
    });
    await expect(terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '2580', justification: 'curta' })).rejects.toMatchObject({
      code: 'justificativa_invalida',
    });
    const cancelled = await terminal.cancelReceipt(receipt.id, { managerId: manager.id, pin: '2580', justification: 'Cliente desistiu da compra no caixa' });
    expect(cancelled).toMatchObject({ state: 'cancelled', nNF: 1, cancellation: { allowed: false, remedy: null } });
    expect(cancelled.canceladoEm).toBeTruthy();
    const row = terminal.store.receipts.receipt(receipt.id)!;
    expect((await http.get(`/api/v1/nfce/${row.service_id}`)).body).toMatchObject({ status: 'cancelado', numero: 1 });
    expect(terminal.auditLog(receipt.id).map((a) => [a.actor_kind, a.action])).toEqual([
      ['manager', 'pin_recusado'],
      ['manager', 'cancelamento_solicitado'],
      ['system', 'cancelamento_confirmado'],
    ]);
    // The next sale takes the next number: a cancelled one is never reused.
    const next = await sell(terminal);
    expect(next.receipt.nNF).toBe(2);
    await settled(terminal, next.receipt.id, ['authorized']);
  });

  it("after the window on the service's clock the terminal refuses and offers the return; forced, the service refuses too", async () => {
    const { terminal, manager, http } = await setup();
    const { receipt } = await sell(terminal);
    await settled(terminal, receipt.id, ['authorized']);
    expect((await terminal.getReceipt(receipt.id)).cancellation).toMatchObject({ allowed: true, remedy: 'cancelar' });
    // 31 minutes later for the service (sandbox clock) only: the terminal's own clock does not
    // move. It learns the service's time from the Date of the next answer, here the next sale's.
    expect((await http.post('/api/v1/sandbox/relogio', { avancar_minutos: 31 })).status).toBe(200);
    await settled(terminal, (await sell(terminal)).receipt.id, ['authorized']);
    expect(terminal.serviceClock.offsetMs).toBeGreaterThan(30 * 60_000);

    const view = await terminal.getReceipt(receipt.id);
    expect(view.cancellation).toMatchObject({ allowed: false, secondsLeft: 0, remedy: 'devolucao' });
    const input = { managerId: manager.id, pin: '2580', justification: 'Cliente desistiu da compra no caixa' };
    await expect(terminal.cancelReceipt(receipt.id, input)).rejects.toMatchObject({
      code: 'prazo_expirado',
      remedy: 'devolucao',
      message: expect.stringMatching(/devolução/),
    });
    expect(terminal.store.outbox.outboxOf(receipt.id).filter((e) => e.kind === 'cancel')).toEqual([]);

    const forced = await terminal.cancelReceipt(receipt.id, input, { skipLocalWindowCheck: true });
    expect(forced.state).toBe('authorized');
    expect(forced.attention).toMatch(/prazo.*devolu/i);
    // In the terminal's words: the service's message (an endpoint, for integrators) never shows.
    expect(forced.attention).not.toMatch(/\/api\/|\bPOST\b/);
    expect(forced.cancellation.remedy).toBe('devolucao');
    const cancel = terminal.store.outbox.outboxOf(receipt.id).find((e) => e.kind === 'cancel')!;
    expect(cancel).toMatchObject({ state: 'failed' });
    expect(cancel.last_error).toMatch(/prazo/i);
    const row = terminal.store.receipts.receipt(receipt.id)!;
    expect((await http.get(`/api/v1/nfce/${row.service_id}`)).body).toMatchObject({ status: 'autorizado' });
    expect(terminal.auditLog(receipt.id).map((a) => a.action)).toEqual(['cancelamento_solicitado', 'cancelamento_recusado']);
  });

  it("the receipts list judges the window on the service's clock as it is now, not as of the last exchange", async () => {
    const company = await storeCompany(serviceDir);
    // Health checks as far apart as in a store: nothing else tells the terminal the time.
    const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, healthIntervalMs: 600_000 });
    terminals.push(terminal);
    const { receipt } = await sell(terminal);
    await settled(terminal, receipt.id, ['authorized']);
    // Another terminal's manager (or the sandbox) moves the service's clock; this terminal has
    // sent nothing since.
    expect((await api(service.url, company.token).post('/api/v1/sandbox/relogio', { avancar_minutos: 31 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    const [listed] = await terminal.recentReceipts(1);
    expect(listed).toMatchObject({ id: receipt.id, cancellation: { allowed: false, secondsLeft: 0, remedy: 'devolucao' } });
  });

  it('an abandoned rejected number is voided (inutilização): no silent gap, numbering goes on', async () => {
    const { terminal, manager } = await setup();
    const { receipt } = await sell(terminal, { tPag: '04', amountCents: 4302 });
    await settled(terminal, receipt.id, ['rejected']);
    const voided = await terminal.voidReceipt(receipt.id, { managerId: manager.id, pin: '2580', justification: 'Venda abandonada pelo cliente no caixa' });
    expect(voided).toMatchObject({ state: 'voided', nNF: 1, codigoStatus: '102', canVoid: false, canCorrect: false });
    expect(terminal.store.outbox.outboxOf(receipt.id).map((e) => [e.kind, e.state])).toEqual([
      ['emit', 'failed'],
      ['void', 'done'],
    ]);
    const next = await sell(terminal);
    expect((await settled(terminal, next.receipt.id, ['authorized'])).nNF).toBe(2);
    expect(terminal.store.receipts.allReceipts().map((r) => [r.nnf, r.state])).toEqual([
      [1, 'voided'],
      [2, 'authorized'],
    ]);
  });

  it('keeps selling while the authority is unavailable and settles every receipt once it is back', async () => {
    // A poll window of one: only the oldest is followed; the others follow as it settles.
    const { terminal, http } = await setup({ pollWindow: 1 });
    expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
    const receipts: Awaited<ReturnType<typeof sell>>['receipt'][] = [];
    for (let i = 0; i < 3; i++) receipts.push((await sell(terminal)).receipt);
    await eventually('aceitas e em processamento', () => receipts.every((r) => terminal.store.receipts.receipt(r.id)!.state === 'processing'));
    const status = await terminal.queueStatus();
    expect(status).toMatchObject({ online: true, pending: 3 });
    expect(status.oldestPendingAt).toBe(receipts[0]!.createdAt);
    expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
    for (const r of receipts) await settled(terminal, r.id, ['authorized']);
    expect(terminal.store.receipts.allReceipts().map((r) => r.nnf)).toEqual([1, 2, 3]);
    expect((await terminal.queueStatus()).pending).toBe(0);
  });
});
