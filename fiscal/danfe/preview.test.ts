import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PNG } from 'pngjs';
import { readQr } from '../../test/escpos-decoder.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../certificate.ts';
import { issueNfce, type IssuedNfce } from '../nfce/build.ts';
import { nfeProtocolFor, wrapNfeProc } from '../protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../samples.ts';
import type { SigningCredentials } from '../signature.ts';
import { danfeModel, type DanfeModel } from './model.ts';
import { renderDanfePng, renderDanfeSvg } from './preview.ts';

const outputDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-output');

let credentials: SigningCredentials;
beforeAll(() => {
  credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DANFE TESTE' }).certificate;
});

function issue(tpEmis: 1 | 9 = 1): IssuedNfce {
  const req = sampleNfceRequest({ nNF: 123, items: 3 });
  req.dest = { cpf: '52998224725' };
  req.pag = [{ tPag: '01', vPag: '120.00' }];
  return issueNfce(req, {
    emitter: demoEmitter(),
    dhEmi: '2026-03-10T14:03:05-03:00',
    tpEmis,
    credentials,
    ...(tpEmis === 9 ? { contingency: { dhCont: '2026-03-10T14:00:00-03:00', xJust: 'Sem conexão com a SEFAZ no momento' } } : {}),
  });
}

function decodePng(png: Buffer): { qr: ReturnType<typeof readQr>; width: number; height: number } {
  const img = PNG.sync.read(png);
  return { qr: readQr(img), width: img.width, height: img.height };
}

describe('renderDanfePng: a 3-item sale', () => {
  let nfe: IssuedNfce;
  let model: DanfeModel;
  let png: Buffer;
  beforeAll(() => {
    nfe = issue();
    model = danfeModel(
      wrapNfeProc(
        nfe.xml,
        nfeProtocolFor(nfe.xml, {
          cStat: 100,
          xMotivo: 'Autorizado o uso da NF-e',
          verAplic: 'SP',
          dhRecbto: '2026-03-10T14:03:07-03:00',
          nProt: '135260000012345',
        }),
      ),
    );
    png = renderDanfePng(model);
    // For a person to look at: test-output/danfe-preview.png.
    mkdirSync(outputDir, { recursive: true });
    writeFileSync(join(outputDir, 'danfe-preview.png'), png);
  });

  it('is a PNG one pixel per printer dot wide (48 columns × 12 dots + margins)', () => {
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const { width, height } = decodePng(png);
    expect(width).toBe(48 * 12 + 48);
    expect(height).toBeGreaterThan(1200);
  });

  it('has a QR Code that a QR reader decodes to the XML’s qrCode, at least 25 mm at 203 dpi', () => {
    const { qr } = decodePng(png);
    expect(qr?.data).toBe(nfe.qrCode);
    const n = 17 + 4 * qr!.version;
    const span = qr!.location.topRightFinderPattern.x - qr!.location.topLeftFinderPattern.x;
    const sideDots = (span * n) / (n - 7);
    expect((sideDots / 203) * 25.4).toBeGreaterThanOrEqual(25);
  });

  it('scales, and draws 58 mm receipts narrower', () => {
    const double = decodePng(renderDanfePng(model, { scale: 2 }));
    expect(double.width).toBe((48 * 12 + 48) * 2);
    expect(double.qr?.data).toBe(nfe.qrCode);
    const narrow = decodePng(renderDanfePng(model, { paperWidth: 58 }));
    expect(narrow.width).toBe(32 * 12 + 48);
    expect(narrow.qr?.data).toBe(nfe.qrCode);
  });
});

describe('renderDanfeSvg', () => {
  it('draws the receipt’s texts (escaped) in DejaVu Sans Mono, with no external references', () => {
    const model = danfeModel(issue().xml);
    const svg = renderDanfeSvg(model);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('font-family="DejaVu Sans Mono"');
    expect(svg).toContain('>MERCADO BALCÃO DEMONSTRAÇÃO LTDA</text>');
    expect(svg).toContain('>CONSUMIDOR - CPF 529.982.247-25</text>');
    expect(svg).toContain('>EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO -</text>');
    // Two-column lines keep the value flush right: "110,83" starts at column 42.
    expect(svg).toMatch(/<text x="528" y="\d+" font-size="20" font-weight="bold">110,83<\/text>/);
    expect(svg).not.toMatch(/href|<image|url\(/);
  });

  it('shows the copy label of a contingency receipt (the consumer’s by default)', () => {
    const model = danfeModel(issue(9).xml);
    expect(renderDanfeSvg(model)).toContain('>Via Consumidor</text>');
    expect(renderDanfeSvg(model, { copy: 'estabelecimento' })).toContain('>Via Estabelecimento</text>');
    expect(renderDanfeSvg(model)).toContain('>EMITIDA EM CONTINGÊNCIA</text>');
  });
});
