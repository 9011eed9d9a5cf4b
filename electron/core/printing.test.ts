// ReceiptPrinter on a real terminal database: jobs through the virtual printer (files), a
// printer failing (MemoryPrinter), a network printer answering status queries (a real TCP
// server on loopback), the print log and the at-most-once automatic print across a reopen.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixturePath } from '../../fiscal/testdata/fixtures.ts';
import { SerialPrinter } from '../../native/printer/serial.ts';
import { MemoryPrinter } from '../../native/printer/transports.ts';
import { UsbPrinter } from '../../native/printer/usb.ts';
import type { PrinterStatusView } from '../api/terminal-api.ts';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import { seedDemoCatalog } from './catalog.ts';
import { TerminalError } from './errors.ts';
import { PosStore } from './pos-store.ts';
import {
  DEFAULT_PRINTER_SETTINGS,
  parseTcpAddress,
  ReceiptPrinter,
  transportFor,
  validatePrinterSettings,
  VIRTUAL_PRINTER_DIR,
  type PrintCopy,
} from './printing.ts';
import * as sales from './sales.ts';
import { iso } from '../../base/common/clock.ts';
import { keyInSignedXml } from '../../fiscal/access-key.ts';

const XML = readFileSync(fixturePath('nfce_tpEmis1_qrV2_online_signed_testcert.xml'), 'utf8');
const KEY = keyInSignedXml(XML, 'NFe')!;

let dir: string;
let store: PosStore;
let receiptId: string;
const now = Date.parse('2026-11-22T15:00:00.000Z');
const clock = () => now;

