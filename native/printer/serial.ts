// Serial printers (/dev/ttyS0, /dev/ttyUSB0, COM3) through the `serialport` package: the
// classic RS-232 receipt printers, and the USB printers whose Windows driver is a virtual COM
// port (Bematech and Elgin ship one), which reach Windows this way without the spooler.
//
// What makes serial printing safe is flow control: a printer's buffer fills in a second or two
// and, unless the port honours the printer's "busy" signal (the CTS line, or an XOFF byte),
// the UART keeps sending and the bytes are lost without any error. So the port is opened with
// the baud rate, framing and flow control of the settings (termios on Linux, the DCB on
// Windows, both set by serialport's binding), and a job is sent in chunks, each one bounded by
// a timeout: a printer that holds the line (out of paper, cover open) stops the job with an
// error instead of losing it. send() resolves only after the port drained: every byte left the
// UART.

import { jobBudgetMs, KEPT, PrinterError, type PrinterErrorCode, type PrinterTransport } from './transports.ts';

/** The serial line as the printer is configured (its DIP switches or setup mode). */
export type SerialLineSettings = {
  baudRate: number;
  parity: 'none' | 'even' | 'odd';
  stopBits: 1 | 2;
  /** "rtscts": the printer's busy line on CTS; "xonxoff": XOFF/XON bytes from the printer. */
  flowControl: 'none' | 'rtscts' | 'xonxoff';
};

export const SERIAL_BAUD_RATES = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200] as const;

/**
 * Hardware flow control by default: if the cable does not carry the printer's busy line, jobs
 * fail with a timeout that someone sees, where "none" on a busy printer loses bytes silently.
 */
export const DEFAULT_SERIAL_LINE: Readonly<SerialLineSettings> = Object.freeze({ baudRate: 9600, parity: 'none', stopBits: 1, flowControl: 'rtscts' });

/** What serialport's binding is opened with. */
export type SerialOpenOptions = {
  path: string;
  baudRate: number;
  /**
   * Always 8: a receipt carries bytes above 0x7F (accented letters in code page 860, QR Code and
   * image data), which a 7-bit line would corrupt.
   */
  dataBits: 8;
  parity: SerialLineSettings['parity'];
  stopBits: 1 | 2;
  rtscts: boolean;
  xon: boolean;
  xoff: boolean;
  xany: false;
  /** Another program (or a second Balcão) writing into the same job would garble both. */
  lock: true;
  hupcl: true;
};

export function serialOpenOptions(path: string, line: SerialLineSettings): SerialOpenOptions {
  const xonxoff = line.flowControl === 'xonxoff';
  return {
    path,
    baudRate: line.baudRate,
    dataBits: 8,
    parity: line.parity,
    stopBits: line.stopBits,
    rtscts: line.flowControl === 'rtscts',
    xon: xonxoff,
    xoff: xonxoff,
    xany: false,
    lock: true,
    hupcl: true,
  };
}

/** The part of serialport's binding this transport uses (promise-based, below its stream). */
export interface SerialPortLike {
  /** Resolves once the bytes were handed to the OS. */
  write(buffer: Buffer): Promise<void>;
  /** Resolves once the OS transmitted everything written (tcdrain, FlushFileBuffers). */
  drain(): Promise<void>;
  /** Discards what was written and not yet transmitted. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface SerialBindingLike {
  open(options: SerialOpenOptions): Promise<SerialPortLike>;
}

/** Imported on first use: a serial module that fails to load must not stop the terminal. */
export async function loadSerialBinding(): Promise<SerialBindingLike> {
  const { SerialPort } = await import('serialport');
  // The compiler checks serialport's binding against the subset above.
  const binding: SerialBindingLike = SerialPort.binding;
  return binding;
}

/**
 * Bytes per write. Each write waits for room in the OS's transmit buffer, so its timeout
 * measures how long the printer held the line, not how long a long receipt takes.
 */
export const SERIAL_CHUNK = 1024;

/** Linux and Windows serial drivers queue about a page of output beyond what write() returned. */
const OS_TX_BUFFER = 4096;

/** Milliseconds the line needs for `bytes` (start bit, 8 data bits, parity, stop bits). */
export function lineTimeMs(line: SerialLineSettings, bytes: number): number {
  const bitsPerByte = 1 + 8 + (line.parity === 'none' ? 0 : 1) + line.stopBits;
  return Math.ceil((bytes * bitsPerByte * 1000) / line.baudRate);
}

export type SerialPrinterOptions = {
  path: string;
  line: SerialLineSettings;
  /** How long the printer may hold the line (busy, XOFF) before the job fails. Default 5 s. */
  timeoutMs?: number;
  /** Tests may pass another binding; by default serialport's (loadSerialBinding). */
  binding?: () => Promise<SerialBindingLike>;
};

/**
 * Ports being closed after a job that timed out: a close waits for the driver (Linux waits up
 * to 30 s for unsent output), and a job opened meanwhile would find the port locked anyway.
 */
const closingPorts = new Set<string>();

type Step = 'ok' | 'timeout';

export class SerialPrinter implements PrinterTransport {
  readonly path: string;
  readonly line: SerialLineSettings;
  readonly timeoutMs: number;
  readonly description: string;
  private readonly binding: () => Promise<SerialBindingLike>;

