// Offline contingency, the state machine: when the terminal issues receipts by itself (tpEmis 9)
// instead of through the service, and what the screen sees of it (ContingencyStatus).
//
// Entering:
// - automatically, after `failureThreshold` consecutive failed exchanges of one kind:
//   * the service: no answer (refused, reset, timeout) or a 5xx;
//   * the authority: the service answers but the SEFAZ does not. The service does not say so
//     in words: an NFC-e it accepted just stays `processando` (contract 5). So a poll that finds
//     a receipt still processando more than `authorityTimeoutMs` after the terminal first saw it
//     processing, while no verdict at all came back in that time, counts as a failure; so does
//     a 503 autoridade_indisponivel (cancellations and voids).
//   The counts are kept apart: while the authority is down the service keeps answering (202s,
//   polls), and those answers must not hide the authority's silence. A verdict (authorized or
//   rejected) resets the authority's count, any answer below 500 the service's.
//   * the service's own word: it says in its answers (health check, 202, the GET of a waiting
//     receipt) what it last learned of the authority. "indisponivel" enters at once, without
//     waiting for a receipt to time out: the next sale is issued offline, never sent online.
//   Only with the company's emitter data and A1 certificate configured: without them the
//   terminal cannot issue by itself, and it says so in `warning` instead.
// - by a manager (enterContingency), with a justification: e.g. the link is known to be down.
// Either way the period is written with its dhCont (start) and xJust (reason), and every online
// receipt whose outcome is unknown then (pending or processing) is issued again offline
// (reconcile.ts).
//
// Leaving:
// - an automatic period ends by itself once the service answers again and nothing says the
//   authority is still silent: the first verdict (which also outdates the service's word that the
//   authority was down: it answered since), the service saying the authority answers again
//   ("disponivel"), or the first answer when the period began for the service's sake and no
//   receipt is stuck at the authority;
// - a manager's period ends only by a manager (leaveContingency): the manager said the link is
//   bad, so a lucky answer does not overrule that.
//
// Limits (ContingencySettings): while a period is open, selling stops once `maxReceipts`
// contingency receipts wait for authorization, or `maxHours` after the period began
// (TerminalError 'contingencia_limite'); `blocked` in the status says why. Receipts issued
// before the limit still go out; the limit only keeps the backlog within what can reach the
// authority before its 24-hour deadline.
//
// Numbering (ContingencySettings.series; the rules leave it open, docs/fiscal.md, "Offline contingency"): null numbers the
// contingency receipts in the terminal's own series and sequence (Ajuste SINIEF 19/19: number +
// series + tpEmis identify the NFC-e; SEFAZ-PE: "não tem série distinta"); a number sets a
// separate series (the 890–989 range of Ajuste SINIEF 13/18, where a UF still asks for it) with
// its own sequence.

import type { ContingencySettings, ContingencyStatus, ReconciliationTask } from '../../api/terminal-api.ts';
import { TerminalError } from '../errors.ts';
import type { PosStore } from '../pos-store.ts';
import type { ContingencyPeriodRow } from '../store/contingency.ts';
import type { ManagerRow } from '../store/managers-audit.ts';
import type { ReceiptRow } from '../store/receipts.ts';
import type { Failure } from '../failures.ts';
import { iso, type Clock } from '../../../base/common/clock.ts';
import { type OfflineIssuer } from '../sales.ts';
import { actorOfManager, audit, SYSTEM_ACTOR } from '../managers.ts';
import { issueOffline, type ContingencyCredentials } from './issue.ts';
import { reconciliationTaskView, supersedeInDoubt } from './reconcile.ts';
import { deadlineWarning, transmissionDeadline } from './transmit.ts';

/** A receipt processing at the service longer than this, with no verdict meanwhile: the authority is silent. */
export const DEFAULT_AUTHORITY_TIMEOUT_MS = 15_000;

