// A sale from the first item to "finished": items, consumer, payments, and the one transaction
// that turns it into a receipt (number, request JSON, outbox entry) on disk.
//
// Money is integer cents; an item's total is quantity × unit price rounded half-up to the cent,
// exactly as the NFC-e builder checks it (rejection 629), and every total is a sum of those.
// The request JSON of POST /api/v1/nfce (docs/api.md, "NFC-e") is built here from the stored sale, so what is sent is
// always what the sale says.

import { randomUUID } from 'node:crypto';
import { typedTaxId } from '../../base/common/tax-ids.ts';
import { assertCnpj } from '../../fiscal/br/documents.ts';
import { consumerIdentificationRequired, identificationLimitCents } from '../../fiscal/nfce/consumer-identification.ts';
import { formatDecimal, fromCents, parseDecimal } from '../../fiscal/money.ts';
import type { NfceCard, NfceItem, NfcePayment, NfceRequest } from '../../fiscal/nfce/types.ts';
import type { CardInput, ConsumerView, PaymentInput, PaymentView, SaleItemView, SaleView, ScaleLabelSettings } from '../api/terminal-api.ts';
import { taxGroupOf } from './catalog.ts';
import { checked, TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { ProductRow } from './store/products.ts';
import type { ReceiptRow } from './store/receipts.ts';
import { cardOf, saleForRequestOf, type SaleForRequest, type SaleItemRow, type SalePaymentRow, type SaleRow } from './store/sales.ts';
import { looksLikeScaleLabel, productCodesOf, readScaleLabel, scaleItem } from './scale-label.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { brasiliaDay } from '../../base/common/brasilia.ts';
import { carriesCardGroup, paymentMethod, paymentMethodLabel, PIX_STATIC } from '../../base/common/payment-methods.ts';
import { staticPixNote } from './pix/static-pix.ts';
import { paymentMethodInForce, paymentMethodOutOfForce } from '../../fiscal/law/in-force.ts';

/** Epoch milliseconds; injectable so tests can move time. */
export type SalesContext = {
  store: PosStore;
  clock: Clock;
  serie: number;
  /** The company's UF (its profile), for the consumer identification limit; unknown: the national one. */
  uf?: () => string | undefined;
  /** How the store's scales print their labels (settings); absent: labels are not read. */
  scaleLabels?: () => ScaleLabelSettings;
  /**
   * The open cash session's id, or the cashier's error when the till is closed (cash-session.ts
   * requireOpenSession), asked inside the finishing transaction. The terminal always sets it;
   * only this module's own unit tests finish sales without a till.
   */
  cashSession?: () => string;
};

// =============================================================================================
// Payments

/**
 * Whether the counter takes a payment code on `date` (Brasília day): the methods the catalog lets
 * the counter accept (base/common/payment-methods.ts), while the law has them in force.
 */
const counterTakes = (tPag: string, date: string): boolean => {
  const counter = paymentMethod(tPag)?.counter;
  return (counter === 'offered' || counter === 'accepted') && paymentMethodInForce(tPag, date);
};

const CASH = '01';

function normalizeCard(card: CardInput, field: string): CardInput {
  if (typeof card !== 'object' || card === null) throw new TerminalError('pagamento_invalido', 'Dados do cartão inválidos', { field });
  if (card.tpIntegra !== '1' && card.tpIntegra !== '2') {
    throw new TerminalError('pagamento_invalido', 'Tipo de integração deve ser 1 (TEF integrado) ou 2 (maquininha não integrada)', {
      field: `${field}.tpIntegra`,
    });
  }
  const out: CardInput = { tpIntegra: card.tpIntegra };
  if (card.cnpj !== undefined && card.cnpj !== '') {
    out.cnpj = checked('pagamento_invalido', `${field}.cnpj`, () => assertCnpj(card.cnpj, `${field}.cnpj`));
  }
  if (card.tBand !== undefined && card.tBand !== '') {
    if (!/^[0-9]{2}$/.test(card.tBand))
      throw new TerminalError('pagamento_invalido', 'Bandeira deve ter 2 dígitos (ex.: 01 Visa)', { field: `${field}.tBand` });
    out.tBand = card.tBand;
  }
  if (card.cAut !== undefined && card.cAut !== '') {
    if (typeof card.cAut !== 'string' || !/^[!-\u00ff]([ -\u00ff]{0,126}[!-\u00ff])?$/.test(card.cAut)) {
      throw new TerminalError('pagamento_invalido', 'Código de autorização: de 1 a 128 caracteres', { field: `${field}.cAut` });
    }
    out.cAut = card.cAut;
  }
  if (out.tpIntegra === '1' && (!out.cnpj || !out.cAut)) {
    // Rejection 392: refused here, where the cashier can still fix it.
    throw new TerminalError('pagamento_invalido', 'Pagamento integrado (TEF) exige o CNPJ da credenciadora e o código de autorização', {
      field: out.cnpj ? `${field}.cAut` : `${field}.cnpj`,
    });
  }
  return out;
}

/**
 * Checks one payment made on `date` (Brasília day); the card group is optional (without it a card
 * payment is rejected 391; the screen always sends it).
 */
export function normalizePayment(p: PaymentInput, date: string, field = 'payment'): PaymentInput {
  if (typeof p !== 'object' || p === null) throw new TerminalError('pagamento_invalido', 'Pagamento inválido', { field });
  if (typeof p.tPag !== 'string' || !counterTakes(p.tPag, date)) {
    const why = typeof p.tPag === 'string' && paymentMethod(p.tPag) && !paymentMethodInForce(p.tPag, date) ? `: ${paymentMethodOutOfForce(p.tPag, date)}` : '';
    throw new TerminalError('pagamento_invalido', `Forma de pagamento não aceita: ${String(p.tPag)}${why}`, { field: `${field}.tPag` });
  }
  if (!Number.isSafeInteger(p.amountCents) || p.amountCents <= 0) {
    throw new TerminalError('pagamento_invalido', 'Valor do pagamento deve ser um número inteiro de centavos maior que zero', {
      field: `${field}.amountCents`,
    });
  }
  const out: PaymentInput = { tPag: p.tPag, amountCents: p.amountCents };
  if (p.card !== undefined && p.card !== null) {
    if (!carriesCardGroup(p.tPag)) {
      throw new TerminalError('pagamento_invalido', `${paymentMethodLabel(p.tPag)} não leva dados de cartão`, { field: `${field}.card` });
    }
    out.card = normalizeCard(p.card, `${field}.card`);
  } else if (paymentMethod(p.tPag)?.card === 'required-uf') {
    // Refused without the group by the builder (a dynamic PIX): the counter records what it knows,
    // a payment taken outside any integration.
    out.card = { tpIntegra: '2' };
  }
  return out;
}

const cardColumns = (card: CardInput | undefined) => ({
  card_tp_integra: card?.tpIntegra ?? null,
  card_cnpj: card?.cnpj ?? null,
  card_tband: card?.tBand ?? null,
  card_caut: card?.cAut ?? null,
});

export type Settlement = { totalCents: number; paidCents: number; remainingCents: number; changeCents: number };

/** Totals of a sale and what its payments settle. */
export function settle(items: readonly SaleItemRow[], payments: readonly { tpag: string; amount_cents: number }[]): Settlement {
  const total = items.filter((i) => i.removed_at === null).reduce((s, i) => s + BigInt(i.total_cents), 0n);
  return settlement(
    total,
    payments.reduce((s, p) => s + BigInt(p.amount_cents), 0n),
  );
}

/** What `paid` settles of a sale of `total` (cents). */
function settlement(total: bigint, paid: bigint): Settlement {
  const remaining = paid >= total ? 0n : total - paid;
  const change = paid > total ? paid - total : 0n;
  return { totalCents: Number(total), paidCents: Number(paid), remainingCents: Number(remaining), changeCents: Number(change) };
}

/** The rules a finished sale's payments must meet; throws the cashier's message. */
export function assertPaymentsSettle(items: readonly SaleItemRow[], payments: readonly SalePaymentRow[]): Settlement {
  const s = settle(items, payments);
  if (s.totalCents === 0) throw new TerminalError('venda_vazia', 'A venda não tem itens');
  if (s.remainingCents > 0) {
    throw new TerminalError('pagamento_insuficiente', `Pagamento insuficiente: faltam R$ ${brl(s.remainingCents)}`, { field: 'payments' });
  }
  if (s.changeCents > 0) {
    // Change is given in cash: only cash may exceed what is owed.
    const cash = payments.filter((p) => p.tpag === CASH).reduce((t, p) => t + p.amount_cents, 0);
    if (s.changeCents > cash) {
      throw new TerminalError('pagamento_invalido', 'Só pagamento em dinheiro pode ter troco: os demais pagamentos excedem o total da venda', {
        field: 'payments',
      });
    }
  }
  return s;
}

const brl = (cents: number): string => {
  const [int, frac] = fromCents(BigInt(cents)).split('.');
  return `${int!.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${frac}`;
};

// =============================================================================================
// Items and consumer

/** Quantity decimal string → ten-thousandths of the unit. */
export function parseQuantity(value: unknown): bigint {
  const q = checked('quantidade_invalida', 'quantity', () => parseDecimal(value, 4, 'quantity'));
  if (q <= 0n) throw new TerminalError('quantidade_invalida', 'Quantidade deve ser maior que zero', { field: 'quantity' });
  if (q >= 10n ** 15n) throw new TerminalError('quantidade_invalida', 'Quantidade grande demais', { field: 'quantity' });
  return q;
}

/** "1.0000" → "1", "0.3500" → "0.35": the shortest exact form. */
export function formatQuantity(units: bigint): string {
  return formatDecimal(units, 4).replace(/\.?0+$/, '');
}

/** quantity (scale 4) × unit price (cents), rounded half-up to the cent, as rejection 629 demands. */
export function itemTotalCents(quantityUnits: bigint, unitPriceCents: bigint): bigint {
  return (quantityUnits * unitPriceCents + 5000n) / 10000n;
}

/**
 * CPF or CNPJ typed at the counter: the mask's punctuation dropped, then checked strictly by the
 * rule the screen also applies (base/common/tax-ids.ts): letters of an alphanumeric CNPJ in upper
 * case, never raised behind the cashier's back.
 */
export function normalizeConsumerDocument(value: string): ConsumerView {
  if (typeof value !== 'string') throw new TerminalError('documento_invalido', 'Informe o CPF ou o CNPJ do consumidor', { field: 'consumer' });
  const typed = typedTaxId(value);
  if (!typed.ok) throw new TerminalError('documento_invalido', `CPF/CNPJ do consumidor: ${typed.problem}`, { field: 'consumer' });
  return { kind: typed.kind, document: typed.value };
}

const consumerOf = (doc: string | null): ConsumerView | null => (doc === null ? null : { kind: doc.length === 11 ? 'cpf' : 'cnpj', document: doc });

// =============================================================================================
// Views

export function itemView(i: SaleItemRow): SaleItemView {
  return {
    id: i.id,
    code: i.product_code,
    gtin: i.gtin,
    description: i.description,
    unit: i.unit,
    quantity: formatQuantity(BigInt(i.quantity_units)),
    unitPriceCents: i.unit_price_cents,
    totalCents: i.total_cents,
    removed: i.removed_at !== null,
  };
}

export function paymentView(p: SalePaymentRow): PaymentView {
  return { id: p.id, tPag: p.tpag, description: paymentMethodLabel(p.tpag), amountCents: p.amount_cents, card: cardOf(p) };
}

export function saleView(store: PosStore, sale: SaleRow, uf?: string): SaleView {
  const items = store.sales.items(sale.id);
  const payments = store.sales.payments(sale.id);
  const s = settle(items, payments);
  const limit = identificationLimitCents(uf);
  return {
    id: sale.id,
    state: sale.state,
    openedAt: sale.opened_at,
    finishedAt: sale.finished_at,
    items: items.map(itemView),
    payments: payments.map(paymentView),
    consumer: consumerOf(sale.consumer_doc),
    ...s,
    consumerRequired: BigInt(s.totalCents) > limit,
    identificationLimitCents: Number(limit),
    receiptId: sale.state === 'finished' ? (store.receipts.receiptBySale(sale.id)?.id ?? null) : null,
  };
}

// =============================================================================================
// Operations on an open sale

function openSaleRow(store: PosStore, saleId: string): SaleRow {
  const sale = store.sales.sale(saleId);
  if (!sale) throw new TerminalError('nao_encontrado', 'Venda não encontrada');
  if (sale.state !== 'open') {
    throw new TerminalError('estado_invalido', sale.state === 'finished' ? 'Esta venda já foi finalizada' : 'Esta venda foi descartada');
  }
  return sale;
}

export function openSale(ctx: SalesContext): SaleView {
  const id = randomUUID();
  ctx.store.sales.insertSale(id, iso(ctx.clock()));
  return saleView(ctx.store, ctx.store.sales.sale(id)!, ctx.uf?.());
}

/**
 * What a scanned or typed code enters: a product of the catalog (by code or GTIN) with the
 * quantity given, or, when scale labels are on and no product has that code, the product a scale
 * label names with the quantity and total the label carries (scale-label.ts).
 */
function itemFor(ctx: SalesContext, code: string, quantity: string | undefined): { product: ProductRow; qty: bigint; total: bigint } {
  const product = code ? ctx.store.products.productByCodeOrGtin(code) : undefined;
  if (product) {
    const qty = parseQuantity(quantity ?? '1');
    return { product, qty, total: itemTotalCents(qty, BigInt(product.price_cents)) };
  }
  const labels = ctx.scaleLabels?.();
  if (labels?.enabled && looksLikeScaleLabel(code)) {
    const label = readScaleLabel(code, labels)!;
    const found = productCodesOf(label)
      .map((c) => ctx.store.products.productByCodeOrGtin(c))
      .find((p) => p !== undefined);
    if (!found) {
      throw new TerminalError('produto_nao_encontrado', `Produto ${label.productCode} da etiqueta de balança ${code} não encontrado no cadastro`, {
        field: 'code',
      });
    }
    if (quantity !== undefined && quantity !== '1') {
      throw new TerminalError('quantidade_invalida', 'A quantidade vem da etiqueta da balança: leia a etiqueta sem informar a quantidade', {
        field: 'quantity',
      });
    }
    const item = scaleItem(label, BigInt(found.price_cents), found.unit);
    return { product: found, qty: item.quantityUnits, total: item.totalCents };
  }
  const hint = looksLikeScaleLabel(code) && !labels?.enabled ? ' (se for etiqueta de balança, ative a leitura em Configurações → Balança)' : '';
  throw new TerminalError('produto_nao_encontrado', `Produto não encontrado: ${code || '(vazio)'}${hint}`, { field: 'code' });
}

export function addItem(ctx: SalesContext, saleId: string, input: { code: string; quantity?: string }): SaleView {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    const code = typeof input?.code === 'string' ? input.code.trim() : '';
    const { product, qty, total } = itemFor(ctx, code, input?.quantity);
    checkItemSize(qty, total);
    store.sales.insertItem({
      sale_id: sale.id,
      product_code: product.code,
      gtin: product.gtin,
      description: product.description,
      ncm: product.ncm,
      cfop: product.cfop,
      unit: product.unit,
      tax_group: product.tax_group,
      ibscbs_cst: product.ibscbs_cst,
      ibscbs_cclasstrib: product.ibscbs_cclasstrib,
      quantity_units: Number(qty),
      unit_price_cents: product.price_cents,
      total_cents: Number(total),
      added_at: iso(ctx.clock()),
    });
    return saleView(store, sale, ctx.uf?.());
  });
}

