// AutoPrint and the receipt's XML on a real terminal database: a receipt is owed a print from
// the transaction that authorizes it (the trigger), printed once, never when cancelled first or
// issued in contingency; while the XML cannot be obtained nothing is claimed and it is tried
// again later.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixturePath } from '../../fiscal/testdata/fixtures.ts';
import { MemoryPrinter } from '../../native/printer/transports.ts';
import { closedPort } from '../../test/helpers/service-process.ts';
import { IssuanceClient } from './api-client.ts';
import { seedDemoCatalog } from './catalog.ts';
import { PosStore } from './pos-store.ts';
import { DEFAULT_PRINTER_SETTINGS, ReceiptPrinter } from './printing.ts';
import { AutoPrint, ReceiptDocuments } from './receipt-documents.ts';
import * as sales from './sales.ts';
import { iso } from '../../base/common/clock.ts';

const XML = readFileSync(fixturePath('nfce_tpEmis1_qrV2_online_signed_testcert.xml'), 'utf8');
// What GET /nfce/{id}/xml gives for an authorized receipt: the NFe with its protocol.
const NFE_PROC = `<nfeProc versao="4.00" xmlns="http://www.portalfiscal.inf.br/nfe">${XML.replace(/^<\?xml[^>]*>/, '')}<protNFe versao="4.00"/></nfeProc>`;

let dir: string;
let store: PosStore;
let memory: MemoryPrinter;
let printer: ReceiptPrinter;
let deadUrl: string;
const clock = () => Date.parse('2026-11-22T15:00:00.000Z');
const at = iso(clock());

function receipt(): string {
  const ctx = { store, clock, serie: 1 };
  const sale = sales.openSale(ctx);
  sales.addItem(ctx, sale.id, { code: '1002' });
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 5000 });
  return sales.finishSale(ctx, sale.id).receipt.id;
}

const authorize = (id: string, patch: Parameters<PosStore['receipts']['updateReceipt']>[1] = {}) =>
  store.transaction(() => store.receipts.updateReceipt(id, { state: 'authorized', service_id: `svc-${id}`, ...patch }, at));

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`tempo esgotado esperando: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-receipt-documents-'));
  store = PosStore.open(dir);
  store.series.ensureSeries(1);
  seedDemoCatalog(store, at);
  memory = new MemoryPrinter();
  printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
  deadUrl = `http://127.0.0.1:${await closedPort()}`;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function autoPrint(retryMs?: number) {
  const documents = new ReceiptDocuments({ store, client: new IssuanceClient({ baseUrl: deadUrl, token: 't', timeoutMs: 500 }), clock });
  return { documents, auto: new AutoPrint({ store, printer, documents, retryMs }) };
}

describe('AutoPrint', () => {
  it('prints an online receipt once when it becomes authorized, and only then', async () => {
    const id = receipt();
    store.receipts.putReceiptXml(id, NFE_PROC, at);
    expect(store.printLog.receiptsToPrintAutomatically(10)).toEqual([]); // pending: nothing owed yet
    authorize(id);
    expect(store.printLog.receiptsToPrintAutomatically(10).map((r) => r.id)).toEqual([id]);

    const { auto } = autoPrint();
    auto.schedule();
    auto.schedule(); // coalesced with the sweep in progress
    await until('a impressão', () => memory.jobs.length === 1);
    await auto.stop();
    expect(store.printLog.receiptsToPrintAutomatically(10)).toEqual([]);
    expect(store.printLog.printJobs(id)).toEqual([expect.objectContaining({ automatic: 1, copy: 'unica', state: 'printed' })]);

    // A cancellation refused brings it back to authorized: it was printed, it is not owed again.
    store.transaction(() => store.receipts.updateReceipt(id, { state: 'cancelling' }, at));
    authorize(id);
    expect(store.printLog.receiptsToPrintAutomatically(10)).toEqual([]);
  });

  it('does not print a receipt cancelled before its print, nor a contingency receipt', async () => {
    const cancelled = receipt();
    authorize(cancelled);
    store.transaction(() => store.receipts.updateReceipt(cancelled, { state: 'cancelled' }, at));
    const offline = receipt();
    store.transaction(() => store.receipts.updateReceipt(offline, { tp_emis: 9 }, at));
    authorize(offline);
    expect(store.printLog.receiptsToPrintAutomatically(10)).toEqual([]);
    expect(store.db.prepare('SELECT count(*) FROM print_due').pluck().get()).toBe(0);
  });

  it('without the XML (service away) claims nothing and tries again later', async () => {
    const id = receipt();
    authorize(id);
    const { auto } = autoPrint(50);
    auto.schedule();
    await auto.idle();
    expect(store.printLog.printJobs(id)).toEqual([]);
    expect(store.printLog.receiptsToPrintAutomatically(10).map((r) => r.id)).toEqual([id]);
    store.receipts.putReceiptXml(id, NFE_PROC, at); // as if the service answered
    await until('a impressão na nova tentativa', () => memory.jobs.length === 1);
    await auto.stop();
  });
});

describe('ReceiptDocuments', () => {
  it('renders from the kept XML; without it, and without the service, says so in Portuguese', async () => {
    const id = receipt();
    const { documents } = autoPrint();
    await expect(documents.xml(store.receipts.receipt(id)!)).rejects.toMatchObject({
      code: 'estado_invalido',
      message: expect.stringContaining('ainda não foi autorizada'),
    });
    authorize(id);
    await expect(documents.xml(store.receipts.receipt(id)!)).rejects.toMatchObject({ code: 'servico_indisponivel' });
    store.receipts.putReceiptXml(id, NFE_PROC, at);
    const preview = await documents.preview(store.receipts.receipt(id)!, printer);
    expect(preview.receiptId).toBe(id);
    expect(preview.svg).toMatch(/^<svg /);
    expect(preview.lines).toContain('DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica');
  });

  it('a contingency receipt not yet authorized is rendered from the XML the terminal signed', async () => {
    const id = receipt();
    const signed = readFileSync(fixturePath('nfce_tpEmis9_qrV2_offline_signed_testcert.xml'), 'utf8');
    store.transaction(() => store.receipts.updateReceipt(id, { tp_emis: 9, signed_xml: signed }, at));
    const { documents } = autoPrint();
    const preview = await documents.preview(store.receipts.receipt(id)!, printer);
    expect(preview.lines).toContain('EMITIDA EM CONTINGÊNCIA');
  });
});