/** xJust of an automatic period (15–256 characters, Latin-1, as the layout wants). */
export const AUTOMATIC_REASONS = Object.freeze({
  servico: 'Falha de comunicação com o serviço de emissão de NFC-e',
  autoridade: 'SEFAZ sem resposta às autorizações de NFC-e',
});

// =============================================================================================
// Failure detection (pure: the clock is passed in)

export type DetectorVerdict = { enter: 'servico' | 'autoridade' } | { leave: true } | undefined;

export class FailureDetector {
  private serviceFailures = 0;
  private authorityFailures = 0;
  private lastVerdictAt: number;
  /** Since the last reset (a period began or ended): did the service answer, did the authority? */
  private answered = false;
  private judged = false;
  /** What the service last said of the authority since the last reset (null: nothing). */
  private reported: 'disponivel' | 'indisponivel' | null = null;
  /**
   * A manager ended a period while the service still said the authority was down: that word
   * does not take the terminal back into contingency until the service has said it answers
   * again (the failures the terminal sees itself still count as ever).
   */
  private dismissed = false;
  private readonly processingSince = new Map<string, number>();

  constructor(
    now: number,
    private readonly authorityTimeoutMs: number,
  ) {
    this.lastVerdictAt = now;
  }

  get counts(): { service: number; authority: number } {
    return { service: this.serviceFailures, authority: this.authorityFailures };
  }

  /** A finished exchange: null when it got a good answer. */
  exchange(failure: Failure | null): void {
    if (failure === null || (failure.kind === 'http' && failure.status < 500)) {
      this.serviceFailures = 0;
      this.answered = true;
      return;
    }
    if (failure.kind === 'http' && failure.code === 'autoridade_indisponivel') {
      this.serviceFailures = 0; // the service did answer
      this.answered = true;
      this.authorityFailures++;
      return;
    }
    this.serviceFailures++;
  }

  /** The service's word on the authority (an answer's `autoridade.situacao`). */
  authority(situation: 'disponivel' | 'indisponivel' | 'desconhecida'): void {
    if (situation === 'desconhecida') return;
    this.reported = situation;
    if (situation === 'disponivel') this.dismissed = false;
  }

  /** A receipt seen in `state` (after the worker recorded an answer about it, or a screen action). */
  receipt(id: string, state: ReceiptRow['state'], now: number): void {
    if (state === 'processing') {
      const since = this.processingSince.get(id);
      if (since === undefined) this.processingSince.set(id, now);
      else if (now - since > this.authorityTimeoutMs && now - this.lastVerdictAt > this.authorityTimeoutMs) this.authorityFailures++;
      return;
    }
    if (this.processingSince.delete(id) && (state === 'authorized' || state === 'rejected' || state === 'cancelled')) {
      this.lastVerdictAt = now;
      this.authorityFailures = 0;
      this.judged = true;
      // The authority answered since the service last said it was down: that word is old news,
      // and must not keep a period open (and the banner up) until the next health check.
      if (this.reported === 'indisponivel') this.authority('disponivel');
    }
  }

  /**
   * What the counts call for, given the threshold and the open period (if any). An automatic
   * period ends on a verdict, or on an answer when it began for the service's sake or when
   * nothing waits for a verdict (then nothing could tell the authority is back).
   */
  verdict(threshold: number, open: { automatic: boolean; cause: 'servico' | 'autoridade' } | undefined, awaitingVerdict: boolean): DetectorVerdict {
    if (!open) {
      if (this.serviceFailures >= threshold) return { enter: 'servico' };
      if (this.authorityFailures >= threshold || (this.reported === 'indisponivel' && !this.dismissed)) return { enter: 'autoridade' };
      return undefined;
    }
    if (!open.automatic || this.serviceFailures > 0 || this.authorityFailures > 0 || this.reported === 'indisponivel') return undefined;
    if (this.judged) return { leave: true };
    if (open.cause === 'autoridade' && this.reported === 'disponivel') return { leave: true };
    // Nothing waits for a verdict that could tell the authority is back: an answer will do,
    // unless the service speaks of the authority itself, whose word then decides.
    if (this.answered && (open.cause === 'servico' || (!awaitingVerdict && this.reported === null))) return { leave: true };
    return undefined;
  }

