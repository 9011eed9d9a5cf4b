import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import { encodeEscPos } from '../../fiscal/danfe/escpos.ts';
import { danfeModel } from '../../fiscal/danfe/model.ts';
import { decodeStatus, DeviceFilePrinter, isDeviceBlocked, MemoryPrinter, STATUS_QUERY, TcpPrinter, VirtualPrinter } from './transports.ts';
import { printerRejection, testReceipt } from '../../test/helpers/printer-receipts.ts';

// ---------------------------------------------------------------------------------------------
// A fake network printer on 127.0.0.1, port 0

type FakePrinter = { port: number; received: () => Buffer; done: Promise<Buffer>; server: Server };

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

/**
 * A printer that reads everything and closes when the client ends (like a JetDirect port), and
 * answers DLE EOT n with `status[n]` when given.
 */
async function fakePrinter(status?: Partial<Record<1 | 2 | 4, number>>): Promise<FakePrinter> {
  const chunks: Buffer[] = [];
  let resolveDone!: (b: Buffer) => void;
  const done = new Promise<Buffer>((r) => (resolveDone = r));
  const server = createServer((socket) => {
    sockets.push(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (!status) return;
      pending = Buffer.concat([pending, chunk]);
      for (let i = pending.indexOf(0x10); i >= 0 && i + 2 < pending.length; i = pending.indexOf(0x10, i + 1)) {
        const n = pending[i + 2] as 1 | 2 | 4;
        if (pending[i + 1] === 0x04 && status[n] !== undefined) socket.write(Buffer.of(status[n]!));
      }
      pending = pending.subarray(Math.max(0, pending.length - 2));
    });
    socket.on('end', () => resolveDone(Buffer.concat(chunks)));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, received: () => Buffer.concat(chunks), done, server };
}

