// The terminal's receipt printer: turns an NFC-e XML into the DANFE's ESC/POS for the configured
// printer (profile, paper width), sends jobs one at a time through a transport
// (native/printer/transports.ts), records every job in the print log (print_jobs) and keeps the
// printer's status for the screen.
//
// A failed job never touches the receipt: the sale stays as it is (authorized, or issued in
// contingency), the status says what is wrong, and the job can be printed again (reprint). A
// job is written to the log before its bytes leave and settled after: `printOnce` uses that row
// as a durable claim, so a receipt printed automatically is never printed automatically twice,
// not even across a crash in the middle of the job (at most once; the manager reprints).

import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeEscPos, PRINTER_PROFILES, type PrinterProfileId } from '../../fiscal/danfe/escpos.ts';
import { danfeModel, type DanfeModel, type DanfeModelOptions } from '../../fiscal/danfe/model.ts';
import { renderDanfePng } from '../../fiscal/danfe/preview.ts';
import {
  DeviceFilePrinter,
  PrinterError,
  printerMessage,
  statusError,
  TcpPrinter,
  VirtualPrinter,
  type PrinterTransport,
} from '../../native/printer/transports.ts';
import { DEFAULT_SERIAL_LINE, SERIAL_BAUD_RATES, SerialPrinter } from '../../native/printer/serial.ts';
import { parseSystemQueue, SystemQueuePrinter } from '../../native/printer/system-queue.ts';
import { formatUsbAddress, parseUsbAddress, UsbPrinter } from '../../native/printer/usb.ts';
import type { PrintedJob, PrinterSettings, PrinterStatusView, SerialLineSettings } from '../api/terminal-api.ts';
import { checked, TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import { iso, type Clock } from '../../base/common/clock.ts';

/**
 * Which copy a job is: "consumidor" / "estabelecimento" (a contingency receipt prints both),
 * "unica" (an authorized receipt, one unlabelled copy), "reimpressao" (asked for by the operator).
 */
export type PrintCopy = 'consumidor' | 'estabelecimento' | 'unica' | 'reimpressao';

export const PRINT_COPIES: readonly PrintCopy[] = ['consumidor', 'estabelecimento', 'unica', 'reimpressao'];

export type PrintJob = {
  receiptId: string;
  copy: PrintCopy;
  escpos: Uint8Array;
  /** Kept beside the job by the virtual printer. */
  previewPng?: Uint8Array;
};

/** The folder of the virtual printer inside the data directory. */
export const VIRTUAL_PRINTER_DIR = 'impressora';

export const DEFAULT_PRINTER_SETTINGS: Readonly<PrinterSettings> = Object.freeze({
  kind: 'virtual',
  address: null,
  profile: 'epson-tm-t20',
  paperWidth: 80,
});

const invalid = (field: string, message: string): TerminalError => new TerminalError('configuracao_invalida', message, { field });

/** Checks printer settings from the screen; errors name the field (`printer.address`, ...). */
export function validatePrinterSettings(input: unknown, field = 'printer'): PrinterSettings {
  if (typeof input !== 'object' || input === null) throw invalid(field, 'Configuração da impressora ausente');
  const s = input as Record<string, unknown>;
  const kind = s.kind;
  if (kind !== 'virtual' && kind !== 'tcp' && kind !== 'usb' && kind !== 'serial' && kind !== 'device' && kind !== 'file' && kind !== 'system') {
    throw invalid(
      `${field}.kind`,
      'Tipo de impressora deve ser virtual, tcp (rede), usb, serial, device (dispositivo), file (arquivo) ou system (impressora do sistema)',
    );
  }
  const profile = s.profile;
  if (typeof profile !== 'string' || !Object.hasOwn(PRINTER_PROFILES, profile)) {
    throw invalid(`${field}.profile`, `Modelo de impressora desconhecido; aceitos: ${Object.keys(PRINTER_PROFILES).join(', ')}`);
  }
  const paperWidth = s.paperWidth;
  if (paperWidth !== 80 && paperWidth !== 58) throw invalid(`${field}.paperWidth`, 'Largura do papel deve ser 80 ou 58 mm');
  let address: string | null = null;
  if (kind === 'virtual') {
    if (s.address !== null && s.address !== undefined) throw invalid(`${field}.address`, 'A impressora virtual não tem endereço');
  } else if (kind === 'usb') {
    // Blank: the first USB printer found, which is what a store with one printer wants.
    if (s.address !== null && s.address !== undefined && typeof s.address !== 'string') throw invalid(`${field}.address`, USB_ADDRESS_HELP);
    const text = typeof s.address === 'string' ? s.address.trim() : '';
    if (text) {
      const usb = parseUsbAddress(text);
      if (!usb) throw invalid(`${field}.address`, USB_ADDRESS_HELP);
      address = formatUsbAddress(usb);
    }
  } else {
    address = typeof s.address === 'string' ? s.address.trim() : '';
    if (kind === 'tcp') parseTcpAddress(address, `${field}.address`);
    else if (kind === 'system') {
      if (!parseSystemQueue(address)) throw invalid(`${field}.address`, ADDRESS_HELP.system);
    } else if (!address || address.length > 4096 || address.includes('\0')) {
      throw invalid(`${field}.address`, ADDRESS_HELP[kind]);
    }
  }
  const settings: PrinterSettings = { kind, address, profile: profile as PrinterProfileId, paperWidth };
  if (kind === 'serial') settings.serial = validateSerialLine(s.serial, `${field}.serial`);
  return settings;
}

const USB_ADDRESS_HELP = 'Endereço USB: fabricante:produto em hexadecimal (ex.: 04b8:0e15), ou em branco para a primeira impressora USB encontrada';

const ADDRESS_HELP: Record<'serial' | 'device' | 'file' | 'system', string> = {
  serial: 'Informe a porta serial da impressora (ex.: /dev/ttyUSB0 ou COM3)',
  system:
    'Fila da impressora do sistema: o nome da fila no CUPS deste computador (ex.: TM-T20, sem espaços, barras, aspas, ? ou #), ' +
    'ou o endereço da fila (ex.: ipp://servidor:631/printers/TM-T20; no Windows, http://servidor/printers/TM-T20/.printer)',
  device: 'Informe o dispositivo da impressora (ex.: /dev/usb/lp0)',
  file: 'Informe o caminho do arquivo',
};

/** A serial line from the screen; missing (settings saved before serial existed): the defaults. */
function validateSerialLine(input: unknown, field: string): SerialLineSettings {
  if (input === undefined || input === null) return { ...DEFAULT_SERIAL_LINE } as SerialLineSettings;
  if (typeof input !== 'object') throw invalid(field, 'Configuração da porta serial inválida');
  const l = input as Record<string, unknown>;
  if (!SERIAL_BAUD_RATES.includes(l.baudRate as never))
    throw invalid(`${field}.baudRate`, `Velocidade da porta serial deve ser uma destas: ${SERIAL_BAUD_RATES.join(', ')}`);
  if (l.parity !== 'none' && l.parity !== 'even' && l.parity !== 'odd')
    throw invalid(`${field}.parity`, 'Paridade deve ser none (nenhuma), even (par) ou odd (ímpar)');
  if (l.stopBits !== 1 && l.stopBits !== 2) throw invalid(`${field}.stopBits`, 'Bits de parada devem ser 1 ou 2');
  if (l.flowControl !== 'none' && l.flowControl !== 'rtscts' && l.flowControl !== 'xonxoff') {
    throw invalid(`${field}.flowControl`, 'Controle de fluxo deve ser rtscts (hardware), xonxoff (software) ou none (nenhum)');
  }
  return { baudRate: l.baudRate as SerialLineSettings['baudRate'], parity: l.parity, stopBits: l.stopBits, flowControl: l.flowControl };
}

/** "192.168.0.50:9100", "impressora.local" (port 9100), "[fe80::1]:9100". */
export function parseTcpAddress(address: string, field = 'printer.address'): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::([0-9]{1,5}))?$/.exec(address);
  const port = m?.[3] === undefined ? 9100 : Number(m[3]);
  if (!m || port < 1 || port > 65535) throw invalid(field, 'Endereço da impressora de rede: IP ou nome, com a porta opcional (ex.: 192.168.0.50:9100)');
  return { host: m[1] ?? m[2]!, port };
}

