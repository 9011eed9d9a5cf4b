// The sales caught by the outage: an online receipt sent (or about to be sent) when contingency
// began, whose outcome the terminal did not know. The sale is covered at once by a receipt
// issued offline, and the online attempt is reconciled once the service is back.
//
// Number of the re-issued receipt: a NEW one, with a new key (tpEmis 9). docs/fiscal.md, "Offline contingency": "never
// reuse in contingency a number already transmitted as Normal", and an attempt whose answer was
// lost may have been transmitted. The flow then follows the SEFAZ one quoted there (and 6.2):
// - the online attempt came back authorized → cancel it by substitution (event 110112 through
//   the service's `cancelar` with `chave_substituta` = the contingency receipt's key), once the
//   contingency receipt is authorized itself (the authority requires the substitute to exist);
// - it never was → void its number (inutilização).
// The sale keeps ONE receipt row (receipts.sale_id is unique): the row takes the contingency
// number, key and XML, and the superseded attempt (number, key, body, service id) moves to a
// reconciliation task, in the same transaction, together with retiring its outbox entry and
// writing the new one. A result of the old attempt still in flight is then ignored by the
// worker (the entry it would record into is no longer live).
//
// Working out the outcome without ever issuing:
// - the service id is known (the service accepted it): GET the document; processando → ask
//   again later; autorizado → substitution; rejeitado → void; cancelado → nothing left to do.
// - no id (no answer ever came back): void the number first. 102 → it was never authorized,
//   done. 241 ("um número da faixa já foi utilizado") → it WAS authorized, which can only be
//   through our key: POST the same body with the same key, which the contract answers with the
//   authorized document (200 replay) and never with a second issuance; then substitution.
// Anything that cannot be done (the 168-hour window passed, a refusal) leaves the task open for
// the manager with the reason (`blocked`); nothing is dropped.
//
// One exception keeps the number: a receipt certainly never sent (finished in this process's
// life and never handed to the service; the worker knows, outbox-worker.ts `neverSent`), when
// contingency numbers share its series. Nobody else ever saw that number, so the offline receipt
// takes it and there is nothing to reconcile.

import { randomUUID } from 'node:crypto';
import type { ReconciliationTask, SupersededAttempt } from '../../api/terminal-api.ts';
import type { InutilizarResult, IssuanceClient, NfceDocument, NfceSubmission } from '../api-client.ts';
import { audit, SYSTEM_ACTOR } from '../managers.ts';
import { backoffMs } from '../outbox-rules.ts';
import { failureOf, type Failure, type HttpFailure, type Result } from '../failures.ts';
import { refusalForPeople, transientForPeople } from '../service-messages.ts';
import { type PosStore } from '../pos-store.ts';
import type { ReconciliationOutcome, ReconciliationPatch, ReconciliationTaskRow } from '../store/contingency.ts';
import { NO_VERDICT, type ReceiptRow } from '../store/receipts.ts';
import { iso, type Clock } from '../../../base/common/clock.ts';
import { buildNfceRequest, type OfflineIssuer } from '../sales.ts';
import { WakeableLoop } from '../wakeable-loop.ts';

export const VOID_JUSTIFICATION = 'Número não utilizado: a venda foi emitida em contingência offline com outro número';
export const SUBSTITUTION_JUSTIFICATION = 'Venda coberta pela NFC-e emitida em contingência offline que substitui esta';

// =============================================================================================
// Re-issuing an in-doubt sale (inside the transaction that opens the period)

/**
 * Issues the sale of `r` (an online receipt pending or processing) offline, and settles what
 * becomes of its online attempt. `neverSent`: the attempt certainly never reached the service;
 * then, in the same series, the offline receipt keeps its number and nothing is left to
 * reconcile. Otherwise it takes the next number of the contingency series and the attempt goes
 * to a reconciliation task. The caller holds the transaction. Returns the receipt as it now is.
 */
