// Returns (NF-e de devolução, model 55) of an authorized receipt: the goods come back after the
// sale, in whole or in part, and the service issues an inbound NF-e that references the
// receipt's access key (service/nfe; docs/api.md, "NFC-e").
//
// Rules at the terminal:
// - Only an authorized receipt (not cancelled, not being cancelled) can have a return. It is
//   allowed at any time after the authorization: inside the cancellation window the screen
//   offers the cancellation first (CancellationInfo.remedy 'cancelar'), but a partial return
//   (some items back, the rest kept) is legitimate then too.
// - A manager authorizes it with the PIN; the reason (15 to 255 characters) goes in the NF-e.
// - Each sale item comes back at most in the quantity sold minus what the receipt's other
//   returns (pending, processing or authorized) already brought back; refused here naming
//   `items[i].quantity`. The service checks the same again against what it knows.
// - The items are the sale's items not removed, in order: item k of that list is nItem k of
//   the receipt (sales.ts buildNfceRequest writes det in that order).
// - One return of a receipt at a time: while one is pending or processing a second is refused
//   (the outbox allows one live command of a kind per receipt).
// - The return is an outbox command ('return') with its own idempotency key, made now and
//   used by every attempt; it is written in one transaction with the return, its items and the
//   audit entry, so it survives a crash and is sent until its outcome is known
//   (outbox-worker.ts). A refusal or rejection is final for that return: the manager asks for a
//   new one (new key).
// - Values: each item's share uses the service's rule (fiscal/nfe/devolucao.ts
//   proportionalShare: cumulative half-up rounding); the service's total replaces ours when it
//   answers.

