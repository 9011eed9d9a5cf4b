// DANFE NFC-e: what the terminal does at every sale (XML → model → ESC/POS bytes), for a long
// 100-item receipt, plus the PDF the service renders and the screen preview, as information.

import { generateTestCertificate } from '../fiscal/certificate.ts';
import { encodeEscPos } from '../fiscal/danfe/escpos.ts';
import { danfeModel } from '../fiscal/danfe/model.ts';
import { renderDanfePdf } from '../fiscal/danfe/pdf.ts';
import { renderDanfePng } from '../fiscal/danfe/preview.ts';
import { issueNfce } from '../fiscal/nfce/build.ts';
import { nfeProtocolFor, wrapNfeProc } from '../fiscal/protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { percentile, timeEach, type BenchFigure, type BenchSuite } from './types.ts';

export const suite: BenchSuite = {
  name: 'danfe',
  async run(): Promise<BenchFigure[]> {
    const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'BENCH' }).certificate;
    const emitter = demoEmitter();
    const authorized = (items: number): string => {
      const nfe = issueNfce(sampleNfceRequest({ nNF: items, items }), { emitter, dhEmi: new Date(), tpEmis: 1, credentials });
      return wrapNfeProc(
        nfe.xml,
        nfeProtocolFor(nfe.xml, { cStat: 100, xMotivo: 'Autorizado o uso da NF-e', verAplic: 'BENCH', dhRecbto: new Date(), nProt: '135260000012345' }),
      );
    };
    const xml100 = authorized(100);
    const xml10 = authorized(10);
    const xml3 = authorized(3);

    const escpos = (profile: 'epson-tm-t20' | 'bematech-mp4200-escpos') => () => encodeEscPos(danfeModel(xml100), { profile, paperWidth: 80 });
    // Warm-up: JIT, the code page table and lazily loaded modules must not count.
    for (let i = 0; i < 50; i++) escpos('epson-tm-t20')();
    for (let i = 0; i < 10; i++) escpos('bematech-mp4200-escpos')();
    const native = await timeEach(300, escpos('epson-tm-t20'));
    const raster = await timeEach(100, escpos('bematech-mp4200-escpos'));
    const bytes = escpos('epson-tm-t20')().length;

    for (let i = 0; i < 3; i++) await renderDanfePdf(danfeModel(xml10));
    const pdf = await timeEach(20, () => renderDanfePdf(danfeModel(xml10)));
    for (let i = 0; i < 3; i++) renderDanfePng(danfeModel(xml3));
    const png = await timeEach(20, () => renderDanfePng(danfeModel(xml3)));

    return [
      { name: 'model + ESC/POS 100 items (native QR) median', value: percentile(native, 50), unit: 'ms', target: { kind: 'max', value: 5 } },
      { name: 'model + ESC/POS 100 items (native QR) p99', value: percentile(native, 99), unit: 'ms' },
      { name: 'model + ESC/POS 100 items (raster QR) median', value: percentile(raster, 50), unit: 'ms' },
      { name: 'ESC/POS job size, 100 items', value: bytes / 1024, unit: 'KiB' },
      { name: 'PDF 10 items median', value: percentile(pdf, 50), unit: 'ms' },
      { name: 'PNG preview 3 items median', value: percentile(png, 50), unit: 'ms' },
    ];
  },
};
