// MDF-e issuance, closing and cancellation: the service's side of the conversation with the tax
// authority. Issuance is synchronous (the verdict is in the response), and the order of things
// is what makes it safe:
//
// 1. the idempotency key (if any) is claimed: a replay answers at once, a running twin gets 409;
// 2. the manifest is built and signed with dhEmi from the company clock; a previous attempt at
//    the same number lends its cMDF, so a corrected re-issue has the same access key;
// 3. the signed XML is committed (`processando`) BEFORE it is sent: a process stopped during the
//    call leaves a trace that the restart recovery settles by consulting the authority, so a
//    manifest is never issued twice and a key is never freed for an authorized one;
// 4. the verdict and the key's outcome are committed together: authorized → the key replays;
//    rejected → the key and the number are free (the authority consumed nothing).
//
// The authority applies its content rules itself (745, 699, 698, 725, 578, 663, 611, 204, in
// that order); nothing here pre-rejects a manifest that the authority would judge.
//
// Closing and cancelling run in the manifest's turn: this process's (turns.ts), then the
// store's, which is the only one among every process sharing a PostgreSQL store. The manifest is
// read once the turn comes, so of a closing and a cancellation sent at once (to one process or
// two) the second finds the manifest closed or cancelled (422 estado_invalido) without asking
// the authority.

import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { mdfeCancellationEvent, mdfeClosingEvent, justification } from '../../fiscal/events.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { issueMdfe } from '../../fiscal/mdfe/build.ts';
import type { MdfeRequest } from '../../fiscal/mdfe/types.ts';
import { wrapProcEventoMDFe } from '../../fiscal/protocol.ts';
import { firstText } from '../../fiscal/xml.ts';
import {
  AUTHORIZED,
  AuthorityCertificateError,
  AuthorityUnavailableError,
  EVENT_REGISTERED,
  type AuthorityCompany,
  type EventVerdict,
  type MdfeVerdict,
} from '../authority/port.ts';
import { brasiliaDay } from '../../base/common/brasilia.ts';
import type { Issuer } from '../companies.ts';
import type { ServiceDeps } from '../deps.ts';
import { ApiError, invalidRequest, notFound } from '../http/errors.ts';
import type { KeyAttempt } from '../idempotency-rules.ts';
import { Turns } from '../turns.ts';
import type { MdfeDocument, MdfeEventRecord, MdfeRecord, MdfeVerdictRecord } from './store.ts';

export const CANCELLATION_WINDOW_MS = 24 * 60 * 60 * 1000;

const TP_ENCERRAMENTO = '110112';
const TP_CANCELAMENTO = '110111';
export const EVENT_NAMES: Record<string, string> = {
  [TP_ENCERRAMENTO]: 'Encerramento',
  [TP_CANCELAMENTO]: 'Cancelamento',
  '110114': 'Inclusão de condutor',
  '110115': 'Inclusão de DF-e',
};

const missing = () => notFound('MDF-e não encontrado.');
const unavailable = (what: string) =>
  new ApiError('autoridade_indisponivel', `A autoridade fiscal não respondeu; ${what} Tente novamente em instantes.`, {
    headers: { 'retry-after': '5' },
  });

export function authorityCompany(issuer: Issuer): AuthorityCompany {
  const { company, certificate, emitter } = issuer;
  return {
    id: company.id,
    cnpj: company.cnpj,
    uf: company.address.uf,
    environment: company.ambiente,
    // The same registration whatever the document: the CSC is part of it (an MDF-e does not use it).
    ...(emitter.csc && { csc: emitter.csc }),
    credentials: { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem },
  };
}

/** The CT-e / NF-e keys of the request, in document order. Call after a successful build. */
function linkedDocuments(body: MdfeRequest): MdfeDocument[] {
  const out: MdfeDocument[] = [];
  for (const m of body.infDoc.infMunDescarga) {
    for (const d of m.infCTe ?? []) out.push({ tipo: 'CTe', chave: d.chCTe, codigoMunicipioDescarga: m.cMunDescarga });
    for (const d of m.infNFe ?? []) out.push({ tipo: 'NFe', chave: d.chNFe, codigoMunicipioDescarga: m.cMunDescarga });
  }
  return out;
}

const utc = (brasiliaIso: string): string => new Date(brasiliaIso).toISOString();

function verdictRecord(v: MdfeVerdict): MdfeVerdictRecord {
  const authorized = AUTHORIZED.has(v.cStat);
  return {
    authorized,
    status: v.cStat,
    motivo: v.xMotivo,
    protocolo: authorized ? (v.nProt ?? null) : null,
    at: utc(v.receivedAt),
    protXml: v.protMDFe,
  };
}

