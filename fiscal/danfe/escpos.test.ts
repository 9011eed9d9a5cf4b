import { readFileSync } from 'node:fs';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import fc from 'fast-check';
import QRCode from 'qrcode';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEscPos, imageToRgba, readQr, type DecodedImage, type Transcript } from '../../test/escpos-decoder.ts';
import { generateTestCertificate } from '../certificate.ts';
import { FieldError } from '../errors.ts';
import { issueNfce, type IssuedNfce } from '../nfce/build.ts';
import type { NfceRequest } from '../nfce/types.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import { fixturePath } from '../testdata/fixtures.ts';
import type { SigningCredentials } from '../signature.ts';
import {
  encodeEscPos,
  encodeLineText,
  layoutDanfe,
  PRINTER_PROFILES,
  qrVersionBounds,
  transliterate,
  type PaperWidth,
  type PrinterProfileId,
} from './escpos.ts';
import { danfeModel, type DanfeModel } from './model.ts';
import { ACCESS_KEY } from '../../base/common/access-key.ts';

let credentials: SigningCredentials;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DANFE TESTE' }).certificate;
});

function issue(edit: (r: NfceRequest) => void = () => {}, tpEmis: 1 | 9 = 1): IssuedNfce {
  const req = sampleNfceRequest({ nNF: 123, items: 3 });
  req.pag = [{ tPag: '01', vPag: '120.00' }];
  // Items 2+ keep their description in homologação: one carries the accents under test.
  req.det[1]!.prod.xProd = 'Doce ÇÃÚ de leite';
  edit(req);
  return issueNfce(req, {
    emitter: demoEmitter(),
    dhEmi: '2026-03-10T14:03:05-03:00',
    tpEmis,
    credentials,
    ...(tpEmis === 9 ? { contingency: { dhCont: '2026-03-10T14:00:00-03:00', xJust: 'Sem conexão com a SEFAZ no momento' } } : {}),
  });
}

const authorized = (nfe: IssuedNfce): string =>
  wrapNfeProc(
    nfe.xml,
    nfeProtocolFor(nfe.xml, {
      cStat: 100,
      xMotivo: 'Autorizado o uso da NF-e',
      verAplic: 'SP',
      dhRecbto: '2026-03-10T14:03:07-03:00',
      nProt: '135260000012345',
    }),
  );

const PROFILES = Object.keys(PRINTER_PROFILES) as PrinterProfileId[];
const WIDTHS: PaperWidth[] = [80, 58];
const COLUMNS = { 80: 48, 58: 32 } as const;
const text = (t: Transcript): string => t.lines.map((l) => l.text).join('\n');

/** Bytes between two indexes of the job, to look for the raw code page bytes. */
function containsBytes(haystack: Uint8Array, needle: number[]): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let k = 0; k < needle.length; k++) if (haystack[i + k] !== needle[k]) continue outer;
    return true;
  }
  return false;
}

/** Copies of a job: the commands between cuts. */
function copiesOf(t: Transcript): string[] {
  const out: string[] = [];
  let cur = '';
  for (const c of t.commands) {
    if (c.op === 'text') cur += c.text;
    else if (c.op === 'lf') cur += '\n';
    else if (c.op === 'cut') {
      out.push(cur);
      cur = '';
    }
  }
  return out;
}

/** Width in dots of the dark part of a raster (the QR symbol without its quiet zone). */
function darkWidth(img: DecodedImage): number {
  let min = img.width;
  let max = -1;
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (img.dots[y * img.width + x]) {
        min = Math.min(min, x);
        max = Math.max(max, x);
      }
    }
  }
  return max - min + 1;
}

