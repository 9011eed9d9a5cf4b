import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import { describe, expect, it } from 'vitest';
import { decodeEscPos, imageToRgba } from './escpos-decoder.ts';

const ESC = 0x1b;
const GS = 0x1d;
const LF = 0x0a;
const ascii = (s: string): number[] => [...Buffer.from(s, 'latin1')];

describe('decodeEscPos: text and code pages', () => {
  it('decodes high bytes through the selected code page (CP437 until ESC t)', () => {
    const t = decodeEscPos([ESC, 0x40, 0x84, LF, ESC, 0x74, 3, 0x80, 0x8e, 0x96, 0x84, LF, ESC, 0x74, 16, 0xc7, 0xc3, 0xda, LF, ESC, 0x74, 2, 0xc6, LF]);
    expect(t.lines.map((l) => l.text)).toEqual(['ä', 'ÇÃÚã', 'ÇÃÚ', 'ã']);
    expect(t.commands.filter((c) => c.op === 'codepage')).toEqual([
      { op: 'codepage', n: 3, table: 'cp860' },
      { op: 'codepage', n: 16, table: 'wpc1252' },
      { op: 'codepage', n: 2, table: 'cp850' },
    ]);
  });

  it('ESC @ resets the code page and styles', () => {
    const t = decodeEscPos([ESC, 0x74, 3, ESC, 0x45, 1, 0x8e, LF, ESC, 0x40, 0x8e, LF]);
    expect(t.lines).toEqual([
      { text: 'Ã', columns: 1, bold: true, large: false, align: 'left' },
      { text: 'Ä', columns: 1, bold: false, large: false, align: 'left' },
    ]);
  });

  it('counts columns with the character width (GS !, ESC !) and records bold and alignment', () => {
    const t = decodeEscPos([
      ESC,
      0x61,
      1,
      GS,
      0x21,
      0x11,
      ...ascii('AB'),
      GS,
      0x21,
      0x00,
      ...ascii('c'),
      LF,
      ESC,
      0x21,
      0x20,
      ...ascii('xyz'),
      ESC,
      0x21,
      0x00,
      LF,
      ESC,
      0x61,
      0,
      ESC,
      0x45,
      1,
      ...ascii('negrito'),
      ESC,
      0x45,
      0,
      LF,
    ]);
    expect(t.lines).toEqual([
      { text: 'ABc', columns: 5, bold: false, large: true, align: 'center' },
      { text: 'xyz', columns: 6, bold: false, large: true, align: 'center' },
      { text: 'negrito', columns: 7, bold: true, large: false, align: 'left' },
    ]);
  });

  it('ESC d n feeds n empty lines; CR is not a line', () => {
    const t = decodeEscPos([...ascii('a'), 0x0d, LF, ESC, 0x64, 3]);
    expect(t.lines.map((l) => l.text)).toEqual(['a', '', '', '']);
  });
});

