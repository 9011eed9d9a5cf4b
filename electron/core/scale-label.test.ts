import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScaleLabelSettings } from '../api/terminal-api.ts';
import { ean13, withWrongCheckDigit } from '../../test/helpers/scale-labels.ts';
import { TerminalError } from './errors.ts';
import { itemTotalCents } from './sales.ts';
import {
  DEFAULT_SCALE_LABEL_SETTINGS,
  looksLikeScaleLabel,
  productCodesOf,
  quantityForTotal,
  readScaleLabel,
  scaleItem,
  validateScaleLabelSettings,
  type ScaleLabel,
} from './scale-label.ts';

const layout = (s: Partial<ScaleLabelSettings>): ScaleLabelSettings => ({ ...DEFAULT_SCALE_LABEL_SETTINGS, enabled: true, ...s });

/** The error `f` throws (fails the test when it does not throw a TerminalError). */
function refusal(f: () => unknown): TerminalError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(TerminalError);
    return err as TerminalError;
  }
  throw new Error('did not throw');
}

describe('readScaleLabel: the layouts of Brazilian scales', () => {
  it.each([
    // [layout, 12 digits, product code, value]
    [{ codeLength: 4, valueLength: 6, content: 'price', decimals: 2 }, '2' + '1006' + '0' + '001234', '1006', { totalCents: 1234n }],
    [{ codeLength: 4, valueLength: 5, content: 'weight', decimals: 3 }, '2' + '1006' + '00' + '00350', '1006', { weightUnits: 3500n }],
    [{ codeLength: 5, valueLength: 6, content: 'price', decimals: 2 }, '2' + '01006' + '012345', '01006', { totalCents: 12345n }],
    [{ codeLength: 5, valueLength: 5, content: 'weight', decimals: 3 }, '2' + '01006' + '0' + '01250', '01006', { weightUnits: 12500n }],
    [{ codeLength: 6, valueLength: 5, content: 'price', decimals: 2 }, '2' + '001006' + '00520', '001006', { totalCents: 520n }],
    [{ codeLength: 6, valueLength: 5, content: 'weight', decimals: 3 }, '2' + '001006' + '99999', '001006', { weightUnits: 999990n }],
    // Other decimals: a price in whole reais, a weight with 4 places or in kg.
    [{ codeLength: 5, valueLength: 6, content: 'price', decimals: 0 }, '2' + '12345' + '000012', '12345', { totalCents: 1200n }],
    [{ codeLength: 4, valueLength: 6, content: 'weight', decimals: 4 }, '2' + '9999' + '0' + '012345', '9999', { weightUnits: 12345n }],
    [{ codeLength: 4, valueLength: 5, content: 'weight', decimals: 0 }, '2' + '0042' + '00' + '00002', '0042', { weightUnits: 20000n }],
  ] as const)('%j: %s', (settings, first12, productCode, value) => {
    const barcode = ean13(first12);
    expect(readScaleLabel(barcode, layout(settings))).toEqual({ barcode, productCode, content: settings.content, ...value });
  });

  it('ignores what is not a label: not 13 digits, or not starting with 2', () => {
    for (const code of ['7891000100103', '1006', '210060001234', '21006000123456', '2100600012a45']) {
      expect(looksLikeScaleLabel(code)).toBe(false);
      expect(readScaleLabel(code, layout({}))).toBeUndefined();
    }
  });

  it('refuses a bad check digit with a Portuguese message naming the field and the right digit', () => {
    const good = ean13('210060001234');
    const wrong = withWrongCheckDigit(good);
    const err = refusal(() => readScaleLabel(wrong, layout({})));
    expect(err.code).toBe('etiqueta_invalida');
    expect(err.field).toBe('code');
    expect(err.message).toBe(
      `Etiqueta de balança ${wrong} com dígito verificador inválido (o último dígito deveria ser ${good[12]}): leia a etiqueta de novo ou digite o código do produto`,
    );
  });

  it('refuses a label whose digits between code and value are not zeros (the value is longer than configured)', () => {
    // A 6-digit total R$ 1.234,56 read with a 5-digit value would sell it for R$ 234,56.
    const barcode = ean13('2' + '1006' + '0' + '123456');
    const err = refusal(() => readScaleLabel(barcode, layout({ valueLength: 5 })));
    expect(err).toMatchObject({ code: 'etiqueta_invalida', field: 'code' });
    expect(err.message).toContain('esperado 2 zeros entre o código e o valor');
    expect(readScaleLabel(barcode, layout({ valueLength: 6 }))).toMatchObject({ totalCents: 123456n });
  });

  it('refuses a zero value', () => {
    expect(refusal(() => readScaleLabel(ean13('210060000000'), layout({})))).toMatchObject({
      code: 'etiqueta_invalida',
      message: expect.stringContaining('preço zero'),
    });
  });

  it('looks the product up by the code as printed, then without its leading zeros', () => {
    const label = (productCode: string): ScaleLabel => ({ barcode: '', productCode, content: 'price', totalCents: 1n });
    expect(productCodesOf(label('001006'))).toEqual(['001006', '1006']);
    expect(productCodesOf(label('1006'))).toEqual(['1006']);
    expect(productCodesOf(label('0000'))).toEqual(['0000', '0']);
  });
});