describe('encodeEscPos: every profile and paper width', () => {
  let cash: DanfeModel;
  let contingency: DanfeModel;
  let cancelled: DanfeModel;
  beforeAll(() => {
    const nfe = issue((r) => {
      r.dest = { cpf: '52998224725' };
      r.det[2]!.prod.xProd = 'Arroz branco tipo 1 5kg ' + 'pacote econômico com descrição bem comprida '.repeat(2).trim();
    });
    cash = danfeModel(authorized(nfe));
    contingency = danfeModel(issue(() => {}, 9).xml);
    cancelled = danfeModel(authorized(nfe), { cancelled: { at: '2026-03-10T15:00:00-03:00', nProt: '135260000099999' } });
  });

  for (const profile of PROFILES) {
    for (const paperWidth of WIDTHS) {
      it(`${profile} ${paperWidth} mm: no line over ${COLUMNS[paperWidth]} columns, only known commands, init first, cut last`, () => {
        for (const model of [cash, contingency, cancelled]) {
          const t = decodeEscPos(encodeEscPos(model, { profile, paperWidth }));
          const over = t.lines.filter((l) => l.columns > COLUMNS[paperWidth]);
          expect(over, over.map((l) => `${l.columns}: ${l.text}`).join('\n')).toEqual([]);
          expect(t.commands.filter((c) => c.op === 'unknown')).toEqual([]);
          expect(t.commands[0]).toEqual({ op: 'init' });
          expect(t.commands.at(-1)).toEqual({ op: 'cut', mode: 'partial' });
          // The last printed text is fed past the cutter before the cut.
          const lastText = t.commands.findLastIndex((c) => c.op === 'text');
          expect(t.commands.slice(lastText).filter((c) => c.op === 'lf').length).toBeGreaterThanOrEqual(4);
          expect(text(t)).toContain('CHAVE DE ACESSO');
        }
      });
    }
  }

  it('the cancelled mark is printed double size and still fits', () => {
    const t = decodeEscPos(encodeEscPos(cancelled, { profile: 'epson-tm-t20', paperWidth: 58 }));
    const mark = t.lines.find((l) => l.text.trim() === 'CANCELADA');
    expect(mark).toMatchObject({ large: true, bold: true });
    expect(mark!.columns).toBeLessThanOrEqual(32);
    expect(mark!.columns).toBeGreaterThan(18); // 9 characters × 2, plus centring
    expect(t.commands).toContainEqual({ op: 'size', width: 2, height: 2 });
  });

  it('wraps the long description and keeps its words in order', () => {
    const t = decodeEscPos(encodeEscPos(cash, { profile: 'epson-tm-t20', paperWidth: 58 }));
    expect(text(t).replace(/\s+/g, ' ')).toContain(
      '003 1003 Arroz branco tipo 1 5kg pacote econômico com descrição bem comprida pacote econômico com descrição bem comprida',
    );
  });
});

