// Direct USB printing through libusb (the `usb` package): for a printer that no OS driver hands
// us as a device file (/dev/usb/lpN missing, usblp blacklisted, a vendor-class interface), and
// for Windows machines whose printer runs on the WinUSB driver.
//
// The transport talks to libusb only through the few members of the `usb` package's Device,
// Interface and OutEndpoint declared below (UsbBackend and friends). The real package is
// checked against that subset by the compiler (loadUsbBackend), and the tests drive the same
// subset with a simulated device, since no physical printer is reachable from CI.
//
// One job is: find the device, open it, claim its printer interface (on Linux taking it from
// the usblp kernel driver first and giving it back afterwards, so /dev/usb/lpN and CUPS keep
// working), write the bytes through the bulk OUT endpoint in chunks, each under a libusb
// timeout, then release and close. send() resolves only once libusb reported every byte
// transferred.

import { jobBudgetMs, KEPT, PrinterError, type PrinterErrorCode, type PrinterTransport } from './transports.ts';

// =============================================================================================
// The subset of the `usb` package this transport uses

/** A libusb failure: `errno` is a LIBUSB_ERROR_* (< 0) from a call, a LIBUSB_TRANSFER_* (> 0) from a transfer. */
export type UsbError = Error & { errno?: number };

export interface UsbEndpointLike {
  readonly direction: 'in' | 'out';
  /** LIBUSB_TRANSFER_TYPE_*: 2 is bulk. */
  readonly transferType: number;
  readonly address: number;
  /** Milliseconds libusb lets one transfer on this endpoint take; 0 waits forever. */
  timeout: number;
  clearHalt(callback: (error: UsbError | undefined) => void): void;
}

export interface UsbOutEndpointLike extends UsbEndpointLike {
  /** Completes once with the error (if any) and how many bytes the device accepted. */
  transfer(buffer: Buffer, callback: (error: UsbError | undefined, actual: number) => void): unknown;
}

export interface UsbInterfaceLike {
  readonly descriptor: { readonly bInterfaceNumber: number; readonly bInterfaceClass: number };
  readonly endpoints: readonly UsbEndpointLike[];
  claim(): void;
  release(callback: (error?: UsbError) => void): void;
  isKernelDriverActive(): boolean;
  detachKernelDriver(): void;
  attachKernelDriver(): void;
}

export interface UsbDeviceLike {
  readonly deviceDescriptor: { readonly idVendor: number; readonly idProduct: number };
  /** Read without opening the device (it may throw for a device that is not configured). */
  readonly configDescriptor: { readonly interfaces: readonly (readonly { readonly bInterfaceClass: number }[])[] } | undefined;
  /** Set by open(), cleared by close(). */
  readonly interfaces: readonly UsbInterfaceLike[] | undefined;
  open(): void;
  close(): void;
}

export interface UsbBackend {
  getDeviceList(): UsbDeviceLike[];
}

// libusb's numbers (libusb.h); kept here so the simulated device needs nothing native.
export const LIBUSB = {
  CLASS_PRINTER: 0x07,
  CLASS_VENDOR_SPEC: 0xff,
  TRANSFER_TYPE_BULK: 2,
  ERROR_IO: -1,
  ERROR_ACCESS: -3,
  ERROR_NO_DEVICE: -4,
  ERROR_NOT_FOUND: -5,
  ERROR_BUSY: -6,
  ERROR_TIMEOUT: -7,
  ERROR_PIPE: -9,
  ERROR_NOT_SUPPORTED: -12,
  TRANSFER_ERROR: 1,
  TRANSFER_TIMED_OUT: 2,
  TRANSFER_CANCELLED: 3,
  TRANSFER_STALL: 4,
  TRANSFER_NO_DEVICE: 5,
  TRANSFER_OVERFLOW: 6,
} as const;

/**
 * The real `usb` package, imported only when a USB printer is configured: a native module that
 * fails to load (a broken install, a missing libudev) must cost the store its USB printer, not
 * the whole terminal.
 */