describe('the item a label enters', () => {
  const weight = (weightUnits: bigint): ScaleLabel => ({ barcode: '2', productCode: '1006', content: 'weight', weightUnits });
  const price = (totalCents: bigint): ScaleLabel => ({ barcode: '2', productCode: '1006', content: 'price', totalCents });

  it('weight label: the quantity is the weight, the total weight × price rounded half-up to the cent', () => {
    // 0,355 kg × R$ 14,90 = 5,2895 → R$ 5,29
    expect(scaleItem(weight(3550n), 1490n, 'KG')).toEqual({ quantityUnits: 3550n, totalCents: 529n });
    // 0,125 kg × R$ 10,00 = 1,25 exactly
    expect(scaleItem(weight(1250n), 1000n, 'KG')).toEqual({ quantityUnits: 1250n, totalCents: 125n });
    expect(refusal(() => scaleItem(weight(1n), 100n, 'KG')).message).toContain('o item daria R$ 0,00');
  });

  it('price label: the total is the label’s, the quantity the whole-gram weight that gives exactly it', () => {
    // R$ 59,90/kg, 351 g → 21,0249 → R$ 21,02: 0,351 kg (not 0,3509, which also gives 21,02).
    expect(scaleItem(price(2102n), 5990n, 'KG')).toEqual({ quantityUnits: 3510n, totalCents: 2102n });
    // R$ 14,90/kg and R$ 5,29: 0,355 kg.
    expect(scaleItem(price(529n), 1490n, 'KG')).toEqual({ quantityUnits: 3550n, totalCents: 529n });
    // R$ 7,00/kg and R$ 0,01: 1 g (0,7 cent) and 2 g (1,4 cent) both round to 1 cent; 1 g is closer to 0,01 ÷ 7,00.
    expect(quantityForTotal(1n, 700n)).toBe(10n);
  });

  it('price label an expensive item cannot match at the catalog price is refused, naming both', () => {
    // R$ 150,00/kg: 0,0001 kg steps of 1,5 cent, so R$ 0,04 is no quantity's total.
    expect(quantityForTotal(4n, 15000n)).toBeUndefined();
    const err = refusal(() => scaleItem(price(4n), 15000n, 'KG'));
    expect(err).toMatchObject({ code: 'etiqueta_invalida', field: 'code' });
    expect(err.message).toContain('o total R$ 0,04 não corresponde a nenhuma quantidade ao preço de R$ 150,00/KG do cadastro');
  });

  it('price labels: every quantity found gives exactly the label’s total, as the receipt recomputes it (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999n }), fc.bigInt({ min: 1n, max: 10_000_000n }), (total, unitPrice) => {
        const q = quantityForTotal(total, unitPrice);
        if (unitPrice <= 10_000n) expect(q).toBeDefined(); // up to R$ 100,00/kg every cent is reachable
        if (q !== undefined) expect(itemTotalCents(q, unitPrice)).toBe(total);
      }),
      { numRuns: 2000 },
    );
  });

  it('price labels a scale made at the catalog price always enter, at a whole number of grams (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 99_999n }), fc.bigInt({ min: 1n, max: 2_000_000n }), (grams, unitPrice) => {
        const total = itemTotalCents(grams * 10n, unitPrice);
        fc.pre(total > 0n);
        const q = quantityForTotal(total, unitPrice)!;
        expect(q % 10n).toBe(0n);
        expect(itemTotalCents(q, unitPrice)).toBe(total);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('validateScaleLabelSettings', () => {
  it('accepts the market’s layouts and names the field it refuses', () => {
    expect(validateScaleLabelSettings({ enabled: true, codeLength: 6, valueLength: 5, content: 'weight', decimals: 3, extra: 1 })).toEqual({
      enabled: true,
      codeLength: 6,
      valueLength: 5,
      content: 'weight',
      decimals: 3,
    });
    const field = (patch: Record<string, unknown>) => {
      try {
        validateScaleLabelSettings({ ...DEFAULT_SCALE_LABEL_SETTINGS, ...patch });
      } catch (err) {
        return `${(err as TerminalError).field}: ${(err as TerminalError).message}`;
      }
      return 'aceito';
    };
    expect(field({})).toBe('aceito');
    expect(field({ enabled: 'sim' })).toMatch(/^scaleLabels\.enabled: /);
    expect(field({ codeLength: 7 })).toBe('scaleLabels.codeLength: Tamanho do código do produto na etiqueta: 4, 5 ou 6 dígitos');
    expect(field({ valueLength: 4 })).toBe('scaleLabels.valueLength: Tamanho do valor na etiqueta: 5 ou 6 dígitos');
    expect(field({ codeLength: 6, valueLength: 6 })).toMatch(/^scaleLabels\.valueLength: Código e valor da etiqueta somam no máximo 11 dígitos/);
    expect(field({ content: 'total' })).toMatch(/^scaleLabels\.content: /);
    expect(field({ content: 'price', decimals: 3 })).toBe('scaleLabels.decimals: Casas decimais do preço na etiqueta: de 0 a 2 (2 para centavos)');
    expect(field({ content: 'weight', decimals: 4 })).toBe('aceito');
    expect(field({ content: 'weight', decimals: 1.5 })).toMatch(/^scaleLabels\.decimals: Casas decimais do peso/);
    expect(() => validateScaleLabelSettings(null)).toThrow(expect.objectContaining({ field: 'scaleLabels' }));
  });
});
