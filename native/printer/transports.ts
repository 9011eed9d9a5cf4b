// How print jobs reach the thermal printer. A transport moves bytes and reports failure; it
// never decides what to print and never retries: the terminal keeps the NFC-e XML, so a receipt
// that failed can always be rendered and printed again (reprint). The one rule every transport
// keeps is that a job is never lost silently: send() resolves only when every byte was written,
// and rejects with a PrinterError (with a Portuguese message for the operator) otherwise.
//
// Built:
// - TcpPrinter: raw TCP, port 9100 (Ethernet/Wi-Fi printers), with connect/write/finish
//   timeouts and an optional DLE EOT status query (paper out, cover open) before the job.
// - UsbPrinter (usb.ts): USB through libusb (the `usb` package), by vendor:product or the first
//   printer-class device; on Linux it takes the interface from the usblp kernel driver for the
//   job and gives it back. On Windows it reaches only a printer whose interface runs on the
//   WinUSB driver: the printer's own Windows driver keeps libusb out (LIBUSB_ERROR_NOT_SUPPORTED,
//   which the operator's message explains).
// - SerialPrinter (serial.ts): RS-232 and USB-serial ports (/dev/ttyS*, /dev/ttyUSB*, COMn,
//   including the virtual COM port that Bematech's and Elgin's USB drivers create on Windows)
//   through the `serialport` package, with the baud rate, parity, stop bits and flow control
//   (RTS/CTS or XON/XOFF) of the settings; it resolves once the port drained.
// - DeviceFilePrinter: a character device or plain file. On Linux a USB printer is claimed by
//   the usblp kernel driver and appears as /dev/usb/lpN, a device that accepts the raw bytes
//   as written: the USB path that needs nothing native. Not for serial ports, whose line it
//   does not configure (SerialPrinter does).
// - SystemQueuePrinter (system-queue.ts): a print queue of the operating system, over IPP: a
//   queue of this computer's CUPS (Linux, macOS) by name, or a queue's ipp:// / http:// address
//   (another CUPS server; a Windows print server with Internet Printing). The bytes go as one
//   raw job and the job is followed until the queue reports it completed. Tested against
//   Debian's CUPS; macOS and the Windows print server were NOT tested (no such machines here).
// - VirtualPrinter: each job as a numbered .bin file (plus a PNG preview when given), for
//   `npm start` without hardware and for end-to-end tests.
// - MemoryPrinter: keeps jobs in memory, or fails on demand, for unit tests of callers.
//
// The native packages (usb, serialport) are imported only when such a printer is configured,
// so a broken native install costs that printer, never the terminal.
//
// Not built, on purpose:
// - The Windows spooler's own API (OpenPrinter / StartDocPrinter / WritePrinter with the RAW
//   datatype), for a printer installed on the terminal's own Windows with its driver and no
//   virtual COM port and no IPP: it needs a native addon or a helper program (a PowerShell
//   script calling winspool.drv would do), and neither can be run or tested without Windows,
//   which this project has no machine for; an untested spooler path that might lose receipts
//   is worse than none. Such a printer is reached instead through IPP when Windows' Internet
//   Printing is on (SystemQueuePrinter, untested there), its virtual COM port (SerialPrinter),
//   the WinUSB driver (UsbPrinter), or the network (TcpPrinter).
// - Printer status over USB and serial: both links are two-way (the bulk IN endpoint, the RX
//   line), so DLE EOT would work as it does over TCP, but it is not built yet; over USB and
//   serial the terminal learns of paper out or an open cover from a job that fails (the printer
//   stops taking data, and the job times out) rather than before it. Over usblp (device files)
//   status needs the LPGETSTATUS ioctl, which Node cannot issue.

import { constants } from 'node:fs';
import { mkdir, open, readdir, writeFile, type FileHandle } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';

// =============================================================================================
// Errors and status

