// A simulated USB bus with printers, for testing UsbPrinter where no physical printer exists.
// It implements the same subset of the `usb` package (UsbBackend) and keeps the rules of libusb
// on Linux that a transport can get wrong, each of which a real printer would punish:
//
// - claiming an interface that a kernel driver (usblp) holds fails with LIBUSB_ERROR_BUSY, and
//   so does a transfer on it without a claim (usbfs tries to claim it on the fly);
// - reattaching the kernel driver while the interface is still claimed fails with
//   LIBUSB_ERROR_BUSY; detaching when no driver is bound fails with LIBUSB_ERROR_NOT_FOUND;
// - a transfer takes the endpoint's `timeout` at submission (0 waits forever); a printer that
//   stops reading (buffer full: paper out, cover open) ends it with LIBUSB_TRANSFER_TIMED_OUT
//   and `actual` = the bytes it did take;
// - a stalled endpoint fails every transfer with LIBUSB_TRANSFER_STALL until clearHalt();
// - an unplugged device ends its transfer with LIBUSB_TRANSFER_NO_DEVICE, leaves the device
//   list, and fails every later call with LIBUSB_ERROR_NO_DEVICE;
// - errors are Errors named as libusb_error_name() names them, with `errno`, as `usb` makes them;
// - completions arrive asynchronously, never inside transfer().

import {
  LIBUSB,
  type UsbBackend,
  type UsbDeviceLike,
  type UsbEndpointLike,
  type UsbError,
  type UsbInterfaceLike,
  type UsbOutEndpointLike,
} from '../../native/printer/usb.ts';

const NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(LIBUSB)
    .filter(([name]) => /^(ERROR_|TRANSFER_(?!TYPE_))/.test(name))
    .map(([name, errno]) => [errno, `LIBUSB_${name}`]),
);

export function usbError(errno: number): UsbError {
  return Object.assign(new Error(NAMES[errno] ?? `LIBUSB_ERROR ${errno}`), { errno });
}

export type SimulatedInterface = {
  bInterfaceClass: number;
  /** Endpoint directions and types; addresses are numbered in order. Default: bulk OUT and bulk IN. */
  endpoints?: { direction: 'in' | 'out'; transferType: number }[];
};

export type SimulatedDeviceOptions = {
  vendorId: number;
  productId: number;
  interfaces?: SimulatedInterface[];
  /** usblp bound to each interface at the start (Linux with the printer plugged in). Default true for printer-class interfaces. */
  kernelDriver?: boolean;
  /** libusb_open fails with this LIBUSB_ERROR_* (ACCESS: no permission; NOT_SUPPORTED: a Windows driver that is not WinUSB). */
  openError?: number;
  /** claim fails with this LIBUSB_ERROR_* (BUSY: CUPS' usb backend holds the interface; NOT_SUPPORTED: a Windows composite device without WinUSB). */
  claimError?: number;
  /** isKernelDriverActive and friends fail with NOT_SUPPORTED (Windows, macOS). */
  noKernelDriverSupport?: boolean;
};

type Completion = { error: UsbError | undefined; actual: number };

export class SimulatedUsbDevice implements UsbDeviceLike {
  readonly deviceDescriptor: { idVendor: number; idProduct: number };
  readonly options: SimulatedDeviceOptions;
  /** Every call the transport made, in order: "open", "detach 0", "claim 0", "transfer 4096", ... */
  readonly log: string[] = [];
  /** The bytes the printer took, in order. */
  private chunks: Buffer[] = [];
  private taken = 0;
  /** Bytes the printer will still take before it stops reading. */
  capacity = Infinity;
  /** Bytes after which the OUT endpoint stalls. */
  stallAfter = Infinity;
  /** Bytes after which the printer is unplugged. */
  unplugAfter = Infinity;
  halted = false;
  unplugged = false;
  isOpen = false;
  readonly kernelDriver: boolean[];
  readonly claimed: boolean[];
  interfaces: SimInterface[] | undefined;
  private readonly bus: SimulatedUsbBus;
  private readonly layout: Required<SimulatedInterface>[];

