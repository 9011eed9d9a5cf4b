import { describe, expect, it } from 'vitest';
import type { QueueStatus, ReceiptView, SaleItemView, SaleView } from '../../electron/api/terminal-api.ts';
import { receiptNews, saleNews, statusNews } from './announcements.ts';

const item = (id: number, over: Partial<SaleItemView> = {}): SaleItemView => ({
  id,
  code: `10${id}`,
  gtin: 'SEM GTIN',
  description: `Produto ${id}`,
  unit: 'UN',
  quantity: '1',
  unitPriceCents: 1000 * id,
  totalCents: 1000 * id,
  removed: false,
  ...over,
});

const sale = (items: SaleItemView[], over: Partial<SaleView> = {}): SaleView => {
  const totalCents = items.filter((i) => !i.removed).reduce((t, i) => t + i.totalCents, 0);
  return {
    id: 's1',
    state: 'open',
    openedAt: '',
    finishedAt: null,
    items,
    payments: [],
    consumer: null,
    totalCents,
    paidCents: 0,
    remainingCents: totalCents,
    changeCents: 0,
    consumerRequired: false,
    identificationLimitCents: 1_000_000,
    receiptId: null,
    ...over,
  };
};

const texts = (news: { text: string; politeness: string }[]) => news.map((n) => `${n.politeness}: ${n.text}`);

describe('what the sale says', () => {
  it('names the item added with quantity, unit price and total, and the new total', () => {
    const before = { sale: sale([item(1)]), selectedItemId: 1 };
    const after = { sale: sale([item(1), item(2, { quantity: '2.5', unit: 'KG', totalCents: 5000 })]), selectedItemId: 2 };
    expect(texts(saleNews(before, after))).toEqual([
      'polite: Item adicionado: Produto 2, 2,5 KG a R$\u00a020,00, R$\u00a050,00. Total R$\u00a060,00, 2 itens.',
    ]);
  });

  it('names a removed line, a changed quantity, and a line selected with its position', () => {
    const two = sale([item(1), item(2)]);
    expect(texts(saleNews({ sale: two, selectedItemId: 2 }, { sale: sale([item(1), item(2, { removed: true })]), selectedItemId: 2 }))).toEqual([
      'polite: Item removido: Produto 2, R$\u00a020,00. Total R$\u00a010,00, 1 item.',
    ]);
    const changed = sale([
      item(1),
      item(2, { removed: true }),
      item(3, { code: '102', description: 'Produto 2', quantity: '3', unitPriceCents: 2000, totalCents: 6000 }),
    ]);
    expect(texts(saleNews({ sale: two, selectedItemId: 2 }, { sale: changed, selectedItemId: 3 }))).toEqual([
      'polite: Quantidade alterada: Produto 2, 3 UN a R$\u00a020,00, R$\u00a060,00. Total R$\u00a070,00, 2 itens.',
    ]);
    expect(texts(saleNews({ sale: two, selectedItemId: 2 }, { sale: two, selectedItemId: 1 }))).toEqual([
      'polite: Item 1 de 2 selecionado: Produto 1, 1 UN a R$\u00a010,00, R$\u00a010,00.',
    ]);
  });

  it('says what is still due after a payment, then the change; and nothing for a sale picked up after a restart', () => {
    const open = sale([item(5)]);
    const part = sale([item(5)], {
      payments: [{ id: 1, tPag: '01', description: 'Dinheiro', amountCents: 2000, card: null }],
      paidCents: 2000,
      remainingCents: 3000,
    });
    expect(texts(saleNews({ sale: open, selectedItemId: 5 }, { sale: part, selectedItemId: 5 }))).toEqual([
      'polite: Pagamento lançado: Dinheiro R$\u00a020,00. Falta R$\u00a030,00.',
    ]);
    const paid = {
      ...part,
      payments: [...part.payments, { id: 2, tPag: '01', description: 'Dinheiro', amountCents: 4000, card: null }],
      paidCents: 6000,
      remainingCents: 0,
      changeCents: 1000,
    };
    expect(texts(saleNews({ sale: part, selectedItemId: 5 }, { sale: paid, selectedItemId: 5 }))).toEqual([
      'polite: Pagamento lançado: Dinheiro R$\u00a040,00. Pago. Troco R$\u00a010,00.',
    ]);
    expect(saleNews({ sale: null, selectedItemId: null }, { sale: sale([item(1), item(2)]), selectedItemId: null })).toEqual([]);
  });
});

const receipt = (over: Partial<ReceiptView> = {}): ReceiptView =>
  ({ id: 'r1', nNF: 7, state: 'pending', contingency: false, attention: null, motivo: null, codigoStatus: null, ...over }) as ReceiptView;

describe('what the receipt says', () => {
  it('the sale finished with its state and change; the contingency and a rejection interrupt', () => {
    expect(texts(receiptNews(null, { receipt: receipt(), changeCents: 471 }))).toEqual(['polite: Venda concluída: NFC-e nº 7, Pendente. Troco R$\u00a04,71.']);
    expect(texts(receiptNews({ receipt: receipt(), changeCents: 0 }, { receipt: receipt({ contingency: true }), changeCents: 0 }))).toEqual([
      'assertive: NFC-e nº 7 emitida em contingência offline: será transmitida quando o serviço voltar.',
    ]);
    expect(
      texts(
        receiptNews(
          { receipt: receipt(), changeCents: 0 },
          { receipt: receipt({ state: 'rejected', codigoStatus: '391', motivo: 'Rejeição: cartão' }), changeCents: 0 },
        ),
      ),
    ).toEqual(['assertive: NFC-e nº 7 rejeitada: 391 Rejeição: cartão.']);
    expect(receiptNews({ receipt: receipt(), changeCents: 0 }, { receipt: receipt({ state: 'authorized' }), changeCents: 0 })).toEqual([]);
  });
});

const queue = (over: Partial<QueueStatus> = {}, contingency: Partial<QueueStatus['contingency']> = {}): QueueStatus =>
  ({
    online: true,
    lastError: null,
    pending: 0,
    needsAttention: 0,
    ...over,
    contingency: { active: false, pending: 0, warnings: [], blocked: null, openTasks: [], ...contingency },
  }) as QueueStatus;

describe('what the status bar says', () => {
  it('the service lost and back, the contingency on, the queue only while it matters, nothing at start', () => {
    expect(statusNews(null, queue({ online: false }))).toEqual([]);
    expect(texts(statusNews(queue(), queue({ online: false, lastError: 'conexão recusada', pending: 1 })))).toEqual([
      'assertive: Serviço de emissão offline: conexão recusada.',
      'polite: Fila: 1 pendente.',
    ]);
    expect(statusNews(queue(), queue({ pending: 1 }))).toEqual([]);
    expect(texts(statusNews(queue(), queue({}, { active: true })))).toEqual([
      'assertive: Contingência offline ativa: as NFC-e são emitidas neste caixa e transmitidas depois.',
    ]);
    expect(texts(statusNews(queue({ online: false }), queue({ needsAttention: 1 })))).toEqual([
      'polite: Serviço de emissão online.',
      'assertive: 1 NFC-e aguardando ação (F9).',
    ]);
  });
});
