// The documents the terminal has the service issue: a receipt's NFC-e and a return's NF-e. Both
// travel the same way, run once for both by the submission worker (outbox-worker.ts): POST under
// the entry's idempotency key, then GET until the verdict. A lane holds what differs between
// them: the calls, the row an entry issues, and what each outcome writes to that row. The worker
// writes the outbox entry, in the same transaction; a lane never touches it.

import type { IssuanceClient, NfceAccepted, NfceDocument, NfeAccepted, NfeDocument, Submission, DevolucaoBody } from './api-client.ts';
import { audit, SYSTEM_ACTOR } from './managers.ts';
import {
  decideEmit,
  decidePoll,
  decideReturn,
  decideReturnPoll,
  documentOutcome,
  returnOutcome,
  type FollowDecision,
  type RetryPolicy,
  type SubmitDecision,
} from './outbox-rules.ts';
import { type Result } from './failures.ts';
import type { PosStore } from './pos-store.ts';
import type { OutboxRow } from './store/outbox.ts';
import type { ReceiptPatch, ReceiptRow } from './store/receipts.ts';
import type { ReturnRow } from './store/returns.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { takeNextNumberFor, type NextAttempt } from './numbering.ts';

/**
 * What a document the service returned means for its outbox entry. `renumbered`: the row took
 * another number (numbering.ts); the entry is over and `next` goes out instead.
 */
export type Settled = { entry: 'sent' } | { entry: 'done' } | { entry: 'blocked'; note: string | null } | { entry: 'renumbered'; next: NextAttempt };

export type LaneRow = { id: string; service_id: string | null };

export type DocumentLane<Row extends LaneRow, Accepted, Document> = {
  /** The row the entry issues, as it is now (read again inside the recording transaction). */
  row(entry: OutboxRow): Row | undefined;
  /** Tells the screen the row changed, after the transaction that changed it. */
  changed(row: Row): void;

  submit(entry: OutboxRow): Promise<Submission<Accepted, Document>>;
  fetch(serviceId: string): Promise<Document>;
  decideSubmit(result: Result<Submission<Accepted, Document>>, policy: RetryPolicy, random: () => number): SubmitDecision<Accepted, Document>;
  decideFollow(result: Result<Document>, polls: number, policy: RetryPolicy, random: () => number): FollowDecision<Document>;

  /** The service took it (202): the row is processing under the service's id and number. */
  accepted(row: Row, accepted: Accepted, at: string): void;
  /** Processing under a known id (a 409 named it), or back to pending (the service lost it). */
  mark(row: Row, patch: { state: 'processing'; service_id: string } | { state: 'pending' }, at: string): void;
  /** A document the service returned, final or not. */
  settle(row: Row, document: Document, now: number): Settled;
  /** The service refused the request: 'blocked' waits for the operator, 'failed' is over. */
  refuse(row: Row, message: string, now: number): 'blocked' | 'failed';
};

type LaneDeps = { store: PosStore; client: IssuanceClient; onChanged: (id: string) => void };
type ReceiptLaneDeps = LaneDeps & { clock: Clock };

/** A receipt's NFC-e. A refusal or a rejection waits for the operator to correct and resend it. */
export function receiptLane({ store, client, onChanged, clock }: ReceiptLaneDeps): DocumentLane<ReceiptRow, NfceAccepted, NfceDocument> {
  return {
    row: (entry) => store.receipts.receipt(entry.receipt_id),
    changed: (row) => onChanged(row.id),
    submit: (entry) => client.createNfce(JSON.parse(entry.payload), entry.idempotency_key),
    fetch: (serviceId) => client.getNfce(serviceId),
    decideSubmit: decideEmit,
    decideFollow: decidePoll,
    accepted: (row, accepted, at) =>
      store.receipts.updateReceipt(row.id, { state: 'processing', service_id: accepted.id, chave: accepted.chave ?? null, attention: null }, at),
    mark: (row, patch, at) => store.receipts.updateReceipt(row.id, patch, at),
    settle(row, document, now) {
      const outcome = documentOutcome(document, row.tp_emis === 9);
      if (outcome.entry === 'renumber') return { entry: 'renumbered', next: takeNextNumberFor(store, clock, row, document) };
      const patch: ReceiptPatch = { ...outcome.receipt };
      if ((patch.state === 'authorized' || patch.state === 'cancelled') && !row.authorized_seen_at) patch.authorized_seen_at = iso(now);
      store.receipts.updateReceipt(row.id, patch, iso(now));
      return outcome.entry === 'blocked' ? { entry: 'blocked', note: patch.attention ?? null } : { entry: outcome.entry };
    },
    refuse(row, message, now) {
      store.receipts.updateReceipt(row.id, { state: 'needs_attention', attention: message }, iso(now));
      return 'blocked';
    },
  };
}

/**
 * A return's NF-e (devolução); the entry's key is the return's (returns.idempotency_key). A
 * refusal or a rejection is final: a return is not corrected under its key, the manager asks for
 * a new return instead.
 */
export function returnLane({ store, client, onChanged }: LaneDeps): DocumentLane<ReturnRow, NfeAccepted, NfeDocument> {
  return {
    row: (entry) => store.returns.returnByKey(entry.idempotency_key),
    changed: (row) => onChanged(row.id),
    submit: (entry) => client.createDevolucao(JSON.parse(entry.payload) as DevolucaoBody, entry.idempotency_key),
    fetch: (serviceId) => client.getNfe(serviceId),
    decideSubmit: decideReturn,
    decideFollow: decideReturnPoll,
    accepted: (row, accepted, at) =>
      store.returns.updateReturn(
        row.id,
        { state: 'processing', service_id: accepted.id, serie: accepted.serie, nnf: accepted.numero, chave: accepted.chave, attention: null },
        at,
      ),
    mark: (row, patch, at) => store.returns.updateReturn(row.id, patch, at),
    settle(row, document, now) {
      const outcome = returnOutcome(document);
      store.returns.updateReturn(row.id, outcome.patch, iso(now));
      if (!outcome.final) return { entry: 'sent' };
      const authorized = outcome.patch.state === 'authorized';
      audit(store, () => now, {
        actor: SYSTEM_ACTOR,
        action: authorized ? 'devolucao_autorizada' : 'devolucao_rejeitada',
        receiptId: row.receipt_id,
        reason: authorized ? null : (outcome.patch.attention ?? null),
        details: { devolucao: row.id, serie: document.serie, nNF: document.numero, chave: document.chave, codigo_status: document.status },
      });
      return { entry: 'done' };
    },
    refuse(row, message, now) {
      store.returns.updateReturn(row.id, { state: 'needs_attention', attention: `${message}. Nada foi devolvido por ela.` }, iso(now));
      audit(store, () => now, {
        actor: SYSTEM_ACTOR,
        action: 'devolucao_recusada',
        receiptId: row.receipt_id,
        reason: message,
        details: { devolucao: row.id },
      });
      return 'failed';
    },
  };
}
