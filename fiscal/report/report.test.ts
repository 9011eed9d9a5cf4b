import { PDFParse } from 'pdf-parse';
import { describe, expect, it } from 'vitest';
import { decodeEscPos } from '../../test/escpos-decoder.ts';
import { PNG } from 'pngjs';
import { renderReportPdf } from './pdf.ts';
import { renderReportPng, renderReportSvg } from './preview.ts';
import { encodeReportEscPos, layoutReport, reportTexts, type ReportDocument } from './report.ts';

const doc: ReportDocument = {
  title: 'FECHAMENTO DE CAIXA',
  lines: [
    { kind: 'text', text: 'Caixa nº 3 — Operação', align: 'center' }, // the dash is not in CP860: printed as '-'
    { kind: 'rule' },
    { kind: 'pair', label: 'Esperado', value: 'R$ 185,00' },
    { kind: 'pair', label: 'Contado', value: 'R$ 184,00' },
    { kind: 'pair', label: 'Diferença', value: '-R$ 1,00', bold: true },
    { kind: 'text', text: 'Uma observação longa que não cabe numa linha de quarenta e oito colunas e precisa quebrar' },
    { kind: 'signature', label: 'Operador(a)' },
  ],
};

describe('a printed report', () => {
  it('lays every row within the paper, value on the right', () => {
    for (const columns of [48, 32]) {
      const rows = layoutReport(doc, columns);
      for (const r of rows) expect(r.text.length * (r.large ? 2 : 1), r.text).toBeLessThanOrEqual(columns);
      expect(rows.find((r) => r.text.startsWith('Diferença'))!.text).toMatch(/-R\$ 1,00$/);
      expect(rows.find((r) => r.text.startsWith('Diferença'))!.bold).toBe(true);
    }
  });

  it('prints as ESC/POS the decoder reads back: accents in the code page, bold, cut, no drawer', () => {
    const bytes = encodeReportEscPos(doc, { profile: 'epson-tm-t20', paperWidth: 80 });
    const t = decodeEscPos(bytes);
    const texts = t.lines.map((l) => l.text.trimEnd());
    expect(texts).toEqual(expect.arrayContaining(['Diferença' + ' '.repeat(48 - 'Diferença'.length - '-R$ 1,00'.length) + '-R$ 1,00']));
    expect(t.lines.find((l) => l.text.includes('FECHAMENTO'))).toMatchObject({ bold: true, large: true });
    expect(t.commands.at(-1)).toMatchObject({ op: 'cut' });
    expect(t.commands.some((c) => c.op === 'pulse')).toBe(false);
    expect(t.commands.some((c) => c.op === 'unknown')).toBe(false);
    // The printed rows are the screen's rows (what CP860 lacks spelled in ASCII), then the feed to the cutter.
    const printed = texts.slice(0, reportTexts(doc).length);
    expect(printed).toEqual(reportTexts(doc).map((l) => l.replace('—', '-').trimEnd()));
    expect(texts.slice(printed.length).every((l) => l === '')).toBe(true);
  });

  it('transliterates on a generic printer', () => {
    const t = decodeEscPos(encodeReportEscPos(doc, { profile: 'generic-escpos', paperWidth: 58 }));
    expect(t.lines.some((l) => l.text.startsWith('Diferenca'))).toBe(true);
  });

  it('renders a PDF with the same text', async () => {
    const pdf = await renderReportPdf(doc);
    const text = (await new PDFParse({ data: pdf }).getText()).text;
    expect(text).toContain('FECHAMENTO DE CAIXA');
    expect(text).toMatch(/Diferença\s+-R\$ 1,00/);
  });

  it('draws a picture of the paper (the virtual printer keeps it beside the job): the same rows, as wide as the paper', () => {
    const svg = renderReportSvg(doc);
    const rows = layoutReport(doc, 48);
    // Each row's words, in order; a row of spaces draws nothing.
    const drawn = [...svg.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
    expect(drawn.join(' ')).toBe(rows.flatMap((r) => r.text.trim().split(/ {2,}/).filter(Boolean)).join(' '));
    expect(svg).toContain('<title>FECHAMENTO DE CAIXA</title>');
    const wide = PNG.sync.read(renderReportPng(doc));
    const narrow = PNG.sync.read(renderReportPng(doc, { paperWidth: 58 }));
    expect(wide.width).toBe(48 * 12 + 48);
    expect(narrow.width).toBeLessThan(wide.width);
    expect(narrow.height).toBeGreaterThan(wide.height); // the long line wraps more
  });
});
