// SerialPrinter against real pseudo-terminals: socat joins two ptys, the terminal's printer
// port on one end and the "printer" (this test, reading and sending XON/XOFF) on the other, so
// the bytes cross the kernel's tty layer and serialport's native binding as they would to a
// UART. What a pty cannot show: the modem lines (a pty has no CTS, so RTS/CTS never holds a
// job), the data bits and parity (the pty driver forces CS8 without parity), and a drain that
// takes time (a pty has no transmit queue). The first two are checked in termios (stty) or in
// the open options; for the drain, one test holds serialport's drain() itself. socat comes
// from Debian (.ci/run installs it).

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { SerialPort } from 'serialport';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import {
  isSerialPortClosing,
  lineTimeMs,
  loadSerialBinding,
  SerialPrinter,
  serialOpenOptions,
  type SerialBindingLike,
  type SerialLineSettings,
} from './serial.ts';
import { printerRejection, testReceipt } from '../../test/helpers/printer-receipts.ts';

const XOFF = 0x13;
const XON = 0x11;

type PtyPair = { socat: ChildProcess; port: string; printerEnd: string };
type FakePrinter = { received: () => Buffer; onData: (listener: (total: number) => void) => void; write: (byte: number) => Promise<void> };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Two linked ptys from `socat -d -d pty,raw,echo=0 pty,raw,echo=0`. */
async function ptyPair(): Promise<PtyPair> {
  const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  cleanups.push(() => {
    socat.kill('SIGKILL');
  });
  const paths = await new Promise<string[]>((resolve, reject) => {
    let log = '';
    socat.on('error', reject);
    socat.on('exit', (code) => reject(new Error(`socat saiu (${code}): ${log}`)));
    socat.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      const found = [...log.matchAll(/PTY is (\S+)/g)].map((m) => m[1]!);
      if (found.length === 2 && log.includes('starting data transfer loop')) resolve(found);
    });
  });
  return { socat, port: paths[0]!, printerEnd: paths[1]! };
}

/** The printer's side: keeps what arrives, raw (no flow control of its own). */
async function fakePrinter(path: string): Promise<FakePrinter> {
  const chunks: Buffer[] = [];
  let total = 0;
  const listeners: ((total: number) => void)[] = [];
  const sp = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => sp.open((err) => (err ? reject(err) : resolve())));
  sp.on('error', () => undefined);
  sp.on('data', (d: Buffer) => {
    chunks.push(d);
    total += d.length;
    for (const l of listeners) l(total);
  });
  cleanups.push(() => new Promise<void>((resolve) => (sp.isOpen ? sp.close(() => resolve()) : resolve())));
  return {
    received: () => Buffer.concat(chunks),
    onData: (l) => listeners.push(l),
    write: (byte) => new Promise<void>((resolve, reject) => sp.write(Buffer.of(byte), (err) => (err ? reject(err) : sp.drain(() => resolve())))),
  };
}

const stty = (path: string): string => execFileSync('stty', ['-F', path, '-a'], { encoding: 'utf8' });

let receipt: Uint8Array;
let qrCode: string;
beforeAll(() => {
  const nfce = testReceipt(79, 3);
  receipt = nfce.escpos('elgin-i9');
  qrCode = nfce.qrCode;
});

/** A pty pair whose printer end answers the first bytes it gets with one XOFF (and nothing else). */
async function printerThatSendsXoff() {
  const pair = await ptyPair();
  const printer = await fakePrinter(pair.printerEnd);
  let sent = false;
  printer.onData(() => {
    if (!sent) void printer.write(XOFF);
    sent = true;
  });
  return { pair, printer, sentXoff: () => sent };
}

const line = (patch: Partial<SerialLineSettings>): SerialLineSettings => ({ baudRate: 115200, parity: 'none', stopBits: 1, flowControl: 'none', ...patch });