describe('decodeEscPos: QR, images, cut, pulse, status', () => {
  it('collects a GS ( k QR Code with model, size, error level and payload', () => {
    const data = ascii('https://x/qrcode?p=1|2|3');
    const len = data.length + 3;
    const t = decodeEscPos([
      GS,
      0x28,
      0x6b,
      4,
      0,
      0x31,
      0x41,
      0x32,
      0,
      GS,
      0x28,
      0x6b,
      3,
      0,
      0x31,
      0x43,
      5,
      GS,
      0x28,
      0x6b,
      3,
      0,
      0x31,
      0x45,
      0x31,
      GS,
      0x28,
      0x6b,
      len & 0xff,
      len >> 8,
      0x31,
      0x50,
      0x30,
      ...data,
      GS,
      0x28,
      0x6b,
      3,
      0,
      0x31,
      0x51,
      0x30,
    ]);
    expect(t.qrCodes).toEqual([{ payload: 'https://x/qrcode?p=1|2|3', model: 2, size: 5, ecc: 'M', printed: true }]);
    expect(t.toString()).toBe('[QR model 2][QR size 5][QR ecc M][QR store "https://x/qrcode?p=1|2|3"][QR print]');
  });

  it('reports a stored QR Code that is never printed', () => {
    const t = decodeEscPos([GS, 0x28, 0x6b, 6, 0, 0x31, 0x50, 0x30, ...ascii('abc')]);
    expect(t.qrCodes).toEqual([{ payload: 'abc', printed: false }]);
  });

  it('joins consecutive GS v 0 chunks of the same width into one image', () => {
    // 16 dots wide; chunk 1: 2 rows, chunk 2: 1 row.
    const t = decodeEscPos([GS, 0x76, 0x30, 0, 2, 0, 2, 0, 0x80, 0x01, 0xff, 0x00, GS, 0x76, 0x30, 0, 2, 0, 1, 0, 0x00, 0x80]);
    expect(t.images).toHaveLength(1);
    const img = t.images[0]!;
    expect([img.width, img.height]).toEqual([16, 3]);
    const dot = (x: number, y: number): number => img.dots[y * 16 + x]!;
    expect([dot(0, 0), dot(15, 0), dot(1, 0), dot(7, 1), dot(8, 1), dot(8, 2), dot(9, 2)]).toEqual([1, 1, 0, 1, 0, 1, 0]);
    const rgba = imageToRgba(img, 2);
    expect([rgba.width, rgba.height, rgba.data.length]).toEqual([20, 7, 20 * 7 * 4]);
    expect(rgba.data[(2 * 20 + 2) * 4]).toBe(0); // dot (0,0) is black
    expect(rgba.data[0]).toBe(255); // the border is white
  });

  it('cut variants, drawer pulse and status requests', () => {
    const t = decodeEscPos([ESC, 0x70, 0, 50, 250, GS, 0x56, 1, GS, 0x56, 0, GS, 0x56, 66, 3, GS, 0x56, 65, 0, 0x10, 0x04, 4]);
    expect(t.commands).toEqual([
      { op: 'pulse', pin: 0, onMs: 100, offMs: 500 },
      { op: 'cut', mode: 'partial' },
      { op: 'cut', mode: 'full' },
      { op: 'cut', mode: 'partial', feed: 3 },
      { op: 'cut', mode: 'full', feed: 0 },
      { op: 'status-request', n: 4 },
    ]);
  });

  it('flags unknown and truncated commands instead of skipping them', () => {
    const t = decodeEscPos([ESC, 0x99, 0x41, 0x01, GS, 0x28, 0x6b, 10, 0, 0x31]);
    expect(t.commands).toEqual([
      { op: 'unknown', bytes: [ESC, 0x99] },
      { op: 'text', text: 'A', bytes: [0x41] },
      { op: 'unknown', bytes: [0x01] },
      { op: 'unknown', bytes: [GS, 0x28, 0x6b, 10, 0, 0x31] },
    ]);
  });
});

describe('decodeEscPos on the encoder library’s own output', () => {
  it('reads back what @point-of-sale/receipt-printer-encoder writes', () => {
    const bytes = new ReceiptPrinterEncoder({ columns: 32, language: 'esc-pos', newline: '\n', imageMode: 'raster' })
      .initialize()
      .codepage('cp860')
      .bold(true)
      .line('Açúcar e feijão')
      .bold(false)
      .align('center')
      .qrcode('https://exemplo.br/q?p=123', { model: 2, size: 6, errorlevel: 'm' })
      .align('left')
      .image({ data: new Uint8ClampedArray(8 * 8 * 4).fill(0).map((_, i) => (i % 4 === 3 ? 255 : 0)), width: 8, height: 8 }, { mode: 'raster' })
      .pulse()
      .cut('partial')
      .encode();
    const t = decodeEscPos(bytes);
    expect(t.commands.filter((c) => c.op === 'unknown')).toEqual([]);
    expect(t.commands.slice(0, 3)).toEqual([{ op: 'init' }, { op: 'kanji', on: false }, { op: 'font', n: 0 }]);
    const cp = t.commands.findIndex((c) => c.op === 'codepage');
    expect(t.commands[cp]).toEqual({ op: 'codepage', n: 3, table: 'cp860' });
    expect(cp).toBeLessThan(t.commands.findIndex((c) => c.op === 'text'));
    expect(t.lines[0]).toMatchObject({ text: 'Açúcar e feijão', bold: true, columns: 15 });
    expect(t.qrCodes).toEqual([{ payload: 'https://exemplo.br/q?p=123', model: 2, size: 6, ecc: 'M', printed: true }]);
    expect(t.images).toHaveLength(1);
    expect([...t.images[0]!.dots].every((d) => d === 1)).toBe(true);
    expect(t.commands.filter((c) => c.op === 'pulse')).toHaveLength(1);
    expect(t.commands.filter((c) => c.op === 'cut')).toEqual([{ op: 'cut', mode: 'partial' }]);
  });
});