export async function loadUsbBackend(): Promise<UsbBackend> {
  const usb = await import('usb');
  // Assigning the package to our subset makes the compiler check every member used above.
  const backend: UsbBackend = usb;
  return backend;
}

// =============================================================================================
// Addresses

export type UsbAddress = { vendorId: number; productId: number };

const hex4 = (n: number): string => n.toString(16).padStart(4, '0');

/** "04b8:0e15" (vendor:product, hexadecimal, as lsusb and the Windows device manager show them). */
export function parseUsbAddress(text: string): UsbAddress | undefined {
  const m = /^(?:0x)?([0-9a-fA-F]{4}):(?:0x)?([0-9a-fA-F]{4})$/.exec(text.trim());
  if (!m) return undefined;
  const vendorId = parseInt(m[1]!, 16);
  const productId = parseInt(m[2]!, 16);
  return vendorId === 0 ? undefined : { vendorId, productId };
}

export const formatUsbAddress = (a: UsbAddress): string => `${hex4(a.vendorId)}:${hex4(a.productId)}`;

// =============================================================================================
// The transport

export type UsbPrinterOptions = {
  /** The printer's vendor:product; without it, the first device with a printer-class interface. */
  address?: UsbAddress;
  /** How long the printer may refuse data before the job fails; chunks add their own budget (jobBudgetMs). Default 5 s. */
  timeoutMs?: number;
  /** Tests pass a simulated device; by default the `usb` package (loadUsbBackend). */
  backend?: UsbBackend | (() => Promise<UsbBackend>);
  /** Take the interface from a kernel driver (usblp) for the job. Default: on Linux only, the one OS where libusb can. */
  detachKernelDriver?: boolean;
};

/**
 * Bytes per bulk transfer. The libusb timeout then measures how long the printer stopped taking
 * data (paper out, cover open: it stops reading once its buffer is full), not how long a long
 * receipt with a logo takes, and a failure tells how far the job got.
 */
export const USB_CHUNK = 4096;

/** The interface and endpoint a job goes through. */
type Target = { iface: UsbInterfaceLike; endpoint: UsbOutEndpointLike };

const isBulkOut = (e: UsbEndpointLike): e is UsbOutEndpointLike =>
  e.direction === 'out' && e.transferType === LIBUSB.TRANSFER_TYPE_BULK && typeof (e as Partial<UsbOutEndpointLike>).transfer === 'function';

const hasPrinterInterface = (device: UsbDeviceLike): boolean => {
  try {
    return (device.configDescriptor?.interfaces ?? []).some((alts) => alts.some((alt) => alt.bInterfaceClass === LIBUSB.CLASS_PRINTER));
  } catch {
    // An unconfigured or vanishing device has no descriptor to read: not our printer.
    return false;
  }
};

const errnoOf = (err: unknown): number | undefined => {
  const errno = (err as UsbError | undefined)?.errno;
  return typeof errno === 'number' ? errno : undefined;
};

export class UsbPrinter implements PrinterTransport {
  readonly address: UsbAddress | undefined;
  readonly timeoutMs: number;
  readonly description: string;
  private readonly backend: () => Promise<UsbBackend>;
  private readonly detach: boolean;

  constructor(options: UsbPrinterOptions = {}) {
    this.address = options.address;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.description = options.address ? `USB ${formatUsbAddress(options.address)}` : 'USB';
    const backend = options.backend;
    this.backend = typeof backend === 'function' ? backend : backend ? async () => backend : loadUsbBackend;
    this.detach = options.detachKernelDriver ?? process.platform === 'linux';
  }

  private error(code: PrinterErrorCode, detail?: string, cause?: unknown, message?: string): PrinterError {
    return new PrinterError(code, this.description, detail, { cause, ...(message !== undefined && { message }) });
  }

