import { PDFParse } from 'pdf-parse';
import { PNG } from 'pngjs';
import { readQr } from '../../test/escpos-decoder.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../certificate.ts';
import { issueNfce, type IssuedNfce } from '../nfce/build.ts';
import type { NfceRequest } from '../nfce/types.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import type { SigningCredentials } from '../signature.ts';
import { danfeModel } from './model.ts';
import { PDF_WIDTH, renderDanfePdf } from './pdf.ts';

let credentials: SigningCredentials;
const parsers: PDFParse[] = [];
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DANFE TESTE' }).certificate;
});
afterAll(async () => {
  await Promise.all(parsers.map((p) => p.destroy()));
});

function issue(edit: (r: NfceRequest) => void = () => {}, tpEmis: 1 | 9 = 1, items = 3): IssuedNfce {
  const req = sampleNfceRequest({ nNF: 123, items });
  req.dest = { cpf: '52998224725' };
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

const open = (pdf: Buffer): PDFParse => {
  const p = new PDFParse({ data: new Uint8Array(pdf) });
  parsers.push(p);
  return p;
};

describe('renderDanfePdf', () => {
  let nfe: IssuedNfce;
  let pdf: Buffer;
  beforeAll(async () => {
    nfe = issue();
    pdf = await renderDanfePdf(danfeModel(authorized(nfe)));
  });

  it('is one page 80 mm wide, as tall as the receipt', async () => {
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const info = await open(pdf).getInfo({ parsePageInfo: true });
    expect(info.total).toBe(1);
    const page = info.pages[0]!;
    expect(page.width).toBeCloseTo(PDF_WIDTH, 2);
    expect(page.width).toBeCloseTo((80 / 25.4) * 72, 2);
    expect(page.height).toBeGreaterThan(300);
    expect(page.height).toBeLessThan(900);
  });

  it('embeds the DejaVu fonts, so accents render anywhere', () => {
    const raw = pdf.toString('latin1');
    expect(raw).toContain('/FontFile2');
    expect(raw).toMatch(/DejaVuSansCondensed/);
  });

  it('carries the key groups, the consumer line and the protocol as text', async () => {
    const { text } = await open(pdf).getText();
    const oneLine = text.replace(/\s+/g, ' ');
    for (const group of danfeModel(nfe.xml).keyFormatted.split(' ')) expect(text).toContain(group);
    expect(oneLine).toContain(danfeModel(nfe.xml).keyFormatted);
    expect(text).toContain('CONSUMIDOR - CPF 529.982.247-25');
    expect(text).toContain('Protocolo de Autorização: 135260000012345');
    expect(text).toContain('Data de Autorização: 10/03/2026 14:03:07');
    expect(text).toContain('MERCADO BALCÃO DEMONSTRAÇÃO LTDA');
    expect(oneLine).toContain('DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica');
    expect(text).toContain('NFC-e nº 000000123 Série 001 10/03/2026 14:03:05');
    expect(oneLine).toContain('Tributos Totais Incidentes (Lei Federal 12.741/2012): R$');
  });

  it('draws a QR Code that a reader decodes to the XML’s qrCode, at least 25 mm wide', async () => {
    // Twice 203 dpi, the grid the QR modules are drawn on: each module is whole pixels.
    const scale = (2 * 203) / 72;
    const shot = await open(pdf).getScreenshot({ scale, imageBuffer: true });
    const png = PNG.sync.read(Buffer.from(shot.pages[0]!.data));
    const qr = readQr(png);
    expect(qr?.data).toBe(nfe.qrCode);
    // Finder-pattern centres are 3.5 modules in from each edge: side = span × n / (n − 7).
    const n = 17 + 4 * qr!.version;
    const span = qr!.location.topRightFinderPattern.x - qr!.location.topLeftFinderPattern.x;
    const sideMm = ((span * n) / (n - 7) / scale) * (25.4 / 72);
    expect(sideMm).toBeGreaterThanOrEqual(25);
  });
});

describe('renderDanfePdf: copies and long receipts', () => {
  it('contingency: one page per copy with its label, no protocol', async () => {
    const pdf = await renderDanfePdf(danfeModel(issue(() => {}, 9).xml));
    const { pages } = await open(pdf).getText();
    expect(pages).toHaveLength(2);
    expect(pages[0]!.text).toContain('Via Consumidor');
    expect(pages[1]!.text).toContain('Via Estabelecimento');
    for (const p of pages) {
      expect(p.text).toContain('EMITIDA EM CONTINGÊNCIA');
      expect(p.text).toContain('Pendente de autorização');
      expect(p.text).not.toContain('Protocolo de Autorização');
    }
  });

  it('a receipt taller than a viewer accepts (990 items) continues on pages of at most 200 inches', async () => {
    const pdf = await renderDanfePdf(danfeModel(issue(() => {}, 1, 990).xml));
    const parser = open(pdf);
    const info = await parser.getInfo({ parsePageInfo: true });
    expect(info.total).toBeGreaterThan(1);
    for (const p of info.pages) {
      expect(p.width).toBeCloseTo(PDF_WIDTH, 2);
      expect(p.height).toBeLessThanOrEqual(14_400);
    }
    const { text } = await parser.getText();
    expect(text).toContain('990 1010');
    expect(text).toContain('Qtde. total de itens 990');
  });
});
