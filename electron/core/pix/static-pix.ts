// Static PIX (tPag 20) at the counter (docs/pix.md, "Static PIX"): the terminal writes a BR Code
// with the store's PIX key, the amount and a reference derived from the sale; no PSP is asked and
// nothing confirms the payment, so the cashier checks the store's bank app and confirms by hand,
// and the receipt says so (infCpl). It is also the way to take PIX when the PSP cannot be reached.

import { PIX_STATIC } from '../../../base/common/payment-methods.ts';
import { BrCodeError, staticBrCode } from '../../../base/common/pix/br-code.ts';
import type { SaleView, StaticPixView } from '../../api/terminal-api.ts';
import { TerminalError } from '../errors.ts';
import type { Settings } from '../settings.ts';

/**
 * The sale's reference in a static BR Code (record 62-05, up to 25 letters and digits): the first
 * 25 hex digits of the sale's UUID, so the same sale always shows the same reference and the
 * store finds it in its statement next to the receipt's.
 */
export const staticPixReference = (saleId: string): string => saleId.replace(/-/g, '').slice(0, 25).toUpperCase();

/** What the receipt says of a static PIX (infCpl, printed on the DANFE). */
export const staticPixNote = (saleId: string): string =>
  `PIX estático (tPag ${PIX_STATIC}) conferido pelo operador, sem confirmação do banco. Ref. PIX ${staticPixReference(saleId)}`;

/** The BR Code for `amountCents` of the open `sale`. */
export function staticPix(settings: Settings, sale: SaleView, amountCents: number): StaticPixView {
  const key = settings.pix.key;
  if (key === null) {
    throw new TerminalError('configuracao_invalida', 'PIX estático: nenhuma chave PIX configurada; o gerente a informa em Configurações › Caixa › PIX', {
      field: 'pix.key',
    });
  }
  const company = settings.company();
  if (company === null) throw new TerminalError('configuracao_invalida', 'PIX estático: cadastre a empresa em Configurações', { field: 'company' });
  if (sale.state !== 'open') throw new TerminalError('estado_invalido', 'PIX estático: a venda não está aberta');
  if (Number.isSafeInteger(amountCents) && amountCents > sale.remainingCents) {
    throw new TerminalError('pagamento_invalido', 'Valor do PIX maior que o que falta pagar', { field: 'amountCents' });
  }
  const reference = staticPixReference(sale.id);
  const merchantName = company.xFant?.trim() || company.xNome;
  try {
    const brCode = staticBrCode({ key, merchantName, merchantCity: company.address.xMun, amountCents, txid: reference });
    return { brCode, reference, key, merchantName, amountCents };
  } catch (err) {
    if (err instanceof BrCodeError) throw new TerminalError('pagamento_invalido', err.message, { field: err.field });
    throw err;
  }
}