export function supersedeInDoubt(store: PosStore, clock: Clock, r: ReceiptRow, issuer: OfflineIssuer, neverSent = false): ReceiptRow {
  const now = clock();
  const at = iso(now);
  const emit = store.outbox.liveOutbox(r.id, 'emit');
  if (emit) store.outbox.updateOutbox(emit.seq, { state: 'failed', last_error: 'substituída pela NFC-e emitida em contingência', completed_at: at }, at);
  const serie = issuer.serie;
  const keepNumber = neverSent && serie === r.serie;
  const nNF = keepNumber ? r.nnf : store.series.takeNextNumber(serie);
  const request = buildNfceRequest(store.sales.saleForRequest(r.sale_id)!, serie, nNF);
  const issued = issuer.issue(request);
  if (!keepNumber)
    store.contingency.insertReconciliationTask({
      id: randomUUID(),
      receipt_id: r.id,
      serie: r.serie,
      nnf: r.nnf,
      idempotency_key: r.idempotency_key,
      request_json: r.request_json,
      service_id: r.service_id,
      chave: r.chave,
      kind: 'verificar',
      state: 'open',
      void_key: randomUUID(),
      cancel_key: randomUUID(),
      next_attempt_at: now,
      created_at: at,
    });
  const key = randomUUID();
  store.receipts.renumberReceipt(r.id, { serie, nnf: nNF, idempotency_key: key }, at);
  store.receipts.updateReceipt(
    r.id,
    {
      state: 'pending',
      tp_emis: 9,
      signed_xml: issued.signedXml,
      request_json: JSON.stringify(request),
      chave: issued.chave,
      qrcode: issued.qrcode,
      url_consulta: issued.urlConsulta,
      ...NO_VERDICT,
    },
    at,
  );
  store.outbox.insertOutbox({
    kind: 'emit',
    receipt_id: r.id,
    idempotency_key: key,
    payload: JSON.stringify({ xml: issued.signedXml }),
    state: 'pending',
    next_attempt_at: now,
    created_at: at,
  });
  audit(store, clock, {
    actor: SYSTEM_ACTOR,
    action: 'contingencia_reemissao',
    receiptId: r.id,
    reason: keepNumber
      ? 'NFC-e ainda não enviada quando a contingência começou: emitida em contingência com o mesmo número'
      : 'NFC-e enviada sem resposta antes da contingência: venda emitida de novo em contingência',
    details: { antes: { serie: r.serie, nNF: r.nnf, chave: r.chave, estado: r.state }, depois: { serie, nNF, chave: issued.chave } },
  });
  return store.receipts.receipt(r.id)!;
}

// =============================================================================================
// What each answer means (pure)

const RETRYABLE_4XX = new Set([401, 408, 409, 429]);

function retryable(f: Failure): boolean {
  return f.kind === 'network' || f.status >= 500 || RETRYABLE_4XX.has(f.status);
}

export type Later = { action: 'later'; note: string };
export type Blocked = { action: 'blocked'; message: string };

export type LookupDecision =
  | { action: 'authorized'; document: NfceDocument }
  | { action: 'cancelled'; document: NfceDocument }
  | { action: 'rejected'; document: NfceDocument }
  | { action: 'processing' }
  | { action: 'unknown_id' }
  | Later
  | Blocked;

export function decideLookup(result: Result<NfceDocument>): LookupDecision {
  if (result.ok) {
    const doc = result.value;
    if (doc.status === 'autorizado') return { action: 'authorized', document: doc };
    if (doc.status === 'cancelado') return { action: 'cancelled', document: doc };
    if (doc.status === 'rejeitado') return { action: 'rejected', document: doc };
    return { action: 'processing' };
  }
  const f = result.failure;
  if (retryable(f)) return { action: 'later', note: transientForPeople(f) };
  if ((f as HttpFailure).status === 404) return { action: 'unknown_id' };
  return { action: 'blocked', message: refusalForPeople('consultar', f as HttpFailure) };
}

export type VoidStepDecision = { action: 'voided'; result: InutilizarResult | null } | { action: 'number_used' } | Later | Blocked;

// 563: this very range already voided (our earlier request, its answer lost); 206/256: the number
// already voided. 241: a number of the range was used, i.e. authorized.
const ALREADY_VOIDED = /\b(563|206|256)\b/;
const NUMBER_USED = /\b241\b/;

export function decideVoidStep(result: Result<InutilizarResult>): VoidStepDecision {
  if (result.ok) return { action: 'voided', result: result.value };
  const f = result.failure;
  if (retryable(f)) return { action: 'later', note: transientForPeople(f) };
  const h = f as HttpFailure;
  // The authority's cStat; from the message text when an older service sends no `rejeicao`.
  const text = h.rejeicao?.cStat ?? `${h.message} ${h.details.map((d) => d.message).join(' ')}`;
  if (h.status === 422 && NUMBER_USED.test(text)) return { action: 'number_used' };
  if (h.status === 422 && ALREADY_VOIDED.test(text)) return { action: 'voided', result: null };
  return { action: 'blocked', message: refusalForPeople('inutilizar', h) };
}