  constructor(bus: SimulatedUsbBus, options: SimulatedDeviceOptions) {
    this.bus = bus;
    this.options = options;
    this.deviceDescriptor = { idVendor: options.vendorId, idProduct: options.productId };
    this.layout = (options.interfaces ?? [{ bInterfaceClass: LIBUSB.CLASS_PRINTER }]).map((i) => ({
      bInterfaceClass: i.bInterfaceClass,
      endpoints: i.endpoints ?? [
        { direction: 'out', transferType: LIBUSB.TRANSFER_TYPE_BULK },
        { direction: 'in', transferType: LIBUSB.TRANSFER_TYPE_BULK },
      ],
    }));
    this.kernelDriver = this.layout.map((i) => options.kernelDriver ?? i.bInterfaceClass === LIBUSB.CLASS_PRINTER);
    this.claimed = this.layout.map(() => false);
  }

  get received(): Buffer {
    return Buffer.concat(this.chunks);
  }

  get configDescriptor(): { interfaces: { bInterfaceClass: number; bInterfaceNumber: number }[][] } {
    if (this.unplugged) throw usbError(LIBUSB.ERROR_NO_DEVICE);
    return { interfaces: this.layout.map((i, n) => [{ bInterfaceClass: i.bInterfaceClass, bInterfaceNumber: n }]) };
  }

  /** Calls that need the device present (libusb checks it on every one). */
  check(): void {
    if (this.unplugged) throw usbError(LIBUSB.ERROR_NO_DEVICE);
  }

  open(): void {
    this.log.push('open');
    this.check();
    if (this.options.openError !== undefined) throw usbError(this.options.openError);
    this.isOpen = true;
    this.interfaces = this.layout.map((i, n) => new SimInterface(this, n, i));
  }

  close(): void {
    this.log.push(this.claimed.some(Boolean) ? 'close (interface still claimed)' : 'close');
    // libusb_close releases whatever is still claimed.
    this.claimed.fill(false);
    this.isOpen = false;
    this.interfaces = undefined;
  }

  /** Takes what the printer accepts of `data`; says how the transfer ends. */
  accept(data: Buffer, timeout: number, complete: (c: Completion) => void): void {
    if (this.unplugged) return complete({ error: usbError(LIBUSB.TRANSFER_NO_DEVICE), actual: 0 });
    if (this.halted) return complete({ error: usbError(LIBUSB.TRANSFER_STALL), actual: 0 });
    const before = this.taken;
    const limits = [
      { at: this.unplugAfter - before, end: 'unplug' as const },
      { at: this.stallAfter - before, end: 'stall' as const },
      { at: this.capacity, end: 'full' as const },
    ].filter((l) => l.at < data.length);
    const first = limits.sort((a, b) => a.at - b.at)[0];
    const taken = first ? Math.max(0, first.at) : data.length;
    if (taken > 0) this.chunks.push(Buffer.from(data.subarray(0, taken)));
    this.taken += taken;
    this.capacity -= taken;
    if (!first) return complete({ error: undefined, actual: taken });
    switch (first.end) {
      case 'unplug':
        this.unplug();
        return complete({ error: usbError(LIBUSB.TRANSFER_NO_DEVICE), actual: taken });
      case 'stall':
        this.halted = true;
        return complete({ error: usbError(LIBUSB.TRANSFER_STALL), actual: taken });
      case 'full':
        // The printer NAKs until the timeout; with none, the transfer waits forever.
        if (timeout > 0) setTimeout(() => complete({ error: usbError(LIBUSB.TRANSFER_TIMED_OUT), actual: taken }), timeout);
        return;
    }
  }

  unplug(): void {
    this.unplugged = true;
    this.kernelDriver.fill(false);
    this.bus.remove(this);
  }
}

class SimEndpoint implements UsbEndpointLike {
  timeout = 0;
  constructor(
    protected readonly device: SimulatedUsbDevice,
    protected readonly iface: number,
    readonly direction: 'in' | 'out',
    readonly transferType: number,
    readonly address: number,
  ) {}