/** A plain file that collects the jobs (created if missing, appended to). */
class AppendFilePrinter implements PrinterTransport {
  readonly description: string;
  constructor(readonly path: string) {
    this.description = path;
  }
  async send(bytes: Uint8Array): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await appendFile(this.path, bytes);
    } catch (err) {
      throw new PrinterError('desconhecido', this.path, (err as Error).message, { cause: err });
    }
  }
}

/** The transport the settings describe. */
export function transportFor(settings: PrinterSettings, dataDir: string): PrinterTransport {
  switch (settings.kind) {
    case 'virtual':
      return new VirtualPrinter({ dir: join(dataDir, VIRTUAL_PRINTER_DIR) });
    case 'tcp':
      return new TcpPrinter(parseTcpAddress(settings.address ?? ''));
    case 'usb': {
      const address = settings.address ? parseUsbAddress(settings.address) : undefined;
      return new UsbPrinter(address ? { address } : {});
    }
    case 'serial':
      return new SerialPrinter({ path: settings.address ?? '', line: settings.serial ?? DEFAULT_SERIAL_LINE });
    case 'device':
      return new DeviceFilePrinter({ path: settings.address ?? '' });
    case 'file':
      return new AppendFilePrinter(settings.address ?? '');
    case 'system':
      return new SystemQueuePrinter({ address: settings.address ?? '' });
  }
}

