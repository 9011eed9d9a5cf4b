// A small ESC/POS decoder for tests: print-job bytes → a transcript of commands and printed
// lines, so tests can assert what the printer would do (code page and accented bytes, column
// widths, QR payloads, raster images, cut, drawer pulse) instead of comparing opaque hex.
//
// It covers the Epson command subset the DANFE uses, plus the neighbours a regression could
// introduce (ESC !, ESC d, ESC *, GS V with feed, DLE EOT). Anything else is reported as an
// `unknown` command rather than skipped, so an unexpected byte fails loudly.
//
// `readQr` wraps jsQR (the QR reader the tests decode printed/rendered symbols with).
//
// The code page tables are independent of the encoder under test: they were generated with
// Python's codecs (`bytes(range(128, 256)).decode('cp860')`, same for cp437, cp850, cp858 and
// cp1252; undefined cp1252 positions are U+FFFD).

import jsQRImport from 'jsqr';

/** High halves (0x80–0xFF) of the code pages, by Epson ESC t number. */
const HIGH_HALVES: Record<string, string> = {
  cp437: 'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0',
  cp850: 'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u00ad±‗¾¶§÷¸°¨·¹³²■\u00a0',
  cp860: 'ÇüéâãàÁçêÊèÍÔìÃÂÉÀÈôõòÚùÌÕÜ¢£Ù₧ÓáíóúñÑªº¿Ò¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0',
  cp858: 'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈ€ÍÎÏ┘┌█▄¦Ì▀ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u00ad±‗¾¶§÷¸°¨·¹³²■\u00a0',
  wpc1252:
    '€\ufffd‚ƒ„…†‡ˆ‰Š‹Œ\ufffdŽ\ufffd\ufffd‘’“”•–—˜™š›œ\ufffdžŸ\u00a0¡¢£¤¥¦§¨©ª«¬\u00ad®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ',
};

/** ESC t n → code page, Epson numbering (docs/fiscal.md, "Thermal printing"). */
export const EPSON_CODE_PAGES: Readonly<Record<number, string>> = { 0: 'cp437', 2: 'cp850', 3: 'cp860', 16: 'wpc1252', 19: 'cp858' };

for (const [name, half] of Object.entries(HIGH_HALVES)) {
  if ([...half].length !== 128) throw new Error(`tabela ${name} com ${[...half].length} posições`);
}

export type Align = 'left' | 'center' | 'right';

export type EscPosCommand =
  | { op: 'init' }
  | { op: 'kanji'; on: boolean }
  | { op: 'font'; n: number }
  | { op: 'codepage'; n: number; table: string | undefined }
  | { op: 'align'; value: Align }
  | { op: 'bold'; on: boolean }
  | { op: 'underline'; n: number }
  | { op: 'italic'; on: boolean }
  | { op: 'invert'; on: boolean }
  | { op: 'size'; width: number; height: number }
  | { op: 'print-mode'; n: number }
  | { op: 'line-spacing'; dots: number | 'default' }
  | { op: 'motion-unit'; x: number; y: number }
  | { op: 'text'; text: string; bytes: number[] }
  | { op: 'lf' }
  | { op: 'cr' }
  | { op: 'feed'; lines: number }
  | { op: 'qr-model'; model: number }
  | { op: 'qr-size'; size: number }
  | { op: 'qr-ecc'; level: 'L' | 'M' | 'Q' | 'H' }
  | { op: 'qr-store'; payload: string }
  | { op: 'qr-print' }
  | { op: 'raster'; widthBytes: number; height: number; mode: number; data: Uint8Array }
  | { op: 'column-image'; mode: number; width: number; data: Uint8Array }
  | { op: 'cut'; mode: 'full' | 'partial'; feed?: number }
  | { op: 'pulse'; pin: number; onMs: number; offMs: number }
  | { op: 'status-request'; n: number }
  | { op: 'unknown'; bytes: number[] };

export type PrintedLine = {
  text: string;
  /** Columns used: each character times the width multiplier it was printed with. */
  columns: number;
  bold: boolean;
  large: boolean;
  align: Align;
};

export type DecodedQr = { payload: string; model?: number; size?: number; ecc?: string; printed: boolean };

/** A raster image (consecutive GS v 0 chunks of the same width joined); 1 = black dot. */
export type DecodedImage = { width: number; height: number; dots: Uint8Array };

export type Transcript = {
  commands: EscPosCommand[];
  lines: PrintedLine[];
  qrCodes: DecodedQr[];
  images: DecodedImage[];
  /** Readable form: `[ESC @][ESC t 3]AÇÚCAR…⏎[QR "…"][GS V 1]`. */
  toString(): string;
};

