// Printing a receipt's DANFE from the screen: the cashier's first print (the copies not yet
// printed) and the manager's reprint, with its reason in the audit log. Both are rendered from
// the receipt's own XML (the authorized nfeProc, kept after the first fetch) for this terminal's
// printer profile and paper width.

import type { DanfeCopy } from '../../fiscal/danfe/model.ts';
import type { ReasonedAuthorization } from '../api/terminal-api.ts';
import type { Clock } from '../../base/common/clock.ts';
import { CONTINGENCY_COPIES } from './contingency/issue.ts';
import { TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager, managerReason } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import type { ReceiptRow } from './store/receipts.ts';
import type { PrintCopy, ReceiptPrinter } from './printing.ts';
import type { ReceiptDocuments } from './receipt-documents.ts';
import { existingReceipt } from './receipt-row.ts';

export type ReprintContext = { store: PosStore; clock: Clock; printer: ReceiptPrinter; documents: ReceiptDocuments };

/** The receipt and the ESC/POS bytes sent to the printer. */
export type Printed = { receipt: ReceiptRow; escpos: Uint8Array };

/**
 * A receipt that has a DANFE to print: authorized (or being cancelled), or issued in contingency
 * and awaiting authorization, printed from its own signed XML (the store's copy must exist until
 * it is authorized: a jammed printer cannot leave it without).
 */
function printable(r: ReceiptRow, verb: string): ReceiptRow {
  const pendingContingency = r.tp_emis === 9 && (r.state === 'pending' || r.state === 'processing');
  if (r.state !== 'authorized' && r.state !== 'cancelling' && !pendingContingency) {
    throw new TerminalError('estado_invalido', `Só uma NFC-e autorizada pode ser ${verb}`);
  }
  return r;
}

/** The manager's reprint: audited whether or not the printer took it; a printer failure is thrown after. */
export async function reprintReceipt(ctx: ReprintContext, receiptId: string, auth: ReasonedAuthorization): Promise<Printed> {
  const { store, clock, printer } = ctx;
  const reason = managerReason(auth, 'da reimpressão');
  const r = printable(existingReceipt(store, receiptId), 'reimpressa');
  const actor = actorOfManager(await authorizeManager(store, clock, auth, 'reimpressao', r.id));
  const job = await printer.render(r.id, 'reimpressao', await ctx.documents.xml(r));
  let failure: TerminalError | undefined;
  try {
    await printer.print(job);
  } catch (err) {
    if (!(err instanceof TerminalError) || err.code !== 'impressora') throw err;
    failure = err;
  }
  audit(store, clock, {
    actor,
    action: 'reimpressao',
    receiptId: r.id,
    reason,
    details: { nNF: r.nnf, bytes: job.escpos.length, impresso: !failure, ...(failure && { erro: failure.message }) },
  });
  if (failure) throw failure;
  return { receipt: r, escpos: job.escpos };
}

/** The copies of the receipt not printed yet: the single one, or a contingency receipt's two. */
export async function printMissingCopies(ctx: ReprintContext, receiptId: string): Promise<Printed> {
  const r = printable(existingReceipt(ctx.store, receiptId), 'impressa');
  const xml = await ctx.documents.xml(r);
  const copies: readonly PrintCopy[] = r.tp_emis === 9 ? CONTINGENCY_COPIES : ['unica'];
  const jobs = await ctx.printer.printMissing(r.id, copies, (copy) => ctx.printer.render(r.id, copy, xml, r.tp_emis === 9 ? { copy: copy as DanfeCopy } : {}));
  return { receipt: r, escpos: Buffer.concat(jobs.map((j) => j.escpos)) };
}