  /**
   * After entering or leaving: start counting again (a receipt re-issued is a new receipt). The
   * service's word on the authority outlives entering (it is why the period began and what
   * ends it), not leaving. `byManager`: a manager ended the period (see `dismissed`).
   */
  reset(now: number, keepReport = false, byManager = false): void {
    this.dismissed = byManager;
    this.serviceFailures = 0;
    this.authorityFailures = 0;
    this.answered = false;
    this.judged = false;
    if (!keepReport) this.reported = null;
    this.lastVerdictAt = now;
    this.processingSince.clear();
  }
}

// =============================================================================================
// The mode

export type ContingencyModeOptions = {
  store: PosStore;
  clock: Clock;
  /** The service's time as last known (service-clock.ts fiscalNow): what dhCont and dhEmi are dated with. Default: `clock`. */
  fiscalClock?: Clock;
  /** The terminal's own series now: contingency numbers come from it when `settings().series` is null. */
  serie: () => number;
  /** Stored settings (settings.ts), read on every use: a change applies at once. */
  settings: () => ContingencySettings;
  /** The emitter and the A1 certificate, or why this terminal cannot issue by itself (settings.ts). */
  credentials: () => { credentials: ContingencyCredentials } | { reason: string };
  authorityTimeoutMs?: number;
  /** Whether an online receipt certainly never reached the service (outbox-worker.ts `neverSent`). */
  neverSent?: (receipt: ReceiptRow) => boolean;
};

export type Entered = { periodId: number; reissued: ReceiptRow[] };

// A refused contingency receipt is listed among the open tasks under an id of its own kind.
const TRANSMISSION_TASK = 'transmitir:';
const transmissionTaskId = (receiptId: string): string => `${TRANSMISSION_TASK}${receiptId}`;

/** The receipt a transmission task id names, or undefined for a reconciliation task's id. */
export function transmissionTaskReceipt(taskId: string): string | undefined {
  return taskId.startsWith(TRANSMISSION_TASK) ? taskId.slice(TRANSMISSION_TASK.length) : undefined;
}

export class ContingencyMode {
  readonly detector: FailureDetector;
  private readonly store: PosStore;
  private readonly clock: Clock;
  private readonly fiscalClock: Clock;
  private readonly serieOf: () => number;
  private readonly settingsOf: () => ContingencySettings;
  private readonly credentialsOf: () => { credentials: ContingencyCredentials } | { reason: string };
  private readonly neverSent: (receipt: ReceiptRow) => boolean;
  private readonly ensuredSeries = new Set<number>();
  /** Set when the failures called for contingency but the terminal could not issue by itself. */
  private cannotEnter: string | null = null;

  constructor(options: ContingencyModeOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.fiscalClock = options.fiscalClock ?? options.clock;
    this.serieOf = options.serie;
    this.settingsOf = options.settings;
    this.credentialsOf = options.credentials;
    this.neverSent = options.neverSent ?? (() => false);
    this.detector = new FailureDetector(this.clock(), options.authorityTimeoutMs ?? DEFAULT_AUTHORITY_TIMEOUT_MS);
  }

  period(): ContingencyPeriodRow | undefined {
    return this.store.contingency.openContingencyPeriod();
  }

  /** The series contingency receipts are numbered in (registered on first use). */
  private serieForContingency(): number {
    const serie = this.settingsOf().series ?? this.serieOf();
    if (!this.ensuredSeries.has(serie)) {
      this.store.series.ensureSeries(serie);
      this.ensuredSeries.add(serie);
    }
    return serie;
  }