  clearHalt(callback: (error: UsbError | undefined) => void): void {
    this.device.log.push(`clearHalt ${this.address.toString(16)}`);
    setImmediate(() => {
      if (this.device.unplugged) return callback(usbError(LIBUSB.ERROR_NO_DEVICE));
      this.device.halted = false;
      callback(undefined);
    });
  }
}

class SimOutEndpoint extends SimEndpoint implements UsbOutEndpointLike {
  transfer(buffer: Buffer, callback: (error: UsbError | undefined, actual: number) => void): this {
    const d = this.device;
    d.log.push(`transfer ${buffer.length}`);
    const timeout = this.timeout;
    const done = (c: Completion) => setImmediate(() => callback(c.error, c.actual));
    if (!d.isOpen) {
      done({ error: usbError(LIBUSB.ERROR_NO_DEVICE), actual: 0 });
      return this;
    }
    if (!d.claimed[this.iface]) {
      // usbfs claims an unclaimed interface on the fly, which fails while usblp holds it.
      if (d.kernelDriver[this.iface]) {
        done({ error: usbError(LIBUSB.ERROR_BUSY), actual: 0 });
        return this;
      }
      d.claimed[this.iface] = true;
    }
    d.accept(buffer, timeout, done);
    return this;
  }
}

class SimInterface implements UsbInterfaceLike {
  readonly descriptor: { bInterfaceNumber: number; bInterfaceClass: number };
  readonly endpoints: UsbEndpointLike[];

  constructor(
    private readonly device: SimulatedUsbDevice,
    private readonly n: number,
    layout: Required<SimulatedInterface>,
  ) {
    this.descriptor = { bInterfaceNumber: n, bInterfaceClass: layout.bInterfaceClass };
    this.endpoints = layout.endpoints.map((e, i) =>
      e.direction === 'out' ? new SimOutEndpoint(device, n, 'out', e.transferType, i + 1) : new SimEndpoint(device, n, 'in', e.transferType, 0x80 | (i + 1)),
    );
  }

  private kernelCall(): void {
    this.device.check();
    if (this.device.options.noKernelDriverSupport) throw usbError(LIBUSB.ERROR_NOT_SUPPORTED);
  }

  isKernelDriverActive(): boolean {
    this.device.log.push(`isKernelDriverActive ${this.n}`);
    this.kernelCall();
    return this.device.kernelDriver[this.n]!;
  }

  detachKernelDriver(): void {
    this.device.log.push(`detach ${this.n}`);
    this.kernelCall();
    if (!this.device.kernelDriver[this.n]) throw usbError(LIBUSB.ERROR_NOT_FOUND);
    this.device.kernelDriver[this.n] = false;
  }

  attachKernelDriver(): void {
    this.device.log.push(`attach ${this.n}`);
    this.kernelCall();
    if (this.device.claimed[this.n] || this.device.kernelDriver[this.n]) throw usbError(LIBUSB.ERROR_BUSY);
    this.device.kernelDriver[this.n] = true;
  }

  claim(): void {
    this.device.log.push(`claim ${this.n}`);
    this.device.check();
    if (this.device.kernelDriver[this.n]) throw usbError(LIBUSB.ERROR_BUSY);
    if (this.device.options.claimError !== undefined) throw usbError(this.device.options.claimError);
    this.device.claimed[this.n] = true;
  }

  release(callback: (error?: UsbError) => void): void {
    this.device.log.push(`release ${this.n}`);
    setImmediate(() => {
      if (this.device.unplugged) return callback(usbError(LIBUSB.ERROR_NO_DEVICE));
      if (!this.device.claimed[this.n]) return callback(usbError(LIBUSB.ERROR_NOT_FOUND));
      this.device.claimed[this.n] = false;
      callback(undefined);
    });
  }
}

export class SimulatedUsbBus implements UsbBackend {
  private devices: SimulatedUsbDevice[] = [];

  plug(options: SimulatedDeviceOptions): SimulatedUsbDevice {
    const device = new SimulatedUsbDevice(this, options);
    this.devices.push(device);
    return device;
  }

  remove(device: SimulatedUsbDevice): void {
    this.devices = this.devices.filter((d) => d !== device);
  }

  getDeviceList(): SimulatedUsbDevice[] {
    return [...this.devices];
  }
}