import { randomUUID } from 'node:crypto';
import { justification as checkJustification } from '../../fiscal/events.ts';
import { proportionalShare } from '../../fiscal/nfe/devolucao.ts';
import { parseDecimal } from '../../fiscal/money.ts';
import type { ReturnInput, ReturnView } from '../api/terminal-api.ts';
import type { DevolucaoBody } from './api-client.ts';
import { checked, TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import type { ReceiptRow } from './store/receipts.ts';
import type { ReturnRow } from './store/returns.ts';
import type { SaleItemRow } from './store/sales.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { existingReceipt } from './receipt-row.ts';
import { formatQuantity, normalizeConsumerDocument } from './sales.ts';

export type ReturnsContext = { store: PosStore; clock: Clock };

/** One item coming back: the sale item, its nItem on the receipt, how much and its value. */
type Line = { item: SaleItemRow; nItem: number; units: bigint; totalCents: bigint };

const unitsOf = (value: unknown, field: string): bigint => {
  const units = checked('quantidade_invalida', field, () => parseDecimal(value, 4, field));
  if (units <= 0n) throw new TerminalError('quantidade_invalida', 'Quantidade devolvida deve ser maior que zero', { field });
  return units;
};

function assertReturnable(store: PosStore, r: ReceiptRow): void {
  if (r.state === 'cancelled' || r.state === 'cancelling') {
    throw new TerminalError('estado_invalido', 'Esta NFC-e foi cancelada ou está sendo cancelada: não há o que devolver');
  }
  if (r.state !== 'authorized' || !r.chave) throw new TerminalError('estado_invalido', 'Só uma NFC-e autorizada pode ter devolução');
  if (store.outbox.liveOutbox(r.id, 'return')) {
    throw new TerminalError('estado_invalido', 'Já há uma devolução desta NFC-e em andamento; aguarde o resultado dela');
  }
}

/** The lines of the return: the ones asked for, or every item with what is left of it. */
function planLines(store: PosStore, r: ReceiptRow, asked: ReturnInput['items']): Line[] {
  const active = store.sales.items(r.sale_id).filter((i) => i.removed_at === null);
  const returned = store.returns.returnedUnits(r.id);
  const left = (i: SaleItemRow) => BigInt(i.quantity_units) - BigInt(returned.get(i.id) ?? 0);
  const line = (item: SaleItemRow, units: bigint): Line => {
    const before = BigInt(returned.get(item.id) ?? 0);
    const sold = BigInt(item.quantity_units);
    return { item, nItem: active.indexOf(item) + 1, units, totalCents: proportionalShare(BigInt(item.total_cents), sold, before, units) };
  };
  if (asked === undefined) {
    const lines = active.filter((i) => left(i) > 0n).map((i) => line(i, left(i)));
    if (lines.length === 0) throw new TerminalError('quantidade_invalida', 'Todos os itens desta venda já foram devolvidos', { field: 'items' });
    return lines;
  }
  if (!Array.isArray(asked) || asked.length === 0) throw new TerminalError('quantidade_invalida', 'Informe ao menos um item devolvido', { field: 'items' });
  const seen = new Set<number>();
  return asked.map((a, i) => {
    const item = active.find((s) => s.id === a?.itemId);
    if (!item) throw new TerminalError('quantidade_invalida', 'Item não encontrado nesta venda', { field: `items[${i}].itemId` });
    if (seen.has(item.id)) throw new TerminalError('quantidade_invalida', 'Item repetido: informe cada item uma vez', { field: `items[${i}].itemId` });
    seen.add(item.id);
    const units = unitsOf(a.quantity, `items[${i}].quantity`);
    if (units > left(item)) {
      const rest = left(item) > 0n ? left(item) : 0n;
      throw new TerminalError(
        'quantidade_invalida',
        `${item.description}: no máximo ${formatQuantity(rest)} ${item.unit} para devolver (vendido ${formatQuantity(BigInt(item.quantity_units))}, já devolvido ${formatQuantity(BigInt(item.quantity_units) - rest)})`,
        { field: `items[${i}].quantity` },
      );
    }
    return line(item, units);
  });
}

/** Who brings the goods back: the receipt's consumer, else the one the manager typed. */
function destinatarioOf(store: PosStore, r: ReceiptRow, consumer: ReturnInput['consumer']): DevolucaoBody['destinatario'] {
  const saleDoc = store.sales.sale(r.sale_id)?.consumer_doc ?? null;
  const name = consumer?.name === undefined ? undefined : consumer.name.trim();
  if (name !== undefined && (name.length < 2 || name.length > 60)) {
    throw new TerminalError('documento_invalido', 'Nome de quem devolve: de 2 a 60 caracteres', { field: 'consumer.name' });
  }
  const typed = consumer?.document === undefined || consumer.document.trim() === '' ? undefined : normalizeConsumerDocument(consumer.document);
  if (saleDoc !== null) {
    if (typed && typed.document !== saleDoc) {
      throw new TerminalError('documento_invalido', 'A devolução é de quem comprou: o documento difere do consumidor da NFC-e', { field: 'consumer.document' });
    }
    return { [saleDoc.length === 11 ? 'cpf' : 'cnpj']: saleDoc, ...(name && { nome: name }) };
  }
  if (!typed) {
    throw new TerminalError('documento_invalido', 'A NFC-e não identificou o consumidor: informe o CPF ou CNPJ e o nome de quem devolve', {
      field: 'consumer',
    });
  }
  if (!name) throw new TerminalError('documento_invalido', 'Informe o nome de quem devolve', { field: 'consumer.name' });
  return { [typed.kind]: typed.document, nome: name };
}

/**
 * Checks the request, authorizes the manager and queues the return (one transaction); returns
 * the new return's id. The PIN is asked only for a request that can go through.
 */
export async function requestReturn(ctx: ReturnsContext, receiptId: string, input: ReturnInput): Promise<string> {
  const { store, clock } = ctx;
  const receipt = (): ReceiptRow => existingReceipt(store, receiptId);
  const first = receipt();
  assertReturnable(store, first);
  const reason = checked('justificativa_invalida', 'reason', () => checkJustification(input?.reason, 'reason'));
  planLines(store, first, input?.items);
  destinatarioOf(store, first, input?.consumer);
  const manager = await authorizeManager(store, clock, input, 'devolucao', first.id);

  return store.transaction(() => {
    // Again inside the transaction: the PIN check awaited, and something may have changed.
    const r = receipt();
    assertReturnable(store, r);
    const lines = planLines(store, r, input.items);
    const destinatario = destinatarioOf(store, r, input.consumer);
    const body: DevolucaoBody = {
      chave_nfce: r.chave!,
      itens: lines.map((l) => ({ numero_item: l.nItem, quantidade: formatQuantity(l.units) })),
      justificativa: reason,
      ...(destinatario && { destinatario }),
    };
    const id = randomUUID();
    const key = randomUUID();
    const now = clock();
    const at = iso(now);
    const total = lines.reduce((a, l) => a + l.totalCents, 0n);
    store.returns.insertReturn({
      id,
      receipt_id: r.id,
      idempotency_key: key,
      state: 'pending',
      request_json: JSON.stringify(body),
      reason,
      total_cents: Number(total),
      manager_id: manager.id,
      created_at: at,
    });
    for (const l of lines)
      store.returns.insertReturnItem({ return_id: id, sale_item_id: l.item.id, quantity_units: Number(l.units), total_cents: Number(l.totalCents) });
    store.outbox.insertOutbox({
      kind: 'return',
      receipt_id: r.id,
      idempotency_key: key,
      payload: JSON.stringify(body),
      state: 'pending',
      next_attempt_at: now,
      created_at: at,
    });
    audit(store, clock, {
      actor: actorOfManager(manager),
      action: 'devolucao_solicitada',
      receiptId: r.id,
      reason,
      details: {
        devolucao: id,
        nNF: r.nnf,
        serie: r.serie,
        chave: r.chave,
        itens: lines.map((l) => ({ itemId: l.item.id, nItem: l.nItem, quantidade: formatQuantity(l.units), totalCents: Number(l.totalCents) })),
      },
    });
    return id;
  });
}

export function returnView(store: PosStore, row: ReturnRow): ReturnView {
  const items = store.sales.items(store.receipts.receipt(row.receipt_id)!.sale_id);
  return {
    id: row.id,
    receiptId: row.receipt_id,
    state: row.state,
    serie: row.serie,
    nNF: row.nnf,
    chave: row.chave,
    protocolo: row.protocolo,
    codigoStatus: row.codigo_status,
    motivo: row.motivo,
    totalCents: row.total_cents,
    items: store.returns.returnItems(row.id).map((i) => ({
      itemId: i.sale_item_id,
      description: items.find((s) => s.id === i.sale_item_id)?.description ?? '',
      quantity: formatQuantity(BigInt(i.quantity_units)),
      totalCents: i.total_cents,
    })),
    createdAt: row.created_at,
    autorizadoEm: row.autorizado_em,
    attention: row.attention,
  };
}