function decodeByte(b: number, table: string | undefined): string {
  if (b < 0x80) return String.fromCharCode(b);
  const half = HIGH_HALVES[table ?? 'cp437'];
  return half ? [...half][b - 0x80]! : '\ufffd';
}

const ECC = ['L', 'M', 'Q', 'H'] as const;

export function decodeEscPos(input: Uint8Array | number[]): Transcript {
  const b = Uint8Array.from(input);
  const commands: EscPosCommand[] = [];
  const lines: PrintedLine[] = [];
  const qrCodes: DecodedQr[] = [];
  const images: DecodedImage[] = [];

  let table: string | undefined = 'cp437';
  let bold = false;
  let width = 1;
  let height = 1;
  let align: Align = 'left';
  let current: PrintedLine | undefined;
  let pendingQr: Partial<DecodedQr> = {};

  const line = (): PrintedLine => (current ??= { text: '', columns: 0, bold: false, large: false, align });
  const endLine = (): void => {
    lines.push(line());
    current = undefined;
  };
  const resetState = (): void => {
    table = 'cp437';
    bold = false;
    width = height = 1;
    align = 'left';
  };

  let i = 0;
  const need = (n: number): boolean => i + n <= b.length;
  const unknown = (n: number): void => {
    const end = Math.min(b.length, i + n);
    commands.push({ op: 'unknown', bytes: [...b.subarray(i, end)] });
    i = end;
  };

  while (i < b.length) {
    const c = b[i]!;
    if (c === 0x0a) {
      commands.push({ op: 'lf' });
      endLine();
      i++;
      continue;
    }
    if (c === 0x0d) {
      commands.push({ op: 'cr' });
      i++;
      continue;
    }
    if (c >= 0x20 && c !== 0x7f) {
      const start = i;
      while (i < b.length && b[i]! >= 0x20 && b[i] !== 0x7f) i++;
      const bytes = [...b.subarray(start, i)];
      const text = bytes.map((x) => decodeByte(x, table)).join('');
      commands.push({ op: 'text', text, bytes });
      const l = line();
      l.text += text;
      l.columns += bytes.length * width;
      if (bold) l.bold = true;
      if (width > 1 || height > 1) l.large = true;
      continue;
    }
    if (c === 0x1b) {
      if (!need(2)) {
        unknown(1);
        continue;
      }
      const k = b[i + 1]!;
      const arg = b[i + 2];
      const has = need(3);
      if (k === 0x40) {
        commands.push({ op: 'init' });
        resetState();
        i += 2;
      } else if (k === 0x74 && has) {
        table = EPSON_CODE_PAGES[arg!];
        commands.push({ op: 'codepage', n: arg!, table });
        i += 3;
      } else if (k === 0x61 && has) {
        align = arg === 1 || arg === 0x31 ? 'center' : arg === 2 || arg === 0x32 ? 'right' : 'left';
        commands.push({ op: 'align', value: align });
        i += 3;
      } else if (k === 0x45 && has) {
        bold = (arg! & 1) === 1;
        commands.push({ op: 'bold', on: bold });
        i += 3;
      } else if (k === 0x2d && has) {
        commands.push({ op: 'underline', n: arg! });
        i += 3;
      } else if (k === 0x34 && has) {
        commands.push({ op: 'italic', on: (arg! & 1) === 1 });
        i += 3;
      } else if (k === 0x4d && has) {
        commands.push({ op: 'font', n: arg! });
        i += 3;
      } else if (k === 0x21 && has) {
        // ESC ! n: bit 3 emphasized, bit 4 double height, bit 5 double width.
        bold = (arg! & 0x08) !== 0;
        height = arg! & 0x10 ? 2 : 1;
        width = arg! & 0x20 ? 2 : 1;
        commands.push({ op: 'print-mode', n: arg! });
        i += 3;
      } else if (k === 0x32) {
        commands.push({ op: 'line-spacing', dots: 'default' });
        i += 2;
      } else if (k === 0x33 && has) {
        commands.push({ op: 'line-spacing', dots: arg! });
        i += 3;
      } else if (k === 0x64 && has) {
        commands.push({ op: 'feed', lines: arg! });
        for (let n = 0; n < arg!; n++) endLine();
        i += 3;
      } else if (k === 0x70 && need(5)) {
        commands.push({ op: 'pulse', pin: b[i + 2]! & 1, onMs: b[i + 3]! * 2, offMs: b[i + 4]! * 2 });
        i += 5;
      } else if (k === 0x2a && need(5)) {
        const mode = b[i + 2]!;
        const n = b[i + 3]! + b[i + 4]! * 256;
        const size = n * (mode >= 32 ? 3 : 1);
        if (!need(5 + size)) {
          unknown(b.length - i);
          continue;
        }
        commands.push({ op: 'column-image', mode, width: n, data: b.slice(i + 5, i + 5 + size) });
        i += 5 + size;
      } else {
        unknown(2);
      }
      continue;
    }
    if (c === 0x1d) {
      if (!need(2)) {
        unknown(1);
        continue;
      }
      const k = b[i + 1]!;
      const arg = b[i + 2];
      const has = need(3);
      if (k === 0x21 && has) {
        width = ((arg! >> 4) & 0x07) + 1;
        height = (arg! & 0x07) + 1;
        commands.push({ op: 'size', width, height });
        i += 3;
      } else if (k === 0x42 && has) {
        commands.push({ op: 'invert', on: (arg! & 1) === 1 });
        i += 3;
      } else if (k === 0x50 && need(4)) {
        commands.push({ op: 'motion-unit', x: b[i + 2]!, y: b[i + 3]! });
        i += 4;
      } else if (k === 0x56 && has) {
        const m = arg!;
        const withFeed = [65, 66, 97, 98, 103, 104].includes(m);
        if (withFeed && !need(4)) {
          unknown(b.length - i);
          continue;
        }
        const mode = [0, 48, 65, 97, 103].includes(m) ? 'full' : 'partial';
        commands.push(withFeed ? { op: 'cut', mode, feed: b[i + 3]! } : { op: 'cut', mode });
        if (current) endLine();
        i += withFeed ? 4 : 3;
      } else if (k === 0x76 && need(8) && b[i + 2] === 0x30) {
        const mode = b[i + 3]!;
        const widthBytes = b[i + 4]! + b[i + 5]! * 256;
        const rows = b[i + 6]! + b[i + 7]! * 256;
        const size = widthBytes * rows;
        if (!need(8 + size)) {
          unknown(b.length - i);
          continue;
        }
        const data = b.slice(i + 8, i + 8 + size);
        const prev = commands[commands.length - 1];
        commands.push({ op: 'raster', widthBytes, height: rows, mode, data });
        const dots = new Uint8Array(widthBytes * 8 * rows);
        for (let y = 0; y < rows; y++) {
          for (let x = 0; x < widthBytes * 8; x++) dots[y * widthBytes * 8 + x] = (data[y * widthBytes + (x >> 3)]! >> (7 - (x & 7))) & 1;
        }
        const last = images[images.length - 1];
        if (prev?.op === 'raster' && last && last.width === widthBytes * 8) {
          const joined = new Uint8Array(last.dots.length + dots.length);
          joined.set(last.dots);
          joined.set(dots, last.dots.length);
          images[images.length - 1] = { width: last.width, height: last.height + rows, dots: joined };
        } else {
          images.push({ width: widthBytes * 8, height: rows, dots });
        }
        i += 8 + size;
      } else if (k === 0x28 && b[i + 2] === 0x6b && need(5)) {
        const len = b[i + 3]! + b[i + 4]! * 256;
        if (!need(5 + len) || len < 2) {
          unknown(b.length - i);
          continue;
        }
        const cn = b[i + 5]!;
        const fn = b[i + 6]!;
        const params = b.subarray(i + 7, i + 5 + len);
        if (cn !== 0x31) {
          unknown(5 + len);
          continue;
        }
        if (fn === 0x41) {
          const model = params[0]! - 0x30;
          pendingQr.model = model;
          commands.push({ op: 'qr-model', model });
        } else if (fn === 0x43) {
          pendingQr.size = params[0]!;
          commands.push({ op: 'qr-size', size: params[0]! });
        } else if (fn === 0x45) {
          const level = ECC[params[0]! - 0x30] ?? 'L';
          pendingQr.ecc = level;
          commands.push({ op: 'qr-ecc', level });
        } else if (fn === 0x50) {
          // Store: m = 0x30, then the data; QR data is sent as ISO-8859-1 bytes.
          const payload = Buffer.from(params.subarray(1)).toString('latin1');
          pendingQr.payload = payload;
          commands.push({ op: 'qr-store', payload });
        } else if (fn === 0x51) {
          commands.push({ op: 'qr-print' });
          qrCodes.push({ ...pendingQr, payload: pendingQr.payload ?? '', printed: true });
          pendingQr = { model: pendingQr.model, size: pendingQr.size, ecc: pendingQr.ecc };
        } else {
          unknown(5 + len);
          continue;
        }
        i += 5 + len;
      } else {
        unknown(2);
      }
      continue;
    }
    if (c === 0x1c && need(2) && (b[i + 1] === 0x2e || b[i + 1] === 0x26)) {
      commands.push({ op: 'kanji', on: b[i + 1] === 0x26 });
      i += 2;
      continue;
    }
    if (c === 0x10 && need(3) && b[i + 1] === 0x04) {
      commands.push({ op: 'status-request', n: b[i + 2]! });
      i += 3;
      continue;
    }
    unknown(1);
  }
  if (current) lines.push(current);
  if (pendingQr.payload !== undefined) qrCodes.push({ ...pendingQr, payload: pendingQr.payload, printed: false });

  return {
    commands,
    lines,
    qrCodes,
    images,
    toString: () => commands.map(describe).join(''),
  };
}