export type ReplayDecision =
  | { action: 'authorized'; document: NfceDocument }
  | { action: 'cancelled'; document: NfceDocument }
  | { action: 'accepted'; serviceId: string }
  | Later
  | Blocked;

export function decideReplay(result: Result<NfceSubmission>): ReplayDecision {
  if (result.ok) {
    const sub = result.value;
    if (!sub.replay) return { action: 'accepted', serviceId: sub.body.id };
    if (sub.body.status === 'cancelado') return { action: 'cancelled', document: sub.body };
    return { action: 'authorized', document: sub.body };
  }
  const f = result.failure;
  if (f.kind === 'http' && f.status === 409 && f.documentId) return { action: 'accepted', serviceId: f.documentId };
  if (retryable(f)) return { action: 'later', note: transientForPeople(f) };
  return { action: 'blocked', message: refusalForPeople('consultar', f as HttpFailure) };
}

export type SubstitutionDecision = { action: 'cancelled'; document: NfceDocument } | { action: 'verify'; message: string } | Later | Blocked;

export function decideSubstitution(result: Result<NfceDocument>): SubstitutionDecision {
  if (result.ok) {
    if (result.value.status === 'cancelado') return { action: 'cancelled', document: result.value };
    return { action: 'verify', message: `O serviço respondeu com a NFC-e em "${result.value.status}"` };
  }
  const f = result.failure;
  if (retryable(f)) return { action: 'later', note: transientForPeople(f) };
  const h = f as HttpFailure;
  if (h.code === 'estado_invalido') return { action: 'verify', message: refusalForPeople('substituir', h) };
  return { action: 'blocked', message: refusalForPeople('substituir', h) };
}

// =============================================================================================
// The task as the manager sees it

export function reconciliationTaskView(t: ReconciliationTaskRow, receipt: ReceiptRow | undefined): ReconciliationTask {
  const original = `NFC-e nº ${t.nnf} (série ${t.serie})`;
  const substitute = receipt ? `NFC-e de contingência nº ${receipt.nnf} (série ${receipt.serie})` : 'NFC-e de contingência';
  let description: string;
  switch (t.kind) {
    case 'verificar':
      description =
        `${original}, enviada sem resposta antes da contingência; a venda está na ${substitute}. ` +
        'A verificar no serviço: se foi autorizada, será cancelada por substituição; se não, o número será inutilizado.';
      break;
    case 'cancelar_substituicao':
      description = `${original} foi autorizada, mas a venda está na ${substitute}: cancelar por substituição (evento 110112).`;
      break;
    case 'inutilizar':
      description = `${original} não foi autorizada e a venda está na ${substitute}: inutilizar o número.`;
      break;
  }
  if (t.state === 'blocked') description += ` Requer atenção: ${t.last_error ?? 'veja o registro'}`;
  return {
    id: t.id,
    receiptId: t.receipt_id,
    // Until the service answers, the likely step is the void (the usual outcome of a lost send).
    kind: t.kind === 'cancelar_substituicao' ? 'cancelar_substituicao' : 'inutilizar',
    description,
    canResume: t.state === 'blocked',
    createdAt: t.created_at,
  };
}

/** A superseded attempt as the receipts list shows it, beside the contingency receipt that covers its sale. */
export function supersededAttemptView(t: ReconciliationTaskRow): SupersededAttempt {
  let state: SupersededAttempt['state'];
  if (t.state === 'done') state = t.outcome === 'cancelada_substituicao' ? 'cancelled_by_substitution' : t.outcome === 'ja_cancelada' ? 'cancelled' : 'voided';
  else if (t.state === 'blocked') state = 'blocked';
  else state = t.kind === 'verificar' ? 'checking' : t.kind === 'cancelar_substituicao' ? 'cancelling' : 'voiding';
  return { serie: t.serie, nNF: t.nnf, chave: t.chave, state };
}

// =============================================================================================
// The runner

export type ReconcilerOptions = {
  store: PosStore;
  client: IssuanceClient;
  clock: Clock;
  /** Backoff of a task that could not go on (service away, document still processando). */
  baseMs?: number;
  capMs?: number;
  random?: () => number;
  /** A task changed (for the contingency status). */
  onChange?: (receiptId: string) => void;
};

async function attempt<T>(call: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, failure: failureOf(err) };
  }
}

