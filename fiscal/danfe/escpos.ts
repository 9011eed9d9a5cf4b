// The DANFE NFC-e in ESC/POS for 80 mm (48 columns) and 58 mm (32 columns) thermal printers,
// and the fixed-pitch layout the screen preview shares with it.
//
// Why @point-of-sale/receipt-printer-encoder: it is maintained, MIT, and already knows the
// ESC/POS commands we need and their quirks: initialisation (ESC @, FS . to leave Kanji mode,
// font A), styles, the QR Code function set (GS ( k model/size/ECC/store/print), raster images
// (GS v 0, split into 255-row chunks because some firmware reads only the low byte of the
// height), the drawer pulse (ESC p) and the cut with a feed to the cutter (GS V). Hand-writing
// those bytes would duplicate it and its fixes.
//
// Two things are done here on purpose and not by the library:
// - Text bytes. The library converts text to the code page per text fragment through
//   CodepageEncoder.getEncoding(), which structuredClone()s the whole code page table on every
//   call: ~40 µs per line, ~10 ms for a 100-item receipt, twice the budget. We convert with a
//   lookup table derived once from the library's own conversion (so the bytes are the same, a
//   test checks it) and pass them with raw(). Consequently the code page selection (ESC t n)
//   is also sent by us, with the vendor's number from the profile: the library only sends it
//   in front of its own text.
// - Line layout. We wrap and pad every line ourselves so that two-column lines (label left,
//   value right), item lines and the access key are laid out the same way on paper and on the
//   screen preview (renderDanfeSvg draws these very rows).

import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import type QRCodeModule from 'qrcode';
import { FieldError } from '../errors.ts';
import { COPY_LABELS, type DanfeCopy, type DanfeDivisionId, type DanfeItem, type DanfeLine, type DanfeModel, type DanfeText } from './model.ts';
import { lazyModule } from '../lazy-module.ts';

const qrcode = lazyModule<typeof QRCodeModule>('qrcode');

// =============================================================================================
// Printer profiles (docs/fiscal.md, "Thermal printing")

export type CodePageStrategy = 'cp860' | 'wpc1252' | 'transliterate';
export type PaperWidth = 80 | 58;
export type PrinterProfileId = 'epson-tm-t20' | 'elgin-i9' | 'bematech-mp4200-escpos' | 'generic-escpos';

export type PrinterProfile = {
  id: string;
  name: string;
  /** Font A columns per paper width (12-dot characters: 576 dots → 48, 384 dots → 32). */
  columns: Record<PaperWidth, 32 | 35 | 42 | 44 | 48>;
  /** Printable width in dots, the ceiling for the QR Code. */
  dots: Record<PaperWidth, number>;
  dpi: number;
  codePage: CodePageStrategy;
  /** ESC t n for each table in this printer's numbering; absent = the printer lacks the table. */
  codePageNumbers: Partial<Record<'cp860' | 'wpc1252', number>>;
  /** GS ( k QR Code; false = the QR is sent as a raster image (GS v 0). */
  nativeQr: boolean;
  /** Minimum printed QR side (Manual DANFE NFC-e v6.0: 25 mm × 25 mm). */
  qrMinMm: number;
  cut: 'partial' | 'full';
  /** Lines fed before the cut so the last printed line clears the cutter. */
  feedBeforeCut: number;
  /** Drawer kick (ESC p): connector pin and pulse times in ms. */
  drawer: { pin: 0 | 1; onMs: number; offMs: number } | false;
};

const DRAWER = { pin: 0, onMs: 100, offMs: 500 } as const; // ESC p 0 50 250, the common wiring

// What the four profiles share: 203 dpi heads, 48/32 columns of font A on 80/58 mm paper, the
// manual's 25 mm QR minimum, a partial cut after 4 lines, the usual drawer wiring. Each profile
// below then says only how it differs (code page, native QR).
const THERMAL_203DPI = {
  columns: { 80: 48, 58: 32 },
  dots: { 80: 576, 58: 384 },
  dpi: 203,
  qrMinMm: 25,
  cut: 'partial',
  feedBeforeCut: 4,
  drawer: DRAWER,
} as const;