export type PrinterErrorCode = 'offline' | 'timeout' | 'sem_papel' | 'tampa_aberta' | 'desconhecido';

/** How every operator message ends: the receipt is never lost with the job. */
export const KEPT = 'o cupom fica guardado para reimpressão.';

const HEADLINES: Record<PrinterErrorCode, { headline: string; advice: string }> = {
  offline: { headline: 'Impressora desligada ou fora de alcance', advice: 'Verifique o cabo e a energia' },
  timeout: { headline: 'A impressora não respondeu a tempo', advice: 'Verifique se há papel, se a tampa está fechada e se ela está ligada' },
  sem_papel: { headline: 'Impressora sem papel', advice: 'Coloque uma bobina nova' },
  tampa_aberta: { headline: 'Tampa da impressora aberta', advice: 'Feche a tampa' },
  desconhecido: { headline: 'Falha na impressora', advice: 'Verifique a impressora' },
};

/** The operator's message: what happened, where, what to do, and that nothing is lost. */
export function printerMessage(code: PrinterErrorCode, where: string, detail?: string): string {
  const { headline, advice } = HEADLINES[code];
  return `${headline} (${where})${detail ? `: ${detail}` : ''}. ${advice}; ${KEPT}`;
}

export class PrinterError extends Error {
  readonly code: PrinterErrorCode;
  /** Which printer: "192.168.0.50:9100", "/dev/usb/lp0"… */
  readonly printer: string;