  /**
   * What the detector's counts call for now: 'enter' (with the reason), 'leave', or nothing.
   * Entering needs credentials; without them the terminal only says so.
   */
  decide(): { enter: string } | { leave: true } | undefined {
    const open = this.period();
    const cause = open?.reason === AUTOMATIC_REASONS.autoridade ? ('autoridade' as const) : ('servico' as const);
    const awaiting = !!open && open.automatic === 1 && this.store.receipts.countReceiptsIn(['pending', 'processing']) > 0;
    const v = this.detector.verdict(this.settingsOf().failureThreshold, open && { automatic: open.automatic === 1, cause }, awaiting);
    if (!v) {
      if (!open && this.cannotEnter && this.detector.counts.service === 0 && this.detector.counts.authority === 0) this.cannotEnter = null;
      return undefined;
    }
    if ('leave' in v) return v;
    const c = this.credentialsOf();
    if ('reason' in c) {
      this.cannotEnter = `${v.enter === 'servico' ? 'Serviço de emissão fora do ar' : 'SEFAZ sem resposta'}, e a contingência offline não pode começar: ${c.reason}.`;
      return undefined;
    }
    this.cannotEnter = null;
    return { enter: AUTOMATIC_REASONS[v.enter] };
  }

  /**
   * The issuer finishSale uses while a period is open (undefined when none is). Refuses with
   * `contingencia_limite` past a limit, `configuracao_invalida` without credentials.
   */
  offlineIssuer(): OfflineIssuer | undefined {
    const period = this.period();
    if (!period) return undefined;
    const blocked = this.blockedReason(period, this.store.contingency.contingencyReceiptStats().unsettled, this.clock());
    if (blocked) throw new TerminalError('contingencia_limite', blocked);
    return this.issuerFor(period);
  }

  /** Throws `configuracao_invalida` with the reason when this terminal cannot issue by itself. */
  assertCanIssue(): void {
    const c = this.credentialsOf();
    if ('reason' in c) throw new TerminalError('configuracao_invalida', `Este terminal não pode emitir em contingência: ${c.reason}.`);
  }

  /** Entering was called for but failed: shown in the status until the failures stop. */
  noteCannotEnter(message: string): void {
    this.cannotEnter = message;
  }

  /** Why the failures could not start a period (null when nothing is being held back). */
  get cannotEnterReason(): string | null {
    return this.cannotEnter;
  }

  /**
   * The issuer of an open period, without the limits (re-issuing in-doubt sales is not a new
   * sale). dhEmi is the service's time as last known; dhCont the period's, on the same clock, never
   * after dhEmi (should the clock have been corrected since the period began).
   */
  issuerFor(period: { started_at: string; dh_cont: string | null; reason: string }): OfflineIssuer {
    this.assertCanIssue();
    const credentials = (this.credentialsOf() as { credentials: ContingencyCredentials }).credentials;
    const dhCont = Date.parse(period.dh_cont ?? period.started_at);
    return {
      serie: this.serieForContingency(),
      issue: (request) => {
        const at = this.fiscalClock();
        return issueOffline(request, credentials, { dhCont: iso(Math.min(dhCont, at)), xJust: period.reason }, new Date(at));
      },
    };
  }

  /**
   * Opens a period: writes it (dhCont = now, xJust = reason) and, in the same transaction,
   * issues again offline every online receipt whose outcome is unknown (reconcile.ts).
   */
  enter(input: { automatic: boolean; reason: string; manager: ManagerRow | null }): Entered {
    const now = this.clock();
    const at = iso(now);
    const entered = this.store.transaction(() => {
      const open = this.period();
      if (open) throw new TerminalError('estado_invalido', `O terminal já está em contingência desde ${open.started_at}`);
      const dhCont = iso(this.fiscalClock());
      const periodId = this.store.contingency.insertContingencyPeriod({
        started_at: at,
        dh_cont: dhCont,
        reason: input.reason,
        automatic: input.automatic ? 1 : 0,
        started_by: input.manager?.id ?? null,
      });
      const issuer = this.issuerFor({ started_at: at, dh_cont: dhCont, reason: input.reason });
      const reissued = this.store.contingency.unsettledOnlineReceipts().map((r) => supersedeInDoubt(this.store, () => now, r, issuer, this.neverSent(r)));
      audit(this.store, () => now, {
        actor: input.manager ? actorOfManager(input.manager) : SYSTEM_ACTOR,
        action: 'contingencia_inicio',
        reason: input.reason,
        details: { automatica: input.automatic, reemitidas: reissued.map((r) => ({ serie: r.serie, nNF: r.nnf })) },
      });
      return { periodId, reissued };
    });
    // A period is open now, whoever opened it: the reason one could not begin is stale.
    this.cannotEnter = null;
    this.detector.reset(now, true);
    return entered;
  }

