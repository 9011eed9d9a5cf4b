// The terminal's receipt printer set to "Impressora do sistema": a real NFC-e's DANFE, rendered
// by the terminal core, goes through Debian's CUPS (a private cupsd started here, a raw queue
// whose device is an AppSocket printer on loopback) and arrives byte for byte; when the queue
// is missing or CUPS is down, the job fails with the operator's message in Portuguese, the
// print log says so, and the same receipt prints once the printer is set right.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoCatalog } from '../electron/core/catalog.ts';
import { TerminalError } from '../electron/core/errors.ts';
import { PosStore } from '../electron/core/pos-store.ts';
import { ReceiptPrinter, transportFor, validatePrinterSettings } from '../electron/core/printing.ts';
import * as sales from '../electron/core/sales.ts';
import { fixturePath } from '../fiscal/testdata/fixtures.ts';
import { freePort, startAppSocketPrinter, startCupsd, type AppSocketPrinter, type CupsTestServer } from './helpers/cups-test-server.ts';
import { SystemQueuePrinter } from '../native/printer/system-queue.ts';
import { KEPT } from '../native/printer/transports.ts';
import { decodeEscPos } from './escpos-decoder.ts';
import { iso } from '../base/common/clock.ts';
import { keyInSignedXml } from '../fiscal/access-key.ts';

const XML = readFileSync(fixturePath('nfce_tpEmis1_qrV2_online_signed_testcert.xml'), 'utf8');
const KEY = keyInSignedXml(XML, 'NFe')!;
const now = Date.parse('2026-11-22T15:00:00.000Z');
const clock = () => now;

let dir: string;
let store: PosStore;
let cups: CupsTestServer;
let device: AppSocketPrinter;
let receiptId: string;

const system = (address: string) => validatePrinterSettings({ kind: 'system', address, profile: 'epson-tm-t20', paperWidth: 80 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-system-printer-'));
  store = PosStore.open(dir);
  store.series.ensureSeries(1);
  seedDemoCatalog(store, iso(now));
  const ctx = { store, clock, serie: 1 };
  const sale = sales.openSale(ctx);
  sales.addItem(ctx, sale.id, { code: '1001' });
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 2000 });
  receiptId = sales.finishSale(ctx, sale.id).receipt.id;
  device = await startAppSocketPrinter();
  cups = await startCupsd([{ name: 'caixa1', device: `socket://127.0.0.1:${device.port}` }]);
});

afterAll(async () => {
  await cups?.stop();
  await device?.close();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Impressora do sistema (CUPS)', () => {
  it('the settings take a queue name or its IPP address, name the field they refuse, and make an IPP transport', () => {
    const byName = system(' TM-T20 ');
    expect(byName).toEqual({ kind: 'system', address: 'TM-T20', profile: 'epson-tm-t20', paperWidth: 80 });
    const transport = transportFor(byName, dir);
    expect(transport).toBeInstanceOf(SystemQueuePrinter);
    expect((transport as SystemQueuePrinter).address.printerUri).toBe('ipp://localhost:631/printers/TM-T20');
    expect((transportFor(system('http://servidor/printers/TM-T20/.printer'), dir) as SystemQueuePrinter).address.endpoint.href).toBe(
      'http://servidor/printers/TM-T20/.printer',
    );
    for (const address of ['', 'minha fila', 'lpd://servidor/fila', null]) {
      expect(() => system(address as string)).toThrow(
        expect.objectContaining({ code: 'configuracao_invalida', field: 'printer.address', message: expect.stringContaining('Fila da impressora do sistema') }),
      );
    }
  });

  it('prints the receipt through the queue: the device receives exactly the DANFE’s ESC/POS', async () => {
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: system(`ipp://${cups.server}/printers/caixa1`) });
    const job = await printer.render(receiptId, 'unica', XML);
    const arrived = device.nextJob();
    await printer.print(job);
    const bytes = await arrived;
    expect(Buffer.compare(bytes, Buffer.from(job.escpos)), cups.log()).toBe(0);
    const printed = decodeEscPos(bytes);
    expect(printed.lines.map((l) => l.text).join(' ')).toContain(KEY.match(/.{4}/g)!.slice(0, 4).join(' '));
    expect(printed.qrCodes).toHaveLength(1);
    expect(store.printLog.printJobs(receiptId).at(-1)).toMatchObject({ state: 'printed', printer: `ipp://${cups.server}/printers/caixa1` });
    expect(printer.statusNow()).toMatchObject({ ready: true, problem: null });
  });

  it('a queue that does not exist, then CUPS down: each fails in Portuguese, logged; the receipt prints once the printer is right', async () => {
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: system(`ipp://${cups.server}/printers/nao-existe`) });
    const before = device.jobs().length;
    const missing = await printer.print(await printer.render(receiptId, 'reimpressao', XML)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(TerminalError);
    expect(missing).toMatchObject({
      code: 'impressora',
      message: `Fila de impressão não encontrada em ${cups.server} (ipp://${cups.server}/printers/nao-existe). Confira o endereço da fila em Configurações → Impressora; ${KEPT}`,
    });
    expect(store.printLog.printJobs(receiptId).at(-1)).toMatchObject({ state: 'failed', error: (missing as TerminalError).message });
    expect(printer.statusNow()).toMatchObject({ ready: false, problem: (missing as TerminalError).message });

    const deadPort = await freePort();
    printer.reconfigure(system(`ipp://127.0.0.1:${deadPort}/printers/caixa1`));
    await expect(printer.print(await printer.render(receiptId, 'reimpressao', XML))).rejects.toMatchObject({
      code: 'impressora',
      message: `O servidor de impressão 127.0.0.1:${deadPort} não respondeu (ipp://127.0.0.1:${deadPort}/printers/caixa1). Verifique a rede e se o servidor está ligado; ${KEPT}`,
    });
    expect(device.jobs()).toHaveLength(before);

    printer.reconfigure(system(`ipp://${cups.server}/printers/caixa1`));
    const job = await printer.render(receiptId, 'reimpressao', XML);
    const arrived = device.nextJob();
    await printer.print(job);
    expect(Buffer.compare(await arrived, Buffer.from(job.escpos))).toBe(0);
    expect(
      store.printLog
        .printJobs(receiptId)
        .map((j) => j.state)
        .slice(-3),
    ).toEqual(['failed', 'failed', 'printed']);
    expect(printer.statusNow().ready).toBe(true);
  });
});
