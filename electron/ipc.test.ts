// The dispatch shared by Electron IPC and the browser host, against a real terminal core (its
// own SQLite file, the service unreachable): only allow-listed methods run, terminal errors come
// back as data with their code and field, and anything else becomes a generic 500 whose details
// go to the log only.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalApi } from './api/terminal-api.ts';
import { createTerminal, type Terminal } from './core/terminal.ts';
import { dispatch } from './ipc.ts';

let dir: string;
let terminal: Terminal;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-ipc-'));
  terminal = await createTerminal({ dataDir: dir, serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 1, startWorker: false });
  terminal.seedDemoCatalog();
});

afterAll(async () => {
  await terminal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('dispatch', () => {
  it('runs an allow-listed method with its arguments and wraps the result', async () => {
    const out = await dispatch(terminal, 'findProducts', ['café', 5]);
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ result: [expect.objectContaining({ code: '1001', description: expect.stringMatching(/caf/i) })] });
  });

  it('refuses names that are not on the allow-list, inherited ones included, without calling anything', async () => {
    const before = (await terminal.openSales()).length;
    for (const name of ['subscribe', 'close', 'createManager', 'seedDemoCatalog', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 42, null]) {
      const out = await dispatch(terminal, name, []);
      expect(out.status, String(name)).toBe(404);
      expect(out.body).toMatchObject({ error: { code: 'nao_encontrado' } });
    }
    expect((await terminal.openSales()).length).toBe(before);
  });

  it('refuses arguments that are not a list', async () => {
    for (const args of [undefined, null, 'x', { 0: 'a' }, ['a']]) {
      const out = await dispatch(terminal, 'openSale', args);
      expect(out.status).toBe(400);
      expect(out.body).toMatchObject({ error: { code: 'estado_invalido', field: 'args' } });
    }
    expect(await terminal.openSales()).toEqual([]);
  });

  it("refuses more arguments than the screen API declares: the core's test-only options stay out of reach", async () => {
    // cancelReceipt(receiptId, input) on the screen; the core's third argument lets a test send a
    // cancellation past the local window, which no page may do.
    const out = await dispatch(terminal, 'cancelReceipt', [
      'qualquer',
      { managerId: 'x', pin: '0000', justification: 'j'.repeat(20) },
      { skipLocalWindowCheck: true },
    ]);
    expect(out.status).toBe(400);
    expect(out.body).toMatchObject({ error: { code: 'estado_invalido', field: 'args', message: expect.stringContaining('cancelReceipt') } });
    // The declared count passes through (and reaches the core, which answers for the receipt).
    const declared = await dispatch(terminal, 'cancelReceipt', ['qualquer', { managerId: 'x', pin: '0000', justification: 'j'.repeat(20) }]);
    expect(declared.body).toMatchObject({ error: { code: 'nao_encontrado' } });
  });

  it("returns the core's TerminalError as data, code and field intact", async () => {
    const sale = (await dispatch(terminal, 'openSale', [])).body as { result: { id: string } };
    const out = await dispatch(terminal, 'setConsumer', [sale.result.id, '123']);
    expect(out.status).toBe(422);
    expect(out.body).toEqual({ error: { code: 'documento_invalido', message: expect.any(String), field: 'consumer' } });
    const missing = await dispatch(terminal, 'addItem', [sale.result.id, { code: 'nao-existe' }]);
    expect(missing.body).toMatchObject({ error: { code: 'produto_nao_encontrado' } });
  });

  it('turns any other failure into a generic 500 and reports the real error to the log only', async () => {
    const boom = new TypeError('segredo interno: /caminho/do/banco');
    const broken = new Proxy(terminal, {
      get: (target, prop, receiver) => (prop === 'queueStatus' ? () => Promise.reject(boom) : Reflect.get(target, prop, receiver)),
    }) as TerminalApi;
    const logged: unknown[] = [];
    const out = await dispatch(broken, 'queueStatus', [], { onInternalError: (err, method) => logged.push(err, method) });
    expect(out).toEqual({ status: 500, body: { error: { code: 'erro_servico', message: 'Erro interno do terminal' } } });
    expect(JSON.stringify(out.body)).not.toContain('segredo');
    expect(logged).toEqual([boom, 'queueStatus']);
  });

  it('a full disk mid-day reaches the screen as a sentence that says what to do, the English in the log; nothing is lost, and the sale finishes once there is room', async () => {
    const sale = ((await dispatch(terminal, 'openSale', [])).body as { result: { id: string } }).result;
    await dispatch(terminal, 'addItem', [sale.id, { code: '1001' }]);
    await dispatch(terminal, 'addPayment', [sale.id, { tPag: '01', amountCents: 5000 }]);
    await terminal.openCashSession({ floatCents: 0, operator: 'Caixa' });
    // SQLite's page limit answers exactly what a full disk answers: SQLITE_FULL, "database or disk is full".
    const pages = terminal.store.db.pragma('page_count', { simple: true }) as number;
    terminal.store.db.pragma(`max_page_count = ${pages}`);
    // Each finished sale grows the receipts, the outbox and the audit: a few fill the last pages.
    const logged: unknown[] = [];
    let out: Awaited<ReturnType<typeof dispatch>> | undefined;
    for (let i = 0; i < 200 && out?.status !== 500; i++) {
      const next = i === 0 ? sale : ((await dispatch(terminal, 'openSale', [])).body as { result: { id: string } }).result;
      if (i > 0) {
        await dispatch(terminal, 'addItem', [next.id, { code: '1001' }]);
        await dispatch(terminal, 'addPayment', [next.id, { tPag: '01', amountCents: 5000 }]);
      }
      out = await dispatch(terminal, 'finishSale', [next.id], { onInternalError: (err) => logged.push(err), dataDir: dir });
    }
    expect(out).toEqual({ status: 500, body: { error: { code: 'falha_sistema', message: expect.stringContaining('O disco está cheio') } } });
    expect((out!.body as { error: { message: string } }).error.message).toContain(dir);
    expect((out!.body as { error: { message: string } }).error.message).toContain('libere espaço');
    expect(logged).toEqual([expect.objectContaining({ code: 'SQLITE_FULL', message: 'database or disk is full' })]);
    // The failed sale is still open, untouched: with room again it finishes.
    const open = await terminal.openSales();
    expect(open.length).toBeGreaterThan(0);
    terminal.store.db.pragma('max_page_count = 1073741823');
    const finished = await dispatch(terminal, 'finishSale', [open[open.length - 1]!.id]);
    expect(finished.status).toBe(200);
  });
});