export const PRINTER_PROFILES: Readonly<Record<PrinterProfileId, PrinterProfile>> = Object.freeze({
  // Epson TM-T20 / T20II / T20III: the reference ESC/POS. PC860 is ESC t 3 in Epson's numbering,
  // WPC1252 is 16; native QR and raster graphics.
  'epson-tm-t20': {
    id: 'epson-tm-t20',
    name: 'Epson TM-T20 (II/III/IV)',
    ...THERMAL_203DPI,
    codePage: 'cp860',
    codePageNumbers: { cp860: 3, wpc1252: 16 },
    nativeQr: true,
  },
  // Elgin i9: Epson compatible (escpos-php #689, Vip.Printer #62/#65 use the Epson type),
  // native QR; same code page numbering.
  'elgin-i9': {
    id: 'elgin-i9',
    name: 'Elgin i9 (modo Epson)',
    ...THERMAL_203DPI,
    codePage: 'cp860',
    codePageNumbers: { cp860: 3, wpc1252: 16 },
    nativeQr: true,
  },
  // Bematech MP-4200 TH switched to ESC/POS: PC860 is ESC t 3 in this mode (escpos-printer-db
  // #34; ESC t 4 is the ESC/Bema numbering, not used here), no WPC1252 in its list, GS v 0
  // works, and older firmware has no 2D codes in ESC/POS mode: the QR goes as a raster image.
  'bematech-mp4200-escpos': {
    id: 'bematech-mp4200-escpos',
    name: 'Bematech MP-4200 TH (modo ESC/POS)',
    ...THERMAL_203DPI,
    codePage: 'cp860',
    codePageNumbers: { cp860: 3 },
    nativeQr: false,
  },
  // Unknown ESC/POS clone: the lowest common denominator. Clones disagree on code page tables
  // (PC860 printed "feij,,o" on one, node-thermal-printer #226) and some cannot do GS ( k
  // (#33), so the text is transliterated to ASCII and the QR is a raster image. A store whose
  // clone handles PC860 or WPC1252 passes `codePage` to encodeEscPos.
  'generic-escpos': {
    id: 'generic-escpos',
    name: 'ESC/POS genérica',
    ...THERMAL_203DPI,
    codePage: 'transliterate',
    codePageNumbers: { cp860: 3, wpc1252: 16 },
    nativeQr: false,
  },
});

export function printerProfile(profile: PrinterProfileId | PrinterProfile): PrinterProfile {
  if (typeof profile !== 'string') return profile;
  const p = (PRINTER_PROFILES as Record<string, PrinterProfile>)[profile];
  if (!p) throw new FieldError('impressora.perfil', `perfil de impressora desconhecido: "${profile}" (aceitos: ${Object.keys(PRINTER_PROFILES).join(', ')})`);
  return p;
}

// =============================================================================================
// Text to printer bytes

/** ASCII look-alikes for what a code page lacks (and for the transliterate strategy). */
const SPECIAL: Readonly<Record<string, string>> = {
  º: 'o',
  ª: 'a',
  '°': 'o',
  '–': '-',
  '—': '-',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '•': '*',
  '·': '.',
  '…': '...',
  '€': 'EUR',
  ß: 'ss',
  Æ: 'AE',
  æ: 'ae',
  Ø: 'O',
  ø: 'o',
  '×': 'x',
};

/** Portuguese text in printable ASCII: accents stripped, a few symbols spelled out. */
export function transliterate(value: string): string {
  let out = '';
  for (const ch of value.normalize('NFC')) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp === 0xa0 || cp === 0x09) out += ' ';
    else if (SPECIAL[ch] !== undefined) out += SPECIAL[ch];
    else {
      const base = ch.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
      out += /^[\x20-\x7e]+$/.test(base) ? base : '?';
    }
  }
  return out;
}

const LIBRARY_CODEPAGE = { cp860: 'cp860', wpc1252: 'windows1252' } as const;
const tables = new Map<'cp860' | 'wpc1252', Map<number, number>>();

