// What the NFC-e endpoints do, apart from HTTP (routes.ts shapes the answers): accepting a
// receipt (the idempotency key, the CSC, the checks of accept.ts, the document stored with its
// key in one transaction, the queue woken), cancelling it (110111, or 110112 by substitution,
// one at a time per document) and voiding a range of numbers (inutilização). Each asks the
// store (store.ts) and the tax authority; none knows about requests or replies.
//
// A cancellation runs in the document's turn: this process's (turns.ts), then the store's, which
// is the only one among every process sharing a PostgreSQL store. A second cancellation, through
// this process or another, waits for the first, then finds the document cancelled (422
// estado_invalido): the authority hears of it once.
//
// Decisions where the contract is silent:
// - A contingency XML whose access key already belongs to a live (not rejected) document of the
//   company is the same receipt (`same_key`): never a second document, never a second
//   transmission of the same key.
// - Cancelling a document that is not autorizado, an already cancelled one included → 422
//   estado_invalido (as the MDF-e does). A client whose first answer was lost reads the state
//   with GET: `cancelado` means its earlier call worked.
// - Cancellation refused by the authority → 422 validacao with its cStat and xMotivo (and
//   `rejeicao`); the authority unreachable → 503 autoridade_indisponivel (nothing recorded).
// - Inutilização of a range already voided through this service → the stored answer (a retry is
//   safe); any refusal (241, 256, 563, ...) → 422 validacao with the authority's text.

import { randomUUID } from 'node:crypto';
import { isValidAccessKey } from '../../fiscal/access-key.ts';
import { FieldError, type FieldIssue } from '../../fiscal/errors.ts';
import { justification, nfeCancellationEvent, nfeSubstitutionCancellationEvent } from '../../fiscal/events.ts';
import { buildInutilizacao } from '../../fiscal/inutilizacao.ts';
import { DEFAULT_VERPROC } from '../../fiscal/nfce/ide.ts';
import { wrapProcEventoNFe, wrapProcInutNFe } from '../../fiscal/protocol.ts';
import { AuthorityUnavailableError, EVENT_REGISTERED } from '../authority/port.ts';
import { brasiliaDay, formatBrasilia } from '../../base/common/brasilia.ts';
import type { ServiceDeps } from '../deps.ts';
import { ApiError, invalidRequest } from '../http/errors.ts';
import type { ClaimResult } from '../idempotency.ts';
import { authorizingIssuer, type AuthorizingIssuer } from '../queue/issuer.ts';
import { Turns } from '../turns.ts';
import { acceptContingency, acceptJson } from './accept.ts';
import type { CancelBody, IssueBody, NfceBody, VoidBody } from './schemas.ts';
import type { NfceRecord, NfceStatus } from './store.ts';
import { nfceWebhookEvent } from './view.ts';

const MINUTE = 60_000;
/** Cancellation windows from authorization (docs/api.md, "NFC-e"). */
export const CANCEL_WINDOW_MS = { cancelamento: 30 * MINUTE, substituicao: 168 * 60 * MINUTE } as const;
/** What a client does after the window: the return (named in refusals and in the OpenAPI text). */
export const RETURN_REMEDY = 'POST /api/v1/nfe/devolucao';
/** cStat of a cancellation already registered (its answer lost): 420 already cancelled, 573 duplicate event. */
const ALREADY_CANCELLED = new Set(['420', '573']);

/** The states as a refusal names them. */
const STATE_NAMES: Record<NfceStatus, string> = {
  processando: 'em processamento',
  autorizado: 'autorizada',
  rejeitado: 'rejeitada',
  cancelado: 'cancelada',
};

const unavailable = (what: string) =>
  new ApiError('autoridade_indisponivel', `A autoridade fiscal não respondeu; ${what} não foi confirmado. Tente novamente em instantes.`, {
    headers: { 'retry-after': '5' },
  });

/** The justification as the event will carry it (blanks folded); out of bounds or not Latin-1 → 400. */
function checkedJustification(value: string): string {
  try {
    return justification(value);
  } catch (err) {
    if (err instanceof FieldError) throw invalidRequest('Justificativa inválida.', err.issues);
    throw err;
  }
}

type Deps = Pick<ServiceDeps, 'store' | 'clock' | 'companies' | 'authority' | 'idempotency'>;

/** What became of an issuance request. */
export type IssueOutcome =
  | { kind: 'accepted'; id: string; chave: string }
  /** The same access key (a contingency XML sent again): that document. */
  | { kind: 'same_key'; documentId: string; status: NfceStatus }
  /** The idempotency key is bound to a document (docs/api.md, "Idempotency"). */
  | { kind: 'bound'; bound: Exclude<ClaimResult, { kind: 'new' }> };

