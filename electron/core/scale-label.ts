// Scale labels: the EAN-13 a supermarket's scale prints on what it weighed (Toledo, Filizola and
// the other scales of Brazilian stores), read at the counter into the product, its weighed
// quantity and its exact total.
//
// Layout: "2" + the product's code (codeLength digits, 4 to 6) + zeros + the value (valueLength
// digits, 5 or 6) + the EAN-13 check digit. The value is the item's total price (price labels)
// or its weight in kg (weight labels), with `decimals` decimal places. The market's layouts are
// these settings: 2CCCC0TTTTTT (code 4, total 6, the classic Toledo), 2CCCC00PPPPP (code 4,
// weight 5), 2CCCCCTTTTTT (code 5, total 6), 2CCCCC0PPPPP (code 5, weight 5), 2CCCCCCTTTTT /
// 2CCCCCCPPPPP (code 6, value 5); each followed by the check digit. The zeros between code and
// value must be zeros: a digit there means the value is longer than configured, and reading it
// short would sell the item for less than the label says.
//
// The receipt's rule (docs/fiscal.md, rejection 629): vProd = qCom × vUnCom rounded half-up to
// the cent, with qCom up to 4 decimals and vUnCom the catalog's price. So:
// - weight label: quantity = the weight; total = weight × unit price, rounded half-up to the
//   cent (exactly what the receipt recomputes);
// - price label: the weight is not on the label, only the total T. The quantity is a weight q
//   (4 decimals) such that q × unit price rounds to exactly T: among those, a whole number of
//   grams (scales weigh in grams, and a scale that priced it at the catalog's price weighed one
//   of them), the one closest to T ÷ unit price; without a whole-gram one, the closest q of 4
//   decimals. When no q gives T (an expensive item, more than R$ 100,00/kg, whose scale priced
//   it differently from the catalog) the label is refused: selling it would change either the
//   label's total or the catalog's price, and neither is the cashier's call.
//
// Everything here is integers: cents, and quantities in ten-thousandths (the scale of qCom).

import { isValidGtin } from '../../fiscal/br/documents.ts';
import { formatBRL } from '../../fiscal/money.ts';
import type { ScaleLabelSettings } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';

export const DEFAULT_SCALE_LABEL_SETTINGS: Readonly<ScaleLabelSettings> = Object.freeze({
  enabled: false,
  codeLength: 4,
  valueLength: 6,
  content: 'price',
  decimals: 2,
});

/** What a label says, before the catalog is asked. */
export type ScaleLabel = {
  /** The 13 digits as scanned. */
  barcode: string;
  /** The product's code as printed on the label (with its leading zeros). */
  productCode: string;
} & ({ content: 'price'; totalCents: bigint } | { content: 'weight'; weightUnits: bigint });

/** The item a label enters: quantity in ten-thousandths of the unit, total in cents. */
export type ScaleItem = { quantityUnits: bigint; totalCents: bigint };

const LABEL = /^2[0-9]{12}$/;

/** Whether a scanned code has the shape of a scale label (13 digits starting with 2). */
export const looksLikeScaleLabel = (code: string): boolean => LABEL.test(code);

const bad = (field: string, message: string) => new TerminalError('configuracao_invalida', message, { field });

/** Checks scale label settings from the screen; errors name the field (`scaleLabels.codeLength`, ...). */
export function validateScaleLabelSettings(input: unknown, field = 'scaleLabels'): ScaleLabelSettings {
  if (typeof input !== 'object' || input === null) throw bad(field, 'Configuração das etiquetas de balança ausente');
  const s = input as Record<string, unknown>;
  if (typeof s.enabled !== 'boolean') throw bad(`${field}.enabled`, 'Leitura de etiquetas de balança: ativada ou desativada (true ou false)');
  if (s.codeLength !== 4 && s.codeLength !== 5 && s.codeLength !== 6)
    throw bad(`${field}.codeLength`, 'Tamanho do código do produto na etiqueta: 4, 5 ou 6 dígitos');
  if (s.valueLength !== 5 && s.valueLength !== 6) throw bad(`${field}.valueLength`, 'Tamanho do valor na etiqueta: 5 ou 6 dígitos');
  if (s.codeLength + s.valueLength > 11) {
    throw bad(
      `${field}.valueLength`,
      'Código e valor da etiqueta somam no máximo 11 dígitos (entre o 2 inicial e o dígito verificador): com código de 6 dígitos, o valor tem 5',
    );
  }
  if (s.content !== 'price' && s.content !== 'weight') throw bad(`${field}.content`, 'A etiqueta traz o preço total (price) ou o peso (weight)');
  const maxDecimals = s.content === 'price' ? 2 : 4;
  if (typeof s.decimals !== 'number' || !Number.isInteger(s.decimals) || s.decimals < 0 || s.decimals > maxDecimals) {
    throw bad(
      `${field}.decimals`,
      s.content === 'price'
        ? 'Casas decimais do preço na etiqueta: de 0 a 2 (2 para centavos)'
        : 'Casas decimais do peso na etiqueta: de 0 a 4 (3 para gramas)',
    );
  }
  return { enabled: s.enabled, codeLength: s.codeLength, valueLength: s.valueLength, content: s.content, decimals: s.decimals };
}

/** The digit an EAN-13's first 12 digits call for. */
function checkDigitOf(first12: string): number {
  for (let d = 0; d <= 9; d++) if (isValidGtin(first12 + String(d))) return d;
  throw new Error('unreachable: every 12 digits have a check digit');
}