/** Works the open tasks one at a time, each at its own pace, until each has an outcome. */
export class Reconciler {
  private readonly store: PosStore;
  private readonly client: IssuanceClient;
  private readonly clock: Clock;
  private readonly baseMs: number;
  private readonly capMs: number;
  private readonly random: () => number;
  private readonly onChange: (receiptId: string) => void;
  private readonly loop: WakeableLoop;

  constructor(options: ReconcilerOptions) {
    this.store = options.store;
    this.client = options.client;
    this.clock = options.clock;
    this.baseMs = options.baseMs ?? 1_000;
    this.capMs = options.capMs ?? 30_000;
    this.random = options.random ?? Math.random;
    this.onChange = options.onChange ?? (() => {});
    this.loop = new WakeableLoop((loop) => this.round(loop));
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Something changed (a task was written, a contingency receipt was authorized): look now. */
  wake(): void {
    this.loop.wake();
  }

  /** The due tasks, one after the other; then how long until the next is due. */
  private async round(loop: { readonly running: boolean }): Promise<number> {
    try {
      for (const task of this.store.contingency.dueReconciliationTasks(this.clock(), 16)) {
        if (!loop.running) break;
        await this.work(task);
      }
      const next = this.store.contingency.nextReconciliationDueAt();
      return next === undefined ? 60_000 : next - this.clock();
    } catch {
      // The database failing: the next round tries again.
      return 1_000;
    }
  }

  private async work(task: ReconciliationTaskRow): Promise<void> {
    try {
      await this.step(task);
    } catch (err) {
      // A bug or a database failure while recording: never spin on it.
      this.later(task, `Erro interno: ${(err as Error).message}`, this.capMs);
    }
  }

  /** One round of a task: as many calls as it can make progress with now. */
  async step(task: ReconciliationTaskRow): Promise<void> {
    let t = task;
    for (let i = 0; i < 4 && t.state === 'open'; i++) {
      const next = await this.advance(t);
      if (!next) return;
      t = next;
    }
  }

  /** Makes one call for `t` and records its result; returns the task if it can go on at once. */
  private async advance(t: ReconciliationTaskRow): Promise<ReconciliationTaskRow | undefined> {
    if (t.kind === 'cancelar_substituicao') return this.substitute(t);
    if (t.kind === 'verificar' && t.service_id) return this.lookup(t, t.service_id);
    return this.voidNumber(t);
  }

  private async lookup(t: ReconciliationTaskRow, serviceId: string): Promise<ReconciliationTaskRow | undefined> {
    const d = decideLookup(await attempt(() => this.client.getNfce(serviceId)));
    switch (d.action) {
      case 'authorized':
        return this.update(t, { kind: 'cancelar_substituicao', chave: d.document.chave, last_error: null });
      case 'cancelled':
        return void this.finish(t, 'ja_cancelada', null, 'reconciliacao_ja_cancelada');
      case 'rejected':
        return this.update(t, { kind: 'inutilizar', last_error: `rejeitada (${d.document.codigo_status ?? '?'}): ${d.document.motivo ?? ''}`.trim() });
      case 'processing':
        return void this.later(t, 'A NFC-e original ainda está em processamento no serviço');
      case 'unknown_id':
        // The service does not know that id: go the way of an attempt never answered.
        return this.update(t, { service_id: null });
      case 'later':
        return void this.later(t, d.note);
      case 'blocked':
        return void this.block(t, d.message);
    }
  }

  private async voidNumber(t: ReconciliationTaskRow): Promise<ReconciliationTaskRow | undefined> {
    const body = { serie: t.serie, numero_inicial: t.nnf, numero_final: t.nnf, justificativa: VOID_JUSTIFICATION };
    const d = decideVoidStep(await attempt(() => this.client.inutilizarNfce(body, t.void_key)));
    switch (d.action) {
      case 'voided':
        return void this.finish(t, 'inutilizada', d.result?.protocolo ?? null, 'reconciliacao_inutilizacao');
      case 'number_used':
        return this.replay(t);
      case 'later':
        return void this.later(t, d.note);
      case 'blocked':
        return void this.block(t, d.message);
    }
  }

  /** The number is used: learn the document through its own key (a replay, never a new issuance). */
  private async replay(t: ReconciliationTaskRow): Promise<ReconciliationTaskRow | undefined> {
    const d = decideReplay(await attempt(() => this.client.createNfce(JSON.parse(t.request_json), t.idempotency_key)));
    switch (d.action) {
      case 'authorized':
        return this.update(t, { kind: 'cancelar_substituicao', service_id: d.document.id, chave: d.document.chave, last_error: null });
      case 'cancelled':
        this.update(t, { service_id: d.document.id, chave: d.document.chave });
        return void this.finish(this.store.contingency.reconciliationTask(t.id)!, 'ja_cancelada', null, 'reconciliacao_ja_cancelada');
      case 'accepted':
        this.update(t, { kind: 'verificar', service_id: d.serviceId });
        return void this.later(this.store.contingency.reconciliationTask(t.id)!, 'A NFC-e original está em processamento no serviço');
      case 'later':
        return void this.later(t, d.note);
      case 'blocked':
        return void this.block(t, d.message);
    }
  }

  private async substitute(t: ReconciliationTaskRow): Promise<ReconciliationTaskRow | undefined> {
    const receipt = this.store.receipts.receipt(t.receipt_id)!;
    if (receipt.state === 'pending' || receipt.state === 'processing') {
      // The authority requires the substitute to be authorized first.
      return void this.later(t, `Aguardando a autorização da NFC-e de contingência nº ${receipt.nnf}`);
    }
    if (receipt.state !== 'authorized' || !receipt.chave) {
      return void this.block(
        t,
        `a NFC-e de contingência nº ${receipt.nnf} não está autorizada (${receipt.state}); a nº ${t.nnf}, autorizada, é a que vale para esta venda.`,
      );
    }
    if (!t.service_id) return this.replay(t);
    const serviceId = t.service_id;
    const body = { justificativa: SUBSTITUTION_JUSTIFICATION, chave_substituta: receipt.chave };
    let d = decideSubstitution(await attempt(() => this.client.cancelNfce(serviceId, body, t.cancel_key)));
    let done: NfceDocument | undefined = d.action === 'cancelled' ? d.document : undefined;
    if (d.action === 'verify') {
      // Not cancellable in its state: maybe our earlier call did it (its answer lost).
      const look = decideLookup(await attempt(() => this.client.getNfce(serviceId)));
      if (look.action === 'cancelled') done = look.document;
      else if (look.action === 'later') d = look;
      else d = { action: 'blocked', message: d.message };
    }
    if (done) return void this.finish(t, 'cancelada_substituicao', done.protocolo_cancelamento ?? null, 'reconciliacao_cancelamento_substituicao');
    if (d.action === 'later') return void this.later(t, d.note);
    if (d.action === 'blocked') return void this.block(t, d.message);
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Recording (each in its own transaction, as soon as the answer is known)

  private update(t: ReconciliationTaskRow, patch: ReconciliationPatch): ReconciliationTaskRow {
    const at = iso(this.clock());
    this.store.transaction(() => this.store.contingency.updateReconciliationTask(t.id, patch, at));
    this.onChange(t.receipt_id);
    return this.store.contingency.reconciliationTask(t.id)!;
  }

  private later(t: ReconciliationTaskRow, note: string, inMs?: number): void {
    const now = this.clock();
    const attempts = t.attempts + 1;
    const wait = inMs ?? backoffMs(attempts, this.baseMs, this.capMs, this.random);
    this.store.transaction(() => this.store.contingency.updateReconciliationTask(t.id, { attempts, last_error: note, next_attempt_at: now + wait }, iso(now)));
  }

  private block(t: ReconciliationTaskRow, message: string): void {
    const now = this.clock();
    this.store.transaction(() => {
      this.store.contingency.updateReconciliationTask(t.id, { state: 'blocked', attempts: t.attempts + 1, last_error: message }, iso(now));
      audit(this.store, () => now, {
        actor: SYSTEM_ACTOR,
        action: 'reconciliacao_pendente',
        receiptId: t.receipt_id,
        reason: message,
        details: { serie: t.serie, nNF: t.nnf },
      });
    });
    this.onChange(t.receipt_id);
  }

  private finish(t: ReconciliationTaskRow, outcome: ReconciliationOutcome, protocolo: string | null, action: string): void {
    const now = this.clock();
    const at = iso(now);
    this.store.transaction(() => {
      this.store.contingency.updateReconciliationTask(
        t.id,
        {
          state: 'done',
          outcome,
          protocolo,
          attempts: t.attempts + 1,
          last_error: null,
          resolved_at: at,
          ...(outcome === 'inutilizada' && { kind: 'inutilizar' as const }),
        },
        at,
      );
      audit(this.store, () => now, {
        actor: SYSTEM_ACTOR,
        action,
        receiptId: t.receipt_id,
        details: { serie: t.serie, nNF: t.nnf, chave: t.chave, protocolo },
      });
    });
    this.onChange(t.receipt_id);
  }
}