/** A line must be worth at least a cent and stay within what the database and the layout hold. */
function checkItemSize(qty: bigint, total: bigint): void {
  if (total <= 0n) throw new TerminalError('quantidade_invalida', 'Quantidade pequena demais: o item daria R$ 0,00', { field: 'quantity' });
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || qty >= 10n ** 15n)
    throw new TerminalError('quantidade_invalida', 'Quantidade grande demais', { field: 'quantity' });
}

/**
 * A line's quantity changed, as the receipt tape records it: the line is removed (it stays listed,
 * struck through) and the same product comes back as a new line with the new quantity, at the
 * price it was sold at, in one transaction.
 */
export function changeItemQuantity(ctx: SalesContext, saleId: string, itemId: number, quantity: string): SaleView {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    const item = store.sales.items(sale.id).find((i) => i.id === itemId && i.removed_at === null);
    if (!item) throw new TerminalError('nao_encontrado', 'Item não encontrado nesta venda (ou já removido)', { field: 'itemId' });
    const qty = parseQuantity(quantity);
    const total = itemTotalCents(qty, BigInt(item.unit_price_cents));
    checkItemSize(qty, total);
    const at = iso(ctx.clock());
    store.sales.markItemRemoved(sale.id, item.id, at);
    const { id: _id, removed_at: _removed, ...copy } = item;
    store.sales.insertItem({ ...copy, quantity_units: Number(qty), total_cents: Number(total), added_at: at });
    return saleView(store, sale, ctx.uf?.());
  });
}