  /** A failed libusb call (open, claim, detach) as the operator's error. */
  private callError(err: unknown): PrinterError {
    const where = this.description;
    switch (errnoOf(err)) {
      case LIBUSB.ERROR_NO_DEVICE:
        return this.error('offline', 'a impressora foi desconectada', err);
      case LIBUSB.ERROR_ACCESS:
        return this.error(
          'desconhecido',
          undefined,
          err,
          `Sem permissão para usar a impressora ${where} (no Linux, uma regra do udev deve dar acesso ao usuário do Balcão). Chame o suporte; ${KEPT}`,
        );
      case LIBUSB.ERROR_BUSY:
        return this.error('desconhecido', 'a impressora está em uso por outro programa (o spooler de impressão ou outro Balcão)', err);
      // On Windows libusb answers NOT_SUPPORTED (open, or claim on a composite device) when the
      // interface's driver is not WinUSB, and NOT_FOUND when it cannot reach the interface;
      // neither means an unplugged printer (NO_DEVICE does).
      case LIBUSB.ERROR_NOT_SUPPORTED:
      case LIBUSB.ERROR_NOT_FOUND:
        return this.error(
          'desconhecido',
          undefined,
          err,
          `A impressora ${where} está presa ao driver de impressora do sistema e não aceita USB direto (no Windows, ela precisa do driver WinUSB). ` +
            `Use a porta serial virtual do fabricante ou a impressora em rede, ou chame o suporte; ${KEPT}`,
        );
      default:
        return this.error('desconhecido', (err as Error)?.message ?? String(err), err);
    }
  }

  /** A transfer that ended early, after `sent` of `total` bytes went through. */
  private transferError(err: UsbError, sent: number, total: number): PrinterError {
    const cut = sent > 0 ? `; o cupom pode ter saído cortado (${sent} de ${total} bytes enviados)` : '';
    switch (errnoOf(err)) {
      case LIBUSB.TRANSFER_TIMED_OUT:
      case LIBUSB.ERROR_TIMEOUT:
        return this.error('timeout', `parou de aceitar dados${cut}`, err);
      case LIBUSB.TRANSFER_NO_DEVICE:
      case LIBUSB.ERROR_NO_DEVICE:
        return this.error('offline', `a impressora foi desconectada durante a impressão${cut}`, err);
      case LIBUSB.TRANSFER_STALL:
      case LIBUSB.ERROR_PIPE:
        return this.error('desconhecido', `a impressora recusou os dados (USB stall); desligue e ligue a impressora${cut}`, err);
      default:
        return this.error('desconhecido', `${err.message}${cut}`, err);
    }
  }

  private find(devices: UsbDeviceLike[]): UsbDeviceLike {
    const want = this.address;
    const found = want
      ? devices.find((d) => d.deviceDescriptor.idVendor === want.vendorId && d.deviceDescriptor.idProduct === want.productId)
      : // Without an address only a printer-class device qualifies: a receipt must never be
        // written into whatever else is on the bus (a scanner, a card reader).
        devices.find(hasPrinterInterface);
    if (found) return found;
    throw this.error(
      'offline',
      undefined,
      undefined,
      want
        ? `Impressora USB ${formatUsbAddress(want)} não encontrada. Verifique se o cabo USB está conectado e se a impressora está ligada; ${KEPT}`
        : `Nenhuma impressora USB encontrada. Verifique se o cabo USB está conectado e se a impressora está ligada; ${KEPT}`,
    );
  }

  /** The printer-class interface with a bulk OUT endpoint; failing that (a vendor-class printer chosen by address), any with one. */
  private target(device: UsbDeviceLike): Target {
    const candidates = (device.interfaces ?? []).flatMap((iface) => {
      const endpoint = iface.endpoints.find(isBulkOut);
      return endpoint ? [{ iface, endpoint }] : [];
    });
    const printer = candidates.find((c) => c.iface.descriptor.bInterfaceClass === LIBUSB.CLASS_PRINTER);
    const chosen = printer ?? (this.address ? candidates[0] : undefined);
    if (!chosen) throw this.error('desconhecido', 'o dispositivo USB não tem uma saída de impressão (endpoint bulk OUT)');
    return chosen;
  }

