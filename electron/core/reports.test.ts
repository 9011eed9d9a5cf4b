import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { SalesReport } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import { reportPeriod, salesReportCsv } from './reports.ts';

describe('reportPeriod', () => {
  it('is the Brasília days asked for, both included', () => {
    expect(reportPeriod({ de: '2026-11-01', ate: '2026-11-30' })).toMatchObject({
      start: new Date('2026-11-01T03:00:00Z'),
      end: new Date('2026-12-01T03:00:00Z'),
    });
  });

  it('names the field at fault', () => {
    const field = (input: object) => {
      try {
        reportPeriod(input);
      } catch (err) {
        expect(err).toBeInstanceOf(TerminalError);
        return (err as TerminalError).field;
      }
      throw new Error('aceito');
    };
    expect(field({ de: '2026-02-30', ate: '2026-03-01' })).toBe('de');
    expect(field({ de: '2026-03-01' })).toBe('ate');
    expect(field({ de: '2026-03-02', ate: '2026-03-01' })).toBe('de');
    expect(field({ de: '2024-01-01', ate: '2026-03-01' })).toBe('ate');
  });
});

describe('salesReportCsv', () => {
  it('writes every figure for a spreadsheet: ";" and decimal comma, with a BOM; each cancellation with its kind', () => {
    const report: SalesReport = {
      de: '2026-11-22',
      ate: '2026-11-22',
      generatedAt: '2026-11-22T20:00:00.000Z',
      totals: { count: 2, totalCents: 123_456, changeCents: 471 },
      byPayment: [{ tPag: '01', description: 'Dinheiro', count: 2, amountCents: 123_927 }],
      byHour: Array.from({ length: 24 }, (_, hour) => ({ hour, count: hour === 9 ? 2 : 0, totalCents: hour === 9 ? 123_456 : 0 })),
      byProduct: [{ code: '1006', description: 'Queijo; minas', unit: 'KG', quantity: '0.35', totalCents: 123_456 }],
      cancelled: [
        { receiptId: 'r', serie: 1, nNF: 3, chave: '3526…3', totalCents: 1890, issuedAt: '2026-11-22T09:10:00-03:00', kind: 'cancelamento', substitute: null },
        {
          receiptId: 's',
          serie: 1,
          nNF: 4,
          chave: '3526…4',
          totalCents: 529,
          issuedAt: '2026-11-22T09:20:00-03:00',
          kind: 'substituicao',
          substitute: { serie: 1, nNF: 5 },
        },
      ],
      contingency: [],
      unauthorized: [],
    };
    const { fileName, csv } = salesReportCsv(report);
    expect(fileName).toBe('vendas-2026-11-22.csv');
    expect(csv.startsWith('\uFEFF')).toBe(true);
    const rows = parse(csv.slice(1), { delimiter: ';', columns: true }) as Record<string, string>[];
    expect(rows).toEqual([
      { secao: 'total', item: 'vendas', descricao: 'NFC-e do período', quantidade: '2', valor: '1234,56' },
      { secao: 'total', item: 'troco', descricao: 'Troco dado', quantidade: '', valor: '4,71' },
      { secao: 'pagamento', item: '01', descricao: 'Dinheiro', quantidade: '2', valor: '1239,27' },
      { secao: 'hora', item: '09', descricao: '09h', quantidade: '2', valor: '1234,56' },
      { secao: 'produto', item: '1006', descricao: 'Queijo; minas (KG)', quantidade: '0,35', valor: '1234,56' },
      { secao: 'cancelada', item: '1-3', descricao: '3526…3', quantidade: '', valor: '18,90' },
      { secao: 'cancelada_substituicao', item: '1-4', descricao: '3526…4', quantidade: '', valor: '5,29' },
    ]);
  });
});