/**
 * Code point → byte for a code page, taken from the library's own conversion of every
 * candidate character (once per process), so our bytes are the library's bytes.
 */
function codePageTable(cp: 'cp860' | 'wpc1252'): Map<number, number> {
  let table = tables.get(cp);
  if (table) return table;
  table = new Map();
  const candidates: string[] = [];
  for (let c = 0xa1; c <= 0xff; c++) candidates.push(String.fromCharCode(c));
  candidates.push(...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ₧'.split(''));
  for (let i = 0; i < candidates.length; i += 32) {
    const chunk = candidates.slice(i, i + 32);
    const enc = new ReceiptPrinterEncoder({ columns: 48, language: 'esc-pos', codepageMapping: 'epson', newline: '\n' });
    const bytes = enc.codepage(LIBRARY_CODEPAGE[cp]).text(chunk.join('')).encode();
    // Output: ESC t n, one byte per character, LF.
    const body = bytes.subarray(3, 3 + chunk.length);
    if (bytes[0] !== 0x1b || bytes[1] !== 0x74 || body.length !== chunk.length) {
      throw new Error(`conversão inesperada da biblioteca para ${cp}`);
    }
    chunk.forEach((ch, k) => {
      // The library writes "?" for what the page lacks; only a real "?" may map to 0x3F.
      if (body[k]! >= 0x80) table!.set(ch.codePointAt(0)!, body[k]!);
    });
  }
  tables.set(cp, table);
  return table;
}

/** Printer bytes of one line of text under a code page strategy. */
export function encodeLineText(value: string, strategy: CodePageStrategy): Uint8Array {
  const text = strategy === 'transliterate' ? transliterate(value) : value.normalize('NFC');
  const table = strategy === 'transliterate' ? undefined : codePageTable(strategy);
  const out = new Uint8Array(text.length * 3); // a fallback spells out at most 3 ASCII characters
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.charCodeAt(i);
    if (cp >= 0x20 && cp < 0x7f) out[n++] = cp;
    else if (cp === 0xa0 || cp === 0x09) out[n++] = 0x20;
    else {
      const b = table?.get(cp);
      if (b !== undefined) out[n++] = b;
      else for (const c of transliterate(text[i]!)) out[n++] = c.charCodeAt(0);
    }
  }
  return out.subarray(0, n);
}

/**
 * A string as the printer will spell it, one column per UTF-16 unit: composed (NFC) for a code
 * page, ASCII for transliteration. The layout measures these with `.length`; the NF-e layout's
 * strings are Latin-1 (TString), so there are no surrogate pairs to count.
 */
export const spelledFor =
  (strategy: CodePageStrategy) =>
  (s: string): string =>
    strategy === 'transliterate' ? transliterate(s) : s.normalize('NFC');

// =============================================================================================
// Fixed-pitch layout, shared with the screen preview

export type PrintRow = { kind: 'text'; text: string; bold?: boolean; large?: boolean } | { kind: 'qrcode'; payload: string };

/** Divisions that continue the previous block without a separating rule. */
const NO_RULE_BEFORE: ReadonlySet<DanfeDivisionId> = new Set(['identificacaoDanfe', 'pagamentos', 'contribuinte', 'chave']);

/** Break characters preferred inside a word too long for a line (URLs). */
const SOFT_BREAKS = '/.?&|=-_';

function splitLong(word: string, width: number, len: (s: string) => number): string[] {
  const out: string[] = [];
  let rest = word;
  while (len(rest) > width) {
    // The longest prefix that fits (`len` may measure columns or points).
    let fit = 1;
    while (fit < rest.length && len(rest.slice(0, fit + 1)) <= width) fit++;
    // Prefer to break after a soft break in its second half (keep lines reasonably full).
    let cut = fit;
    for (let i = fit - 1; i >= Math.ceil(fit / 2); i--) {
      if (SOFT_BREAKS.includes(rest[i]!)) {
        cut = i + 1;
        break;
      }
    }
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) out.push(rest);
  return out;
}

