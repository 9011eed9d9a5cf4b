// What a manager does with a receipt the authority rejected or the worker could not settle
// (state `rejected` or `needs_attention`, its emit command blocked): correct it and send it
// again under the same number, or give the number up (inutilização at the service).
//
// - A correction changes only what the cashier can get wrong at the counter: the payments and
//   the consumer's document. The same outbox entry goes out again with the same idempotency key
//   and the same number: after a rejection the key is free again at the service, and the new
//   attempt replaces the rejected one. A receipt issued in contingency cannot be corrected: it
//   was signed and printed as it is.
// - A void is an outbox command of its own (its own key), for this one number; a contingency
//   receipt's number cannot be voided (it exists at the authority once transmitted).
// Each is one transaction with its audit entry, the state checked again inside it.

import { randomUUID } from 'node:crypto';
import { justification as checkJustification } from '../../fiscal/events.ts';
import type { CorrectionInput, ReasonedAuthorization, ReceiptState, VoidInput } from '../api/terminal-api.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { settleRefund } from './cash-session.ts';
import { checked, TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager, managerReason } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import { existingReceipt } from './receipt-row.ts';
import { saleForRequestOf } from './store/sales.ts';
import * as sales from './sales.ts';

/** The receipts waiting for the manager: corrected or voided here. */
export const NEEDS_OPERATOR: readonly ReceiptState[] = ['rejected', 'needs_attention'];

export type RemediesContext = { store: PosStore; clock: Clock; sales: sales.SalesContext };

const NOT_CORRECTABLE = 'Só uma NFC-e rejeitada ou com pendência pode ser corrigida';
const NOT_VOIDABLE = 'Só o número de uma NFC-e rejeitada ou com pendência pode ser inutilizado';

/** Rewrites the sale's payments and consumer, and queues the receipt's emission again. */
export async function correctAndResubmit(ctx: RemediesContext, receiptId: string, correction: CorrectionInput, auth: ReasonedAuthorization): Promise<void> {
  const { store, clock } = ctx;
  const reason = managerReason(auth, 'da correção');
  const r0 = existingReceipt(store, receiptId);
  if (!NEEDS_OPERATOR.includes(r0.state)) throw new TerminalError('estado_invalido', NOT_CORRECTABLE);
  const actor = actorOfManager(await authorizeManager(store, clock, auth, 'correcao', r0.id));
  const consumer =
    correction?.consumer === undefined
      ? undefined
      : correction.consumer === null || correction.consumer.trim() === ''
        ? null
        : sales.normalizeConsumerDocument(correction.consumer);
  store.transaction(() => {
    const r = existingReceipt(store, receiptId);
    if (!NEEDS_OPERATOR.includes(r.state)) throw new TerminalError('estado_invalido', NOT_CORRECTABLE);
    if (r.tp_emis === 9)
      throw new TerminalError('estado_invalido', 'NFC-e emitida em contingência não pode ser corrigida: ela foi assinada e impressa como está');
    const emit = store.outbox.liveOutbox(r.id, 'emit');
    if (!emit || emit.state !== 'blocked') throw new TerminalError('estado_invalido', 'Esta NFC-e não está aguardando correção');
    const sale = store.sales.sale(r.sale_id)!;
    const before = { payments: store.sales.payments(sale.id).map(sales.paymentView), consumer: sale.consumer_doc };
    if (correction?.payments !== undefined) {
      if (!Array.isArray(correction.payments)) throw new TerminalError('pagamento_invalido', 'Pagamentos inválidos', { field: 'payments' });
      sales.replacePayments(ctx.sales, sale, correction.payments);
    }
    if (consumer !== undefined) store.sales.setConsumer(sale.id, consumer?.document ?? null);
    const updated = store.sales.sale(sale.id)!;
    const items = store.sales.items(sale.id);
    const payments = store.sales.payments(sale.id);
    const settled = sales.assertPaymentsSettle(items, payments);
    const request = sales.buildNfceRequest(saleForRequestOf(updated, items, payments), r.serie, r.nnf);
    const now = clock();
    const at = iso(now);
    store.sales.updateSaleChange(sale.id, settled.changeCents);
    store.receipts.updateReceipt(
      r.id,
      { state: 'pending', request_json: JSON.stringify(request), attention: null, codigo_status: null, motivo: null, corrections: r.corrections + 1 },
      at,
    );
    store.outbox.updateOutbox(emit.seq, { state: 'pending', payload: JSON.stringify(request), attempts: 0, last_error: null, next_attempt_at: now }, at);
    audit(store, clock, {
      actor,
      action: 'correcao_reenvio',
      receiptId: r.id,
      reason,
      details: {
        nNF: r.nnf,
        rejeicao: r.codigo_status ? { codigo_status: r.codigo_status, motivo: r.motivo } : null,
        pendencia: r.attention,
        antes: before,
        depois: { payments: payments.map(sales.paymentView), consumer: updated.consumer_doc },
      },
    });
  });
}

/** Queues the inutilização of the receipt's number; the receipt is `voiding` until the verdict. */
export async function requestVoid(ctx: RemediesContext, receiptId: string, input: VoidInput): Promise<void> {
  const { store, clock } = ctx;
  const r0 = existingReceipt(store, receiptId);
  if (!NEEDS_OPERATOR.includes(r0.state)) throw new TerminalError('estado_invalido', NOT_VOIDABLE);
  const justificativa = checked('justificativa_invalida', 'justification', () => checkJustification(input?.justification, 'justification'));
  const manager = await authorizeManager(store, clock, input, 'inutilizacao', r0.id);
  store.transaction(() => {
    const r = existingReceipt(store, receiptId);
    if (!NEEDS_OPERATOR.includes(r.state)) throw new TerminalError('estado_invalido', NOT_VOIDABLE);
    if (r.tp_emis !== 1) throw new TerminalError('estado_invalido', 'Número de NFC-e emitida em contingência não pode ser inutilizado');
    const emit = store.outbox.liveOutbox(r.id, 'emit');
    if (emit && emit.state !== 'blocked') throw new TerminalError('estado_invalido', 'Esta NFC-e ainda está sendo enviada');
    const now = clock();
    const at = iso(now);
    store.outbox.insertOutbox({
      kind: 'void',
      receipt_id: r.id,
      idempotency_key: randomUUID(),
      payload: JSON.stringify({ serie: r.serie, numero_inicial: r.nnf, numero_final: r.nnf, justificativa }),
      state: 'pending',
      next_attempt_at: now,
      created_at: at,
    });
    store.receipts.updateReceipt(r.id, { state: 'voiding', attention: null }, at);
    // The sale is abandoned: for a sale of a closed till, its cash goes back from the open drawer.
    settleRefund(store, clock, r.id, manager);
    audit(store, clock, {
      actor: actorOfManager(manager),
      action: 'inutilizacao_solicitada',
      receiptId: r.id,
      reason: justificativa,
      details: { serie: r.serie, nNF: r.nnf, codigo_status: r.codigo_status, motivo: r.motivo },
    });
  });
}
