// The fiscal XML behind each receipt, and what the terminal renders from it: the screen preview
// and the printed DANFE (rendered here, for the configured printer, rather than taken from the
// service's ESC/POS, which is fixed at 80 mm and one printer profile).
//
// The authorized XML (nfeProc) is fetched from the service once and kept in the terminal's
// database: after that, previews and reprints work with the service away. A contingency
// receipt not yet authorized is rendered from the XML the terminal signed itself.
//
// AutoPrint prints each receipt once, when it becomes authorized: at most once, across restarts
// too (ReceiptPrinter.printOnce claims it durably before the bytes leave). A printer failure
// leaves the receipt authorized; the status shows the problem and the manager reprints.

import { danfeTexts, type DanfeModelOptions } from '../../fiscal/danfe/model.ts';
import { renderDanfeSvg } from '../../fiscal/danfe/preview.ts';
import type { ReceiptPreview } from '../api/terminal-api.ts';
import { ServiceHttpError, ServiceNetworkError, type IssuanceClient } from './api-client.ts';
import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { ReconciliationTaskRow } from './store/contingency.ts';
import type { ReceiptRow } from './store/receipts.ts';
import type { ReceiptPrinter } from './printing.ts';
import { iso, type Clock } from '../../base/common/clock.ts';

const ISSUED: readonly ReceiptRow['state'][] = ['authorized', 'cancelling', 'cancelled'];

function serviceFailure(err: unknown, what: string): unknown {
  if (err instanceof ServiceNetworkError) return new TerminalError('servico_indisponivel', `Não foi possível obter ${what}: ${err.message}`);
  if (err instanceof ServiceHttpError) return new TerminalError('erro_servico', `O serviço recusou ${what}: ${err.serviceMessage}`);
  return err;
}

export class ReceiptDocuments {
  private readonly store: PosStore;
  private readonly client: IssuanceClient;
  private readonly clock: Clock;

  constructor(options: { store: PosStore; client: IssuanceClient; clock: Clock }) {
    this.store = options.store;
    this.client = options.client;
    this.clock = options.clock;
  }

  /**
   * The XML to render a receipt from: the authorized nfeProc (cached after the first fetch), or
   * the terminal's own signed XML of a contingency receipt still pending.
   */
  async xml(r: ReceiptRow): Promise<string> {
    if (ISSUED.includes(r.state)) {
      const cached = this.store.receipts.receiptXml(r.id);
      if (cached !== undefined) return cached;
      if (r.service_id) {
        const xml = await this.fetchNfeProc(r.service_id);
        this.store.transaction(() => this.store.receipts.putReceiptXml(r.id, xml, iso(this.clock())));
        return xml;
      }
    }
    if (r.signed_xml) return r.signed_xml;
    throw new TerminalError('estado_invalido', 'Esta NFC-e ainda não foi autorizada: não há DANFE para mostrar');
  }

  /**
   * The nfeProc of an online attempt a contingency receipt superseded, now cancelled (by
   * substitution): fetched from the service once and kept with its task (contingency/reconcile.ts).
   */
  async supersededXml(t: ReconciliationTaskRow): Promise<string> {
    const cached = this.store.contingency.supersededXml(t.id);
    if (cached !== undefined) return cached;
    if (!t.service_id) throw new TerminalError('estado_invalido', `A NFC-e nº ${t.nnf} não tem identificação no serviço`);
    const xml = await this.fetchNfeProc(t.service_id);
    this.store.transaction(() => this.store.contingency.putSupersededXml(t.id, xml));
    return xml;
  }

  /** The nfeProc the service keeps for a document; anything without the protocol is refused. */
  private async fetchNfeProc(serviceId: string): Promise<string> {
    let xml: string;
    try {
      xml = await this.client.xml(serviceId);
    } catch (err) {
      throw serviceFailure(err, 'o XML da NFC-e');
    }
    // Only the nfeProc (with its protocol) is final; anything else is not kept.
    if (!/<protNFe[\s>]/.test(xml)) throw new TerminalError('erro_servico', 'O serviço devolveu um XML sem o protocolo de autorização');
    return xml;
  }

  /** Options that make the DANFE of a cancelled receipt carry its cancellation banner. */
  async modelOptions(r: ReceiptRow): Promise<DanfeModelOptions> {
    if (r.state !== 'cancelled' || !r.service_id) return {};
    let doc;
    try {
      doc = await this.client.getNfce(r.service_id);
    } catch (err) {
      throw serviceFailure(err, 'os dados do cancelamento');
    }
    const at = doc.cancelado_em ?? r.cancelado_em;
    const nProt = doc.protocolo_cancelamento ?? null;
    return at && nProt ? { cancelled: { at, nProt } } : {};
  }

  /** The receipt as the screen shows it: the printer's layout as SVG, and its text lines. */
  async preview(r: ReceiptRow, printer: ReceiptPrinter): Promise<ReceiptPreview> {
    const model = printer.model(await this.xml(r), await this.modelOptions(r));
    return { receiptId: r.id, svg: renderDanfeSvg(model, { paperWidth: printer.settings.paperWidth }), lines: danfeTexts(model) };
  }
}

export type AutoPrintOptions = {
  store: PosStore;
  printer: ReceiptPrinter;
  documents: ReceiptDocuments;
  /** After a failure to obtain the XML (service away), the next attempt; doubles up to 60 s. */
  retryMs?: number;
};

export class AutoPrint {
  private readonly store: PosStore;
  private readonly printer: ReceiptPrinter;
  private readonly documents: ReceiptDocuments;
  private readonly retryBaseMs: number;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;

  constructor(options: AutoPrintOptions) {
    this.store = options.store;
    this.printer = options.printer;
    this.documents = options.documents;
    this.retryBaseMs = options.retryMs ?? 2000;
    this.retryMs = this.retryBaseMs;
  }

  /** Something may have become authorized: print what is due (coalesced, never concurrent). */
  schedule(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.sweep().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    });
  }

  /** Resolves when no sweep is running (a retry may still be scheduled). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Lets the job in progress finish; prints nothing more. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.running;
    await this.printer.idle();
  }

  private async sweep(): Promise<void> {
    const failedXml = new Set<string>();
    for (;;) {
      if (this.stopped) return;
      const due = this.store.printLog.receiptsToPrintAutomatically(20).filter((r) => !failedXml.has(r.id));
      if (!due.length) break;
      for (const r of due) {
        if (this.stopped) return;
        try {
          const xml = await this.documents.xml(r);
          await this.printer.printOnce(r.id, () => this.printer.render(r.id, 'unica', xml));
        } catch {
          // A printer failure is recorded in the print log and in the printer's status; the
          // receipt was claimed and stays authorized, the manager reprints. Anything before
          // the claim (the service away, an XML that does not render) is tried again later.
          if (!this.store.printLog.printJobs(r.id).length) failedXml.add(r.id);
        }
      }
    }
    if (failedXml.size && !this.stopped) {
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.schedule(), this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(60_000, this.retryMs * 2);
    } else {
      this.retryMs = this.retryBaseMs;
    }
  }
}