/** Word wrap to `width` columns; `parts` are kept whole when they fit a line. */
export function wrapText(value: string, width: number, parts?: string[], len: (s: string) => number = (s) => s.length): string[] {
  const units = (parts ?? [value]).flatMap((p) => {
    const clean = p.replace(/\s+/g, ' ').trim();
    return len(clean) <= width && parts ? [clean] : clean.split(' ');
  });
  const lines: string[] = [];
  let cur = '';
  for (const unit of units) {
    if (!unit) continue;
    for (const piece of splitLong(unit, width, len)) {
      if (!cur) cur = piece;
      else if (len(cur) + 1 + len(piece) <= width) cur += ' ' + piece;
      else {
        lines.push(cur);
        cur = piece;
      }
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

const spaces = (n: number): string => (n > 0 ? ' '.repeat(n) : '');

/** Label left, value right; the label wraps, the value sits on its last line. */
export function pairLines(label: string, value: string, columns: number, indent: number, len: (s: string) => number): string[] {
  const pad = spaces(indent);
  const lv = len(value);
  if (indent + len(label) + 1 + lv <= columns) return [pad + label + spaces(columns - indent - len(label) - lv) + value];
  if (lv + 2 > columns - indent) {
    return [
      ...wrapText(label, columns - indent, undefined, len).map((l) => pad + l),
      ...wrapText(value, columns, undefined, len).map((l) => spaces(columns - len(l)) + l),
    ];
  }
  const lines = wrapText(label, columns - indent - lv - 1, undefined, len).map((l) => pad + l);
  const last = lines.pop() ?? '';
  return [...lines, last + spaces(columns - len(last) - lv) + value];
}

/** Item detail lines start under the code: after "001 ". */
const ITEM_INDENT = 4;

function itemLines(it: DanfeItem, columns: number, len: (s: string) => number): string[] {
  const indent = ITEM_INDENT;
  const head = wrapText(`${it.number} ${it.code} ${it.description}`, columns, undefined, len);
  // Continuation lines of the description are indented under the code.
  const first = head.length > 1 ? [head[0]!, ...wrapText(head.slice(1).join(' '), columns - indent, undefined, len).map((l) => spaces(indent) + l)] : head;
  const detail = pairLines(`${it.quantity} ${it.unit} x ${it.unitValue}`, it.total, columns, indent, len);
  const discount = it.discount ? pairLines('Desconto', it.discount, columns, indent, len) : [];
  return [...first, ...detail, ...discount];
}

function keyLines(groups: string[], columns: number): string[] {
  const perLine = Math.max(1, Math.floor((columns + 1) / 5));
  const lines = Math.ceil(groups.length / perLine);
  const balanced = Math.ceil(groups.length / lines);
  const out: string[] = [];
  for (let i = 0; i < groups.length; i += balanced) out.push(groups.slice(i, i + balanced).join(' '));
  return out;
}

/** A text line wrapped (and centred) to `columns`; a large one has half as many. */
function textRows(line: DanfeText, columns: number, strategy: CodePageStrategy): PrintRow[] {
  const sp = spelledFor(strategy);
  const width = line.large ? Math.floor(columns / 2) : columns;
  return wrapText(sp(line.text), width, line.parts?.map(sp)).map((l) => ({
    kind: 'text',
    text: line.align === 'center' ? spaces(Math.floor((width - l.length) / 2)) + l : l,
    ...(line.bold ? { bold: true } : {}),
    ...(line.large ? { large: true } : {}),
  }));
}

/**
 * The receipt as fixed-pitch rows for `columns` columns: every text row already wrapped and
 * aligned with spaces, its printed width ≤ columns (a large row counts double). `copy` fills
 * the copy label; with the transliterate strategy the rows are already in ASCII.
 */
export function layoutDanfe(model: DanfeModel, columns: number, copy?: DanfeCopy, strategy: CodePageStrategy = 'cp860'): PrintRow[] {
  const sp = spelledFor(strategy);
  const len = (s: string): number => s.length;
  const rows: PrintRow[] = [];
  const push = (lines: string[], bold?: boolean): void => {
    for (const text of lines) rows.push(bold ? { kind: 'text', text, bold } : { kind: 'text', text });
  };
  const center = (l: string, width = columns): string => spaces(Math.floor((width - l.length) / 2)) + l;
  const item = (it: DanfeItem): DanfeItem => ({
    number: sp(it.number),
    code: sp(it.code),
    description: sp(it.description),
    quantity: sp(it.quantity),
    unit: sp(it.unit),
    unitValue: sp(it.unitValue),
    total: sp(it.total),
    ...(it.discount ? { discount: sp(it.discount) } : {}),
  });

  const emit = (line: DanfeLine): void => {
    switch (line.kind) {
      case 'text':
        rows.push(...textRows(line, columns, strategy));
        return;
      case 'pair':
        return push(pairLines(sp(line.label), sp(line.value), columns, 0, len), line.bold);
      case 'itemHeader':
        return push(itemLines(item(line.item), columns, len), true);
      case 'item':
        return push(itemLines(item(line.item), columns, len));
      case 'key':
        return push(
          keyLines(line.groups, columns).map((l) => center(l)),
          true,
        );
      case 'qrcode':
        rows.push({ kind: 'qrcode', payload: line.payload });
        return;
      case 'copy':
        if (copy) push([center(sp(COPY_LABELS[copy]))], true);
        return;
    }
  };

  model.divisions.forEach((division, i) => {
    if (i > 0 && !NO_RULE_BEFORE.has(division.id)) rows.push({ kind: 'text', text: '-'.repeat(columns) });
    division.lines.forEach(emit);
  });
  return rows;
}

// =============================================================================================
// QR Code size

/** Data codewords per version at error correction level M (ISO/IEC 18004 table 7). */
const DATA_CODEWORDS_M = [
  16, 28, 44, 64, 86, 108, 124, 154, 182, 216, 254, 290, 334, 365, 415, 453, 507, 563, 627, 669, 714, 782, 860, 914, 1000, 1062, 1128, 1193, 1267, 1373, 1455,
  1541, 1631, 1725, 1812, 1914, 1992, 2102, 2216, 2334,
];

export const QR_ERROR_LEVEL = 'M';

const ALNUM = /^[0-9A-Z $%*+\-./:]$/;

/**
 * Smallest and largest QR version (level M) any encoder may choose for `payload`: the lower
 * bound prices every digit as numeric mode and every alphanumeric-set character as
 * alphanumeric mode (no mode headers), the upper bound is one byte-mode segment. The printer's
 * own encoder (GS ( k) picks its segmentation, so the module size is chosen from the lower
 * bound (the symbol can only be larger) and the paper fit is checked with the upper bound.
 */
export function qrVersionBounds(payload: string): { min: number; max: number } {
  let bits = 0;
  for (const ch of payload) bits += /[0-9]/.test(ch) ? 10 / 3 : ALNUM.test(ch) ? 5.5 : 8;
  const bytes = payload.length; // the library sends the QR text as ISO-8859-1, one byte per character
  const fits = (v: number, need: number): boolean => DATA_CODEWORDS_M[v - 1]! * 8 >= need;
  let min = 1;
  while (min < 40 && !fits(min, Math.ceil(bits))) min++;
  // Byte mode: 4-bit mode indicator, then an 8-bit count up to version 9, 16-bit from 10.
  const byteBits = (v: number): number => 4 + (v < 10 ? 8 : 16) + bytes * 8;
  let max = 1;
  while (max < 40 && !fits(max, byteBits(max))) max++;
  if (!fits(max, byteBits(max))) throw new FieldError('qrCode', 'QR Code longo demais para imprimir');
  return { min, max };
}

/** Dots per module so that the QR is at least `profile.qrMinMm` wide and fits the paper. */
export function qrModuleDots(modulesMin: number, modulesMax: number, profile: PrinterProfile, paperWidth: PaperWidth): number {
  const minDots = Math.ceil((profile.qrMinMm / 25.4) * profile.dpi);
  const wanted = Math.max(3, Math.ceil(minDots / modulesMin));
  // 8 is the largest module the GS ( k size function (and the library) accepts; the quiet zone
  // (4 modules each side) must fit the printable width too.
  const fit = Math.floor(profile.dots[paperWidth] / (modulesMax + 8));
  const size = Math.min(wanted, 8, fit);
  if (size * modulesMin < minDots) {
    throw new FieldError('qrCode', `QR Code não cabe com ${profile.qrMinMm} mm no papel de ${paperWidth} mm`);
  }
  return size;
}

/** The QR symbol's modules (true = dark), level M, as the raster fallback and previews draw it. */
export type QrMatrix = { size: number; dark: (x: number, y: number) => boolean };

export function qrMatrix(payload: string): QrMatrix {
  const qr = qrcode().create(payload, { errorCorrectionLevel: QR_ERROR_LEVEL });
  const { size, data } = qr.modules;
  return { size, dark: (x, y) => data[y * size + x] === 1 };
}

/** The QR as RGBA pixels: `module` pixels per module and a 4-module white quiet zone. */
export function qrPixels(m: QrMatrix, module: number): { width: number; height: number; data: Uint8ClampedArray } {
  const side = (m.size + 8) * module;
  const data = new Uint8ClampedArray(side * side * 4).fill(255);
  for (let y = 0; y < m.size; y++) {
    for (let x = 0; x < m.size; x++) {
      if (!m.dark(x, y)) continue;
      for (let dy = 0; dy < module; dy++) {
        const row = ((y + 4) * module + dy) * side;
        for (let dx = 0; dx < module; dx++) {
          const at = (row + (x + 4) * module + dx) * 4;
          data[at] = data[at + 1] = data[at + 2] = 0;
        }
      }
    }
  }
  return { width: side, height: side, data };
}

// =============================================================================================
// ESC/POS

export type EscPosOptions = {
  profile: PrinterProfileId | PrinterProfile;
  paperWidth: PaperWidth;
  /** Times to print the set of copies (default 1). Contingency already prints two labelled copies. */
  copies?: number;
  /** Overrides the profile's code page strategy (a clone that handles PC860 or WPC1252). */
  codePage?: CodePageStrategy;
  /**
   * Whether this job may open the cash drawer (default true): a cash sale's drawer opens once,
   * with the first copy printed, so whoever prints the other copies and reprints says false.
   */
  openDrawer?: boolean;
};

/** An ESC/POS job under way: the encoder set up for the printer, and how to write rows and the QR Code. */
type EscPosJob = {
  enc: ReceiptPrinterEncoder;
  profile: PrinterProfile;
  columns: number;
  strategy: CodePageStrategy;
  writeRows: (rows: PrintRow[]) => void;
  /** The job's bytes; the cut the last command. */
  finish: () => Uint8Array;
};

/**
 * Starts a job for the printer: initialised, its code page selected, the QR Code sized for
 * `qrPayload` (native GS ( k, or raster where the profile has none) at least `qrMinMm` wide.
 */
function startEscPosJob(options: Pick<EscPosOptions, 'profile' | 'paperWidth' | 'codePage'>, qrPayload: string): EscPosJob {
  const profile = printerProfile(options.profile);
  const paperWidth = options.paperWidth;
  if (paperWidth !== 80 && paperWidth !== 58) throw new FieldError('impressora.papel', 'largura do papel deve ser 80 ou 58 mm');
  const columns = profile.columns[paperWidth];
  const strategy = options.codePage ?? profile.codePage;

  const enc = new ReceiptPrinterEncoder({
    columns,
    language: 'esc-pos',
    newline: '\n',
    imageMode: 'raster',
    feedBeforeCut: profile.feedBeforeCut,
  });
  enc.initialize();
  if (strategy !== 'transliterate') {
    const n = profile.codePageNumbers[strategy];
    if (n === undefined) throw new FieldError('impressora.codepage', `a impressora ${profile.name} não tem a tabela ${strategy.toUpperCase()}`);
    enc.raw([0x1b, 0x74, n]); // ESC t n: see the header for why this is ours
  }

  // The QR is the same for every copy: size (and raster) computed once.
  const { min, max } = qrVersionBounds(qrPayload);
  const qrSize = qrModuleDots(17 + 4 * min, 17 + 4 * max, profile, paperWidth);
  let raster: ReturnType<typeof qrPixels> | undefined;
  const writeQr = (payload: string): void => {
    enc.align('center');
    if (profile.nativeQr) {
      // A blank line on each side keeps text out of the symbol's quiet zone (GS ( k prints
      // the bare symbol); the raster below carries its own 4-module margin.
      enc.newline();
      enc.qrcode(payload, { model: 2, size: qrSize, errorlevel: 'm' });
      enc.newline();
    } else {
      // Raster: the real symbol's size, so the module count is exact rather than bounded.
      if (!raster) {
        const m = qrMatrix(payload);
        raster = qrPixels(m, qrModuleDots(m.size, m.size, profile, paperWidth));
      }
      enc.image({ data: raster.data, width: raster.width, height: raster.height }, { width: raster.width, height: raster.height, mode: 'raster' });
    }
    enc.align('left');
  };
  const writeRows = (rows: PrintRow[]): void => {
    for (const row of rows) {
      if (row.kind === 'qrcode') {
        writeQr(row.payload);
        continue;
      }
      if (row.bold) enc.bold(true);
      if (row.large) enc.size(2, 2);
      enc.raw(encodeLineText(row.text, strategy));
      enc.newline();
      if (row.large) enc.size(1, 1);
      if (row.bold) enc.bold(false);
    }
  };
  const finish = (): Uint8Array => {
    const bytes = enc.encode();
    // The library ends the cut's line with a LF; after the final cut it would only feed the
    // next receipt's top, and the cut must be the job's last command.
    return bytes.length >= 4 && bytes[bytes.length - 1] === 0x0a && bytes[bytes.length - 4] === 0x1d && bytes[bytes.length - 3] === 0x56
      ? bytes.subarray(0, bytes.length - 1)
      : bytes;
  };
  return { enc, profile, columns, strategy, writeRows, finish };
}

/** The receipt as one ESC/POS print job. */
export function encodeEscPos(model: DanfeModel, options: EscPosOptions): Uint8Array {
  const repeat = options.copies ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 10) throw new FieldError('impressora.copias', 'número de cópias deve ser de 1 a 10');
  const { enc, profile, columns, strategy, writeRows, finish } = startEscPosJob(options, model.qrCode);

  const vias: (DanfeCopy | undefined)[] = model.copies.length ? model.copies : [undefined];
  const jobs = Array.from({ length: repeat }, () => vias).flat();
  const layouts = new Map<DanfeCopy | undefined, PrintRow[]>();
  jobs.forEach((via, j) => {
    let rows = layouts.get(via);
    if (!rows) layouts.set(via, (rows = layoutDanfe(model, columns, via, strategy)));
    writeRows(rows);
    // The drawer opens once per job, and only for cash; before the last cut, which ends the job.
    if (j === jobs.length - 1 && model.isCash && options.openDrawer !== false && profile.drawer)
      enc.pulse(profile.drawer.pin, profile.drawer.onMs, profile.drawer.offMs);
    enc.cut(profile.cut);
  });
  return finish();
}

/** A line of a slip that is not a receipt: text, or the one QR Code. */
export type SlipLine = DanfeText | { kind: 'qrcode'; payload: string };

/**
 * A short slip (the customer's PIX QR Code: electron/core/pix/qr-slip.ts) as one ESC/POS job,
 * laid out and printed exactly as the DANFE's text and QR Code are, then cut.
 */
export function encodeSlip(lines: SlipLine[], options: Pick<EscPosOptions, 'profile' | 'paperWidth' | 'codePage'>): Uint8Array {
  const qr = lines.find((l) => l.kind === 'qrcode');
  if (!qr) throw new FieldError('qrCode', 'o comprovante não tem QR Code');
  const { enc, profile, columns, strategy, writeRows, finish } = startEscPosJob(options, qr.payload);
  writeRows(lines.flatMap((line): PrintRow[] => (line.kind === 'qrcode' ? [line] : textRows(line, columns, strategy))));
  enc.cut(profile.cut);
  return finish();
}