  /** Ends the open period (by the terminal when `manager` is null). */
  leave(manager: ManagerRow | null): void {
    const now = this.clock();
    this.store.transaction(() => {
      const open = this.period();
      if (!open) throw new TerminalError('estado_invalido', 'O terminal não está em contingência');
      this.store.contingency.endContingencyPeriod(open.id, iso(now), manager?.id ?? null);
      audit(this.store, () => now, {
        actor: manager ? actorOfManager(manager) : SYSTEM_ACTOR,
        action: 'contingencia_fim',
        details: { desde: open.started_at, automatica: open.automatic === 1, emitidas: this.store.contingency.contingencyReceiptStats().unsettled },
      });
    });
    this.detector.reset(now, false, manager !== null);
  }

  private blockedReason(period: { started_at: string }, unsettled: number, now: number): string | null {
    const s = this.settingsOf();
    if (unsettled >= s.maxReceipts) {
      return `Limite de ${s.maxReceipts} NFC-e emitidas em contingência sem autorização atingido: restabeleça a conexão e transmita as pendentes antes de vender de novo.`;
    }
    const hours = (now - Date.parse(period.started_at)) / 3_600_000;
    if (hours >= s.maxHours) {
      return `Contingência ativa há mais de ${s.maxHours} horas, o limite configurado: restabeleça a conexão e transmita as NFC-e pendentes antes de vender de novo.`;
    }
    return null;
  }

  status(): ContingencyStatus {
    const now = this.clock();
    const period = this.period();
    const stats = this.store.contingency.contingencyReceiptStats();
    const deadline = stats.oldestCreatedAt === null ? null : transmissionDeadline(stats.oldestCreatedAt);
    const blocked = period ? this.blockedReason(period, stats.unsettled, now) : null;
    const refused = this.store.contingency.refusedContingencyReceipts();
    const openTasks: ReconciliationTask[] = [
      ...this.store.contingency.liveReconciliationTasks().map((t) => reconciliationTaskView(t, this.store.receipts.receipt(t.receipt_id))),
      ...refused.map((r) => ({
        id: transmissionTaskId(r.id),
        receiptId: r.id,
        kind: 'transmitir' as const,
        description: `NFC-e de contingência nº ${r.nnf} (série ${r.serie}) não foi aceita: ${r.attention ?? r.motivo ?? 'veja a NFC-e'}`,
        // Refused by the service, the authority never saw it: it can go again once that is fixed.
        // Rejected by the authority, it cannot (contingency.ts resumeTask).
        canResume: r.state === 'needs_attention',
        createdAt: r.updated_at,
      })),
    ];
    // Each is shown on its own: the deadline outlives the period (receipts issued offline still
    // waiting once it ended), and the reason a period could not begin matters only with none open.
    const warnings = [
      blocked,
      deadline === null ? null : deadlineWarning(deadline, stats.unsettled - refused.length, now),
      period ? null : this.cannotEnter,
    ].filter((w): w is string => !!w);
    return {
      active: !!period,
      since: period?.started_at ?? null,
      reason: period?.reason ?? null,
      automatic: period ? period.automatic === 1 : false,
      pending: stats.unsettled,
      nextDeadline: deadline === null ? null : iso(deadline),
      warning: warnings.length ? warnings.join(' ') : null,
      warnings,
      blocked,
      openTasks,
    };
  }
}