export function removeItem(ctx: SalesContext, saleId: string, itemId: number): SaleView {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    if (!store.sales.markItemRemoved(sale.id, itemId, iso(ctx.clock()))) {
      throw new TerminalError('nao_encontrado', 'Item não encontrado nesta venda (ou já removido)', { field: 'itemId' });
    }
    return saleView(store, sale, ctx.uf?.());
  });
}

export function setConsumer(ctx: SalesContext, saleId: string, document: string | null): SaleView {
  const { store } = ctx;
  const consumer = document === null || document.trim() === '' ? null : normalizeConsumerDocument(document);
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    store.sales.setConsumer(sale.id, consumer?.document ?? null);
    return saleView(store, store.sales.sale(sale.id)!, ctx.uf?.());
  });
}

export function addPayment(ctx: SalesContext, saleId: string, payment: PaymentInput): SaleView {
  const { store } = ctx;
  const p = normalizePayment(payment, brasiliaDay(ctx.clock()));
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    store.sales.insertPayment({ sale_id: sale.id, tpag: p.tPag, amount_cents: p.amountCents, ...cardColumns(p.card), added_at: iso(ctx.clock()) });
    return saleView(store, sale, ctx.uf?.());
  });
}

export function removePayment(ctx: SalesContext, saleId: string, paymentId: number): SaleView {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    if (!store.sales.deletePayment(sale.id, paymentId))
      throw new TerminalError('nao_encontrado', 'Pagamento não encontrado nesta venda', { field: 'paymentId' });
    return saleView(store, sale, ctx.uf?.());
  });
}