function printerName(settings: PrinterSettings, transport: PrinterTransport, overridden: boolean): string {
  if (overridden) return transport.description;
  if (settings.kind === 'virtual') return 'Impressora virtual';
  // "USB 04b8:0e15" says more than the bare ids, and a blank USB address has no other name.
  return settings.kind === 'usb' ? transport.description : (settings.address ?? transport.description);
}

export type ReceiptPrinterOptions = {
  store: PosStore;
  clock: Clock;
  /** The terminal's data directory: the virtual printer writes into <dataDir>/impressora. */
  dataDir: string;
  settings: PrinterSettings;
  /** Replaces the transport the settings describe (tests: MemoryPrinter); kept on reconfigure. */
  transport?: PrinterTransport;
  /** Every status change (a job printed or failed, a status query). */
  onStatus?: (status: PrinterStatusView) => void;
};

export class ReceiptPrinter {
  private readonly store: PosStore;
  private readonly clock: Clock;
  private readonly dataDir: string;
  private readonly override: PrinterTransport | undefined;
  private readonly onStatus: (status: PrinterStatusView) => void;
  private settingsNow: PrinterSettings;
  private transportNow: PrinterTransport;
  private problem: string | null = null;
  /** One job at a time: a printer interleaving two jobs prints neither. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: ReceiptPrinterOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.dataDir = options.dataDir;
    this.override = options.transport;
    this.onStatus = options.onStatus ?? (() => {});
    this.settingsNow = validatePrinterSettings(options.settings);
    this.transportNow = this.override ?? transportFor(this.settingsNow, this.dataDir);
  }

  get settings(): PrinterSettings {
    return { ...this.settingsNow };
  }

  get transport(): PrinterTransport {
    return this.transportNow;
  }

  /** New settings apply from the next job on; the problem of the old printer is forgotten. */
  reconfigure(settings: PrinterSettings): void {
    this.settingsNow = validatePrinterSettings(settings);
    this.transportNow = this.override ?? transportFor(this.settingsNow, this.dataDir);
    this.problem = null;
    this.onStatus(this.statusNow());
  }

  /** The DANFE model of an NFC-e XML; a malformed XML is an `estado_invalido` naming the field. */
  model(xml: string, options: DanfeModelOptions = {}): DanfeModel {
    return checked('estado_invalido', 'xml', () => danfeModel(xml, options));
  }

  /** The DANFE's ESC/POS for the configured printer profile and paper width. */
  encode(xml: string, options: DanfeModelOptions = {}): Uint8Array {
    return this.encodeModel(this.model(xml, options));
  }

  encodeModel(model: DanfeModel, options: { openDrawer?: boolean } = {}): Uint8Array {
    return encodeEscPos(model, { profile: this.settingsNow.profile, paperWidth: this.settingsNow.paperWidth, ...options });
  }

  /**
   * The job for an XML: the ESC/POS, and the PNG preview when the printer keeps one (the
   * virtual printer). Rendering the PNG costs tens of milliseconds, so only then.
   */
  async render(receiptId: string, copy: PrintCopy, xml: string, options: DanfeModelOptions = {}): Promise<PrintJob> {
    const model = this.model(xml, options);
    // A cash sale opens the drawer once: with the first of its copies that is printed (or being
    // printed); the second copy of a contingency receipt and every reprint leave it shut.
    const openDrawer = !this.store.printLog.printJobs(receiptId).some((j) => j.state !== 'failed');
    const escpos = this.encodeModel(model, { openDrawer });
    const wantsPreview = this.transportNow instanceof VirtualPrinter;
    return {
      receiptId,
      copy,
      escpos,
      ...(wantsPreview && { previewPng: renderDanfePng(model, { paperWidth: this.settingsNow.paperWidth }) }),
    };
  }

