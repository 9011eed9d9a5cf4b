// A report (./report.ts) as an 80 mm wide PDF: the printed report's own 48-column rows, in a
// monospaced font (DejaVu Sans Mono, embedded) sized so that 48 columns fill the paper, so the
// PDF reads exactly as the thermal print. One page as tall as the report.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type PDFKitDocument from 'pdfkit';
import { lazyModule } from '../lazy-module.ts';
import { layoutReport, type ReportDocument } from './report.ts';

const pdfkit = lazyModule<typeof PDFKitDocument>('pdfkit');
const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

const MM = 72 / 25.4;
const WIDTH = 80 * MM;
const MARGIN = 2 * MM;
const COLUMNS = 48;
/** DejaVu Sans Mono advances 0.602 em per character. */
const SIZE = (WIDTH - 2 * MARGIN) / COLUMNS / 0.602;
const LINE = SIZE * 1.3;

export function renderReportPdf(doc: ReportDocument, info: { subject?: string } = {}): Promise<Buffer> {
  const rows = layoutReport(doc, COLUMNS);
  const PDFDocument = pdfkit();
  const pdf = new PDFDocument({
    autoFirstPage: false,
    margin: 0,
    info: { Title: doc.title, Creator: 'Balcão', ...(info.subject && { Subject: info.subject }) },
  });
  pdf.registerFont('M', join(fontDir, 'DejaVuSansMono.ttf'));
  pdf.registerFont('MB', join(fontDir, 'DejaVuSansMono-Bold.ttf'));
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (c: Buffer) => chunks.push(c));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  const height = rows.reduce((h, r) => h + (r.large ? 2 * LINE : LINE), 2 * MARGIN);
  pdf.addPage({ size: [WIDTH, height], margin: 0 });
  let y = MARGIN;
  for (const row of rows) {
    pdf
      .font(row.bold ? 'MB' : 'M')
      .fontSize(row.large ? 2 * SIZE : SIZE)
      .fillColor('#000');
    if (row.text) pdf.text(row.text, MARGIN, y, { lineBreak: false });
    y += row.large ? 2 * LINE : LINE;
  }
  pdf.end();
  return done;
}