  async send(bytes: Uint8Array): Promise<void> {
    let backend: UsbBackend;
    try {
      backend = await this.backend();
    } catch (err) {
      throw this.error(
        'desconhecido',
        undefined,
        err,
        `O suporte a impressoras USB não carregou neste computador (${(err as Error)?.message ?? err}). Chame o suporte; ${KEPT}`,
      );
    }
    let devices: UsbDeviceLike[];
    try {
      devices = backend.getDeviceList();
    } catch (err) {
      throw this.callError(err);
    }
    const device = this.find(devices);
    try {
      device.open();
    } catch (err) {
      throw this.callError(err);
    }
    let detached: UsbInterfaceLike | undefined;
    let claimed: UsbInterfaceLike | undefined;
    try {
      const { iface, endpoint } = this.target(device);
      try {
        if (this.detach && iface.isKernelDriverActive()) {
          iface.detachKernelDriver();
          detached = iface;
        }
        iface.claim();
        claimed = iface;
      } catch (err) {
        throw this.callError(err);
      }
      await this.write(endpoint, bytes);
    } finally {
      await this.finish(device, claimed, detached);
    }
  }

  /**
   * Writes every byte, chunk by chunk, each transfer under libusb's own timeout (libusb cancels
   * a transfer that outlives it and reports how much got through). Rejects with the PrinterError
   * of the first transfer that failed.
   */
  private async write(endpoint: UsbOutEndpointLike, bytes: Uint8Array): Promise<void> {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let sent = 0;
    while (sent < data.length) {
      const chunk = data.subarray(sent, Math.min(data.length, sent + USB_CHUNK));
      endpoint.timeout = jobBudgetMs(this.timeoutMs, chunk.length);
      const result = await new Promise<{ error: UsbError | undefined; actual: number }>((resolve) => {
        try {
          endpoint.transfer(chunk, (error, actual) => resolve({ error, actual }));
        } catch (err) {
          resolve({ error: err as UsbError, actual: 0 });
        }
      });
      const actual = Math.max(0, Math.min(result.actual, chunk.length));
      if (result.error) {
        if (errnoOf(result.error) === LIBUSB.TRANSFER_STALL) await this.clearHalt(endpoint);
        throw this.transferError(result.error, sent + actual, data.length);
      }
      if (actual === 0) {
        // A completed transfer that moved nothing would loop forever.
        throw this.transferError(Object.assign(new Error('a transferência USB terminou sem enviar nada'), { errno: LIBUSB.TRANSFER_ERROR }), sent, data.length);
      }
      sent += actual;
    }
  }

  /** A stalled endpoint stays halted for the next job unless someone clears it. */
  private clearHalt(endpoint: UsbOutEndpointLike): Promise<void> {
    return new Promise((resolve) => {
      try {
        endpoint.clearHalt(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  /**
   * Gives everything back, in the order libusb requires: release the interface, then reattach
   * the kernel driver (libusb refuses while the interface is claimed), then close. Failures here
   * do not change the job's outcome (a printer unplugged mid-job fails every step); a usblp that
   * could not be reattached comes back when the printer is replugged.
   */
  private async finish(device: UsbDeviceLike, claimed: UsbInterfaceLike | undefined, detached: UsbInterfaceLike | undefined): Promise<void> {
    if (claimed) {
      await new Promise<void>((resolve) => {
        try {
          claimed.release(() => resolve());
        } catch {
          resolve();
        }
      });
    }
    if (detached) {
      try {
        detached.attachKernelDriver();
      } catch {
        // See above: replugging the printer brings usblp back.
      }
    }
    try {
      device.close();
    } catch {
      // Already gone with the printer.
    }
  }
}
