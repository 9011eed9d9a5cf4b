// A printed report (./report.ts) as a picture of the paper: the very rows the thermal printer
// gets (layoutReport, at the printer's columns), drawn as the DANFE's preview draws its own
// (fiscal/danfe/preview.ts), so the virtual printer keeps a PNG beside every job it writes.

import { printerProfile, type PaperWidth } from '../danfe/escpos.ts';
import { PAPER_TOP, paperPng, paperSvg, paperTextRow, paperWidthDots } from '../danfe/preview.ts';
import { layoutReport, type ReportDocument } from './report.ts';

/** The report as an SVG document, `paperWidth` mm wide (80 by default). */
export function renderReportSvg(doc: ReportDocument, options: { paperWidth?: PaperWidth } = {}): string {
  const columns = printerProfile('epson-tm-t20').columns[options.paperWidth ?? 80];
  const body: string[] = [];
  let y = PAPER_TOP;
  for (const row of layoutReport(doc, columns)) y += paperTextRow(row, y, body);
  return paperSvg(doc.title, paperWidthDots(columns), y, body);
}

/** The report as PNG; `scale` 1 = one pixel per printer dot. */
export function renderReportPng(doc: ReportDocument, options: { paperWidth?: PaperWidth; scale?: number } = {}): Buffer {
  return paperPng(renderReportSvg(doc, options), options);
}