export type IssueOutcome = { record: MdfeRecord; documents: MdfeDocument[] };

export class MdfeIssuance {
  /** Each manifest's events, one at a time in this process (see the header). */
  readonly #turns = new Turns();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly log: FastifyBaseLogger,
  ) {}

  private get store() {
    return this.deps.store.mdfe;
  }

  private async issuer(companyId: string, now: Date): Promise<Issuer> {
    const issuer = await this.deps.companies.issuer(companyId, now);
    if (!issuer) throw missing();
    return issuer;
  }

  /**
   * Steps 2–4 for a request whose key (if any) is already claimed for `documentId`. A request
   * refused before its manifest is stored leaves no trace (the claim is forgotten); one the
   * authority never received is discarded and its key freed.
   */
  async issue(companyId: string, body: MdfeRequest, documentId: string, key: string | undefined): Promise<IssueOutcome> {
    const attempt: KeyAttempt | undefined = key === undefined ? undefined : { companyId, docType: 'mdfe', key, documentId };
    let record: MdfeRecord;
    let documents: MdfeDocument[];
    let xml: string;
    let issuer: Issuer;
    try {
      const now = await this.deps.clock.now(companyId);
      issuer = await this.issuer(companyId, now);
      const cMDF = await this.store.codeOfLastAttempt(companyId, body.ide.serie, body.ide.nMDF);
      const issued = issueMdfe(body, { emitter: issuer.emitter, dhEmi: now, credentials: issuer.certificate, ...(cMDF && { cMDF }) });
      xml = issued.xml;
      documents = linkedDocuments(body);
      const createdAt = new Date().toISOString();
      const fresh = {
        id: documentId,
        companyId,
        chave: issued.key,
        serie: body.ide.serie,
        numero: body.ide.nMDF,
        cMdf: issued.cMDF,
        ambiente: issuer.company.ambiente,
        placa: body.rodo.veicTracao.placa.toUpperCase().replace(/[-\s]/g, ''),
        ufInicio: body.ide.UFIni,
        ufFim: body.ide.UFFim,
        emitidoEm: now.toISOString(),
        referenciaExterna: key ?? null,
        qrcode: issued.qrCode,
        valorCarga: firstText(issued.xml, 'vCarga') ?? '0.00',
        createdAt,
        xml,
      };
      await this.store.insertProcessing(fresh, documents);
      record = {
        ...fresh,
        situacao: 'processando',
        status: null,
        motivo: null,
        protocolo: null,
        autorizadoEm: null,
        encerradoEm: null,
        canceladoEm: null,
        updatedAt: createdAt,
      };
    } catch (err) {
      // Refused before anything was stored or sent (422 validacao, ...): the request leaves
      // nothing behind, its key's claim included, as for the NF-e de devolução.
      if (attempt) await this.deps.idempotency.forget(attempt);
      throw err;
    }

    const company = authorityCompany(issuer);
    let verdict: MdfeVerdict;
    try {
      verdict = await this.deps.authority.authorizeMdfe(company, xml);
    } catch (err) {
      if (err instanceof AuthorityCertificateError) {
        // Refused at the TLS handshake: nothing reached the authority, the number stays free.
        await this.store.discardAttempt(record.id, attempt);
        throw err;
      }
      // Unknown outcome: only the authority knows whether it decided. Ask it.
      const settled = await this.settleUnknown(company, record, attempt, err instanceof AuthorityUnavailableError);
      if (settled) return { record: settled, documents };
      if (err instanceof AuthorityUnavailableError) throw unavailable('o MDF-e não foi emitido e o número continua livre.');
      throw err;
    }
    const recorded = await this.store.recordVerdict(documentId, verdictRecord(verdict), attempt);
    return { record: recorded ?? record, documents };
  }

  /**
   * After a failed call: consults the authority about the manifest. Known → its verdict is
   * recorded (an authorization is never lost). Unknown to it → the attempt is discarded and its
   * key freed. The consultation failing too: discarded when `discardIfUnknown` (the authority
   * said it was unavailable, the contract's 503 frees the key), otherwise left `processando`
   * with its key locked until the restart recovery settles it.
   */
  private async settleUnknown(
    company: AuthorityCompany,
    record: MdfeRecord,
    attempt: KeyAttempt | undefined,
    discardIfUnknown: boolean,
  ): Promise<MdfeRecord | undefined> {
    try {
      const consultation = await this.deps.authority.consultMdfe(company, record.chave);
      if (consultation.found) return await this.store.recordVerdict(record.id, verdictRecord(consultation.verdict), attempt);
      await this.store.discardAttempt(record.id, attempt);
      return undefined;
    } catch (err) {
      this.log.warn({ err, mdfeId: record.id }, 'consulta do MDF-e falhou após falha no envio');
      if (discardIfUnknown) await this.store.discardAttempt(record.id, attempt);
      return undefined;
    }
  }

  /**
   * Restart recovery: keys claimed by a stopped process with no manifest recorded are freed;
   * manifests left `processando` are settled by consultation. Returns those still unsettled
   * (authority unreachable), for a later retry.
   */
  async recover(ids?: readonly string[]): Promise<string[]> {
    if (!ids) {
      for (const key of await this.deps.idempotency.pending('mdfe')) {
        if (!(await this.store.getById(key.documentId))) await this.store.releaseKey(key);
      }
    }
    const pending = ids
      ? (await Promise.all(ids.map((id) => this.store.getById(id)))).filter((r) => r?.situacao === 'processando')
      : await this.store.processing();
    const left: string[] = [];
    for (const record of pending as MdfeRecord[]) {
      const attempt: KeyAttempt | undefined =
        record.referenciaExterna === null ? undefined : { companyId: record.companyId, docType: 'mdfe', key: record.referenciaExterna, documentId: record.id };
      try {
        const now = await this.deps.clock.now(record.companyId);
        const company = authorityCompany(await this.issuer(record.companyId, now));
        const consultation = await this.deps.authority.consultMdfe(company, record.chave);
        if (consultation.found) await this.store.recordVerdict(record.id, verdictRecord(consultation.verdict), attempt);
        else await this.store.discardAttempt(record.id, attempt);
        this.log.info({ mdfeId: record.id, encontrado: consultation.found }, 'MDF-e pendente resolvido por consulta');
      } catch (err) {
        this.log.warn({ err, mdfeId: record.id }, 'MDF-e pendente: consulta falhou; nova tentativa mais tarde');
        left.push(record.id);
      }
    }
    return left;
  }

  /** POST encerrar: event 110112. */
  close(companyId: string, id: string, input: { uf: string; codigo_municipio: string; data?: string }): Promise<MdfeRecord> {
    return this.inTurn(companyId, id, (record) => this.closeNow(record, input));
  }

  private async closeNow(record: MdfeRecord, input: { uf: string; codigo_municipio: string; data?: string }): Promise<MdfeRecord> {
    const { companyId } = record;
    requireAuthorized(record, 'encerrado');
    const now = await this.deps.clock.now(companyId);
    const today = brasiliaDay(now);
    const dtEnc = input.data ?? today;
    if (input.data !== undefined && input.data > today) {
      throw new FieldError('data', `a data de encerramento não pode ser posterior a hoje (${today}, horário de Brasília)`);
    }
    const issuer = await this.issuer(companyId, now);
    const evento = mdfeClosingEvent(
      {
        author: { cnpj: issuer.company.cnpj, environment: issuer.company.ambiente },
        chMDFe: record.chave,
        nProt: record.protocolo!,
        UF: input.uf,
        cMun: input.codigo_municipio,
        dtEnc,
        dhEvento: now,
        nSeqEvento: 1,
      },
      issuer.certificate,
    );
    const dados = { uf: input.uf, codigo_municipio: input.codigo_municipio, data: dtEnc };
    return this.register(issuer, record, TP_ENCERRAMENTO, evento, dados, 'encerrado');
  }

  /** POST cancelar: event 110111, within 24 hours of the authorization. */
  cancel(companyId: string, id: string, input: { justificativa: string }): Promise<MdfeRecord> {
    let xJust: string;
    try {
      xJust = justification(input.justificativa, 'justificativa');
    } catch (err) {
      if (err instanceof FieldError) throw invalidRequest('Justificativa inválida.', err.issues);
      throw err;
    }
    return this.inTurn(companyId, id, (record) => this.cancelNow(record, xJust));
  }

  private async cancelNow(record: MdfeRecord, xJust: string): Promise<MdfeRecord> {
    const { companyId } = record;
    requireAuthorized(record, 'cancelado');
    const now = await this.deps.clock.now(companyId);
    if (now.getTime() - Date.parse(record.autorizadoEm!) > CANCELLATION_WINDOW_MS) throw windowExpired();
    const issuer = await this.issuer(companyId, now);
    const evento = mdfeCancellationEvent(
      {
        author: { cnpj: issuer.company.cnpj, environment: issuer.company.ambiente },
        chMDFe: record.chave,
        nProt: record.protocolo!,
        xJust,
        dhEvento: now,
        nSeqEvento: 1,
      },
      issuer.certificate,
    );
    return this.register(issuer, record, TP_CANCELAMENTO, evento, { justificativa: xJust }, 'cancelado');
  }

  /** Runs `change` on the company's manifest `id` as it is when the manifest's turn comes (see the header). */
  private inTurn(companyId: string, id: string, change: (record: MdfeRecord) => Promise<MdfeRecord>): Promise<MdfeRecord> {
    return this.#turns.run(id, () =>
      this.store.changeTurn(id, async () => {
        const record = await this.store.get(companyId, id);
        if (!record) throw missing();
        return change(record);
      }),
    );
  }

  /**
   * Runs an event on the company's manifest `id` in the manifest's turn, the manifest still
   * authorized, with who signs it now (carrier-events.ts).
   */
  inEventTurn(
    companyId: string,
    id: string,
    action: string,
    event: (context: { record: MdfeRecord; issuer: Issuer; now: Date }) => Promise<MdfeRecord>,
  ): Promise<MdfeRecord> {
    return this.inTurn(companyId, id, async (record) => {
      requireAuthorized(record, action);
      const now = await this.deps.clock.now(companyId);
      return event({ record, now, issuer: await this.issuer(companyId, now) });
    });
  }

  /**
   * Sends the signed event; registered, records it (moving the manifest `to` its new state, or
   * leaving it authorized with `added` documents). A refusal is the contract's 422; the authority
   * unreachable, 503 with nothing recorded.
   */
  async register(
    issuer: Issuer,
    record: MdfeRecord,
    tpEvento: string,
    evento: string,
    dados: Record<string, string>,
    to: 'encerrado' | 'cancelado' | null,
    added: readonly MdfeDocument[] = [],
  ): Promise<MdfeRecord> {
    let verdict: EventVerdict;
    try {
      verdict = await this.deps.authority.registerMdfeEvent(authorityCompany(issuer), evento);
    } catch (err) {
      if (err instanceof AuthorityUnavailableError) {
        throw unavailable(`o evento ${tpEvento} (${EVENT_NAMES[tpEvento]}) não foi registrado.`);
      }
      throw err;
    }
    if (!EVENT_REGISTERED.has(verdict.cStat)) throw eventRefusal(verdict);
    const event: MdfeEventRecord = {
      tpEvento,
      nSeq: Number(firstText(evento, 'nSeqEvento') ?? '1'),
      status: verdict.cStat,
      motivo: verdict.xMotivo,
      protocolo: verdict.nProt ?? null,
      registradoEm: utc(verdict.registeredAt),
      dados,
      xml: wrapProcEventoMDFe(evento, verdict.retEvento),
    };
    const updated = await this.store.recordEvent(record.id, event, to, added);
    if (!updated) {
      // The authority registered it, so the manifest was authorized there, and the manifest's
      // turn kept every other event of the service away: something outside it changed the row.
      this.log.error({ mdfeId: record.id, tpEvento }, 'evento registrado pela autoridade, mas o MDF-e já não estava autorizado aqui');
      throw new ApiError('estado_invalido', 'O MDF-e mudou de situação durante a operação; consulte-o novamente.');
    }
    return updated;
  }
}