/** A finished sale's receipt (the print log references it). */
function finishedReceipt(): string {
  const ctx = { store, clock, serie: 1 };
  const sale = sales.openSale(ctx);
  sales.addItem(ctx, sale.id, { code: '1001' });
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 2000 });
  return sales.finishSale(ctx, sale.id).receipt.id;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-printing-'));
  store = PosStore.open(dir);
  store.series.ensureSeries(1);
  seedDemoCatalog(store, iso(now));
  receiptId = finishedReceipt();
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ReceiptPrinter', () => {
  it('virtual (default): each job a numbered .bin with its .png preview in <data>/impressora, logged and listed', async () => {
    const statuses: PrinterStatusView[] = [];
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, onStatus: (s) => statuses.push(s) });
    const job = await printer.render(receiptId, 'unica', XML);
    expect(job.previewPng?.subarray(1, 4).toString()).toBe('PNG');
    await printer.print(job);
    await printer.print(await printer.render(receiptId, 'reimpressao', XML));

    const folder = join(dir, VIRTUAL_PRINTER_DIR);
    expect(readdirSync(folder).sort()).toEqual(['job-000001.bin', 'job-000001.png', 'job-000002.bin', 'job-000002.png']);
    const printed = decodeEscPos(readFileSync(join(folder, 'job-000001.bin')));
    expect(printed.qrCodes).toHaveLength(1);
    expect(printed.lines.map((l) => l.text).join(' ')).toContain(KEY.match(/.{4}/g)!.slice(0, 4).join(' '));
    expect(printer.recent()).toEqual([
      { kind: 'nfce', receiptId, copy: 'reimpressao', printedAt: iso(now) },
      { kind: 'nfce', receiptId, copy: 'unica', printedAt: iso(now) },
    ]);
    expect(printer.recent(1)).toHaveLength(1);
    expect(await printer.status()).toEqual({ ready: true, name: 'Impressora virtual', problem: null, lastPrintAt: iso(now) });
    expect(statuses.length).toBe(2);
  });

  it('a failing printer: TerminalError impressora, the job logged as failed, the status not ready until a job goes through', async () => {
    const memory = new MemoryPrinter({ failWith: 'sem_papel' });
    const statuses: PrinterStatusView[] = [];
    const printer = new ReceiptPrinter({
      store,
      clock,
      dataDir: dir,
      settings: DEFAULT_PRINTER_SETTINGS,
      transport: memory,
      onStatus: (s) => statuses.push(s),
    });
    const job = await printer.render(receiptId, 'unica', XML);
    expect(job.previewPng).toBeUndefined(); // only the virtual printer keeps previews
    const err = await printer.print(job).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TerminalError);
    expect(err).toMatchObject({
      code: 'impressora',
      message: expect.stringMatching(/^Impressora sem papel .*Coloque uma bobina nova; o cupom fica guardado para reimpressão\.$/),
    });
    expect(await printer.status()).toMatchObject({ ready: false, problem: (err as Error).message, lastPrintAt: null });
    expect(statuses).toEqual([expect.objectContaining({ ready: false })]);
    expect(store.printLog.printJobs(receiptId)).toEqual([expect.objectContaining({ state: 'failed', error: (err as Error).message, automatic: 0 })]);
    expect(printer.recent()).toEqual([]);

    memory.failWith = undefined;
    await printer.print(job);
    expect(memory.jobs).toEqual([job.escpos]);
    expect(await printer.status()).toMatchObject({ ready: true, problem: null });
    expect(store.printLog.printJobs(receiptId).map((j) => j.state)).toEqual(['failed', 'printed']);
  });

  it('prints one job at a time, in order', async () => {
    const memory = new MemoryPrinter();
    let inFlight = 0;
    let most = 0;
    const send = memory.send.bind(memory);
    memory.send = async (bytes) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 10));
      await send(bytes);
      inFlight--;
    };
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
    const jobs = [1, 2, 3].map((n) => ({ receiptId, copy: 'reimpressao' as const, escpos: Uint8Array.of(n) }));
    await Promise.all(jobs.map((j) => printer.print(j)));
    expect(most).toBe(1);
    expect(memory.jobs.map((j) => j[0])).toEqual([1, 2, 3]);
  });

  it('printOnce: a receipt already sent to the printer is never printed automatically, also after reopening the database', async () => {
    const memory = new MemoryPrinter({ failWith: 'offline' });
    let printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
    await expect(printer.printOnce(receiptId, () => printer.render(receiptId, 'unica', XML))).rejects.toMatchObject({ code: 'impressora' });
    memory.failWith = undefined;
    // Claimed, failed: the manager reprints; the terminal does not try again by itself.
    expect(await printer.printOnce(receiptId, () => printer.render(receiptId, 'unica', XML))).toBe(false);
    const other = finishedReceipt();
    expect(await printer.printOnce(other, () => printer.render(other, 'unica', XML))).toBe(true);

    store.close();
    store = PosStore.open(dir);
    printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
    let rendered = 0;
    expect(await printer.printOnce(other, () => (rendered++, printer.render(other, 'unica', XML)))).toBe(false);
    expect(rendered).toBe(0);
    expect(memory.jobs).toHaveLength(1);
    expect(store.printLog.printJobs(other)).toEqual([expect.objectContaining({ automatic: 1, state: 'printed' })]);
  });

  it('printMissing: prints only the copies that never came out, and nothing once they all did', async () => {
    const memory = new MemoryPrinter({ failWith: 'sem_papel' });
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
    const render = (copy: PrintCopy) => printer.render(receiptId, copy, XML);
    // A contingency receipt's two copies: the store's came out, the consumer's failed.
    memory.failWith = undefined;
    await printer.print(await render('estabelecimento'));
    memory.failWith = 'sem_papel';
    await expect(printer.print(await render('consumidor'))).rejects.toMatchObject({ code: 'impressora' });
    memory.failWith = undefined;
    const copies = ['consumidor', 'estabelecimento'] as const;
    expect((await printer.printMissing(receiptId, copies, render)).map((j) => j.copy)).toEqual(['consumidor']);
    expect(memory.jobs).toHaveLength(2);
    await expect(printer.printMissing(receiptId, copies, render)).rejects.toMatchObject({
      code: 'estado_invalido',
      message: expect.stringMatching(/reimpressão/),
    });
    // The single copy of an authorized receipt: a manager's reprint that went through counts.
    const other = finishedReceipt();
    await printer.print(await printer.render(other, 'reimpressao', XML));
    await expect(printer.printMissing(other, ['unica'], (copy) => printer.render(other, copy, XML))).rejects.toMatchObject({ code: 'estado_invalido' });
    expect(memory.jobs).toHaveLength(3);
    // Owed an automatic print: printed here, the automatic one then finds nothing owed.
    const third = finishedReceipt();
    expect(await printer.printMissing(third, ['unica'], (copy) => printer.render(third, copy, XML))).toHaveLength(1);
    expect(await printer.printOnce(third, () => printer.render(third, 'unica', XML))).toBe(false);
    expect(memory.jobs).toHaveLength(4);
  });

  it('refuses jobs for unknown receipts, unknown copies and empty bytes, writing nothing', async () => {
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: new MemoryPrinter() });
    await expect(printer.print({ receiptId: 'nao-existe', copy: 'unica', escpos: Uint8Array.of(1) })).rejects.toMatchObject({ code: 'nao_encontrado' });
    await expect(printer.print({ receiptId, copy: 'segunda' as 'unica', escpos: Uint8Array.of(1) })).rejects.toMatchObject({ field: 'copy' });
    await expect(printer.print({ receiptId, copy: 'unica', escpos: new Uint8Array() })).rejects.toMatchObject({ field: 'escpos' });
    expect(store.printLog.printJobs(receiptId)).toEqual([]);
  });

  it('encodes for the configured profile and paper width; reconfigure applies to the next job', async () => {
    const memory = new MemoryPrinter();
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: memory });
    const wide = decodeEscPos(printer.encode(XML));
    expect(Math.max(...wide.lines.map((l) => l.columns))).toBe(48);
    printer.reconfigure({ kind: 'virtual', address: null, profile: 'generic-escpos', paperWidth: 58 });
    const narrow = decodeEscPos(printer.encode(XML));
    expect(Math.max(...narrow.lines.map((l) => l.columns))).toBeLessThanOrEqual(32);
    // The generic profile sends the QR Code as an image, not as GS ( k.
    expect(narrow.qrCodes).toEqual([]);
    expect(narrow.images.length).toBeGreaterThan(0);
    expect(() => printer.encode('<NFe/>')).toThrow(TerminalError);
  });

  it('a file printer appends every job to the file (created if missing)', async () => {
    const path = join(dir, 'saida', 'cupons.prn');
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: { kind: 'file', address: path, profile: 'epson-tm-t20', paperWidth: 80 } });
    await printer.print({ receiptId, copy: 'unica', escpos: Uint8Array.of(1, 2) });
    await printer.print({ receiptId, copy: 'reimpressao', escpos: Uint8Array.of(3) });
    expect([...readFileSync(path)]).toEqual([1, 2, 3]);
    expect((await printer.status()).name).toBe(path);
  });

  it('a device printer that is not there: not ready, "não encontrada", the receipt kept', async () => {
    const path = join(dir, 'usb', 'lp9');
    const printer = new ReceiptPrinter({ store, clock, dataDir: dir, settings: { kind: 'device', address: path, profile: 'elgin-i9', paperWidth: 80 } });
    await expect(printer.print({ receiptId, copy: 'unica', escpos: Uint8Array.of(1) })).rejects.toMatchObject({
      code: 'impressora',
      message: expect.stringContaining('não encontrada'),
    });
    expect(existsSync(path)).toBe(false);
    expect((await printer.status()).ready).toBe(false);
  });

  it('a USB printer (libusb) that is not plugged in: not ready, named by its vendor:product, the receipt kept', async () => {
    const printer = new ReceiptPrinter({
      store,
      clock,
      dataDir: dir,
      settings: { kind: 'usb', address: 'fffe:fffe', profile: 'epson-tm-t20', paperWidth: 80 },
    });
    await expect(printer.print({ receiptId, copy: 'unica', escpos: Uint8Array.of(1) })).rejects.toMatchObject({
      code: 'impressora',
      message: expect.stringContaining('Impressora USB fffe:fffe não encontrada'),
    });
    expect(printer.statusNow()).toMatchObject({ ready: false, name: 'USB fffe:fffe' });
  });
});