describe('SerialPrinter over a real pseudo-terminal pair', () => {
  it('delivers every byte intact, on a port set to the configured baud rate, framing and flow control', async () => {
    const pair = await ptyPair();
    const printer = await fakePrinter(pair.printerEnd);
    // Binary filler carries every byte value, XON and XOFF among them: with hardware flow
    // control they are data like any other.
    const job = Buffer.concat([Buffer.from(receipt), randomBytes(64 * 1024)]);

    await new SerialPrinter({ path: pair.port, line: line({ baudRate: 19200, parity: 'odd', stopBits: 2, flowControl: 'rtscts' }), timeoutMs: 2000 }).send(job);

    await expect.poll(() => printer.received().length).toBe(job.length);
    expect(printer.received().equals(job)).toBe(true);
    expect(decodeEscPos(printer.received().subarray(0, receipt.length)).qrCodes[0]?.payload).toBe(qrCode);
    const termios = stty(pair.port);
    expect(termios).toMatch(/^speed 19200 baud;/);
    expect(termios).toMatch(/(^|\s)parodd(\s|$)/m);
    expect(termios).toMatch(/(^|\s)cstopb(\s|$)/m);
    expect(termios).toMatch(/(^|\s)crtscts(\s|$)/m);
    expect(termios).toMatch(/(^|\s)-ixon(\s|$)/m);

    await new SerialPrinter({ path: pair.port, line: line({ baudRate: 9600, flowControl: 'xonxoff' }) }).send(Uint8Array.of(0x1b, 0x40));
    await expect.poll(() => printer.received().length).toBe(job.length + 2);
    const again = stty(pair.port);
    expect(again).toMatch(/^speed 9600 baud;/);
    expect(again).toMatch(/(^|\s)-cstopb(\s|$)/m);
    expect(again).toMatch(/(^|\s)-crtscts(\s|$)/m);
    expect(again).toMatch(/(^|\s)ixon(\s|$)/m);
    expect(again).toMatch(/(^|\s)ixoff(\s|$)/m);
  });

  it('XON/XOFF: the printer’s XOFF holds the job, which fails with "timeout" instead of being reported printed', async () => {
    const { pair, printer, sentXoff } = await printerThatSendsXoff();
    const job = randomBytes(2 * 1024 * 1024);

    const err = await printerRejection(new SerialPrinter({ path: pair.port, line: line({ flowControl: 'xonxoff' }), timeoutMs: 300 }).send(job));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(
      /^A impressora não respondeu a tempo \(\/dev\/pts\/\d+\): a impressora segurou a linha serial \(ocupada ou sem papel\); o cupom pode ter saído cortado \(\d+ de 2097152 bytes enviados\)\./,
    );
    await expect.poll(() => isSerialPortClosing(pair.port)).toBe(false);
    expect(sentXoff()).toBe(true);
    expect(printer.received().length).toBeLessThan(job.length);
    expect(printer.received().equals(job.subarray(0, printer.received().length))).toBe(true);
  });

  it('without flow control the same XOFF is just a byte: the job goes through (the setting is what holds it)', async () => {
    const { pair, printer, sentXoff } = await printerThatSendsXoff();
    const job = randomBytes(2 * 1024 * 1024);

    await new SerialPrinter({ path: pair.port, line: line({ flowControl: 'none' }), timeoutMs: 2000 }).send(job);
    await expect.poll(() => printer.received().length).toBe(job.length);
    expect(sentXoff()).toBe(true);
    expect(printer.received().equals(job)).toBe(true);
  });

  it('XOFF, then XON: the job waits and then finishes with every byte', async () => {
    const pair = await ptyPair();
    const printer = await fakePrinter(pair.printerEnd);
    let sentXoff = false;
    printer.onData(() => {
      if (sentXoff) return;
      sentXoff = true;
      void printer.write(XOFF).then(() => setTimeout(() => void printer.write(XON), 300));
    });
    const job = Buffer.concat([Buffer.from(receipt), randomBytes(512 * 1024)]);

    await new SerialPrinter({ path: pair.port, line: line({ flowControl: 'xonxoff' }), timeoutMs: 5000 }).send(job);
    await expect.poll(() => printer.received().length).toBe(job.length);
    expect(printer.received().equals(job)).toBe(true);
  });

  it('resolves only once the port drained (every byte left the UART), then closes it', async () => {
    const pair = await ptyPair();
    const printer = await fakePrinter(pair.printerEnd);
    // serialport's own binding, with drain held until the test lets it go: a pty drains at
    // once, so holding it is how this test sees whether send() waits for it.
    const calls: string[] = [];
    let drainAsked!: () => void;
    const asked = new Promise<void>((resolve) => (drainAsked = resolve));
    let letDrain!: () => void;
    const held = new Promise<void>((resolve) => (letDrain = resolve));
    const binding = async (): Promise<SerialBindingLike> => {
      const real = await loadSerialBinding();
      return {
        open: async (options) => {
          const port = await real.open(options);
          calls.push('open');
          return {
            write: (b) => (calls.push(`write ${b.length}`), port.write(b)),
            drain: async () => {
              calls.push('drain');
              drainAsked();
              await held;
              return port.drain();
            },
            flush: () => (calls.push('flush'), port.flush()),
            close: () => (calls.push('close'), port.close()),
          };
        },
      };
    };
    const job = randomBytes(3000);
    let settled = false;
    const sending = new SerialPrinter({ path: pair.port, line: line({}), binding }).send(job).finally(() => (settled = true));

    await Promise.race([asked, sending]);
    expect(calls.at(-1)).toBe('drain');
    expect(settled).toBe(false);
    letDrain();
    await sending;
    expect(calls).toEqual(['open', 'write 1024', 'write 1024', 'write 952', 'drain', 'close']);
    await expect.poll(() => printer.received().length).toBe(job.length);
    expect(printer.received().equals(job)).toBe(true);
  });

  it('the printer unplugged in the middle of a job: "offline"', async () => {
    const pair = await ptyPair();
    const printer = await fakePrinter(pair.printerEnd);
    printer.onData(() => pair.socat.kill('SIGKILL'));
    const err = await printerRejection(new SerialPrinter({ path: pair.port, line: line({}), timeoutMs: 2000 }).send(randomBytes(4 * 1024 * 1024)));
    expect(err.code).toBe('offline');
    expect(err.message).toContain('a impressora foi desconectada durante a impressão');
  });

  it('a port that is missing, not a serial port, or held by another program: each with its own message', async () => {
    const missing = await printerRejection(new SerialPrinter({ path: '/dev/ttyBALCAO9', line: line({}) }).send(Uint8Array.of(0x41)));
    expect(missing.code).toBe('offline');
    expect(missing.message).toBe(
      'Impressora não encontrada em /dev/ttyBALCAO9. Verifique se o cabo está conectado e se a impressora está ligada; o cupom fica guardado para reimpressão.',
    );

    const notSerial = await printerRejection(new SerialPrinter({ path: '/dev/null', line: line({}) }).send(Uint8Array.of(0x41)));
    expect(notSerial.code).toBe('desconhecido');
    expect(notSerial.message).toContain('/dev/null não é uma porta serial');

    const pair = await ptyPair();
    const other = new SerialPort({ path: pair.port, baudRate: 9600, autoOpen: false });
    await new Promise<void>((resolve, reject) => other.open((err) => (err ? reject(err) : resolve())));
    cleanups.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const busy = await printerRejection(new SerialPrinter({ path: pair.port, line: line({}) }).send(Uint8Array.of(0x41)));
    expect(busy.code).toBe('desconhecido');
    expect(busy.message).toContain('a porta serial está em uso por outro programa');
  });

  it('the serial module failing to load is a PrinterError for the operator', async () => {
    const printer = new SerialPrinter({
      path: '/dev/ttyS0',
      line: line({}),
      binding: async () => {
        throw new Error('bindings not found');
      },
    });
    const err = await printerRejection(printer.send(Uint8Array.of(0x41)));
    expect(err.code).toBe('desconhecido');
    expect(err.message).toContain('O suporte a portas seriais não carregou neste computador (bindings not found)');
  });
});

describe('serial line settings', () => {
  it('always 8 data bits; parity, stop bits and flow control as configured', () => {
    expect(serialOpenOptions('COM3', { baudRate: 38400, parity: 'even', stopBits: 2, flowControl: 'xonxoff' })).toEqual({
      path: 'COM3',
      baudRate: 38400,
      dataBits: 8,
      parity: 'even',
      stopBits: 2,
      rtscts: false,
      xon: true,
      xoff: true,
      xany: false,
      lock: true,
      hupcl: true,
    });
    expect(serialOpenOptions('/dev/ttyUSB0', { baudRate: 9600, parity: 'none', stopBits: 1, flowControl: 'rtscts' })).toMatchObject({
      rtscts: true,
      xon: false,
      xoff: false,
    });
  });

  it('lineTimeMs: 1 KiB takes about a second at 9600 baud 8N1, longer with parity and two stop bits', () => {
    expect(lineTimeMs(line({ baudRate: 9600 }), 1024)).toBe(1067);
    expect(lineTimeMs(line({ baudRate: 9600, parity: 'even', stopBits: 2 }), 1024)).toBe(1280);
    expect(lineTimeMs(line({ baudRate: 115200 }), 1024)).toBe(89);
  });
});