  constructor(options: SerialPrinterOptions) {
    this.path = options.path;
    this.line = { ...options.line };
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.binding = options.binding ?? loadSerialBinding;
    this.description = options.path;
  }

  private error(code: PrinterErrorCode, detail?: string, cause?: unknown, message?: string): PrinterError {
    return new PrinterError(code, this.description, detail, { cause, ...(message !== undefined && { message }) });
  }

  /**
   * serialport's errors carry only a message ("Error: No such file or directory, cannot open
   * /dev/ttyUSB9", "Opening COM3: Access denied"), so they are told apart by it.
   */
  private fail(err: unknown, sent: number, total: number): PrinterError {
    const text = `${(err as Error)?.message ?? err} ${(err as NodeJS.ErrnoException)?.code ?? ''}`;
    const where = this.path;
    const cut = sent > 0 ? `; o cupom pode ter saído cortado (${sent} de ${total} bytes enviados)` : '';
    if (/No such file|File not found|cannot find the file|ENOENT/i.test(text)) {
      return this.error(
        'offline',
        undefined,
        err,
        `Impressora não encontrada em ${where}. Verifique se o cabo está conectado e se a impressora está ligada; ${KEPT}`,
      );
    }
    if (/Permission denied|EACCES|EPERM/i.test(text)) {
      return this.error(
        'desconhecido',
        undefined,
        err,
        `Sem permissão para usar a porta serial ${where} (no Linux, o usuário do Balcão precisa estar no grupo "dialout"). Chame o suporte; ${KEPT}`,
      );
    }
    if (/Access denied|Cannot lock port|Resource busy|Resource temporarily unavailable|EBUSY/i.test(text)) {
      return this.error('desconhecido', 'a porta serial está em uso por outro programa', err);
    }
    if (/Inappropriate ioctl|not a typewriter|ENOTTY/i.test(text)) {
      return this.error('desconhecido', `${where} não é uma porta serial`, err);
    }
    if ((err as { disconnect?: boolean })?.disconnect || /bad file descriptor|Input\/output error|No such device|EIO|ENXIO|EBADF/i.test(text)) {
      return this.error('offline', `a impressora foi desconectada durante a impressão${cut}`, err);
    }
    return this.error('desconhecido', `${(err as Error)?.message ?? err}${cut}`, err);
  }

  /** Resolves 'timeout' after `ms` unless `step` settles first (its rejection passes through). */
  private async within(step: Promise<unknown>, ms: number): Promise<Step> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<Step>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
    try {
      return await Promise.race([step.then((): Step => 'ok'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async send(bytes: Uint8Array): Promise<void> {
    if (closingPorts.has(this.path)) throw this.error('timeout', 'a impressão anterior ainda não terminou');
    let binding: SerialBindingLike;
    try {
      binding = await this.binding();
    } catch (err) {
      throw this.error(
        'desconhecido',
        undefined,
        err,
        `O suporte a portas seriais não carregou neste computador (${(err as Error)?.message ?? err}). Chame o suporte; ${KEPT}`,
      );
    }
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const opening = binding.open(serialOpenOptions(this.path, this.line));
    // A step still running when its time is up (a write waiting for the printer) must not
    // surface later as an unhandled rejection: its outcome is already reported.
    opening.catch(() => undefined);
    let port: SerialPortLike | undefined;
    let sent = 0;
    const abandon = (): PrinterError => {
      closingPorts.add(this.path);
      void opening
        .then(async (p) => {
          // Discard what the printer refused, so that closing does not wait for it to drain.
          await p.flush().catch(() => undefined);
          await p.close().catch(() => undefined);
        })
        .catch(() => undefined)
        .finally(() => closingPorts.delete(this.path));
      const cut = sent > 0 ? `; o cupom pode ter saído cortado (${sent} de ${data.length} bytes enviados)` : '';
      return this.error('timeout', `a impressora segurou a linha serial (ocupada ou sem papel)${cut}`);
    };
    try {
      if ((await this.within(opening, this.timeoutMs)) === 'timeout') throw abandon();
      port = await opening;
      // Each chunk gets the printer's own pace plus the time the line needs for it and for what
      // the OS still holds ahead of it.
      const chunkLimit = jobBudgetMs(this.timeoutMs, SERIAL_CHUNK) + lineTimeMs(this.line, SERIAL_CHUNK + OS_TX_BUFFER);
      while (sent < data.length) {
        const chunk = data.subarray(sent, Math.min(data.length, sent + SERIAL_CHUNK));
        const writing = port.write(chunk);
        writing.catch(() => undefined);
        if ((await this.within(writing, chunkLimit)) === 'timeout') throw abandon();
        sent += chunk.length;
      }
      const draining = port.drain();
      draining.catch(() => undefined);
      if ((await this.within(draining, chunkLimit)) === 'timeout') throw abandon();
    } catch (err) {
      if (err instanceof PrinterError) throw err;
      await port?.close().catch(() => undefined);
      throw this.fail(err, sent, data.length);
    }
    // Drained: every byte left the port; a failing close cannot take that back.
    await port.close().catch(() => undefined);
  }
}

/** True while a port whose job timed out is still being closed. */
export const isSerialPortClosing = (path: string): boolean => closingPorts.has(path);
