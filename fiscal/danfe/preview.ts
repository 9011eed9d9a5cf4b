// The DANFE NFC-e as an image, for the screen and for tests: an SVG drawn from the very rows the
// thermal printer gets (layoutDanfe), one SVG unit per printer dot (203 dpi, 12×24-dot font A
// cells), rendered to PNG by resvg with the DejaVu font files named explicitly: the preview must
// look the same on every machine, so system fonts are never loaded. The paper's drawing (text
// rows, the sheet, the PNG) is shared with the printed reports (fiscal/report/preview.ts).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Resvg as ResvgClass, ResvgRenderOptions } from '@resvg/resvg-js';
import { escapeXml } from '../xml.ts';
import { layoutDanfe, printerProfile, qrMatrix, qrModuleDots, type PaperWidth } from './escpos.ts';
import type { DanfeCopy, DanfeModel } from './model.ts';
import { lazyModule } from '../lazy-module.ts';

const resvg = lazyModule<{ Resvg: typeof ResvgClass }>('@resvg/resvg-js');

const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

/** Absolute path of a DejaVu font file shipped by the dejavu-fonts-ttf package. */
export function dejavuFont(file: string): string {
  return join(fontDir, file);
}

const MONO = 'DejaVu Sans Mono';
const CELL_W = 12; // font A: 12 × 24 dots
const ROW_H = 30; // 24-dot glyph + the default line spacing's gap
const MARGIN = 24;

export type PreviewOptions = {
  paperWidth?: PaperWidth;
  /** Copy whose label is shown; default the model's first copy (if any). */
  copy?: DanfeCopy;
};

/** Horizontal runs of non-blank characters with their starting column. */
function runs(text: string): { col: number; text: string }[] {
  const out: { col: number; text: string }[] = [];
  const re = /\S+(?: \S+)*/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ col: [...text.slice(0, m.index)].length, text: m[0] });
  return out;
}

/** A printed text row (a DANFE's or a report's): its characters at fixed pitch, maybe bold, maybe double size. */
export type PaperTextRow = { text: string; bold?: boolean; large?: boolean };

/** Width of the paper's picture for `columns` columns of font A. */
export const paperWidthDots = (columns: number): number => columns * CELL_W + MARGIN * 2;

/** Draws one text row at `y` (its top) into `body`; returns the height it took. */
export function paperTextRow(row: PaperTextRow, y: number, body: string[]): number {
  const scale = row.large ? 2 : 1;
  const baseline = y + 22 * scale;
  for (const r of runs(row.text)) {
    body.push(
      `<text x="${MARGIN + r.col * CELL_W * scale}" y="${baseline}" font-size="${20 * scale}"${row.bold ? ' font-weight="bold"' : ''}>${escapeXml(r.text)}</text>`,
    );
  }
  return ROW_H * scale;
}

/** The paper as an SVG document: white, framed, `body` drawn in the printer's monospaced font; `height` is where the last row ended. */
export function paperSvg(title: string, width: number, height: number, body: readonly string[]): string {
  const total = height + MARGIN;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${total}" fill="#fff"/>`,
    `<rect x="0.5" y="0.5" width="${width - 1}" height="${total - 1}" fill="none" stroke="#ccc"/>`,
    `<g font-family="${MONO}" fill="#000">`,
    ...body,
    '</g>',
    '</svg>',
  ].join('\n');
}

/** The top of the first row. */
export const PAPER_TOP = MARGIN;

/** The receipt as an SVG document (a copy of what the thermal printer prints). */
export function renderDanfeSvg(model: DanfeModel, options: PreviewOptions = {}): string {
  const paperWidth = options.paperWidth ?? 80;
  const profile = printerProfile('epson-tm-t20');
  const columns = profile.columns[paperWidth];
  const rows = layoutDanfe(model, columns, options.copy ?? model.copies[0]);
  const width = paperWidthDots(columns);
  const body: string[] = [];
  let y = PAPER_TOP;
  for (const row of rows) {
    if (row.kind === 'qrcode') {
      const m = qrMatrix(row.payload);
      const size = qrModuleDots(m.size, m.size, profile, paperWidth);
      const side = m.size * size;
      const x0 = Math.round((width - side) / 2);
      const y0 = y + size * 4; // quiet zone above (and below)
      let d = '';
      for (let my = 0; my < m.size; my++) {
        for (let mx = 0; mx < m.size; mx++) {
          if (!m.dark(mx, my)) continue;
          let run = 1;
          while (mx + run < m.size && m.dark(mx + run, my)) run++;
          d += `M${x0 + mx * size} ${y0 + my * size}h${run * size}v${size}h${-run * size}z`;
          mx += run - 1;
        }
      }
      body.push(`<path d="${d}" fill="#000"/>`);
      y += side + size * 8;
      continue;
    }
    y += paperTextRow(row, y, body);
  }
  return paperSvg(`DANFE NFC-e ${model.number} série ${model.series}`, width, y, body);
}

let fonts: string[] | undefined;

function pngOptions(options: { scale?: number }): ResvgRenderOptions {
  if (!fonts) {
    fonts = ['DejaVuSansMono.ttf', 'DejaVuSansMono-Bold.ttf'].map(dejavuFont);
    // resvg would silently fall back to no font at all: say which file is missing instead.
    for (const f of fonts) if (!existsSync(f)) throw new Error(`fonte DejaVu não encontrada: ${f}`);
  }
  return {
    background: '#ffffff',
    fitTo: { mode: 'zoom', value: options.scale ?? 1 },
    font: { fontFiles: fonts, loadSystemFonts: false, defaultFontFamily: MONO },
  };
}

/** A paper SVG (paperSvg) as PNG; `scale` 1 = one pixel per printer dot. */
export function paperPng(svg: string, options: { scale?: number } = {}): Buffer {
  const { Resvg } = resvg();
  return new Resvg(svg, pngOptions(options)).render().asPng();
}

/** The receipt as PNG; `scale` 1 = one pixel per printer dot. */
export function renderDanfePng(model: DanfeModel, options: PreviewOptions & { scale?: number } = {}): Buffer {
  return paperPng(renderDanfeSvg(model, options), options);
}
