// The till's closing report out of the terminal: on the thermal printer (the receipts' profile
// and paper) and as a PDF kept in <data>/relatorios/ beside the database. The report itself,
// what it says, is cash-session.ts's; a printer failure is recorded on the session and shown,
// never allowed to undo a closing.

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderReportPdf } from '../../fiscal/report/pdf.ts';
import { renderReportPng } from '../../fiscal/report/preview.ts';
import { encodeReportEscPos } from '../../fiscal/report/report.ts';
import type { CashReportPdf } from '../api/terminal-api.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { closedSessionReport, type ReportCompany } from './cash-session.ts';
import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { CashSessionRow } from './store/cash-sessions.ts';
import type { ReceiptPrinter } from './printing.ts';

/** Under the terminal's data directory: the closing reports' PDFs. */
export const REPORTS_DIR = 'relatorios';

/** `caixa-000003.pdf`: the closing report of session 3. */
export const closingPdfName = (number: number): string => `caixa-${String(number).padStart(6, '0')}.pdf`;

export type ClosingReportContext = {
  store: PosStore;
  clock: Clock;
  printer: ReceiptPrinter;
  dataDir: string;
  /** The company the report's header names (trade name and CNPJ), when the terminal has its profile. */
  company: () => ReportCompany | undefined;
};

export function cashSessionRow(store: PosStore, sessionId: unknown): CashSessionRow {
  const row = typeof sessionId === 'string' ? store.cash.cashSession(sessionId) : undefined;
  if (!row) throw new TerminalError('nao_encontrado', 'Caixa não encontrado');
  return row;
}

export async function closingReportPdf(ctx: ClosingReportContext, sessionId: string): Promise<CashReportPdf> {
  const row = cashSessionRow(ctx.store, sessionId);
  const pdf = await renderReportPdf(closedSessionReport(ctx.store, row, ctx.company()), { subject: `Caixa nº ${row.number}` });
  return { fileName: closingPdfName(row.number), pdfBase64: pdf.toString('base64') };
}

/**
 * Prints the report (logged with the printer's jobs; the virtual printer keeps its picture too);
 * the outcome (printed at, or the printer's error) is kept on the session.
 */
export async function printClosingReport(ctx: ClosingReportContext, sessionId: string): Promise<void> {
  const row = cashSessionRow(ctx.store, sessionId);
  const { profile, paperWidth } = ctx.printer.settings;
  const report = closedSessionReport(ctx.store, row, ctx.company());
  let error: string | null = null;
  try {
    await ctx.printer.printReport({
      cashSessionId: row.id,
      escpos: encodeReportEscPos(report, { profile, paperWidth }),
      previewPng: () => renderReportPng(report, { paperWidth }),
    });
  } catch (err) {
    if (!(err instanceof TerminalError)) throw err;
    error = err.message;
  }
  ctx.store.relaxedTransaction(() => ctx.store.cash.setCashReportPrint(row.id, error ? null : iso(ctx.clock()), error));
}

export async function saveClosingPdf(ctx: ClosingReportContext, sessionId: string): Promise<void> {
  const { fileName, pdfBase64 } = await closingReportPdf(ctx, sessionId);
  const dir = join(ctx.dataDir, REPORTS_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, fileName), Buffer.from(pdfBase64, 'base64'), { mode: 0o600 });
}