describe('encodeEscPos: Portuguese text through the printer code page', () => {
  let model: DanfeModel;
  beforeAll(() => {
    model = danfeModel(authorized(issue()));
  });

  for (const profile of ['epson-tm-t20', 'elgin-i9'] as const) {
    it(`${profile}: ESC t 3 before any text, "ÇÃÚ" as CP860 bytes 80 8E 96`, () => {
      const bytes = encodeEscPos(model, { profile, paperWidth: 80 });
      const t = decodeEscPos(bytes);
      const cp = t.commands.findIndex((c) => c.op === 'codepage');
      expect(t.commands[cp]).toEqual({ op: 'codepage', n: 3, table: 'cp860' });
      expect(t.commands.findIndex((c) => c.op === 'text')).toBeGreaterThan(cp);
      expect(t.commands.filter((c) => c.op === 'codepage')).toHaveLength(1);
      expect(containsBytes(bytes, [0x80, 0x8e, 0x96])).toBe(true);
      expect(text(t)).toContain('Doce ÇÃÚ de leite');
      expect(text(t)).toContain('MERCADO BALCÃO DEMONSTRAÇÃO LTDA');
      expect(text(t)).toContain('EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO -');
      expect(text(t)).toContain('Protocolo de Autorização: 135260000012345');
      expect(text(t)).not.toContain('?');
    });
  }

  it('Bematech MP-4200 TH in ESC/POS mode: PC860 as ESC t 3 too', () => {
    const bytes = encodeEscPos(model, { profile: 'bematech-mp4200-escpos', paperWidth: 80 });
    expect(decodeEscPos(bytes).commands).toContainEqual({ op: 'codepage', n: 3, table: 'cp860' });
    expect(containsBytes(bytes, [0x80, 0x8e, 0x96])).toBe(true);
  });

  it('WPC1252 when asked for: ESC t 16 and the Windows-1252 bytes C7 C3 DA', () => {
    const bytes = encodeEscPos(model, { profile: 'elgin-i9', paperWidth: 80, codePage: 'wpc1252' });
    const t = decodeEscPos(bytes);
    expect(t.commands).toContainEqual({ op: 'codepage', n: 16, table: 'wpc1252' });
    expect(containsBytes(bytes, [0xc7, 0xc3, 0xda])).toBe(true);
    expect(text(t)).toContain('Doce ÇÃÚ de leite');
  });

  it('refuses a code page the printer does not have', () => {
    expect(() => encodeEscPos(model, { profile: 'bematech-mp4200-escpos', paperWidth: 80, codePage: 'wpc1252' })).toThrow(FieldError);
  });

  it('generic ESC/POS transliterates: no code page command, ASCII only, same layout width', () => {
    const bytes = encodeEscPos(model, { profile: 'generic-escpos', paperWidth: 58 });
    const t = decodeEscPos(bytes);
    expect(t.commands.filter((c) => c.op === 'codepage')).toEqual([]);
    expect(t.commands.filter((c) => c.op === 'text').every((c) => c.op === 'text' && c.bytes.every((b) => b < 0x80))).toBe(true);
    expect(text(t)).toContain('Doce CAU de leite');
    expect(text(t)).toContain('MERCADO BALCAO DEMONSTRACAO LTDA');
    expect(text(t)).toContain('NFC-e no 000000123');
    expect(t.lines.every((l) => l.columns <= 32)).toBe(true);
  });

  it('our fast code page conversion gives exactly the library’s bytes', () => {
    const sample = 'Ação, pão, maçã, açúcar, feijão, Ônibus, À vista, É, Í, Ó, Ú, Ü, ñ, ª, º, ç, Ç, õ, Õ, â, ê, ô';
    for (const [ours, lib] of [
      ['cp860', 'cp860'],
      ['wpc1252', 'windows1252'],
    ] as const) {
      const enc = new ReceiptPrinterEncoder({ columns: 48, language: 'esc-pos', newline: '\n' });
      const theirs = enc.codepage(lib).text(sample.replaceAll(' ', '_')).encode();
      // ESC t n, the text (48 columns: it wraps), LF…
      const textBytes = [...theirs.subarray(3)].filter((b) => b !== 0x0a);
      expect([...encodeLineText(sample.replaceAll(' ', '_'), ours)]).toEqual(textBytes);
    }
  });

  it('a character missing from CP860 falls back to its ASCII form, not to "?"', () => {
    expect(Buffer.from(encodeLineText('Hänsel – 5€', 'cp860')).toString('latin1')).toBe('Hansel - 5EUR');
    expect(transliterate('Informações nº 1 – “ok”')).toBe('Informacoes no 1 - "ok"');
  });
});