export function discardSale(ctx: SalesContext, saleId: string): SaleView {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    store.sales.discardSale(sale.id);
    return saleView(store, store.sales.sale(sale.id)!, ctx.uf?.());
  });
}

/** Replaces a finished sale's payments (a correction); the caller holds the transaction. */
export function replacePayments(ctx: SalesContext, sale: SaleRow, payments: readonly PaymentInput[]): void {
  const day = brasiliaDay(ctx.clock());
  const normalized = payments.map((p, i) => normalizePayment(p, day, `payments[${i}]`));
  ctx.store.sales.deletePayments(sale.id);
  const at = iso(ctx.clock());
  for (const p of normalized) {
    ctx.store.sales.insertPayment({ sale_id: sale.id, tpag: p.tPag, amount_cents: p.amountCents, ...cardColumns(p.card), added_at: at });
  }
}

// =============================================================================================
// The NFC-e request (docs/api.md, "NFC-e")

function requestCard(card: CardInput | null): NfceCard | undefined {
  if (!card) return undefined;
  return {
    tpIntegra: card.tpIntegra,
    ...(card.cnpj !== undefined && { CNPJ: card.cnpj }),
    ...(card.tBand !== undefined && { tBand: card.tBand }),
    ...(card.cAut !== undefined && { cAut: card.cAut }),
  };
}

