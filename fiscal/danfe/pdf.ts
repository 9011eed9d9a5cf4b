// The DANFE NFC-e as an 80 mm wide PDF (what GET /api/v1/nfce/{id}/danfe returns), drawn from
// the same model as the thermal receipt. DejaVu fonts are embedded (subset) so accents render
// and the text can be extracted. The page is as tall as the receipt: the layout is measured
// first (with our own word wrap on the font's metrics, since pdfkit's wrapper needs a page to
// exist) and the page created at that height. Receipts taller than a PDF viewer's page limit
// (200 in) continue on further pages; each copy (contingency) starts its own page.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type PDFKitDocument from 'pdfkit';
import { qrMatrix, wrapText } from './escpos.ts';
import { COPY_LABELS, type DanfeCopy, type DanfeLine, type DanfeModel } from './model.ts';
import { lazyModule } from '../lazy-module.ts';

const pdfkit = lazyModule<typeof PDFKitDocument>('pdfkit');

// Resolved here rather than imported from preview.ts, so the PDF route does not load resvg.
const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

const MM = 72 / 25.4;
/** Page width: 80 mm. */
export const PDF_WIDTH = 80 * MM;
const MARGIN = 2 * MM; // sped-da's 2 mm
const CONTENT = PDF_WIDTH - MARGIN * 2;
/** One dot of a 203-dpi thermal printer, in points. */
const DOT = 72 / 203;
/** The manual's minimum QR side, 25 mm, in 203-dpi dots (199.8, rounded up). */
const QR_MIN_DOTS = Math.ceil((25 / 25.4) * 203);
/** Most viewers refuse pages taller than 14,400 units (200 inches). */
const MAX_PAGE = 14_400;

const BODY = 7.5;
const LARGE = 16;
const KEY = 8;
const lineHeight = (size: number): number => size * 1.25;

type Font = 'R' | 'B' | 'KEY';
type Op = { height: number; draw(doc: PDFKit.PDFDocument, y: number): void };

let fontData: Record<Font, string> | undefined;

function fonts(): Record<Font, string> {
  return (fontData ??= {
    R: join(fontDir, 'DejaVuSansCondensed.ttf'),
    B: join(fontDir, 'DejaVuSansCondensed-Bold.ttf'),
    KEY: join(fontDir, 'DejaVuSansMono-Bold.ttf'),
  });
}