/** An event needs an authorized manifest: 422 estado_invalido saying what it is instead. */
function requireAuthorized(record: MdfeRecord, action: string): void {
  if (record.situacao === 'autorizado') return;
  const why: Record<string, string> = {
    encerrado: 'já está encerrado',
    cancelado: 'está cancelado',
    rejeitado: 'foi rejeitado pela autoridade fiscal (não há manifesto autorizado)',
    processando: 'ainda está em processamento',
  };
  throw new ApiError('estado_invalido', `O MDF-e ${why[record.situacao] ?? `está ${record.situacao}`}; não pode ser ${action}.`);
}

const windowExpired = () =>
  new ApiError(
    'prazo_expirado',
    'O prazo de cancelamento do MDF-e (24 horas após a autorização) terminou. Encerre o manifesto com POST /api/v1/mdfe/{id}/encerrar.',
  );

/** An event the authority refused → the contract's 422 (the manifest is unchanged). */
function eventRefusal(v: EventVerdict): ApiError {
  const text = `Rejeição da autoridade fiscal (cStat ${v.cStat}): ${v.xMotivo.replace(/^Rejeição:\s*/, '')}`;
  switch (v.cStat) {
    case '220':
      return windowExpired();
    case '218':
    case '609':
      return new ApiError('estado_invalido', text);
    case '614':
      return new ApiError('validacao', text, { details: [{ field: 'codigo_municipio', message: v.xMotivo }] });
    case '615':
      return new ApiError('validacao', text, { details: [{ field: 'data', message: v.xMotivo }] });
    default:
      return new ApiError('validacao', text, { rejeicao: { cStat: v.cStat, xMotivo: v.xMotivo } });
  }
}

export const newDocumentId = (): string => randomUUID();