describe('encodeEscPos: QR Code', () => {
  let nfe: IssuedNfce;
  let model: DanfeModel;
  beforeAll(() => {
    nfe = issue();
    model = danfeModel(authorized(nfe));
  });

  for (const profile of ['epson-tm-t20', 'elgin-i9'] as const) {
    for (const paperWidth of WIDTHS) {
      it(`${profile} ${paperWidth} mm: native GS ( k with the XML's qrCode, model 2, at least 25 mm`, () => {
        const t = decodeEscPos(encodeEscPos(model, { profile, paperWidth }));
        expect(t.qrCodes).toHaveLength(1);
        const qr = t.qrCodes[0]!;
        expect(qr).toMatchObject({ payload: nfe.qrCode, model: 2, ecc: 'M', printed: true });
        // The printer picks its own segmentation, so check against the smallest symbol possible.
        const smallest = 17 + 4 * qrVersionBounds(qr.payload).min;
        expect(qr.size! * smallest).toBeGreaterThanOrEqual(200); // 25 mm at 203 dpi = 199.8 dots
        expect(qr.size! * (17 + 4 * qrVersionBounds(qr.payload).max + 8)).toBeLessThanOrEqual(paperWidth === 80 ? 576 : 384);
        expect(t.images).toEqual([]);
      });
    }
  }

  for (const profile of ['bematech-mp4200-escpos', 'generic-escpos'] as const) {
    for (const paperWidth of WIDTHS) {
      it(`${profile} ${paperWidth} mm: raster fallback that a QR reader decodes to the XML's qrCode`, () => {
        const t = decodeEscPos(encodeEscPos(model, { profile, paperWidth }));
        expect(t.qrCodes).toEqual([]);
        expect(t.commands.some((c) => c.op === 'raster')).toBe(true);
        expect(t.images).toHaveLength(1);
        const img = t.images[0]!;
        expect(img.width).toBeLessThanOrEqual(paperWidth === 80 ? 576 : 384);
        expect(darkWidth(img)).toBeGreaterThanOrEqual(200);
        const rgba = imageToRgba(img);
        expect(readQr(rgba)?.data).toBe(nfe.qrCode);
      });
    }
  }

  it('the 461-character offline v3 QR still fits 58 mm at 25 mm and decodes from the raster', () => {
    const long = danfeModel(readFileSync(fixturePath('nfce_tpEmis9_qrV3_offline_signed_testcert.xml'), 'utf8'));
    expect(long.qrCode).toHaveLength(461);
    const native = decodeEscPos(encodeEscPos(long, { profile: 'epson-tm-t20', paperWidth: 58 }));
    expect(native.qrCodes.every((q) => q.payload === long.qrCode)).toBe(true);
    expect(native.qrCodes[0]!.size! * (17 + 4 * qrVersionBounds(long.qrCode).min)).toBeGreaterThanOrEqual(200);
    const raster = decodeEscPos(encodeEscPos(long, { profile: 'bematech-mp4200-escpos', paperWidth: 58, copies: 1 }));
    const img = raster.images[0]!;
    expect(img.width).toBeLessThanOrEqual(384);
    const rgba = imageToRgba(img);
    expect(readQr(rgba)?.data).toBe(long.qrCode);
  });

  it('the version bounds hold the QR library’s own choice for URL-like payloads', () => {
    const payload = fc
      .tuple(
        fc.constantFrom('https://www.nfce.fazenda.sp.gov.br/qrcode?p=', 'http://hnfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx?p='),
        fc.stringMatching(ACCESS_KEY),
        fc.stringMatching(/^[|0-9A-Za-z+/=.]{3,400}$/),
      )
      .map(([url, key, rest]) => `${url}${key}|${rest}`);
    fc.assert(
      fc.property(payload, (p) => {
        const { min, max } = qrVersionBounds(p);
        const chosen = QRCode.create(p, { errorCorrectionLevel: 'M' }).version;
        expect(min).toBeLessThanOrEqual(chosen);
        expect(chosen).toBeLessThanOrEqual(max);
        expect(QRCode.create([{ data: Buffer.from(p, 'latin1'), mode: 'byte' }], { errorCorrectionLevel: 'M' }).version).toBe(max);
      }),
      { numRuns: 40 },
    );
  });
});