function layout(doc: PDFKit.PDFDocument, model: DanfeModel, copy: DanfeCopy | undefined): Op[] {
  const ops: Op[] = [];
  const measure =
    (font: Font, size: number) =>
    (s: string): number =>
      doc.font(font).fontSize(size).widthOfString(s);

  const textOp = (s: string, font: Font, size: number, align: 'left' | 'center' | 'right', indent = 0): Op => ({
    height: lineHeight(size),
    draw: (d, y) => {
      const w = d.font(font).fontSize(size).widthOfString(s);
      const x = align === 'left' ? MARGIN + indent : align === 'center' ? MARGIN + (CONTENT - w) / 2 : MARGIN + CONTENT - w;
      d.text(s, x, y, { lineBreak: false });
    },
  });
  const paragraph = (s: string, font: Font, size: number, align: 'left' | 'center', parts?: string[], indent = 0): void => {
    for (const l of wrapText(s, CONTENT - indent, parts, measure(font, size))) ops.push(textOp(l, font, size, align, indent));
  };
  const pair = (label: string, value: string, font: Font, indent = 0): void => {
    const m = measure(font, BODY);
    const vw = m(value);
    const lines = wrapText(label, Math.max(CONTENT / 3, CONTENT - indent - vw - 6), undefined, m);
    lines.forEach((l, i) => {
      const op = textOp(l, font, BODY, 'left', indent);
      ops.push(i < lines.length - 1 ? op : { height: op.height, draw: (d, y) => (op.draw(d, y), textOp(value, font, BODY, 'right').draw(d, y)) });
    });
  };
  const rule: Op = {
    height: 6,
    draw: (d, y) => {
      d.save()
        .moveTo(MARGIN, y + 3)
        .lineTo(MARGIN + CONTENT, y + 3)
        .lineWidth(0.4)
        .dash(1.5, { space: 1.5 })
        .stroke()
        .restore();
    },
  };

  const emit = (line: DanfeLine): void => {
    switch (line.kind) {
      case 'text':
        return paragraph(line.text, line.bold || line.large ? 'B' : 'R', line.large ? LARGE : BODY, line.align, line.parts);
      case 'pair':
        return pair(line.label, line.value, line.bold ? 'B' : 'R');
      case 'itemHeader':
      case 'item': {
        const it = line.item;
        const font: Font = line.kind === 'itemHeader' ? 'B' : 'R';
        // Continuation lines of a long description sit under the code, as on paper.
        const [first = '', ...rest] = wrapText(`${it.number} ${it.code} ${it.description}`, CONTENT, undefined, measure(font, BODY));
        ops.push(textOp(first, font, BODY, 'left'));
        if (rest.length) paragraph(rest.join(' '), font, BODY, 'left', undefined, 12);
        pair(`${it.quantity} ${it.unit} x ${it.unitValue}`, it.total, font, 12);
        if (it.discount) pair('Desconto', it.discount, font, 12);
        return;
      }
      case 'key': {
        const m = measure('KEY', KEY);
        const perLine = Math.max(1, Math.floor((CONTENT + m(' ')) / m('0000 ')));
        const lines = Math.ceil(line.groups.length / perLine);
        const per = Math.ceil(line.groups.length / lines);
        for (let i = 0; i < line.groups.length; i += per) ops.push(textOp(line.groups.slice(i, i + per).join(' '), 'KEY', KEY, 'center'));
        return;
      }
      case 'qrcode': {
        const q = qrMatrix(line.payload);
        // Modules of whole 203-dpi dots (the thermal printers this PDF often ends up on), as
        // many as make the symbol at least 25 mm, and the symbol placed on that dot grid:
        // fractional modules print unevenly and make readers miss.
        const module = Math.ceil(QR_MIN_DOTS / q.size) * DOT;
        const side = q.size * module;
        const quiet = 4 * module; // the symbol's quiet zone; readers fail without it
        ops.push({
          height: side + 2 * quiet + DOT,
          draw: (d, y0) => {
            const x = Math.round((MARGIN + (CONTENT - side) / 2) / DOT) * DOT;
            const y = Math.ceil((y0 + quiet) / DOT) * DOT;
            for (let my = 0; my < q.size; my++) {
              for (let mx = 0; mx < q.size; mx++) {
                if (!q.dark(mx, my)) continue;
                let run = 1;
                while (mx + run < q.size && q.dark(mx + run, my)) run++;
                d.rect(x + mx * module, y + my * module, run * module, module);
                mx += run - 1;
              }
            }
            // One path, one fill: abutting modules leave no seams.
            d.fillColor('#000').fill();
          },
        });
        return;
      }
      case 'copy':
        if (copy) ops.push(textOp(COPY_LABELS[copy], 'B', BODY, 'center'));
        return;
    }
  };

  model.divisions.forEach((division, i) => {
    if (i > 0 && !['identificacaoDanfe', 'pagamentos', 'contribuinte', 'chave'].includes(division.id)) ops.push(rule);
    division.lines.forEach(emit);
  });
  return ops;
}

/** Splits the ops into pages no taller than a viewer accepts. */
function paginate(ops: Op[]): Op[][] {
  const pages: Op[][] = [[]];
  let h = MARGIN * 2;
  for (const op of ops) {
    if (h + op.height > MAX_PAGE && pages[pages.length - 1]!.length) {
      pages.push([]);
      h = MARGIN * 2;
    }
    pages[pages.length - 1]!.push(op);
    h += op.height;
  }
  return pages;
}

/** The receipt as an 80 mm wide PDF (one page per copy, taller receipts continued). */
export function renderDanfePdf(model: DanfeModel): Promise<Buffer> {
  const PDFDocument = pdfkit();
  const doc = new PDFDocument({
    autoFirstPage: false,
    margin: 0,
    info: { Title: `DANFE NFC-e ${model.number} série ${model.series}`, Subject: `Chave de acesso ${model.key}`, Creator: 'Balcão' },
  });
  const f = fonts();
  doc.registerFont('R', f.R);
  doc.registerFont('B', f.B);
  doc.registerFont('KEY', f.KEY);

  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const vias: (DanfeCopy | undefined)[] = model.copies.length ? model.copies : [undefined];
  for (const via of vias) {
    for (const page of paginate(layout(doc, model, via))) {
      const height = page.reduce((a, op) => a + op.height, MARGIN * 2);
      doc.addPage({ size: [PDF_WIDTH, height], margin: 0 });
      doc.fillColor('#000');
      let y = MARGIN;
      for (const op of page) {
        op.draw(doc, y);
        y += op.height;
      }
    }
  }
  doc.end();
  return done;
}