  /**
   * Sends one job and records it. Rejects with TerminalError('impressora', message) when the
   * printer fails; the status then shows the problem until a job goes through.
   */
  print(job: PrintJob): Promise<void> {
    return this.enqueue(async () => {
      const id = this.store.transaction(() => this.startJob(job, false));
      await this.send(id, job);
    });
  }

  /**
   * Prints `job()` unless this receipt was ever sent to the printer before (by anyone): the
   * automatic print of an authorized receipt. The claim (its print_jobs row, and the receipt
   * out of print_due) is committed before the bytes leave. Resolves false when it was already
   * printed (nothing sent). `job` runs inside the printer's queue, only when still owed.
   */
  printOnce(receiptId: string, job: () => PrintJob | Promise<PrintJob>): Promise<boolean> {
    const alreadySent = (): boolean => {
      if (!this.store.printLog.printJobs(receiptId).length) return false;
      this.store.printLog.forgetPrintDue(receiptId);
      return true;
    };
    return this.enqueue(async () => {
      if (this.store.transaction(alreadySent)) return false;
      const built = await job();
      const id = this.store.transaction(() => {
        if (alreadySent()) return undefined;
        this.store.printLog.forgetPrintDue(receiptId);
        return this.startJob(built, true);
      });
      if (id === undefined) return false;
      await this.send(id, built);
      return true;
    });
  }

  /**
   * Prints the copies of a receipt that never came out: of `copies`, each one not printed and
   * not being printed (never sent, or every job of it failed); a reprint that went through
   * counts for the single copy of an authorized receipt. Checked inside the printer's queue, so
   * the automatic print cannot slip in between: the one that comes first prints, the other finds
   * nothing owed. Resolves with the jobs sent; 'estado_invalido' when nothing was owed (another
   * copy is then a reprint); 'impressora' when the printer fails.
   */
  printMissing(receiptId: string, copies: readonly PrintCopy[], render: (copy: PrintCopy) => Promise<PrintJob>): Promise<PrintJob[]> {
    const owed = (): PrintCopy[] => {
      const out = this.store.printLog.printJobs(receiptId).filter((j) => j.state !== 'failed');
      const came = new Set<PrintCopy>(out.map((j) => (j.copy === 'reimpressao' ? 'unica' : j.copy)));
      return copies.filter((c) => !came.has(c));
    };
    return this.enqueue(async () => {
      const missing = owed();
      if (!missing.length) {
        throw new TerminalError('estado_invalido', 'Esta NFC-e já foi impressa; outra via é uma reimpressão, autorizada pelo gerente');
      }
      const jobs: PrintJob[] = [];
      for (const copy of missing) {
        const job = await render(copy);
        const id = this.store.transaction(() => {
          this.store.printLog.forgetPrintDue(receiptId);
          return this.startJob(job, false);
        });
        await this.send(id, job);
        jobs.push(job);
      }
      return jobs;
    });
  }

  /**
   * A job that is not a receipt: the cash session's closing report. The same printer, queue,
   * profile and status; its own row in the print log (report_print_jobs), written before the
   * bytes leave and settled after, so the recent jobs list it; the virtual printer keeps its
   * picture (`previewPng`, drawn only for it). Rejects with TerminalError('impressora', message)
   * when the printer fails.
   */
  printReport(job: { cashSessionId: string; escpos: Uint8Array; previewPng: () => Uint8Array }): Promise<void> {
    return this.enqueue(async () => {
      const { escpos } = job;
      if (!(escpos instanceof Uint8Array) || escpos.length === 0)
        throw new TerminalError('estado_invalido', 'Trabalho de impressão vazio', { field: 'escpos' });
      const transport = this.transportNow;
      const previewPng = transport instanceof VirtualPrinter ? job.previewPng() : undefined;
      const id = this.store.transaction(() =>
        this.store.printLog.insertReportPrintJob({
          cash_session_id: job.cashSessionId,
          state: 'sending',
          bytes: escpos.length,
          printer: this.name(),
          created_at: iso(this.clock()),
        }),
      );
      await this.sendLogged(escpos, previewPng, (state, error) =>
        this.store.relaxedTransaction(() => this.store.printLog.finishReportPrintJob(id, state, error, iso(this.clock()))),
      );
    });
  }