describe('encodeEscPos: drawer, copies and contingency', () => {
  it('cash: one drawer pulse, after the text and before the final cut', () => {
    const t = decodeEscPos(encodeEscPos(danfeModel(issue().xml), { profile: 'epson-tm-t20', paperWidth: 80 }));
    const pulses = t.commands.flatMap((c, i) => (c.op === 'pulse' ? [{ c, i }] : []));
    expect(pulses).toHaveLength(1);
    expect(pulses[0]!.c).toEqual({ op: 'pulse', pin: 0, onMs: 100, offMs: 500 });
    expect(pulses[0]!.i).toBeGreaterThan(t.commands.findLastIndex((c) => c.op === 'text'));
    expect(pulses[0]!.i).toBeLessThan(t.commands.length - 1);
  });

  it('no cash (card, PIX): no drawer pulse on any profile', () => {
    const model = danfeModel(issue((r) => (r.pag = [{ tPag: '17', vPag: '110.83', card: { tpIntegra: '2' } }])).xml);
    expect(model.isCash).toBe(false);
    for (const profile of PROFILES) {
      expect(decodeEscPos(encodeEscPos(model, { profile, paperWidth: 80 })).commands.some((c) => c.op === 'pulse')).toBe(false);
    }
  });

  it('contingency: two copies in one job, each with its label, no protocol line, one pulse', () => {
    const nfe = issue(() => {}, 9);
    const t = decodeEscPos(encodeEscPos(danfeModel(nfe.xml), { profile: 'epson-tm-t20', paperWidth: 80 }));
    const copies = copiesOf(t);
    expect(copies).toHaveLength(2);
    expect(t.commands.filter((c) => c.op === 'cut')).toHaveLength(2);
    expect(copies[0]).toContain('Via Consumidor');
    expect(copies[0]).not.toContain('Via Estabelecimento');
    expect(copies[1]).toContain('Via Estabelecimento');
    expect(copies[1]).not.toContain('Via Consumidor');
    for (const c of copies) {
      expect(c).toContain('EMITIDA EM CONTINGÊNCIA');
      expect(c).toContain('Pendente de autorização');
      expect(c).not.toContain('Protocolo de Autorização');
    }
    expect(t.qrCodes.map((q) => q.payload)).toEqual([nfe.qrCode, nfe.qrCode]);
    expect(t.commands.filter((c) => c.op === 'pulse')).toHaveLength(1);
  });

  it('copies: the whole receipt repeated, each cut', () => {
    const t = decodeEscPos(encodeEscPos(danfeModel(authorized(issue())), { profile: 'elgin-i9', paperWidth: 80, copies: 2 }));
    const copies = copiesOf(t);
    expect(copies).toHaveLength(2);
    // Same content; only the last copy carries the drawer pulse (and its line feed).
    expect(copies[1]!.trim()).toBe(copies[0]!.trim());
    expect(copies[0]).toContain('Protocolo de Autorização: 135260000012345');
    expect(() => encodeEscPos(danfeModel(issue().xml), { profile: 'elgin-i9', paperWidth: 80, copies: 0 })).toThrow(FieldError);
  });

  it('rejects an unknown profile and paper width with operator-readable messages', () => {
    const model = danfeModel(issue().xml);
    expect(() => encodeEscPos(model, { profile: 'daruma' as PrinterProfileId, paperWidth: 80 })).toThrow(/perfil de impressora desconhecido/);
    expect(() => encodeEscPos(model, { profile: 'epson-tm-t20', paperWidth: 76 as PaperWidth })).toThrow(/80 ou 58 mm/);
  });
});

describe('layoutDanfe', () => {
  it('lays two-column lines out with the value flush right, and centres the key in balanced lines', () => {
    const model = danfeModel(authorized(issue()));
    const rows = layoutDanfe(model, 48).flatMap((r) => (r.kind === 'text' ? [r.text] : []));
    expect(rows).toContain('Valor a Pagar R$                          110,83');
    expect(rows).toContain('Dinheiro                                  120,00');
    const keyRows = rows.filter((r) => /^\s*([0-9]{4} ){4}[0-9]{4}/.test(r));
    expect(keyRows.map((r) => r.trim().split(' ').length)).toEqual([6, 5]);
    expect(keyRows.join(' ').replace(/\s+/g, ' ').trim()).toBe(model.keyFormatted);
  });
});
