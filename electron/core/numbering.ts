// A receipt number is used once, whatever happened to this terminal's database. The terminal
// numbers its NFC-e itself (sales.ts takes the next number of the series in the sale's
// transaction), so a database put back from a copy, or carried to a new computer, would start
// again from where the copy was. Two rules keep the numbering right:
//
// 1. Never below the service. At every start the terminal claims its series at the service
//    (series-registry.ts), whose answer says each series' highest number (`numeracao`); the
//    next number is raised above it, with an audit entry saying from where to where. A sale
//    made before the answer is waited for (at most the claim's timeout) once per start.
// 2. A number the authority says is taken is left for the next. SEFAZ answers 539 ("Duplicidade
//    de NF-e, com diferença na Chave de Acesso") when the number is authorized under another key
//    (204 too, where an authorizer names the other key): the receipt's number belongs to an NFC-e
//    this terminal no longer knows of, so the sale takes the next number, with a new idempotency
//    key (a new document), and goes out again. Sending the same number again could never
//    succeed. Nothing is voided: the number is the other NFC-e's, authorized; the rejected
//    attempt consumed nothing (docs/fiscal.md, "Numbering").
//    A receipt issued in offline contingency whose number turns out taken is issued again
//    online under the new number: its printed copy carries a key the authority refused.

import { randomUUID } from 'node:crypto';
import type { NfceDocument } from './api-client.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { audit, SYSTEM_ACTOR } from './managers.ts';
import { type PosStore } from './pos-store.ts';
import { NO_VERDICT, type ReceiptRow } from './store/receipts.ts';
import { buildNfceRequest } from './sales.ts';

/** What the service says of a series (PUT /api/v1/terminais/{id}, `numeracao`). */
export type SeriesNumbering = { serie: number; ultimo_numero: number };

/**
 * Raises each series' next number above the service's highest, when it is not already: one
 * transaction, audited. Returns the series raised with their old and new next numbers.
 */
export function raiseToService(store: PosStore, clock: Clock, numbering: readonly SeriesNumbering[]): { serie: number; from: number; to: number }[] {
  return store.transaction(() => {
    const raised: { serie: number; from: number; to: number }[] = [];
    for (const { serie, ultimo_numero } of numbering) {
      store.series.ensureSeries(serie);
      const from = store.series.nextNumber(serie)!;
      if (from > ultimo_numero) continue;
      store.series.raiseNextNumber(serie, ultimo_numero + 1);
      raised.push({ serie, from, to: ultimo_numero + 1 });
    }
    if (raised.length) {
      audit(store, clock, {
        actor: SYSTEM_ACTOR,
        action: 'numeracao_ajustada',
        reason:
          'O serviço de emissão já tem números desta série acima do próximo deste terminal (banco restaurado de uma cópia, ou levado a outro computador): a numeração continua depois deles',
        details: raised.map((r) => ({ serie: r.serie, proximo_antes: r.from, proximo_agora: r.to })),
      });
    }
    return raised;
  });
}

/** The other key a 204's or 539's xMotivo names (`[chNFe:…]`), if any. */
const otherKeyOf = (motivo: string | null | undefined): string | undefined => /chNFe\s*:?\s*([0-9]{44})/.exec(motivo ?? '')?.[1];

/** Whether the authority's rejection of `doc` says its number belongs to another NFC-e. */
export function numberTaken(doc: Pick<NfceDocument, 'status' | 'codigo_status' | 'motivo' | 'chave'>): boolean {
  if (doc.status !== 'rejeitado') return false;
  if (doc.codigo_status === '539') return true;
  if (doc.codigo_status !== '204') return false;
  const other = otherKeyOf(doc.motivo);
  return other !== undefined && other !== doc.chave;
}

/** What the receipt's new attempt is sent with: its outbox entry's key and body. */
export type NextAttempt = { idempotencyKey: string; payload: string; note: string };

/**
 * Gives the sale of `r` the next number of its series after the authority said its number is
 * taken (rule 2 above). The caller holds the transaction and retires the old outbox entry before
 * writing the new one.
 */
export function takeNextNumberFor(store: PosStore, clock: Clock, r: ReceiptRow, doc: Pick<NfceDocument, 'codigo_status' | 'motivo'>): NextAttempt {
  const at = iso(clock());
  const nNF = store.series.takeNextNumber(r.serie);
  const request = buildNfceRequest(store.sales.saleForRequest(r.sale_id)!, r.serie, nNF);
  const key = randomUUID();
  store.receipts.renumberReceipt(r.id, { serie: r.serie, nnf: nNF, idempotency_key: key }, at);
  store.receipts.updateReceipt(
    r.id,
    {
      state: 'pending',
      tp_emis: 1,
      signed_xml: null,
      request_json: JSON.stringify(request),
      chave: null,
      qrcode: null,
      url_consulta: null,
      ...NO_VERDICT,
    },
    at,
  );
  const note = `O número ${r.nnf} (série ${r.serie}) já é de outra NFC-e na SEFAZ (${doc.codigo_status}): a venda segue com o número ${nNF}.`;
  audit(store, clock, {
    actor: SYSTEM_ACTOR,
    action: 'numero_em_uso',
    receiptId: r.id,
    reason: note,
    details: {
      antes: { serie: r.serie, nNF: r.nnf, chave: r.chave, contingencia: r.tp_emis === 9 },
      depois: { serie: r.serie, nNF },
      sefaz: { codigo_status: doc.codigo_status, motivo: doc.motivo },
    },
  });
  return { idempotencyKey: key, payload: JSON.stringify(request), note };
}