export type VoidAnswer = { protocolo: string; codigoStatus: string; motivo: string };

export class NfceIssuance {
  // One cancellation at a time per document (see the header).
  readonly #turns = new Turns();

  constructor(
    private readonly deps: Deps,
    /** Something was accepted: the queue should look now. */
    private readonly wakeQueue: () => void,
  ) {}

  /**
   * The value problems of a JSON receipt whose shape the schema refused, for its 400 to name
   * them too (service/http/errors.ts, withValueIssues). The fiscal builder reads untyped input
   * defensively and names what it cannot read; anything else it throws adds nothing to a
   * request that is refused anyway.
   */
  async valueIssues(companyId: string, body: unknown): Promise<FieldIssue[]> {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || 'xml' in body) return [];
    try {
      const now = await this.deps.clock.now(companyId);
      const issuer = await authorizingIssuer(this.deps, companyId, now);
      acceptJson(body as NfceBody, issuer, randomUUID(), now);
      return [];
    } catch (err) {
      return err instanceof FieldError ? err.issues : [];
    }
  }

  async issue(companyId: string, body: IssueBody, key: string | undefined, fingerprint: string): Promise<IssueOutcome> {
    const { deps } = this;
    // A key already bound to a document answers as bound (replay, 409, reuse) before the body
    // is checked again: an authorized receipt replays even if the company has since lost its
    // CSC or its certificate expired. The claim itself is made below, atomically with the
    // document, once the body has passed.
    if (key !== undefined) {
      const bound = await deps.idempotency.peek({ companyId, docType: 'nfce', key, fingerprint });
      if (bound) return { kind: 'bound', bound };
    }
    const now = await deps.clock.now(companyId);
    const issuer = await authorizingIssuer(deps, companyId, now);
    if (!issuer.emitter.csc) {
      throw new ApiError(
        'csc_nao_configurado',
        'A empresa não tem CSC (código de segurança do contribuinte) cadastrado: sem ele o QR Code da NFC-e não valida. ' +
          'Cadastre o CSC e o seu identificador nas configurações da empresa.',
      );
    }
    const id = randomUUID();
    const accepted = 'xml' in body ? acceptContingency(body.xml, issuer, id) : acceptJson(body, issuer, id, now);
    const claim = key === undefined ? undefined : { companyId, docType: 'nfce' as const, key, fingerprint, documentId: id };
    const result = await deps.store.nfce.insertDocument({ ...accepted, idempotencyKey: key ?? null }, claim);
    switch (result.kind) {
      case 'new':
        this.wakeQueue();
        return { kind: 'accepted', id, chave: accepted.chave };
      case 'same_key':
        return { kind: 'same_key', documentId: result.documentId, status: result.status };
      default:
        // Bound between the look above and the claim: a concurrent twin won.
        return { kind: 'bound', bound: result };
    }
  }

  /** Cancels `document` (the caller's, as looked up); the document as it is afterwards. */
  async cancel(document: NfceRecord, input: CancelBody): Promise<void> {
    const xJust = checkedJustification(input.justificativa);
    const substitute = input.chave_substituta;
    if (substitute !== undefined && (!isValidAccessKey(substitute) || substitute.slice(20, 22) !== '65')) {
      throw invalidRequest('Chave substituta inválida.', [
        { field: 'chave_substituta', message: 'deve ser a chave de acesso (44 dígitos, dígito verificador correto) de uma NFC-e (modelo 65)' },
      ]);
    }
    const { id, companyId } = document;
    await this.#turns.run(id, () => this.deps.store.nfce.changeTurn(id, () => this.cancelNow(companyId, id, xJust, substitute)));
  }

  private async cancelNow(companyId: string, documentId: string, xJust: string, substitute: string | undefined): Promise<void> {
    const { deps } = this;
    // Read again inside the turn: an earlier cancellation may have just ended.
    const document = (await deps.store.nfce.getDocument(companyId, documentId))!;
    if (document.status !== 'autorizado') {
      throw new ApiError('estado_invalido', `Só uma NFC-e autorizada pode ser cancelada; esta está ${STATE_NAMES[document.status]}.`);
    }
    const now = await deps.clock.now(companyId);
    const window = substitute === undefined ? CANCEL_WINDOW_MS.cancelamento : CANCEL_WINDOW_MS.substituicao;
    if (now.getTime() - Date.parse(document.autorizadoEm!) > window) {
      throw new ApiError(
        'prazo_expirado',
        substitute === undefined
          ? `O prazo de cancelamento da NFC-e (30 minutos após a autorização) terminou. Registre a devolução (NF-e de entrada) com ${RETURN_REMEDY}.`
          : `O cancelamento por substituição só é permitido até 168 horas após a autorização. Registre a devolução (NF-e de entrada) com ${RETURN_REMEDY}.`,
      );
    }
    const issuer = await authorizingIssuer(deps, companyId, now);
    const params = { author: issuer.emitter, chNFe: document.chave, nProt: document.protocolo!, xJust, dhEvento: now };
    const event =
      substitute === undefined
        ? nfeCancellationEvent(params, issuer.certificate)
        : nfeSubstitutionCancellationEvent({ ...params, chNFeRef: substitute, verAplic: DEFAULT_VERPROC }, issuer.certificate);
    let verdict;
    try {
      verdict = await deps.authority.registerNfeEvent(issuer.authority, event);
    } catch (err) {
      if (err instanceof AuthorityUnavailableError) throw unavailable('o cancelamento');
      throw err;
    }
    let cancellation;
    if (EVENT_REGISTERED.has(verdict.cStat)) {
      cancellation = {
        canceladoEm: verdict.registeredAt,
        protocolo: verdict.nProt ?? null,
        codigoStatus: verdict.cStat,
        motivo: verdict.xMotivo,
        eventoXml: wrapProcEventoNFe(event, verdict.retEvento),
      };
    } else if (ALREADY_CANCELLED.has(verdict.cStat) && (await this.isCancelledAtAuthority(document.chave, issuer))) {
      // An earlier request registered it and its answer was lost: record what the authority knows.
      cancellation = { canceladoEm: formatBrasilia(now), protocolo: null, codigoStatus: null, motivo: null, eventoXml: null };
    } else {
      throw new ApiError('validacao', `A autoridade fiscal recusou o cancelamento (cStat ${verdict.cStat}): ${verdict.xMotivo}`, {
        rejeicao: { cStat: verdict.cStat, xMotivo: verdict.xMotivo },
      });
    }
    await deps.store.nfce.recordCancellation(document.id, cancellation, nfceWebhookEvent('nfce.cancelada'));
  }

  private async isCancelledAtAuthority(chave: string, issuer: AuthorizingIssuer): Promise<boolean> {
    const known = await this.deps.authority.consultNfe(issuer.authority, chave);
    return known.found && known.cancelled;
  }

  /** Voids a range of numbers never authorized (inutilização); a range voided before answers as it did. */
  async voidNumbers(companyId: string, input: VoidBody): Promise<VoidAnswer> {
    const { deps } = this;
    const { serie, numero_inicial: first, numero_final: last } = input;
    const xJust = checkedJustification(input.justificativa);
    const stored = await deps.store.nfce.findInutilizacao(companyId, serie, first, last);
    if (stored) return stored;
    const now = await deps.clock.now(companyId);
    const issuer = await authorizingIssuer(deps, companyId, now);
    const signed = buildInutilizacao(
      { emitter: issuer.emitter, ano: brasiliaDay(now).slice(0, 4), serie, nNFIni: first, nNFFin: last, xJust, model: '65' },
      issuer.certificate,
    );
    let verdict;
    try {
      verdict = await deps.authority.voidNfeNumbers(issuer.authority, signed);
    } catch (err) {
      if (err instanceof AuthorityUnavailableError) throw unavailable('a inutilização');
      throw err;
    }
    if (verdict.cStat !== '102') {
      // A concurrent identical request may have won the race (563: same range): answer as it did.
      const winner = await deps.store.nfce.findInutilizacao(companyId, serie, first, last);
      if (winner) return winner;
      throw new ApiError('validacao', `A autoridade fiscal recusou a inutilização (cStat ${verdict.cStat}): ${verdict.xMotivo}`, {
        details: [{ field: 'numero_inicial', message: `faixa ${first} a ${last} da série ${serie}: ${verdict.xMotivo}` }],
        rejeicao: { cStat: verdict.cStat, xMotivo: verdict.xMotivo },
      });
    }
    const record = {
      id: randomUUID(),
      companyId,
      serie,
      numeroInicial: first,
      numeroFinal: last,
      justificativa: xJust,
      protocolo: verdict.nProt ?? '',
      codigoStatus: verdict.cStat,
      motivo: verdict.xMotivo,
      xml: wrapProcInutNFe(signed, verdict.retInutNFe),
      createdAt: new Date(),
    };
    await deps.store.nfce.insertInutilizacao(record);
    return record;
  }
}