describe('a network printer answering status queries', () => {
  let server: Server;
  let answer: number[];
  beforeEach(async () => {
    server = createServer((socket) => {
      socket.on('data', (d) => {
        if (d[0] === 0x10) socket.write(Buffer.from(answer));
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('status() asks it: paper out makes it not ready, paper back makes it ready', async () => {
    const port = (server.address() as { port: number }).port;
    const printer = new ReceiptPrinter({
      store,
      clock,
      dataDir: dir,
      settings: { kind: 'tcp', address: `127.0.0.1:${port}`, profile: 'epson-tm-t20', paperWidth: 80 },
    });
    answer = [0x12, 0x12, 0x12 | 0x60]; // DLE EOT 4: paper end
    expect(await printer.status()).toMatchObject({ ready: false, name: `127.0.0.1:${port}`, problem: expect.stringContaining('sem papel') });
    answer = [0x12, 0x12, 0x12];
    expect(await printer.status()).toMatchObject({ ready: true, problem: null });
  });
});

describe('validatePrinterSettings', () => {
  it('accepts each kind and names the field it refuses', () => {
    expect(validatePrinterSettings({ kind: 'tcp', address: ' 192.168.0.50:9100 ', profile: 'bematech-mp4200-escpos', paperWidth: 80 })).toEqual({
      kind: 'tcp',
      address: '192.168.0.50:9100',
      profile: 'bematech-mp4200-escpos',
      paperWidth: 80,
    });
    expect(parseTcpAddress('impressora.local')).toEqual({ host: 'impressora.local', port: 9100 });
    expect(parseTcpAddress('[fe80::1]:9200')).toEqual({ host: 'fe80::1', port: 9200 });
    const field = (input: unknown) => {
      try {
        validatePrinterSettings(input);
      } catch (err) {
        return (err as TerminalError).field;
      }
      return 'aceito';
    };
    expect(field({ kind: 'lpt', address: null, profile: 'epson-tm-t20', paperWidth: 80 })).toBe('printer.kind');
    expect(field({ kind: 'virtual', address: null, profile: 'daruma', paperWidth: 80 })).toBe('printer.profile');
    expect(field({ kind: 'virtual', address: null, profile: 'epson-tm-t20', paperWidth: 76 })).toBe('printer.paperWidth');
    expect(field({ kind: 'tcp', address: '192.168.0.50:99999', profile: 'epson-tm-t20', paperWidth: 80 })).toBe('printer.address');
    expect(field({ kind: 'tcp', address: 'http://x', profile: 'epson-tm-t20', paperWidth: 80 })).toBe('printer.address');
    expect(field({ kind: 'device', address: '', profile: 'epson-tm-t20', paperWidth: 80 })).toBe('printer.address');
    expect(field({ kind: 'virtual', address: '/tmp/x', profile: 'epson-tm-t20', paperWidth: 80 })).toBe('printer.address');
    expect(field(null)).toBe('printer');
  });

  it('usb: vendor:product in hexadecimal, or blank for the first USB printer; the transport follows', () => {
    const usb = validatePrinterSettings({ kind: 'usb', address: ' 0x04B8:0x0E15 ', profile: 'epson-tm-t20', paperWidth: 80, serial: { baudRate: 9600 } });
    expect(usb).toEqual({ kind: 'usb', address: '04b8:0e15', profile: 'epson-tm-t20', paperWidth: 80 });
    const transport = transportFor(usb, dir);
    expect(transport).toBeInstanceOf(UsbPrinter);
    expect((transport as UsbPrinter).address).toEqual({ vendorId: 0x04b8, productId: 0x0e15 });
    for (const address of [null, '', '  ']) {
      const first = validatePrinterSettings({ kind: 'usb', address, profile: 'elgin-i9', paperWidth: 58 });
      expect(first.address).toBeNull();
      expect((transportFor(first, dir) as UsbPrinter).address).toBeUndefined();
    }
    for (const address of ['/dev/usb/lp0', '4b8:e15', 1208]) {
      expect(() => validatePrinterSettings({ kind: 'usb', address, profile: 'epson-tm-t20', paperWidth: 80 })).toThrow(
        expect.objectContaining({ field: 'printer.address', message: expect.stringContaining('fabricante:produto em hexadecimal') }),
      );
    }
  });

  it('serial: the port, and the line with each field checked by name; settings saved without a line get the defaults', () => {
    const line = { baudRate: 38400, parity: 'even', stopBits: 2, flowControl: 'xonxoff' } as const;
    const serial = validatePrinterSettings({ kind: 'serial', address: ' COM3 ', profile: 'bematech-mp4200-escpos', paperWidth: 80, serial: line });
    expect(serial).toEqual({ kind: 'serial', address: 'COM3', profile: 'bematech-mp4200-escpos', paperWidth: 80, serial: line });
    const transport = transportFor(serial, dir);
    expect(transport).toBeInstanceOf(SerialPrinter);
    expect((transport as SerialPrinter).path).toBe('COM3');
    expect((transport as SerialPrinter).line).toEqual(line);

    expect(validatePrinterSettings({ kind: 'serial', address: '/dev/ttyUSB0', profile: 'elgin-i9', paperWidth: 80 }).serial).toEqual({
      baudRate: 9600,
      parity: 'none',
      stopBits: 1,
      flowControl: 'rtscts',
    });
    const field = (patch: Record<string, unknown>, address: unknown = '/dev/ttyS0') => {
      try {
        validatePrinterSettings({ kind: 'serial', address, profile: 'epson-tm-t20', paperWidth: 80, serial: { ...line, ...patch } });
      } catch (err) {
        return `${(err as TerminalError).field}: ${(err as TerminalError).message}`;
      }
      return 'aceito';
    };
    expect(field({}, '')).toBe('printer.address: Informe a porta serial da impressora (ex.: /dev/ttyUSB0 ou COM3)');
    expect(field({ baudRate: 14400 })).toBe(
      'printer.serial.baudRate: Velocidade da porta serial deve ser uma destas: 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200',
    );
    expect(field({ baudRate: '9600' })).toMatch(/^printer\.serial\.baudRate: /);
    expect(field({ parity: 'mark' })).toBe('printer.serial.parity: Paridade deve ser none (nenhuma), even (par) ou odd (ímpar)');
    expect(field({ stopBits: 1.5 })).toBe('printer.serial.stopBits: Bits de parada devem ser 1 ou 2');
    expect(field({ flowControl: 'dtrdsr' })).toBe(
      'printer.serial.flowControl: Controle de fluxo deve ser rtscts (hardware), xonxoff (software) ou none (nenhum)',
    );
    expect(() => validatePrinterSettings({ kind: 'serial', address: 'COM1', profile: 'epson-tm-t20', paperWidth: 80, serial: 'rapido' })).toThrow(
      expect.objectContaining({ field: 'printer.serial' }),
    );
  });
});