/** The request body for a sale: items, exact totals, payments with their card groups, consumer. */
export function buildNfceRequest(sale: SaleForRequest, serie: number, nNF: number): NfceRequest {
  const det: NfceItem[] = sale.lines.map((i) => {
    const q = formatQuantity(BigInt(i.quantityUnits));
    const vUn = fromCents(BigInt(i.unitPriceCents));
    return {
      prod: {
        cProd: i.productCode,
        cEAN: i.gtin,
        xProd: i.description,
        NCM: i.ncm,
        CFOP: i.cfop,
        uCom: i.unit,
        qCom: q,
        vUnCom: vUn,
        vProd: fromCents(BigInt(i.totalCents)),
        cEANTrib: i.gtin,
        uTrib: i.unit,
        qTrib: q,
        vUnTrib: vUn,
        indTot: '1',
      },
      // det[].imposto.IBSCBS of an item whose product has its own classification (else the company default applies).
      imposto: { ...taxGroupOf(i.taxGroup), ...(i.classification && { IBSCBS: { CST: i.classification.CST, cClassTrib: i.classification.cClassTrib } }) },
    };
  });
  const s = settlement(
    sale.lines.reduce((t, i) => t + BigInt(i.totalCents), 0n),
    sale.payments.reduce((t, p) => t + BigInt(p.amountCents), 0n),
  );
  const vNF = fromCents(BigInt(s.totalCents));
  const pag: NfcePayment[] = sale.payments.map((p) => {
    const card = requestCard(p.card);
    return { tPag: p.tPag, vPag: fromCents(BigInt(p.amountCents)), ...(card && { card }) };
  });
  const request: NfceRequest = { ide: { serie, nNF }, det, total: { vProd: vNF, vNF }, pag };
  if (s.changeCents > 0) request.vTroco = fromCents(BigInt(s.changeCents));
  // Nothing but the cashier confirmed a static PIX: the receipt says so, with the reference.
  if (sale.payments.some((p) => p.tPag === PIX_STATIC)) request.infCpl = staticPixNote(sale.id);
  if (sale.consumerDoc !== null) request.dest = sale.consumerDoc.length === 11 ? { cpf: sale.consumerDoc } : { cnpj: sale.consumerDoc };
  return request;
}

