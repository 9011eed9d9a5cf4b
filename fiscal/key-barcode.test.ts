import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bwipjs from 'bwip-js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildAccessKey } from './access-key.ts';
import { FieldError } from './errors.ts';
import { keyBarcodeRaw, keyBarcodeSymbols } from './key-barcode.ts';

const NUMERIC_KEY = '41210780568835000181580010402005751006005791';
const alphaKey = (cnpj: string) => buildAccessKey({ cUF: '35', yearMonth: '2612', cnpj, model: '58', serie: 1, number: 310, tpEmis: 1, code: '04004106' });

/** Reads symbol values back to text the way a Code 128 reader does (sets A and C only). */
function read(symbols: number[]): string {
  expect(symbols[0]).toBe(105); // Start C
  let set: 'A' | 'C' = 'C';
  let text = '';
  for (const s of symbols.slice(1)) {
    if (set === 'C' && s === 101) set = 'A';
    else if (set === 'A' && s === 99) set = 'C';
    else if (set === 'C') text += String(s).padStart(2, '0');
    else text += String.fromCharCode(s + 32);
  }
  return text;
}

/** zbarimg (zbar-tools) on a PNG of the symbol as bwip-js draws it. */
async function scan(key: string): Promise<string> {
  const options = { bcid: 'code128', text: keyBarcodeRaw(key), raw: true, scale: 3, height: 12, paddingwidth: 12, backgroundcolor: 'FFFFFF' };
  const png = await bwipjs.toBuffer(options as Parameters<typeof bwipjs.toBuffer>[0]);
  const dir = mkdtempSync(join(tmpdir(), 'balcao-barcode-'));
  try {
    writeFileSync(join(dir, 'chave.png'), png);
    return execFileSync('zbarimg', ['--raw', '-q', join(dir, 'chave.png')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('access key barcode (Code 128, sets C and A)', () => {
  it('a numeric key is the CODE-128C it always was: start C and 22 pairs, the same bars bwip-js chooses for 44 digits', () => {
    const symbols = keyBarcodeSymbols(NUMERIC_KEY);
    expect(symbols).toHaveLength(23);
    expect(symbols.slice(1)).toEqual(NUMERIC_KEY.match(/../g)!.map(Number));
    const ours = bwipjs.raw('code128', keyBarcodeRaw(NUMERIC_KEY), 'raw') as { sbs: number[] }[];
    const automatic = bwipjs.raw({ bcid: 'code128', text: NUMERIC_KEY }) as { sbs: number[] }[];
    expect(ours[0]!.sbs).toEqual(automatic[0]!.sbs);
  });

  it('a key with letters: digits in pairs in set C, the letters (and a lone digit) in set A, switching with CODE A 101 and CODE C 99', () => {
    const key = alphaKey('12ABC34501DE35');
    expect(key).toBe('35261212ABC34501DE35580010000003101040041065');
    // 35 26 12 12 | A B C 3 | 45 01 | D E | 35 58 00 10 00 00 03 10 10 40 04 10 65
    expect(keyBarcodeSymbols(key)).toEqual([
      105, 35, 26, 12, 12, 101, 33, 34, 35, 19, 99, 45, 1, 101, 36, 37, 99, 35, 58, 0, 10, 0, 0, 3, 10, 10, 40, 4, 10, 65,
    ]);
    // bwip-js left to itself would write the letters in set B: not the NT's code.
    const automatic = bwipjs.raw({ bcid: 'code128', text: key }) as { sbs: number[] }[];
    const ours = bwipjs.raw('code128', keyBarcodeRaw(key), 'raw') as { sbs: number[] }[];
    expect(ours[0]!.sbs).not.toEqual(automatic[0]!.sbs);
  });

  it('any key reads back to itself, uses only sets C and A, and a barcode reader decodes it', async () => {
    const base = fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'), minLength: 12, maxLength: 12 });
    fc.assert(
      fc.property(base, (b) => {
        const key = `352612${b}00580010000003101040041060`;
        const symbols = keyBarcodeSymbols(key);
        expect(read(symbols)).toBe(key);
        expect(symbols.filter((s) => s === 100 || s === 103 || s === 104)).toEqual([]); // no set B, no other start
      }),
    );
    for (const key of [NUMERIC_KEY, alphaKey('12ABC34501DE35'), alphaKey('1A234567890100')]) {
      expect(await scan(key)).toBe(key);
    }
  });

  it('refuses what is not a key, naming the field', () => {
    expect(() => keyBarcodeSymbols(alphaKey('12ABC34501DE35').toLowerCase())).toThrow(FieldError);
    expect(() => keyBarcodeSymbols('123')).toThrow(/44 posições/);
  });
});
