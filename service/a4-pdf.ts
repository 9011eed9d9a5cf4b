// What the A4 companions of the service's documents share (the DAMDFE, mdfe/damdfe.ts; the DANFE
// of the NF-e, nfe/danfe.ts): the page, DejaVu fonts embedded (accents render anywhere and the
// text can be extracted and searched), a writer that flows headed sections, label/value cells
// and paragraphs onto further pages, and the codes drawn as vector rectangles (no raster image:
// sharp at any zoom or printer resolution, a reader gets exactly the modules the encoders made).

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BwipJs from 'bwip-js';
import type PDFKitDocument from 'pdfkit';
import type QRCodeModule from 'qrcode';
import { formatAccessKey } from '../fiscal/access-key.ts';
import { keyBarcodeRaw } from '../fiscal/key-barcode.ts';
import { lazyModule } from '../fiscal/lazy-module.ts';
import { formatBrasilia } from '../base/common/brasilia.ts';

const pdfkit = lazyModule<typeof PDFKitDocument>('pdfkit');
const bwipjs = lazyModule<typeof BwipJs>('bwip-js');
const qrcode = lazyModule<typeof QRCodeModule>('qrcode');

const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

export type Pdf = PDFKit.PDFDocument;

export const PAGE = { width: 595.28, height: 841.89 }; // A4 in points
export const M = 28; // margin
export const W = PAGE.width - 2 * M;
export const BODY = 8;
export const SMALL = 6.5;
export const LINE = 10.5;

/**
 * An A4 document with the fonts R (regular), B (bold) and M (mono), its first page added, and its
 * bytes once ended. `bufferPages`: earlier pages can be written again before the end (a sheet
 * count on every page).
 */
export function a4Document(info: { Title: string; Subject: string }, bufferPages = false): { doc: Pdf; bytes: Promise<Buffer> } {
  const PDFDocument = pdfkit();
  const doc = new PDFDocument({ autoFirstPage: false, margin: 0, bufferPages, info: { ...info, Creator: 'Balcão' } });
  doc.registerFont('R', join(fontDir, 'DejaVuSansCondensed.ttf'));
  doc.registerFont('B', join(fontDir, 'DejaVuSansCondensed-Bold.ttf'));
  doc.registerFont('M', join(fontDir, 'DejaVuSansMono.ttf'));
  const chunks: Buffer[] = [];
  const bytes = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
  return { doc, bytes };
}

/**
 * The access key's Code 128 (fiscal/key-barcode.ts: set C for digits, set A for the letters of an
 * alphanumeric CNPJ): the widths of its bars and spaces in modules, the module and the width in
 * points. Whole-point modules on a whole-point origin put every bar edge on a pixel edge when the
 * page is rasterized at an integer scale (and on dot edges at 72·n dpi), so no bar is smeared by
 * anti-aliasing into its neighbour; 1 pt = 0.35 mm, above Code-128's minimum module. A numeric
 * key (set C, 277 modules) is drawn as it always was. A key with letters gets modules of 1.25 pt
 * (edges on pixel edges from 288 dpi), so even its shortest form (one letter, 310 modules) is
 * wider than the 11.5 cm NT 2025.001 asks of the hybrid code.
 */
export function keyBarcodeLayout(key: string): { widths: number[]; module: number; width: number } {
  // BWIPP's raw mode: the symbol values are given; it adds the check symbol and the stop.
  const [symbol] = bwipjs().raw('code128', keyBarcodeRaw(key), 'raw') as { sbs: number[] }[];
  const widths = symbol!.sbs;
  const module = /[A-Z]/.test(key) ? 1.25 : 1;
  return { widths, module, width: widths.reduce((a, b) => a + b, 0) * module };
}

/** Bars and spaces of `module` points from (x, y); returns the width drawn. */
function drawBars(doc: Pdf, widths: readonly number[], x: number, y: number, module: number, height: number): number {
  let cx = x;
  widths.forEach((w, i) => {
    if (i % 2 === 0) doc.rect(cx, y, w * module, height);
    cx += w * module;
  });
  doc.fillColor('#000').fill();
  return cx - x;
}