// =============================================================================================
// Finish: the one transaction

export type FinishOutcome = { sale: SaleRow; receipt: ReceiptRow };

/**
 * Offline contingency (contingency/mode.ts): the series to number in and the signer of the
 * receipt, called inside the finishing transaction so the signed XML is written with the sale.
 * It dates the receipt itself, on the service's clock as last known (service-clock.ts).
 */
export type OfflineIssuer = {
  serie: number;
  issue(request: NfceRequest): { chave: string; signedXml: string; qrcode: string; urlConsulta: string };
};

/**
 * Finishes the sale durably: checks it, takes the next number of the series, builds the
 * request, writes the receipt (with a fresh idempotency key, used by every attempt from now
 * on) and its outbox entry, and marks the sale finished in the open cash session, all in one
 * IMMEDIATE transaction.
 * When this returns, all of it is on disk (synchronous=FULL); if the process dies before, none
 * of it is, and the number was not taken.
 */
export function finishSale(ctx: SalesContext, saleId: string, offline?: OfflineIssuer): FinishOutcome {
  const { store } = ctx;
  return store.transaction(() => {
    const sale = openSaleRow(store, saleId);
    const items = store.sales.items(sale.id);
    const payments = store.sales.payments(sale.id);
    const s = assertPaymentsSettle(items, payments);
    const uf = ctx.uf?.();
    if (sale.consumer_doc === null && consumerIdentificationRequired(uf, BigInt(s.totalCents))) {
      // NT 2026.002 (rejection 750): asked here, where the cashier can still ask the customer.
      throw new TerminalError('documento_invalido', `Venda acima de R$ ${brl(Number(identificationLimitCents(uf)))}: informe o CPF ou o CNPJ do consumidor`, {
        field: 'consumer',
      });
    }
    // Before the number is taken: a closed till refuses the sale with nothing written.
    const cashSessionId = ctx.cashSession?.() ?? null;
    const now = ctx.clock();
    const at = iso(now);
    const serie = offline?.serie ?? ctx.serie;
    const nNF = store.series.takeNextNumber(serie);
    const request = buildNfceRequest(saleForRequestOf(sale, items, payments), serie, nNF);
    // Issued offline: signed now, and the body sent later is that XML, unchanged.
    const issued = offline?.issue(request);
    const receiptId = randomUUID();
    const key = randomUUID();
    store.receipts.insertReceipt({
      id: receiptId,
      sale_id: sale.id,
      serie,
      nnf: nNF,
      idempotency_key: key,
      state: 'pending',
      request_json: JSON.stringify(request),
      total_cents: s.totalCents,
      created_at: at,
      updated_at: at,
    });
    if (issued) {
      store.receipts.updateReceipt(
        receiptId,
        { tp_emis: 9, signed_xml: issued.signedXml, chave: issued.chave, qrcode: issued.qrcode, url_consulta: issued.urlConsulta },
        at,
      );
    }
    store.outbox.insertOutbox({
      kind: 'emit',
      receipt_id: receiptId,
      idempotency_key: key,
      payload: issued ? JSON.stringify({ xml: issued.signedXml }) : JSON.stringify(request),
      state: 'pending',
      next_attempt_at: now,
      created_at: at,
    });
    store.sales.markSaleFinished(sale.id, at, s.totalCents, s.changeCents, cashSessionId);
    return { sale: store.sales.sale(sale.id)!, receipt: store.receipts.receipt(receiptId)! };
  });
}