/**
 * Reads a scanned code as a scale label: undefined when it does not have a label's shape (13
 * digits starting with 2); TerminalError('etiqueta_invalida', field `code`) when it has the shape
 * but is not a valid label of the configured layout (check digit, digits between code and value,
 * a zero value).
 */
export function readScaleLabel(barcode: string, settings: ScaleLabelSettings): ScaleLabel | undefined {
  if (!LABEL.test(barcode)) return undefined;
  if (!isValidGtin(barcode)) {
    throw new TerminalError(
      'etiqueta_invalida',
      `Etiqueta de balança ${barcode} com dígito verificador inválido (o último dígito deveria ser ${checkDigitOf(barcode.slice(0, 12))}): leia a etiqueta de novo ou digite o código do produto`,
      { field: 'code' },
    );
  }
  const productCode = barcode.slice(1, 1 + settings.codeLength);
  const valueStart = 12 - settings.valueLength;
  const filler = barcode.slice(1 + settings.codeLength, valueStart);
  if (/[^0]/.test(filler)) {
    throw new TerminalError(
      'etiqueta_invalida',
      `Etiqueta de balança ${barcode} fora do formato configurado (esperado ${filler.length === 1 ? 'um zero' : `${filler.length} zeros`} entre o código e o valor): confira o formato em Configurações → Balança`,
      { field: 'code' },
    );
  }
  const value = BigInt(barcode.slice(valueStart, 12));
  if (value === 0n) {
    throw new TerminalError('etiqueta_invalida', `Etiqueta de balança ${barcode} com ${settings.content === 'price' ? 'preço' : 'peso'} zero`, {
      field: 'code',
    });
  }
  return settings.content === 'price'
    ? { barcode, productCode, content: 'price', totalCents: value * 10n ** BigInt(2 - settings.decimals) }
    : { barcode, productCode, content: 'weight', weightUnits: value * 10n ** BigInt(4 - settings.decimals) };
}

/** The catalog codes a label's product code may stand for: as printed, then without leading zeros. */
export function productCodesOf(label: ScaleLabel): string[] {
  const bare = label.productCode.replace(/^0+(?=.)/, '');
  return bare === label.productCode ? [label.productCode] : [label.productCode, bare];
}

/** quantity (ten-thousandths) × unit price (cents), rounded half-up to the cent: the receipt's vProd. */
const totalOf = (quantityUnits: bigint, unitPriceCents: bigint): bigint => (quantityUnits * unitPriceCents + 5000n) / 10000n;

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/**
 * The quantity q (ten-thousandths) whose total at `unitPriceCents` rounds to exactly
 * `totalCents` (see the header for which one); undefined when none does.
 */
export function quantityForTotal(totalCents: bigint, unitPriceCents: bigint): bigint | undefined {
  if (totalCents <= 0n || unitPriceCents <= 0n) return undefined;
  // total(q) = T ⟺ (2T − 1)·5000 ≤ q·P < (2T + 1)·5000
  const lo = ceilDiv((2n * totalCents - 1n) * 5000n, unitPriceCents);
  const hi = ceilDiv((2n * totalCents + 1n) * 5000n, unitPriceCents) - 1n;
  if (lo > hi) return undefined;
  // Twice the ideal quantity T·10000/P, to compare distances in integers.
  const ideal2 = (2n * totalCents * 10000n) / unitPriceCents;
  const distance = (q: bigint): bigint => (2n * q > ideal2 ? 2n * q - ideal2 : ideal2 - 2n * q);
  const nearest = (candidates: bigint[]): bigint | undefined =>
    candidates
      .filter((q) => q >= lo && q <= hi)
      .reduce<bigint | undefined>((best, q) => (best === undefined || distance(q) < distance(best) ? q : best), undefined);
  const idealQ = ideal2 / 2n;
  const gramBelow = (idealQ / 10n) * 10n;
  const grams = nearest([gramBelow - 10n, gramBelow, gramBelow + 10n, gramBelow + 20n, ceilDiv(lo, 10n) * 10n, (hi / 10n) * 10n]);
  const q = grams ?? nearest([idealQ - 1n, idealQ, idealQ + 1n, idealQ + 2n, lo, hi]);
  return q !== undefined && totalOf(q, unitPriceCents) === totalCents ? q : undefined;
}

/** The item a label enters for a product of `unitPriceCents`; the cashier's message when it cannot. */
export function scaleItem(label: ScaleLabel, unitPriceCents: bigint, unit: string): ScaleItem {
  if (label.content === 'weight') {
    const totalCents = totalOf(label.weightUnits, unitPriceCents);
    if (totalCents <= 0n) {
      throw new TerminalError('etiqueta_invalida', `Etiqueta de balança ${label.barcode}: peso pequeno demais, o item daria R$ 0,00`, { field: 'code' });
    }
    return { quantityUnits: label.weightUnits, totalCents };
  }
  const quantityUnits = quantityForTotal(label.totalCents, unitPriceCents);
  if (quantityUnits === undefined) {
    throw new TerminalError(
      'etiqueta_invalida',
      `Etiqueta de balança ${label.barcode}: o total R$ ${formatBRL(label.totalCents)} não corresponde a nenhuma quantidade ao preço de R$ ${formatBRL(unitPriceCents)}/${unit} do cadastro; confira o preço do produto na balança`,
      { field: 'code' },
    );
  }
  return { quantityUnits, totalCents: label.totalCents };
}