const hex = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');

function describe(c: EscPosCommand): string {
  switch (c.op) {
    case 'text':
      return c.text;
    case 'lf':
      return '⏎\n';
    case 'cr':
      return '[CR]';
    case 'init':
      return '[ESC @]';
    case 'kanji':
      return c.on ? '[FS &]' : '[FS .]';
    case 'font':
      return `[ESC M ${c.n}]`;
    case 'codepage':
      return `[ESC t ${c.n}${c.table ? ` ${c.table}` : ''}]`;
    case 'align':
      return `[ESC a ${c.value}]`;
    case 'bold':
      return `[ESC E ${c.on ? 1 : 0}]`;
    case 'underline':
      return `[ESC - ${c.n}]`;
    case 'italic':
      return `[ESC 4 ${c.on ? 1 : 0}]`;
    case 'invert':
      return `[GS B ${c.on ? 1 : 0}]`;
    case 'size':
      return `[GS ! ${c.width}x${c.height}]`;
    case 'print-mode':
      return `[ESC ! ${c.n}]`;
    case 'line-spacing':
      return c.dots === 'default' ? '[ESC 2]' : `[ESC 3 ${c.dots}]`;
    case 'motion-unit':
      return `[GS P ${c.x} ${c.y}]`;
    case 'feed':
      return `[ESC d ${c.lines}]`;
    case 'qr-model':
      return `[QR model ${c.model}]`;
    case 'qr-size':
      return `[QR size ${c.size}]`;
    case 'qr-ecc':
      return `[QR ecc ${c.level}]`;
    case 'qr-store':
      return `[QR store "${c.payload}"]`;
    case 'qr-print':
      return '[QR print]';
    case 'raster':
      return `[GS v 0 ${c.widthBytes * 8}x${c.height}]`;
    case 'column-image':
      return `[ESC * ${c.mode} ${c.width}]`;
    case 'cut':
      return `[GS V ${c.mode}${c.feed !== undefined ? ` feed ${c.feed}` : ''}]`;
    case 'pulse':
      return `[ESC p ${c.pin} ${c.onMs}ms ${c.offMs}ms]`;
    case 'status-request':
      return `[DLE EOT ${c.n}]`;
    case 'unknown':
      return `[?? ${c.bytes.map(hex).join(' ')}]`;
  }
}

/** A decoded raster image as RGBA pixels (black on white) with a white border, for jsQR. */
export function imageToRgba(img: DecodedImage, border = 16): { data: Uint8ClampedArray; width: number; height: number } {
  const width = img.width + border * 2;
  const height = img.height + border * 2;
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (!img.dots[y * img.width + x]) continue;
      const at = ((y + border) * width + x + border) * 4;
      data[at] = data[at + 1] = data[at + 2] = 0;
    }
  }
  return { data, width, height };
}

// jsqr is CommonJS with an ES default in its typings: under NodeNext the types describe the
// module object, while at run time the default import is the function itself.
type JsQr = typeof jsQRImport.default;
const jsQR: JsQr = (jsQRImport as unknown as { default?: JsQr }).default ?? (jsQRImport as unknown as JsQr);

/** Decodes a QR Code from RGBA pixels (jsQR); null when none is found. */
export function readQr(image: { data: Uint8ClampedArray | Uint8Array; width: number; height: number }): ReturnType<JsQr> {
  const data = image.data instanceof Uint8ClampedArray ? image.data : new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length);
  return jsQR(data, image.width, image.height);
}
