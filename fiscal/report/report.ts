// A printed report that is not a fiscal document (the cash session's closing, electron/core/
// cash-session.ts): plain data that the thermal printer (ESC/POS, the same encoder, profiles and
// code pages as the DANFE: fiscal/danfe/escpos.ts), the PDF (./pdf.ts) and the screen draw alike.
// Strings are already in their printed pt-BR form ("R$ 1.234,56").

import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import {
  encodeLineText,
  pairLines,
  printerProfile,
  spelledFor,
  wrapText,
  type CodePageStrategy,
  type PaperWidth,
  type PrinterProfile,
  type PrinterProfileId,
} from '../danfe/escpos.ts';
import { FieldError } from '../errors.ts';

export type ReportLine =
  | { kind: 'title'; text: string }
  | { kind: 'text'; text: string; align?: 'left' | 'center'; bold?: boolean }
  /** Label left, value right. */
  | { kind: 'pair'; label: string; value: string; bold?: boolean; indent?: number }
  | { kind: 'rule' }
  | { kind: 'blank' }
  /** A line to sign on, with who signs under it. */
  | { kind: 'signature'; label: string };

/** `title` is printed first, large. */
export type ReportDocument = { title: string; lines: ReportLine[] };

export type ReportRow = { text: string; bold: boolean; large: boolean };

/** The report as fixed-pitch rows of `columns` columns (a large row counts double), its title first. */
export function layoutReport(doc: ReportDocument, columns: number, strategy: CodePageStrategy = 'cp860'): ReportRow[] {
  const sp = spelledFor(strategy);
  const len = (s: string): number => s.length;
  const rows: ReportRow[] = [];
  const center = (l: string, width: number): string => ' '.repeat(Math.max(0, Math.floor((width - l.length) / 2))) + l;
  for (const line of [{ kind: 'title', text: doc.title } as const, ...doc.lines]) {
    switch (line.kind) {
      case 'title': {
        const width = Math.floor(columns / 2);
        for (const l of wrapText(sp(line.text), width, undefined, len)) rows.push({ text: center(l, width), bold: true, large: true });
        break;
      }
      case 'text':
        for (const l of wrapText(sp(line.text), columns, undefined, len))
          rows.push({ text: line.align === 'center' ? center(l, columns) : l, bold: !!line.bold, large: false });
        break;
      case 'pair':
        for (const l of pairLines(sp(line.label), sp(line.value), columns, line.indent ?? 0, len)) rows.push({ text: l, bold: !!line.bold, large: false });
        break;
      case 'rule':
        rows.push({ text: '-'.repeat(columns), bold: false, large: false });
        break;
      case 'blank':
        rows.push({ text: '', bold: false, large: false });
        break;
      case 'signature':
        rows.push({ text: '', bold: false, large: false }, { text: '', bold: false, large: false });
        rows.push({ text: center('_'.repeat(Math.min(36, columns - 4)), columns), bold: false, large: false });
        for (const l of wrapText(sp(line.label), columns, undefined, len)) rows.push({ text: center(l, columns), bold: false, large: false });
        break;
    }
  }
  return rows;
}

/** The report's printed lines, as the screen shows them (48 columns). */
export function reportTexts(doc: ReportDocument, columns = 48): string[] {
  return layoutReport(doc, columns).map((r) => r.text);
}

export type ReportEscPosOptions = { profile: PrinterProfileId | PrinterProfile; paperWidth: PaperWidth; codePage?: CodePageStrategy };

/** The report as one ESC/POS job: initialise, code page, the rows, the cut. Never opens the drawer. */
export function encodeReportEscPos(doc: ReportDocument, options: ReportEscPosOptions): Uint8Array {
  const profile = printerProfile(options.profile);
  if (options.paperWidth !== 80 && options.paperWidth !== 58) throw new FieldError('impressora.papel', 'largura do papel deve ser 80 ou 58 mm');
  const columns = profile.columns[options.paperWidth];
  const strategy = options.codePage ?? profile.codePage;
  const enc = new ReceiptPrinterEncoder({ columns, language: 'esc-pos', newline: '\n', feedBeforeCut: profile.feedBeforeCut });
  enc.initialize();
  if (strategy !== 'transliterate') {
    const n = profile.codePageNumbers[strategy];
    if (n === undefined) throw new FieldError('impressora.codepage', `a impressora ${profile.name} não tem a tabela ${strategy.toUpperCase()}`);
    enc.raw([0x1b, 0x74, n]); // ESC t n, as the DANFE sends it (fiscal/danfe/escpos.ts)
  }
  for (const row of layoutReport(doc, columns, strategy)) {
    if (row.bold) enc.bold(true);
    if (row.large) enc.size(2, 2);
    enc.raw(encodeLineText(row.text, strategy));
    enc.newline();
    if (row.large) enc.size(1, 1);
    if (row.bold) enc.bold(false);
  }
  enc.cut(profile.cut);
  const bytes = enc.encode();
  // As the DANFE: the cut is the job's last command.
  return bytes.length >= 4 && bytes[bytes.length - 1] === 0x0a && bytes[bytes.length - 4] === 0x1d && bytes[bytes.length - 3] === 0x56
    ? bytes.subarray(0, bytes.length - 1)
    : bytes;
}
