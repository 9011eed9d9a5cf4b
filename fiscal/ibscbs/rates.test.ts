import { describe, expect, it } from 'vitest';
import { FieldError, IssueCollector } from '../errors.ts';
import { checkRateOverrides, formatRate, parseRate, ratesAt } from './rates.ts';
import { assertIbsCbsSettings, reformApplies } from './settings.ts';

describe('rates by date', () => {
  it('2026: the published test-year rates, outside the price', () => {
    expect(ratesAt('2026-01-01')).toEqual({
      date: '2026-01-01',
      pIBSUF: 1000n,
      pIBSMun: 0n,
      pCBS: 9000n,
      inPrice: false,
      overridden: [],
      origin: { pIBSUF: 'publicada', pIBSMun: 'publicada', pCBS: 'publicada' },
    });
    expect(ratesAt('2026-12-31').pCBS).toBe(9000n);
  });

  it('2027: IBS 0.05 % + 0.05 %, the CBS unpublished (the provisional 8.80 % until someone states it), inside the price', () => {
    const r = ratesAt('2027-01-01');
    expect([r.pIBSUF, r.pIBSMun, r.pCBS, r.inPrice]).toEqual([500n, 500n, 88000n, true]);
    expect(r.origin).toEqual({ pIBSUF: 'publicada', pIBSMun: 'publicada', pCBS: 'provisoria' });
    expect(ratesAt('2028-12-31').pIBSUF).toBe(500n);
    expect(ratesAt('2029-01-01').pCBS).toBeUndefined();
  });

  it('the most specific word wins, rate by rate: the company, then the operator, then the published, then the provisional', () => {
    const operator = [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70', pIBSUF: '0.06' }];
    const company = [{ from: '2027-06-01', to: '2027-06-30', pCBS: '8.60' }];
    expect(ratesAt('2027-05-31', company, operator)).toMatchObject({
      pIBSUF: 600n,
      pIBSMun: 500n,
      pCBS: 87000n,
      overridden: [],
      origin: { pIBSUF: 'operador', pIBSMun: 'publicada', pCBS: 'operador' },
    });
    expect(ratesAt('2027-06-01', company, operator)).toMatchObject({ pIBSUF: 600n, pCBS: 86000n, overridden: ['pCBS'], origin: { pCBS: 'empresa' } });
    expect(ratesAt('2028-01-01', company, operator).origin.pCBS).toBe('provisoria');
  });

  it('a company override applies to its period only, rate by rate', () => {
    const overrides = [
      { from: '2027-01-01', to: '2027-06-30', pCBS: '8.80' },
      { from: '2027-07-01', pCBS: '8.70', pIBSMun: '0.06' },
    ];
    expect(ratesAt('2027-03-01', overrides)).toMatchObject({ pIBSUF: 500n, pIBSMun: 500n, pCBS: 88000n, overridden: ['pCBS'] });
    expect(ratesAt('2027-07-01', overrides)).toMatchObject({ pIBSMun: 600n, pCBS: 87000n, overridden: ['pIBSMun', 'pCBS'] });
    expect(ratesAt('2026-12-31', overrides).pCBS).toBe(9000n);
    // After the published table ends, only what the company states exists.
    const later = ratesAt('2029-02-01', overrides);
    expect(later).toMatchObject({ pIBSMun: 600n, pCBS: 87000n, inPrice: true });
    expect(later.pIBSUF).toBeUndefined();
  });

  it('refuses a date that is not a calendar day', () => {
    expect(() => ratesAt('2026-02-30')).toThrow(FieldError);
  });

  it('writes rates with 2 to 4 decimals, as TDec_0302_04RTC takes them', () => {
    expect([1000n, 0n, 88000n, 575n, 1_000_000n].map(formatRate)).toEqual(['0.10', '0.00', '8.80', '0.0575', '100.00']);
    expect(parseRate('0.1', 'p')).toBe(1000n);
    expect(() => parseRate('100.01', 'p')).toThrow(FieldError);
    expect(() => parseRate('0.12345', 'p')).toThrow(FieldError);
  });
});

describe('company overrides and settings', () => {
  const check = (value: unknown) => {
    const issues = new IssueCollector();
    return { result: checkRateOverrides(value, 'rates', issues), issues: issues.issues };
  };

  it('normalises and sorts valid periods', () => {
    expect(
      check([
        { from: '2028-01-01', pCBS: '9' },
        { from: '2027-01-01', to: '2027-12-31', pCBS: '8.8000' },
      ]).result,
    ).toEqual([
      { from: '2027-01-01', to: '2027-12-31', pCBS: '8.80' },
      { from: '2028-01-01', pCBS: '9.00' },
    ]);
  });

  it('names each problem: bad dates, a period before 2026, no rate, unknown fields, overlaps', () => {
    expect(
      check([
        { from: '2027-13-01', pCBS: '1' },
        { from: '2025-12-01', pCBS: '1' },
        { from: '2027-01-01', to: '2026-12-31', pCBS: '1' },
        { from: '2027-01-01' },
        { from: '2027-01-01', pIS: '1' },
      ]).issues.map((i) => i.field),
    ).toEqual(['rates[0].from', 'rates[1].from', 'rates[2].to', 'rates[3]', 'rates[4].pIS', 'rates[4]']);
    expect(
      check([
        { from: '2027-01-01', pCBS: '8.8' },
        { from: '2027-06-01', to: '2027-12-31', pCBS: '8.9' },
      ]).issues,
    ).toEqual([{ field: 'rates', message: 'períodos sobrepostos: o que começa em 2027-01-01 e o que começa em 2027-06-01' }]);
  });

  it('settings: defaults when absent; the default classification is checked against the tables', () => {
    expect(assertIbsCbsSettings(undefined, 'ibsCbs')).toEqual({ optIn: false, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] });
    expect(() => assertIbsCbsSettings({ defaultClassification: { CST: '200', cClassTrib: '000001' } }, 'ibsCbs')).toThrow(
      /ibsCbs\.defaultClassification\.cClassTrib: .*rejeição 1024/,
    );
    expect(() => assertIbsCbsSettings({ optIn: 'sim' }, 'ibsCbs')).toThrow(/ibsCbs\.optIn/);
  });

  it('who writes the groups: CRT 3 from 2026; CRT 1, 2 and 4 only when they opt in', () => {
    expect(reformApplies(3, undefined, '2026-01-01')).toBe(true);
    expect(reformApplies(3, undefined, '2025-12-31')).toBe(false);
    for (const crt of [1, 2, 4]) {
      expect(reformApplies(crt, undefined, '2027-01-01')).toBe(false);
      expect(reformApplies(crt, { optIn: true }, '2026-03-01')).toBe(true);
    }
  });
});