  constructor(code: PrinterErrorCode, printer: string, detail?: string, options?: { cause?: unknown; message?: string }) {
    super(options?.message ?? printerMessage(code, printer, detail), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PrinterError';
    this.code = code;
    this.printer = printer;
  }
}

export type PrinterStatus = {
  online: boolean;
  coverOpen: boolean;
  paperOut: boolean;
  /** The near-end sensor (not every printer has one). */
  paperLow: boolean;
  /** A mechanical, cutter or unrecoverable error. */
  error: boolean;
  /** The raw answers to DLE EOT 1, 2 and 4. */
  raw: [number, number, number];
};

/** Extras a transport may use (VirtualPrinter keeps the preview next to the job). */
export type PrintJobExtras = { previewPng?: Uint8Array };

export interface PrinterTransport {
  /** Where the printer is, for messages and logs. */
  readonly description: string;
  send(bytes: Uint8Array, job?: PrintJobExtras): Promise<void>;
  status?(): Promise<PrinterStatus>;
}

/** DLE EOT n for n = 1 (printer), 2 (offline cause), 4 (paper roll sensor). */
export const STATUS_QUERY = Uint8Array.of(0x10, 0x04, 1, 0x10, 0x04, 2, 0x10, 0x04, 4);

/**
 * Decodes the three DLE EOT answers (Epson real-time status; bits 1 and 4 are always 1, bits 0
 * and 7 always 0, which is how a stray byte is told from an answer).
 */
export function decodeStatus(b1: number, b2: number, b4: number): PrinterStatus | undefined {
  if ([b1, b2, b4].some((b) => (b & 0x93) !== 0x12)) return undefined;
  return {
    online: (b1 & 0x08) === 0,
    coverOpen: (b2 & 0x04) !== 0,
    paperOut: (b4 & 0x60) !== 0 || (b2 & 0x20) !== 0,
    paperLow: (b4 & 0x0c) !== 0,
    error: (b2 & 0x40) !== 0,
    raw: [b1, b2, b4],
  };
}

/** The PrinterError a status means, if the printer cannot print now. */
export function statusError(status: PrinterStatus, where: string): PrinterError | undefined {
  if (status.paperOut) return new PrinterError('sem_papel', where);
  if (status.coverOpen) return new PrinterError('tampa_aberta', where);
  if (status.error) return new PrinterError('desconhecido', where, 'a impressora informou um erro (guilhotina ou mecanismo)');
  if (!status.online) return new PrinterError('desconhecido', where, 'a impressora está em modo offline');
  return undefined;
}

// =============================================================================================
// TCP 9100

export type TcpPrinterOptions = {
  host: string;
  port?: number;
  /**
   * Limit for connecting and for the status answer; writing the job and the printer's close
   * get this plus the job's own budget (jobBudgetMs). Default 5 s.
   */
  timeoutMs?: number;
  /** Ask DLE EOT status before printing, and refuse to print into an empty/open printer. */
  queryStatus?: boolean;
  /**
   * Wait for the printer to close the connection after our end (default true). A printer only
   * sees our FIN after reading every byte before it, so its close proves the whole job arrived
   * (CUPS' socket backend waits for the same EOF). Turn off only for a printer that never closes.
   */
  waitForClose?: boolean;
};

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTDOWN', 'ECONNRESET']);

/** One connection with every event turned into awaitable steps under a timeout. */
class Connection {
  private received: Buffer = Buffer.alloc(0);
  private failure: Error | undefined;
  private closed = false;
  private waiters = new Set<() => void>();

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    socket.on('error', (err) => {
      this.failure ??= err;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('connect', () => this.wake());
    socket.on('finish', () => this.wake());
  }

  /** Re-checks every pending step (events the socket does not emit, like a write callback). */
  wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves when `ready()` is defined; rejects on a socket error or after `ms`. */
  until<T>(ready: () => T | undefined, ms: number, onTimeout: () => Error, onError: (err: Error) => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): void => {
        if (this.failure) return finish(() => reject(onError(this.failure!)));
        const v = ready();
        if (v !== undefined) finish(() => resolve(v));
      };
      const timer = setTimeout(() => finish(() => reject(onTimeout())), ms);
      const finish = (act: () => void): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        act();
      };
      this.waiters.add(check);
      check();
    });
  }

  take(n: number): number[] | undefined {
    if (this.received.length < n) return undefined;
    const out = [...this.received.subarray(0, n)];
    this.received = this.received.subarray(n);
    return out;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/**
 * Time a printer may take to swallow a job: it reads as fast as it prints, and text prints at
 * roughly 3 KB/s (250 mm/s, ~13 bytes per mm of 48-column text), so a long receipt legitimately
 * takes seconds. 1 s per KiB on top of the base timeout stays above any real printer's pace.
 */
export const jobBudgetMs = (timeoutMs: number, bytes: number): number => timeoutMs + Math.ceil(bytes / 1024) * 1000;

export class TcpPrinter implements PrinterTransport {
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
  readonly queryStatus: boolean;
  readonly waitForClose: boolean;
  readonly description: string;

  constructor(options: TcpPrinterOptions) {
    this.host = options.host;
    this.port = options.port ?? 9100;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.queryStatus = options.queryStatus ?? false;
    this.waitForClose = options.waitForClose ?? true;
    this.description = `${this.host}:${this.port}`;
  }

  private error(code: PrinterErrorCode, detail?: string, cause?: unknown): PrinterError {
    return new PrinterError(code, this.description, detail, { cause });
  }

  private ioError = (err: Error): PrinterError => {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    return UNREACHABLE.has(code) || code === 'EPIPE'
      ? this.error('offline', code === 'ECONNRESET' || code === 'EPIPE' ? 'a conexão caiu durante a impressão' : undefined, err)
      : this.error('desconhecido', err.message, err);
  };

  private async open(): Promise<Connection> {
    const socket = connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    const conn = new Connection(socket);
    try {
      await conn.until(
        () => (socket.readyState === 'open' ? true : undefined),
        this.timeoutMs,
        // Nothing answered the connection at all: for the operator that is a printer that is
        // off or unreachable, not a slow one.
        () => this.error('offline'),
        this.ioError,
      );
    } catch (err) {
      socket.destroy();
      throw err;
    }
    return conn;
  }

  private async readStatus(conn: Connection): Promise<PrinterStatus> {
    conn.socket.write(STATUS_QUERY);
    const answer = await conn.until(
      () => conn.take(3),
      this.timeoutMs,
      () => this.error('timeout', 'sem resposta à consulta de status'),
      this.ioError,
    );
    const status = decodeStatus(answer[0]!, answer[1]!, answer[2]!);
    if (!status) throw this.error('desconhecido', 'resposta de status não reconhecida (a impressora é ESC/POS?)');
    return status;
  }

  async status(): Promise<PrinterStatus> {
    const conn = await this.open();
    try {
      return await this.readStatus(conn);
    } finally {
      conn.socket.destroy();
    }
  }

  async send(bytes: Uint8Array): Promise<void> {
    const conn = await this.open();
    const { socket } = conn;
    try {
      if (this.queryStatus) {
        const refusal = statusError(await this.readStatus(conn), this.description);
        if (refusal) throw refusal;
      }
      const budget = jobBudgetMs(this.timeoutMs, bytes.length);
      let written = false;
      socket.write(bytes, (err) => {
        if (!err) written = true;
        conn.wake();
      });
      await conn.until(
        () => (written ? true : undefined),
        budget,
        () => this.error('timeout', 'o trabalho não foi aceito por completo'),
        this.ioError,
      );
      socket.end();
      if (this.waitForClose) {
        await conn.until(
          () => (conn.isClosed ? true : undefined),
          budget,
          () => this.error('timeout', 'não confirmou o recebimento do trabalho inteiro'),
          this.ioError,
        );
      } else {
        await conn.until(
          () => (socket.writableFinished ? true : undefined),
          budget,
          () => this.error('timeout', 'o trabalho não foi enviado por completo'),
          this.ioError,
        );
      }
    } finally {
      socket.destroy();
    }
  }
}

// =============================================================================================
// Character devices and files (/dev/usb/lp0)

/** `timeoutMs` (default 10 s) plus the job's budget (jobBudgetMs) bounds the whole write. */
export type DeviceFilePrinterOptions = { path: string; timeoutMs?: number };

/**
 * Paths whose last write is still blocked in the kernel (a usblp write waits while the printer
 * is out of paper). Such a write cannot be cancelled and holds a libuv thread; refusing new
 * jobs for that device until it returns keeps a stuck printer from exhausting the pool.
 */
const blockedDevices = new Set<string>();

export class DeviceFilePrinter implements PrinterTransport {
  readonly path: string;
  readonly timeoutMs: number;
  readonly description: string;

  constructor(options: DeviceFilePrinterOptions) {
    this.path = options.path;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.description = options.path;
  }

  private fail(err: unknown): PrinterError {
    const code = (err as NodeJS.ErrnoException).code;
    const where = this.path;
    switch (code) {
      case 'ENOENT':
      case 'ENODEV':
      case 'ENXIO':
        return new PrinterError('offline', where, undefined, {
          cause: err,
          message: `Impressora não encontrada em ${where}. Verifique se o cabo USB está conectado e se a impressora está ligada; ${KEPT}`,
        });
      case 'EIO':
        return new PrinterError('offline', where, 'a impressora parou de responder ou foi desconectada', { cause: err });
      case 'ENOSPC':
        return new PrinterError('sem_papel', where, undefined, { cause: err });
      case 'ETIMEDOUT':
        return new PrinterError('timeout', where, undefined, { cause: err });
      case 'EACCES':
      case 'EPERM':
        return new PrinterError('desconhecido', where, undefined, {
          cause: err,
          message: `Sem permissão para usar a impressora em ${where} (o usuário do Balcão precisa estar no grupo "lp"). Chame o suporte; ${KEPT}`,
        });
      case 'EBUSY':
        return new PrinterError('desconhecido', where, 'a impressora está em uso por outro programa', { cause: err });
      default:
        return new PrinterError('desconhecido', where, (err as Error).message, { cause: err });
    }
  }

  async send(bytes: Uint8Array): Promise<void> {
    if (blockedDevices.has(this.path)) {
      throw new PrinterError('timeout', this.path, 'a impressão anterior ainda não terminou');
    }
    let fh: FileHandle | undefined;
    // Opening can block too (a driver waiting for the device, a FIFO without a reader), so
    // the timeout covers opening and writing together.
    const job = (async () => {
      // No O_CREAT: with the printer unplugged, /dev/usb/lp0 must be "not found", never a new
      // regular file that silently swallows the receipt. O_APPEND keeps a plain file a stream.
      fh = await open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOCTTY);
      let at = 0;
      while (at < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, at, bytes.length - at);
        if (bytesWritten === 0) throw Object.assign(new Error('write devolveu 0 bytes'), { code: 'EIO' });
        at += bytesWritten;
      }
      await fh.close();
      fh = undefined;
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), jobBudgetMs(this.timeoutMs, bytes.length))));
    try {
      const outcome = await Promise.race([job.then(() => 'ok' as const), timeout]);
      if (outcome === 'timeout') {
        // The blocked call cannot be cancelled; the device stays refused until it returns.
        blockedDevices.add(this.path);
        void job
          .catch(() => undefined)
          .finally(() => {
            blockedDevices.delete(this.path);
            void fh?.close().catch(() => undefined);
          });
        throw new PrinterError('timeout', this.path);
      }
    } catch (err) {
      if (err instanceof PrinterError) throw err;
      await fh?.close().catch(() => undefined);
      throw this.fail(err);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** True while a timed-out write to `path` is still blocked in the kernel (see DeviceFilePrinter). */
export const isDeviceBlocked = (path: string): boolean => blockedDevices.has(path);

// =============================================================================================
// Virtual printer (files) and in-memory printer

export type VirtualPrinterOptions = { dir: string };

export class VirtualPrinter implements PrinterTransport {
  readonly dir: string;
  readonly description: string;

  constructor(options: VirtualPrinterOptions) {
    this.dir = options.dir;
    this.description = `impressora virtual (${options.dir})`;
  }

  /** Writes the job as job-NNNNNN.bin (and .png); returns the paths written. */
  async write(bytes: Uint8Array, job: PrintJobExtras = {}): Promise<{ bin: string; png?: string }> {
    try {
      await mkdir(this.dir, { recursive: true });
      for (;;) {
        const taken = (await readdir(this.dir)).map((f) => /^job-([0-9]{6})\.bin$/.exec(f)?.[1]).filter((n): n is string => !!n);
        const next = taken.reduce((max, n) => Math.max(max, Number(n)), 0) + 1;
        const base = join(this.dir, `job-${String(next).padStart(6, '0')}`);
        try {
          // "wx": two terminals sharing the folder never overwrite each other's job.
          await writeFile(`${base}.bin`, bytes, { flag: 'wx' });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw err;
        }
        if (job.previewPng) await writeFile(`${base}.png`, job.previewPng);
        return job.previewPng ? { bin: `${base}.bin`, png: `${base}.png` } : { bin: `${base}.bin` };
      }
    } catch (err) {
      throw new PrinterError('desconhecido', this.description, (err as Error).message, { cause: err });
    }
  }

  async send(bytes: Uint8Array, job?: PrintJobExtras): Promise<void> {
    await this.write(bytes, job);
  }
}

/** Keeps the jobs it receives; `failWith` makes every send fail with that code. */
export class MemoryPrinter implements PrinterTransport {
  readonly description = 'impressora em memória';
  readonly jobs: Uint8Array[] = [];
  failWith: PrinterErrorCode | undefined;

  constructor(options: { failWith?: PrinterErrorCode } = {}) {
    this.failWith = options.failWith;
  }

  async send(bytes: Uint8Array): Promise<void> {
    if (this.failWith) throw new PrinterError(this.failWith, this.description);
    this.jobs.push(Uint8Array.from(bytes));
  }
}
