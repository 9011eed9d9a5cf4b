import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAYMENT_METHODS } from '../../base/common/payment-methods.ts';
import { assertCnpj } from '../br/documents.ts';
import { IssueCollector } from '../errors.ts';
import {
  alphanumericCnpjAccepted,
  cardGroupRequired,
  inForce,
  lawDate,
  paymentMethodInForce,
  paymentMethodOutOfForce,
  publishedRates,
  refuseCnpjsNotYetInForce,
} from './in-force.ts';
import { withLawTable } from './markdown.ts';
import { LAW_TABLE } from './table.ts';

const DAY = /^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

describe('the law table', () => {
  it('is sound: real days, a period never ending before it starts, a source for every row', () => {
    for (const row of LAW_TABLE) {
      for (const d of [row.from, row.until].filter((x) => x !== undefined)) expect(DAY.test(d!), `${row.rule}: ${d}`).toBe(true);
      if (row.from && row.until) expect(row.from <= row.until, row.rule).toBe(true);
      expect(row.source.length, row.rule).toBeGreaterThan(5);
    }
    const rates = LAW_TABLE.filter((r) => r.rule === 'ibscbs-aliquotas');
    for (let i = 1; i < rates.length; i++) expect(rates[i - 1]!.until! < rates[i]!.from!).toBe(true);
    expect(new Set(PAYMENT_METHODS.map((m) => m.tPag)).size).toBe(PAYMENT_METHODS.length);
  });

  it('is what docs/fiscal.md lists (npm run docs:law writes it)', () => {
    const doc = readFileSync(new URL('../../docs/fiscal.md', import.meta.url), 'utf8');
    expect(withLawTable(doc)).toBe(doc);
  });

  it('answers by the day of dhEmi, and by environment where the rule has one', () => {
    expect(lawDate('2026-05-04T00:30:00-03:00')).toBe('2026-05-04');
    expect(() => lawDate('04/05/2026')).toThrow(/dhEmi: data inválida/);
    expect(alphanumericCnpjAccepted('2026-06-20', 'homologacao')).toBe(true);
    expect(alphanumericCnpjAccepted('2026-06-20', 'producao')).toBe(false);
    // A question that names no environment meets no row restricted to one.
    expect(inForce('cnpj-alfanumerico', { date: '2026-11-27' })).toBe(false);
    expect(publishedRates('2026-06-01')).toMatchObject({ pIBSUF: '0.10', pCBS: '0.90', from: '2026-01-01', until: '2026-12-31' });
    expect(publishedRates('2029-01-01')).toBeUndefined();
  });

  it('refuses each CNPJ with letters a document recorded, on its field, before its environment’s day; numeric ones never', () => {
    const refused = (dhEmi: string, environment: 'homologacao' | 'producao') => {
      const issues = new IssueCollector();
      assertCnpj('12ABC34501DE35', 'emit.CNPJ', issues);
      assertCnpj('11222333000181', 'dest.cnpj', issues);
      refuseCnpjsNotYetInForce(issues, dhEmi, environment);
      return issues.issues;
    };
    expect(refused('2026-06-30T23:59:59-03:00', 'producao')).toEqual([
      { field: 'emit.CNPJ', message: 'CNPJ alfanumérico só é aceito em produção a partir de 01/07/2026, não em 30/06/2026 — NT 2026.004 v1.01 (PL_010d)' },
    ]);
    expect(refused('2026-07-01T00:00:00-03:00', 'producao')).toEqual([]);
    expect(refused('2026-06-14T10:00:00-03:00', 'homologacao').map((i) => i.message)).toEqual([
      'CNPJ alfanumérico só é aceito em homologação a partir de 15/06/2026, não em 14/06/2026 — NT 2026.004 v1.01 (PL_010d)',
    ]);
    expect(refused('2026-06-15T10:00:00-03:00', 'homologacao')).toEqual([]);
  });

  it('payment codes: unknown codes are never in force; undated ones always; the card rule of 03/04 has no date, PIX’s has one', () => {
    expect(paymentMethodInForce('77', '2026-11-27')).toBe(false);
    expect(paymentMethodOutOfForce('77', '2026-11-27')).toBe('meio de pagamento 77 inexistente');
    expect(paymentMethodInForce('01', '2001-01-01')).toBe(true);
    expect(paymentMethodOutOfForce('23', '2026-05-03')).toBe(
      'meio de pagamento 23 (PIX Automático) só vale a partir de 04/05/2026, não em 03/05/2026 (Informe Técnico 2024.002 v1.11)',
    );
    expect([cardGroupRequired('03', '2001-01-01'), cardGroupRequired('17', '2025-08-31'), cardGroupRequired('17', '2025-09-01')]).toEqual([true, false, true]);
    expect(cardGroupRequired('20', '2026-11-27')).toBe(false);
  });
});
