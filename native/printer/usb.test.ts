import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import { printerRejection, testReceipt } from '../../test/helpers/printer-receipts.ts';
import { LIBUSB, loadUsbBackend, parseUsbAddress, USB_CHUNK, UsbPrinter, type UsbPrinterOptions } from './usb.ts';
import { SimulatedUsbBus, type SimulatedDeviceOptions } from '../../test/helpers/usb-simulator.ts';

let receipt: Uint8Array;
let qrCode: string;
beforeAll(() => {
  const nfce = testReceipt(78, 4);
  receipt = nfce.escpos('epson-tm-t20');
  qrCode = nfce.qrCode;
});

const EPSON: SimulatedDeviceOptions = { vendorId: 0x04b8, productId: 0x0e15 };
const KEYBOARD: SimulatedDeviceOptions = {
  vendorId: 0x046d,
  productId: 0xc31c,
  interfaces: [{ bInterfaceClass: 0x03, endpoints: [{ direction: 'in', transferType: 3 }] }],
};

function printerOn(bus: SimulatedUsbBus, options: Omit<UsbPrinterOptions, 'backend'> = {}): UsbPrinter {
  return new UsbPrinter({ timeoutMs: 100, ...options, backend: bus });
}

describe('UsbPrinter against a simulated libusb device', () => {
  it('finds the printer-class device, takes the interface from usblp, writes every byte through bulk OUT, and gives it all back', async () => {
    const bus = new SimulatedUsbBus();
    const keyboard = bus.plug(KEYBOARD);
    const epson = bus.plug(EPSON);
    // A receipt plus binary filler: every byte value, more than one chunk, a short last chunk.
    const job = Buffer.concat([Buffer.from(receipt), randomBytes(3 * USB_CHUNK + 123)]);

    await printerOn(bus).send(job);

    expect(epson.received.equals(job)).toBe(true);
    expect(decodeEscPos(epson.received.subarray(0, receipt.length)).qrCodes[0]?.payload).toBe(qrCode);
    const transfers = epson.log.filter((l) => l.startsWith('transfer')).map((l) => Number(l.split(' ')[1]));
    expect(transfers.every((n) => n <= USB_CHUNK)).toBe(true);
    expect(transfers.reduce((a, b) => a + b, 0)).toBe(job.length);
    expect(epson.log.filter((l) => !l.startsWith('transfer'))).toEqual([
      'open',
      'isKernelDriverActive 0',
      'detach 0',
      'claim 0',
      'release 0',
      'attach 0',
      'close',
    ]);
    // usblp is back (so /dev/usb/lp0 and CUPS work again), nothing is left claimed or open.
    expect(epson.kernelDriver).toEqual([true]);
    expect(epson.claimed).toEqual([false]);
    expect(epson.isOpen).toBe(false);
    // The keyboard was never opened, let alone written to.
    expect(keyboard.log).toEqual([]);

    // A second job on the same device goes through the same way.
    await printerOn(bus).send(Uint8Array.of(0x1b, 0x40));
    expect(epson.received.subarray(job.length)).toEqual(Buffer.of(0x1b, 0x40));
  });

  it('by vendor:product, a vendor-class printer is used; without an address it is not taken for a printer', async () => {
    const bus = new SimulatedUsbBus();
    const vendorClass = bus.plug({ ...EPSON, interfaces: [{ bInterfaceClass: LIBUSB.CLASS_VENDOR_SPEC }], kernelDriver: false });

    await printerOn(bus, { address: parseUsbAddress('04b8:0e15')! }).send(Uint8Array.of(0x41, 0x42));
    expect(vendorClass.received).toEqual(Buffer.of(0x41, 0x42));
    // No kernel driver to take it from: nothing detached, nothing reattached.
    expect(vendorClass.log).toEqual(['open', 'isKernelDriverActive 0', 'claim 0', 'transfer 2', 'release 0', 'close']);

    const auto = await printerRejection(printerOn(bus).send(Uint8Array.of(0x43)));
    expect(auto.code).toBe('offline');
    expect(auto.message).toBe(
      'Nenhuma impressora USB encontrada. Verifique se o cabo USB está conectado e se a impressora está ligada; o cupom fica guardado para reimpressão.',
    );
    const other = await printerRejection(printerOn(bus, { address: parseUsbAddress('0dd4:0195')! }).send(Uint8Array.of(0x43)));
    expect(other.code).toBe('offline');
    expect(other.message).toContain('Impressora USB 0dd4:0195 não encontrada');
    expect(vendorClass.received).toEqual(Buffer.of(0x41, 0x42));
  });

  it('a printer that stops taking data (paper out): "timeout" once libusb’s timeout expires, saying how far it got, and the interface given back', async () => {
    const bus = new SimulatedUsbBus();
    const epson = bus.plug(EPSON);
    epson.capacity = 6000;
    const job = randomBytes(20_000);

    const err = await printerRejection(printerOn(bus).send(job));
    expect(err.code).toBe('timeout');
    expect(err.printer).toBe('USB');
    expect(err.message).toBe(
      'A impressora não respondeu a tempo (USB): parou de aceitar dados; o cupom pode ter saído cortado (6000 de 20000 bytes enviados). ' +
        'Verifique se há papel, se a tampa está fechada e se ela está ligada; o cupom fica guardado para reimpressão.',
    );
    expect(epson.received.equals(job.subarray(0, 6000))).toBe(true);
    expect(epson.log.slice(-3)).toEqual(['release 0', 'attach 0', 'close']);
    expect(epson.kernelDriver).toEqual([true]);

    // Paper back: the reprint goes through whole.
    epson.capacity = Infinity;
    await printerOn(bus).send(job);
    expect(epson.received.subarray(6000).equals(job)).toBe(true);
  });

  it('a stalled endpoint: "desconhecido", the halt is cleared so the next job prints', async () => {
    const bus = new SimulatedUsbBus();
    const epson = bus.plug(EPSON);
    epson.stallAfter = 100;
    const err = await printerRejection(printerOn(bus).send(randomBytes(500)));
    expect(err.code).toBe('desconhecido');
    expect(err.message).toContain('a impressora recusou os dados (USB stall)');
    expect(err.message).toContain('100 de 500 bytes enviados');
    expect(epson.log).toContain('clearHalt 1');
    expect(epson.halted).toBe(false);

    epson.stallAfter = Infinity;
    await printerOn(bus).send(Uint8Array.of(0x0a));
    expect(epson.received.at(-1)).toBe(0x0a);
  });

  it('unplugged in the middle of a job: "offline"; the next job: not found', async () => {
    const bus = new SimulatedUsbBus();
    const epson = bus.plug(EPSON);
    epson.unplugAfter = 5000;
    const err = await printerRejection(printerOn(bus).send(randomBytes(12_000)));
    expect(err.code).toBe('offline');
    expect(err.message).toMatch(
      /^Impressora desligada ou fora de alcance \(USB\): a impressora foi desconectada durante a impressão; o cupom pode ter saído cortado \(5000 de 12000 bytes enviados\)/,
    );
    expect(epson.received).toHaveLength(5000);

    const next = await printerRejection(printerOn(bus).send(Uint8Array.of(0x41)));
    expect(next.code).toBe('offline');
    expect(next.message).toContain('Nenhuma impressora USB encontrada');
  });

  it('no permission, a Windows driver in the way, another program holding the printer: each with its own message, nothing written', async () => {
    const cases: [SimulatedDeviceOptions, RegExp][] = [
      [{ ...EPSON, openError: LIBUSB.ERROR_ACCESS }, /^Sem permissão para usar a impressora USB 04b8:0e15 \(no Linux, uma regra do udev/],
      [{ ...EPSON, openError: LIBUSB.ERROR_NOT_SUPPORTED }, /driver WinUSB\)\. Use a porta serial virtual do fabricante ou a impressora em rede/],
      [{ ...EPSON, claimError: LIBUSB.ERROR_NOT_SUPPORTED }, /driver WinUSB\)\. Use a porta serial virtual do fabricante ou a impressora em rede/],
      [{ ...EPSON, claimError: LIBUSB.ERROR_BUSY }, /^Falha na impressora \(USB 04b8:0e15\): a impressora está em uso por outro programa/],
    ];
    for (const [options, message] of cases) {
      const bus = new SimulatedUsbBus();
      const device = bus.plug(options);
      const err = await printerRejection(printerOn(bus, { address: { vendorId: 0x04b8, productId: 0x0e15 } }).send(Uint8Array.of(0x41)));
      expect(err.code).toBe('desconhecido');
      expect(err.message).toMatch(message);
      expect(err.message).toMatch(/o cupom fica guardado para reimpressão\.$/);
      expect(device.received).toHaveLength(0);
      // Whatever was taken was given back.
      expect(device.kernelDriver).toEqual([true]);
      expect(device.isOpen).toBe(false);
    }
  });

  it('where libusb cannot detach kernel drivers (Windows, macOS), the interface is claimed as it is', async () => {
    const bus = new SimulatedUsbBus();
    const device = bus.plug({ ...EPSON, kernelDriver: false, noKernelDriverSupport: true });
    await printerOn(bus, { detachKernelDriver: false }).send(Uint8Array.of(0x41));
    expect(device.log).toEqual(['open', 'claim 0', 'transfer 1', 'release 0', 'close']);
    expect(device.received).toEqual(Buffer.of(0x41));
  });

  it('the usb module failing to load is a PrinterError for the operator, not a crash', async () => {
    const printer = new UsbPrinter({
      backend: async () => {
        throw new Error('libusb-1.0.so.0: cannot open shared object file');
      },
    });
    const err = await printerRejection(printer.send(Uint8Array.of(0x41)));
    expect(err.code).toBe('desconhecido');
    expect(err.message).toBe(
      'O suporte a impressoras USB não carregou neste computador (libusb-1.0.so.0: cannot open shared object file). Chame o suporte; o cupom fica guardado para reimpressão.',
    );
  });

  it('parseUsbAddress reads vendor:product in hexadecimal', () => {
    expect(parseUsbAddress('04b8:0e15')).toEqual({ vendorId: 0x04b8, productId: 0x0e15 });
    expect(parseUsbAddress(' 0x0DD4:0x0195 ')).toEqual({ vendorId: 0x0dd4, productId: 0x0195 });
    for (const bad of ['', '4b8:e15', '04b8-0e15', '0000:0001', '04b8:0e15:1', '/dev/usb/lp0']) expect(parseUsbAddress(bad)).toBeUndefined();
  });
});

describe('the real usb package', () => {
  it('loads its native binding here and lists the USB devices (none is fine)', async () => {
    const backend = await loadUsbBackend();
    const devices = backend.getDeviceList();
    expect(Array.isArray(devices)).toBe(true);
    for (const d of devices) expect(typeof d.deviceDescriptor.idVendor).toBe('number');
  });

  it('a printer that is not on this machine’s bus: "offline", through libusb itself', async () => {
    const err = await printerRejection(new UsbPrinter({ address: { vendorId: 0xfffe, productId: 0xfffe }, timeoutMs: 100 }).send(Uint8Array.of(0x41)));
    expect(err.code).toBe('offline');
    expect(err.message).toContain('Impressora USB fffe:fffe não encontrada');
  });
});
