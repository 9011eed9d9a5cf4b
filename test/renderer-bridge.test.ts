// The screen's side of the bridge (renderer/api/) against the real browser-mode host and a real
// terminal core: results come back as values, terminal errors as TerminalFailure with the core's
// code, field and remedy, a dead host as a Portuguese "no communication" error.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { startBrowserHost, type BrowserHost } from '../electron/host/server.ts';
import { terminalOver, type ScreenTerminal } from '../renderer/api/connect.ts';
import { rpcCall } from '../renderer/api/http-carrier.ts';
import { TerminalFailure } from '../renderer/api/terminal-failure.ts';

let dir: string;
let terminal: Terminal;
let host: BrowserHost;
let screen: ScreenTerminal;

const over = (origin: string, secret: string) =>
  terminalOver({ call: rpcCall(origin, secret), onEvent: () => () => {}, onLink: () => () => {}, saveExport: async () => ({ error: 'sem arquivos aqui' }) });

async function failureOf(p: Promise<unknown>): Promise<TerminalFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TerminalFailure);
    return err as TerminalFailure;
  }
  throw new Error('deveria ter falhado');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-renderer-bridge-'));
  terminal = await createTerminal({ dataDir: dir, serviceUrl: 'http://127.0.0.1:9', token: 'blc_teste', series: 1, startWorker: false });
  terminal.seedDemoCatalog();
  host = await startBrowserHost({ terminal, staticDir: join(dir, 'sem-tela') });
  screen = over(host.origin, host.secret);
});

afterAll(async () => {
  await host?.close();
  await terminal?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('renderer bridge over the browser-mode host', () => {
  it('carries calls and their results', async () => {
    const sale = await screen.openSale();
    const withItem = await screen.addItem(sale.id, { code: '7891000100103', quantity: '2' });
    expect(withItem.items).toMatchObject([{ code: '1001', quantity: '2', totalCents: 3780 }]);
    expect(withItem.totalCents).toBe(3780);
  });

  it('leaves out optional arguments instead of sending null (the core default applies)', async () => {
    // findProducts('', undefined) must list with the default limit, not with a limit of null.
    expect((await screen.findProducts('')).length).toBe(10);
  });

  it('rethrows terminal errors with their code and field', async () => {
    const sale = await screen.openSale();
    const notFound = await failureOf(screen.addItem(sale.id, { code: '0000000000000' }));
    expect(notFound.code).toBe('produto_nao_encontrado');
    const badDocument = await failureOf(screen.setConsumer(sale.id, '123.456.789-00'));
    expect(badDocument.code).toBe('documento_invalido');
    expect(badDocument.field).toBe('consumer');
    expect(badDocument.message).toMatch(/CPF/);
  });

  it('carries the till’s refusal as the till’s: a sale cannot finish with the till closed', async () => {
    let sale = await screen.openSale();
    sale = await screen.addItem(sale.id, { code: '1001' });
    await screen.addPayment(sale.id, { tPag: '01', amountCents: sale.totalCents });
    const closed = await failureOf(screen.finishSale(sale.id));
    expect(closed.code).toBe('caixa_fechado');
    expect(closed.message).toMatch(/^Caixa fechado/);
    await screen.openCashSession({ floatCents: 10_000, operator: 'Maria' });
    expect((await screen.finishSale(sale.id)).receipt.nNF).toBe(1);
    expect((await screen.cashSession())!.countMethods).toEqual([{ tPag: '01', description: 'Dinheiro' }]);
  });

  it('says so in Portuguese when the host cannot be reached or the secret is wrong', async () => {
    const wrongSecret = await failureOf(over(host.origin, 'chave-errada').openSale());
    expect(wrongSecret.message).toMatch(/Chave de acesso do terminal/);
    const dead = await failureOf(over('http://127.0.0.1:9', host.secret).openSale());
    expect(dead.code).toBe('servico_indisponivel');
    expect(dead.message).toMatch(/^Sem comunicação com o terminal/);
  });
});