/** The access key centred: its Code-128 bar code, a caption and its text in groups of four. */
export function drawAccessKey(doc: Pdf, key: string, x: number, y: number, width: number): number {
  const bars = keyBarcodeLayout(key);
  drawBars(doc, bars.widths, Math.round(x + (width - bars.width) / 2), y, bars.module, 38);
  doc
    .font('R')
    .fontSize(SMALL)
    .text('CHAVE DE ACESSO', x, y + 42, { width, align: 'center' });
  doc
    .font('M')
    .fontSize(10)
    .text(formatAccessKey(key), x, y + 50, { width, align: 'center' });
  return 66;
}

/** The QR Code as one filled path of module runs; the caller leaves the 4-module quiet zone. */
export function drawQr(doc: Pdf, payload: string, x: number, y: number, side: number): void {
  const { size, data } = qrcode().create(payload, { errorCorrectionLevel: 'M' }).modules;
  const module = side / size;
  for (let my = 0; my < size; my++) {
    for (let mx = 0; mx < size; mx++) {
      if (!data[my * size + mx]) continue;
      let run = 1;
      while (mx + run < size && data[my * size + mx + run]) run++;
      doc.rect(x + mx * module, y + my * module, run * module, module);
      mx += run - 1;
    }
  }
  doc.fillColor('#000').fill();
}

/** Flows a document's sections down the page, onto further pages when needed. */
export class Writer {
  y = M;
  constructor(readonly doc: Pdf) {}

  ensure(height: number): void {
    if (this.y + height > PAGE.height - M) {
      this.doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
      this.y = M;
    }
  }

  heading(title: string): void {
    this.ensure(LINE * 2.2);
    this.y += 4;
    this.doc
      .save()
      .rect(M, this.y, W, LINE + 2)
      .fillColor('#e6e6e6')
      .fill()
      .restore();
    this.doc
      .font('B')
      .fontSize(BODY)
      .fillColor('#000')
      .text(title.toUpperCase(), M + 3, this.y + 2.5, { lineBreak: false });
    this.y += LINE + 4;
  }

  /** A paragraph wrapped to the content width (pdfkit's own wrapping, measured first). */
  para(text: string, font: 'R' | 'B' | 'M' = 'R', size = BODY, indent = 0): void {
    const options = { width: W - indent - 6 };
    const height = this.doc.font(font).fontSize(size).heightOfString(text, options);
    this.ensure(height + 1);
    this.doc
      .font(font)
      .fontSize(size)
      .fillColor('#000')
      .text(text, M + 3 + indent, this.y, options);
    this.y += height + 1.5;
  }

  /** Label/value cells side by side on one line; widths are fractions of the content width. */
  cells(cells: [label: string, value: string, width: number][]): void {
    this.ensure(LINE * 2 + 2);
    let x = M;
    for (const [label, value, width] of cells) {
      const w = width * W;
      this.doc
        .font('R')
        .fontSize(SMALL)
        .fillColor('#333')
        .text(label, x + 3, this.y, { width: w - 6, lineBreak: false });
      this.doc
        .font('B')
        .fontSize(BODY)
        .fillColor('#000')
        .text(value, x + 3, this.y + SMALL + 2, { width: w - 6, lineBreak: false, ellipsis: true });
      x += w;
    }
    this.y += LINE * 2 + 2;
  }
}

/** "152340.75" → "152.340,75" (`places` fixes the decimals; without, trailing zeros go). */
export function formatDecimal(s: string, places?: number): string {
  const [int = '0', frac = ''] = s.split('.');
  const f = places === undefined ? frac.replace(/0+$/, '') : frac.padEnd(places, '0').slice(0, places);
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, '.') + (f ? `,${f}` : '');
}

/** An ISO instant as the page shows it: `10/03/2026 14:03:05`, Brasília time. */
export function dateTime(iso: string | undefined): string {
  if (!iso) return '';
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})/.exec(formatBrasilia(new Date(iso)));
  return m ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}` : iso;
}

// --- reading the XML (xmldom) ---------------------------------------------------------------------

export const elements = (parent: Element | undefined, name: string): Element[] => {
  if (!parent) return [];
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === name) out.push(n as Element);
  }
  return out;
};
export const child = (parent: Element | undefined, name: string): Element | undefined => elements(parent, name)[0];
export const textOf = (parent: Element | undefined, name: string): string | undefined => {
  const e = child(parent, name);
  return e ? (e.textContent ?? '') : undefined;
};
export const path = (root: Element | undefined, ...names: string[]): Element | undefined => names.reduce<Element | undefined>((e, n) => child(e, n), root);