  /**
   * A slip that is neither a receipt nor a report (the customer's PIX QR Code, pix/qr-slip.ts):
   * the same printer and queue, sent only when `claim()` — run in a transaction inside the queue,
   * committed before the bytes leave — says it is still owed, so it prints at most once.
   * Resolves false when it was not owed; rejects with TerminalError('impressora', message) when
   * the printer fails (the status then shows it, as for any job).
   */
  printSlip(escpos: Uint8Array, claim: () => boolean): Promise<boolean> {
    return this.enqueue(async () => {
      if (!this.store.transaction(claim)) return false;
      await this.sendLogged(escpos, undefined, () => {});
      return true;
    });
  }

  /** Resolves once every job queued so far has settled. */
  async idle(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.catch(() => undefined).then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private startJob(job: PrintJob, automatic: boolean): number {
    if (typeof job?.receiptId !== 'string' || !this.store.receipts.receipt(job.receiptId)) throw new TerminalError('nao_encontrado', 'NFC-e não encontrada');
    if (!PRINT_COPIES.includes(job.copy)) throw new TerminalError('estado_invalido', `Via de impressão desconhecida: ${String(job.copy)}`, { field: 'copy' });
    if (!(job.escpos instanceof Uint8Array) || job.escpos.length === 0)
      throw new TerminalError('estado_invalido', 'Trabalho de impressão vazio', { field: 'escpos' });
    return this.store.printLog.insertPrintJob({
      receipt_id: job.receiptId,
      copy: job.copy,
      automatic: automatic ? 1 : 0,
      state: 'sending',
      bytes: job.escpos.length,
      printer: this.name(),
      created_at: iso(this.clock()),
    });
  }

  private send(id: number, job: PrintJob): Promise<void> {
    return this.sendLogged(job.escpos, job.previewPng, (state, error) =>
      this.store.relaxedTransaction(() => this.store.printLog.finishPrintJob(id, state, error, iso(this.clock()))),
    );
  }

  /**
   * Sends the bytes and settles the job's row with `settle`. The claim was fsynced before the
   * bytes left; the outcome may ride on the next durable commit: lost to a power cut, the job
   * reads "sending", which only means unknown.
   */
  private async sendLogged(
    escpos: Uint8Array,
    previewPng: Uint8Array | undefined,
    settle: (state: 'printed' | 'failed', error: string | null) => void,
  ): Promise<void> {
    const transport = this.transportNow;
    try {
      await transport.send(escpos, previewPng ? { previewPng } : undefined);
    } catch (err) {
      const message = err instanceof PrinterError ? err.message : printerMessage('desconhecido', transport.description, (err as Error)?.message ?? String(err));
      settle('failed', message);
      this.setProblem(message);
      throw new TerminalError('impressora', message);
    }
    settle('printed', null);
    this.setProblem(null, true);
  }

  private setProblem(problem: string | null, always = false): void {
    const changed = problem !== this.problem;
    this.problem = problem;
    if (changed || always) this.onStatus(this.statusNow());
  }

  private name(): string {
    return printerName(this.settingsNow, this.transportNow, this.override !== undefined);
  }

  /** What is known without asking the printer. */
  statusNow(): PrinterStatusView {
    return { ready: this.problem === null, name: this.name(), problem: this.problem, lastPrintAt: this.store.printLog.lastPrintedAt() };
  }

  /**
   * The printer's status. A printer that answers status queries (network, ESC/POS DLE EOT) is
   * asked, between jobs; the others are judged by their last job.
   */
  async status(): Promise<PrinterStatusView> {
    const transport = this.transportNow;
    if (transport.status) {
      await this.enqueue(async () => {
        try {
          const refusal = statusError(await transport.status!(), transport.description);
          this.setProblem(refusal ? refusal.message : null);
        } catch (err) {
          this.setProblem(err instanceof PrinterError ? err.message : printerMessage('desconhecido', transport.description, (err as Error).message));
        }
      });
    }
    return this.statusNow();
  }

  /** The latest jobs that went through (receipts and closing reports), newest first. */
  recent(limit = 20): PrintedJob[] {
    const n = Number.isInteger(limit) ? Math.max(1, Math.min(500, limit)) : 20;
    return this.store.printLog
      .recentPrintedJobs(n)
      .map((j) =>
        j.receipt_id !== null
          ? { kind: 'nfce', receiptId: j.receipt_id, copy: j.copy!, printedAt: j.printed_at }
          : { kind: 'fechamento', cashSessionNumber: j.cash_session_number!, printedAt: j.printed_at },
      );
  }
}