/** A port with nothing listening: bind one, then close it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

// ---------------------------------------------------------------------------------------------
// A real receipt to print

let receiptXml: string;
let qrCode: string;
beforeAll(() => {
  ({ xml: receiptXml, qrCode } = testReceipt(77, 3));
});
const receiptJob = (xml: string): Uint8Array => encodeEscPos(danfeModel(xml), { profile: 'epson-tm-t20', paperWidth: 80 });

describe('TcpPrinter (raw TCP 9100)', () => {
  it('delivers the whole job byte for byte, and resolves only after the printer has it all', async () => {
    const printer = await fakePrinter();
    const job = Buffer.concat([Buffer.from(receiptJob(receiptXml)), randomBytes(512 * 1024)]);
    await new TcpPrinter({ host: '127.0.0.1', port: printer.port, timeoutMs: 5000 }).send(job);
    // Checked at resolution time: nothing is still in flight.
    expect(printer.received().equals(job)).toBe(true);
    expect((await printer.done).equals(job)).toBe(true);
    expect(decodeEscPos(printer.received().subarray(0, receiptJob(receiptXml).length)).qrCodes[0]?.payload).toBe(qrCode);
  });

  it('printer off (nothing listening): PrinterError "offline" with the operator’s message', async () => {
    const port = await closedPort();
    const err = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port, timeoutMs: 2000 }).send(Uint8Array.of(1, 2, 3)));
    expect(err.code).toBe('offline');
    expect(err.printer).toBe(`127.0.0.1:${port}`);
    expect(err.message).toBe(
      `Impressora desligada ou fora de alcance (127.0.0.1:${port}). Verifique o cabo e a energia; o cupom fica guardado para reimpressão.`,
    );
  });

  it('a printer that never reads and never answers: "timeout", not a silent success', async () => {
    const server = createServer({ pauseOnConnect: true }, (socket) => sockets.push(socket));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const err = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port, timeoutMs: 200 }).send(Uint8Array.of(0x1b, 0x40, 0x41, 0x0a)));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/^A impressora não respondeu a tempo \(127\.0\.0\.1:\d+\): .*; o cupom fica guardado para reimpressão\.$/);
    const withStatus = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port, timeoutMs: 200, queryStatus: true }).send(Uint8Array.of(0x41)));
    expect(withStatus.code).toBe('timeout');
    expect(withStatus.message).toContain('sem resposta à consulta de status');
  });

  it('DLE EOT says paper out: "sem_papel", and the job is not sent into the empty printer', async () => {
    // n=1: offline (bit 3); n=2: stopped by paper end (bit 5); n=4: paper end sensor (bits 5-6).
    const printer = await fakePrinter({ 1: 0x1a, 2: 0x32, 4: 0x72 });
    const tcp = new TcpPrinter({ host: '127.0.0.1', port: printer.port, timeoutMs: 2000, queryStatus: true });
    const err = await printerRejection(tcp.send(receiptJob(receiptXml)));
    expect(err.code).toBe('sem_papel');
    expect(err.message).toBe(`Impressora sem papel (127.0.0.1:${printer.port}). Coloque uma bobina nova; o cupom fica guardado para reimpressão.`);
    expect(printer.received().equals(Buffer.from(STATUS_QUERY))).toBe(true);
    expect(await tcp.status()).toMatchObject({ online: false, paperOut: true, coverOpen: false, error: false });
  });

  it('DLE EOT says cover open: "tampa_aberta"; all clear: the job follows the query', async () => {
    const open = await fakePrinter({ 1: 0x1a, 2: 0x16, 4: 0x12 });
    const err = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port: open.port, timeoutMs: 2000, queryStatus: true }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('tampa_aberta');

    const ready = await fakePrinter({ 1: 0x12, 2: 0x12, 4: 0x12 });
    const job = receiptJob(receiptXml);
    await new TcpPrinter({ host: '127.0.0.1', port: ready.port, timeoutMs: 2000, queryStatus: true }).send(job);
    expect((await ready.done).equals(Buffer.concat([Buffer.from(STATUS_QUERY), Buffer.from(job)]))).toBe(true);
  });

  it('an answer that is not ESC/POS status is reported, not guessed', async () => {
    const odd = await fakePrinter({ 1: 0xff, 2: 0xff, 4: 0xff });
    const err = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port: odd.port, timeoutMs: 2000, queryStatus: true }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('desconhecido');
    expect(err.message).toContain('resposta de status não reconhecida');
  });
});

describe('decodeStatus', () => {
  it('reads Epson real-time status bits and rejects bytes that are not status answers', () => {
    expect(decodeStatus(0x12, 0x12, 0x12)).toEqual({ online: true, coverOpen: false, paperOut: false, paperLow: false, error: false, raw: [0x12, 0x12, 0x12] });
    expect(decodeStatus(0x12, 0x12, 0x1e)).toMatchObject({ paperLow: true, paperOut: false });
    expect(decodeStatus(0x1a, 0x52, 0x12)).toMatchObject({ online: false, error: true });
    expect(decodeStatus(0x00, 0x12, 0x12)).toBeUndefined();
  });
});

describe('printer absent: the receipt stays printable (reprint from the stored XML)', () => {
  it('fails with the operator’s message, then prints the same bytes later from the kept XML', async () => {
    const stored = receiptXml; // what the terminal keeps: the NFC-e XML, not the print job
    const first = receiptJob(stored);
    const err = await printerRejection(new TcpPrinter({ host: '127.0.0.1', port: await closedPort(), timeoutMs: 1000 }).send(first));
    expect(err.code).toBe('offline');
    expect(err.message).toContain('o cupom fica guardado para reimpressão');

    const printer = await fakePrinter();
    const reprint = receiptJob(stored);
    await new TcpPrinter({ host: '127.0.0.1', port: printer.port }).send(reprint);
    expect(Buffer.from(reprint).equals(Buffer.from(first))).toBe(true);
    const t = decodeEscPos(await printer.done);
    expect(t.qrCodes[0]?.payload).toBe(qrCode);
    expect(t.commands.at(-1)?.op).toBe('cut');
  });
});

describe('DeviceFilePrinter (/dev/usb/lp0 and other character devices or files)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-lp-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every job, appended like a device stream', async () => {
    const path = join(dir, 'lp0');
    writeFileSync(path, '');
    const dev = new DeviceFilePrinter({ path });
    const job = receiptJob(receiptXml);
    await dev.send(job);
    await dev.send(Uint8Array.of(0x1b, 0x40));
    expect(readFileSync(path).equals(Buffer.concat([Buffer.from(job), Buffer.of(0x1b, 0x40)]))).toBe(true);
  });

  it('printer unplugged (no device node): "offline", and no file is created in its place', async () => {
    const path = join(dir, 'usb', 'lp9');
    mkdirSync(join(dir, 'usb'), { recursive: true });
    const err = await printerRejection(new DeviceFilePrinter({ path }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('offline');
    expect(err.message).toBe(
      `Impressora não encontrada em ${path}. Verifique se o cabo USB está conectado e se a impressora está ligada; o cupom fica guardado para reimpressão.`,
    );
    expect(readdirSync(join(dir, 'usb'))).toEqual([]);
  });

  it('a path that cannot be printed to: "desconhecido" with the reason', async () => {
    const err = await printerRejection(new DeviceFilePrinter({ path: dir }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('desconhecido');
    expect(err.message).toMatch(/^Falha na impressora/);
  });

  it('a device that blocks: "timeout", further jobs refused until the blocked call returns', async () => {
    // A FIFO with no reader blocks the writer's open(), as a stalled device would.
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const dev = new DeviceFilePrinter({ path: fifo, timeoutMs: 100 });
    const err = await printerRejection(dev.send(Uint8Array.of(0x41, 0x42)));
    expect(err.code).toBe('timeout');
    expect(isDeviceBlocked(fifo)).toBe(true);
    const again = await printerRejection(dev.send(Uint8Array.of(0x43)));
    expect(again.message).toContain('a impressão anterior ainda não terminou');
    // A reader appears: the blocked job completes and the device is usable again.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      for (let i = 0; i < 100 && isDeviceBlocked(fifo); i++) await new Promise((r) => setTimeout(r, 20));
      expect(isDeviceBlocked(fifo)).toBe(false);
      await dev.send(Uint8Array.of(0x44));
    } finally {
      closeSync(reader);
    }
  });
});

describe('VirtualPrinter and MemoryPrinter', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-virtual-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes each job as a numbered .bin, with its PNG preview when given', async () => {
    const printer = new VirtualPrinter({ dir: join(dir, 'jobs') });
    const job = receiptJob(receiptXml);
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const first = await printer.write(job, { previewPng: png });
    await printer.send(Uint8Array.of(0x1b, 0x40));
    expect(first).toEqual({ bin: join(dir, 'jobs', 'job-000001.bin'), png: join(dir, 'jobs', 'job-000001.png') });
    expect(readdirSync(join(dir, 'jobs')).sort()).toEqual(['job-000001.bin', 'job-000001.png', 'job-000002.bin']);
    expect(readFileSync(first.bin).equals(Buffer.from(job))).toBe(true);
    expect(readFileSync(first.png!).equals(png)).toBe(true);
    expect(decodeEscPos(readFileSync(first.bin)).qrCodes[0]?.payload).toBe(qrCode);
  });

  it('a folder it cannot write to is a PrinterError, not a lost job', async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, '');
    const err = await printerRejection(new VirtualPrinter({ dir: file }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('desconhecido');
  });

  it('MemoryPrinter keeps jobs, or fails with the code it is given', async () => {
    const mem = new MemoryPrinter();
    await mem.send(Uint8Array.of(1, 2));
    expect(mem.jobs).toEqual([Uint8Array.of(1, 2)]);
    mem.failWith = 'sem_papel';
    expect((await printerRejection(mem.send(Uint8Array.of(3)))).code).toBe('sem_papel');
    expect(mem.jobs).toHaveLength(1);
  });
});
