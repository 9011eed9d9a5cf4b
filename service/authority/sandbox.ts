// The sandbox tax authority: a simulator of SEFAZ (NF-e/NFC-e) and of the MDF-e authorizer for
// the embedded service and the tests. It receives the same signed XML a real authority would,
// applies the rules in the order SEFAZ applies them, and answers with the official cStat/xMotivo
// and the answer elements (protNFe, retEvento, retInutNFe, protMDFe) built by fiscal/protocol.ts.
//
// How a call goes:
// 1. Availability (per company, from `settings`): unavailable → AuthorityUnavailableError and
//    nothing happens here; the caller does not know the outcome, exactly as with a timeout.
// 2. Latency: a real timer of `latencyMs`.
// 3. The stateless checks (sandbox-rules.ts): schema, signature, certificate, key, environment,
//    QR Code, payments, MDF-e content rules. A rejection there touches no state.
// 4. The stateful rules and the state change, in ONE transaction of the authority's memory
//    (sandbox-memory.ts: its own SQLite file, or a schema of the service's PostgreSQL database
//    that every service process shares), serialized per emitter and committed before the answer
//    is returned: a caller killed after that point finds the truth with consultNfe/consultMdfe,
//    as it would at SEFAZ. Every NF-e judged there is also recorded with its answer
//    (nfe_recepcao), as an authority counts what it receives.
//
// Time is the company's sandbox clock (`clock`), so the 30-minute, 24-hour and 168-hour windows
// can be tested by moving it forward.
//
// Decisions the specification leaves open (see also sandbox-rules.ts):
// - nProt (all documents, events and inutilizações): 15 digits, "1" + cUF of the document +
//   two-digit year of the company clock + a 10-digit sequence kept in the authority's file.
//   That is the NF-e layout (type of authorizer 1 = the UF's own SEFAZ); MDF-e protocols use the
//   same shape here.
// - cStat 120 "autorizado com alerta" (NT 2026.002): given to a CRT 3 NFC-e with an item
//   without IBS/CBS where rule 1115 is not enforced yet (sandbox-reform-rules.ts reformAlert).
// - The time of issue against the time of reception (SANDBOX_DEADLINES, docs/fiscal.md "Rejections
//   the sandbox applies"), after the duplicity checks (a re-sent document is judged by what it
//   is): a dhEmi more than 5 min after reception is 703 (NF-e and NFC-e; the tolerance is
//   UNVERIFIED, SEFAZ's own clock skew allowance); a normal NFC-e (tpEmis 1) received more than
//   5 min after its dhEmi is 704; an offline NFC-e (tpEmis 9) received more than 24 h after dhEmi
//   is authorized with 150 ("fora de prazo"), the most common deadline in docs/fiscal.md,
//   "Offline contingency".
// - A re-sent document that was authorized and later cancelled gets 218, as SEFAZ answers.
// - Cancellation by substitution (110112) follows NT 2018.004 beyond the brief: the substitute
//   must also be authorized here and not cancelled (912/913), and the NFC-e being cancelled must
//   have been issued normally (tpEmis 1, else 920). Rules 914–919 (same items, values, consumer,
//   2 h apart) are not simulated.
// - Inutilização of a range already voided: 563 for the very same range, 256 for an overlap
//   (SEFAZ's own codes), rather than a single generic code.
// - A document, event or range of another company's CNPJ is unknown to this company: consult
//   answers 217, an event 580 (NF-e) / 217 (MDF-e).
// - MDF-e 110114 (a driver joins) and 110115 (NF-e added on the way) are registered on an
//   authorized manifest neither closed nor cancelled (609 / 218 otherwise), 110115 naming the
//   authorization's protocol (222); the same type and sequence twice is 631. They leave the
//   manifest open. Whether the driver or the NF-e exist elsewhere is not simulated.
// - MDFeConsNaoEnc lists the emitter's authorized manifests neither closed nor cancelled: 111
//   with them, 112 when there are none.

import { setTimeout as delay } from 'node:timers/promises';
import { keyInSignedXml, parseAccessKey } from '../../fiscal/access-key.ts';
import { cUFOf } from '../../fiscal/br/uf.ts';
import {
  brasiliaDate,
  brasiliaDateTime,
  eventAnswer,
  mdfeProtocol,
  mdfeProtocolFor,
  nfeProtocol,
  nfeProtocolFor,
  retEvento,
  retInutNFe,
  retInutNFeFor,
} from '../../fiscal/protocol.ts';
import { precompileSchemas, type SchemaName } from '../../fiscal/schema.ts';
import {
  AuthorityUnavailableError,
  type AuthorityCompany,
  type EventVerdict,
  type MdfeConsultation,
  type MdfeVerdict,
  type NfeConsultation,
  type NfeVerdict,
  type OpenManifests,
  type ServiceStatusVerdict,
  type TaxAuthority,
  type VoidingVerdict,
} from './port.ts';
import { checkEvent, checkInut, checkMdfe, checkNfe, MDFE, NFE, type Rejection } from './sandbox-rules.ts';
import { AUTHORIZED_WITH_ALERT } from './sandbox-reform-rules.ts';
import type { VerdictMessage } from '../../fiscal/protocol.ts';
import type { DecisionScope, MdfeRow, NfeRow, SandboxMemory, SandboxRecords } from './sandbox-memory.ts';
import { SqliteSandboxMemory } from './sandbox-store.ts';

export type SandboxAuthoritySettings = {
  /** How long the authority takes to answer, in milliseconds (a real timer). */
  latencyMs: number;
  /** false: every call throws AuthorityUnavailableError and changes nothing. */
  available: boolean;
};

export type SandboxAuthorityOptions = (
  | {
      /** Its memory in its own SQLite file (e.g. `<data>/sandbox-authority.sqlite`). */
      file: string;
      memory?: never;
    }
  | {
      /** Its memory handed in (the service's PostgreSQL database: sandbox-pg-memory.ts). */
      memory: SandboxMemory;
      file?: never;
    }
) & {
  /** Read on every call, so a change through the sandbox controls applies at once. */
  settings: (companyId: string) => SandboxAuthoritySettings;
  /** The company's sandbox clock: reception time, protocol dates and every deadline. */
  clock: (companyId: string) => Date;
  /** verAplic of the answers (1..20 characters). */
  verAplic?: string;
  /**
   * Digits of the NF-e/NFC-e protocol numbers: 15 (default), or the 17 of NT 2025.002 (SP),
   * which a client must take as it comes. MDF-e protocols keep 15 (their schema's TProt).
   */
  nfeProtocolDigits?: 15 | 17;
};

export const DEFAULT_VER_APLIC = 'BALCAO-SANDBOX-1.0';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The windows the sandbox applies (docs/fiscal.md: "Cancellation", "Offline contingency", "MDF-e"). */
export const SANDBOX_DEADLINES = {
  /** 110111 of an NF-e/NFC-e, from authorization. */
  nfeCancellationMs: 30 * MINUTE,
  /** 110112 (cancellation by substitution), from authorization. */
  nfeSubstitutionMs: 168 * HOUR,
  /** Offline NFC-e: later than this after dhEmi it is authorized "fora de prazo" (150). */
  offlineTransmissionMs: 24 * HOUR,
  /** NF-e/NFC-e: a dhEmi later than the reception by more than this is 703 (reference: sefaz-webservices.md §5.9; tolerance UNVERIFIED). */
  futureEmissionToleranceMs: 5 * MINUTE,
  /** Normal NFC-e (tpEmis 1): received later than this after dhEmi it is 704 (sefaz-webservices.md §5.9). */
  onlineEmissionDelayMs: 5 * MINUTE,
  /** 110111 of an MDF-e, from authorization. */
  mdfeCancellationMs: 24 * HOUR,
} as const;

const CLOSED_MESSAGE = 'Autoridade fiscal simulada encerrada';

/** Compiles `names` one per turn of the event loop (a schema asked for sooner compiles on use). */
function precompileWhenIdle(names: SchemaName[]): void {
  const [name, ...rest] = names;
  if (!name) return;
  setImmediate(() => {
    precompileSchemas([name]);
    precompileWhenIdle(rest);
  }).unref();
}

export class SandboxAuthority implements TaxAuthority {
  private readonly store: SandboxMemory;
  private readonly settings: SandboxAuthorityOptions['settings'];
  private readonly clock: SandboxAuthorityOptions['clock'];
  private readonly verAplic: string;
  /** NF-e/NFC-e protocol length for the next authorizations (an authorizer may switch to 17). */
  nfeProtocolDigits: 15 | 17;

  constructor(options: SandboxAuthorityOptions) {
    // Compiling a schema costs milliseconds to tens of them: the NFC-e's (~60 ms) is paid at
    // start-up, not by the first sale; the others one at a time once the start is over.
    precompileSchemas(['nfe']);
    precompileWhenIdle(['eventoCancNFe', 'eventoCancSubst', 'inutNFe', 'mdfe', 'eventoMDFe', 'evCancMDFe', 'evEncMDFe']);
    this.settings = options.settings;
    this.clock = options.clock;
    this.verAplic = options.verAplic ?? DEFAULT_VER_APLIC;
    this.nfeProtocolDigits = options.nfeProtocolDigits ?? 15;
    this.store = options.memory ?? new SqliteSandboxMemory(options.file);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  // -------------------------------------------------------------------------------------------
  // NF-e / NFC-e

  async nfeStatus(company: AuthorityCompany): Promise<ServiceStatusVerdict> {
    await this.gate(company);
    return { cStat: '107', xMotivo: 'Serviço em Operação' };
  }

  async authorizeNfe(company: AuthorityCompany, signedNFe: string): Promise<NfeVerdict> {
    await this.gate(company);
    const now = this.now(company);
    const cUF = cUFOf(company.uf);
    const checked = checkNfe(company, signedNFe, cUF);
    if (!checked.ok) return this.nfeVerdict(company, signedNFe, checked.rejection, now);
    const { key, facts } = checked.document;
    const cnpj = facts.emitCnpj!;

    // One number: decided beside the emitter's other numbers, not after them.
    return this.decide({ cnpj, number: `${facts.mod}/${facts.serie}/${facts.nNF}` }, async (m) => {
      const verdict = await this.judgeNfe(m, company, signedNFe, checked.document, now);
      await m.recordReception({ access_key: key, cnpj, c_stat: verdict.cStat, received_at: verdict.receivedAt });
      return verdict;
    });
  }

  private async judgeNfe(
    m: SandboxRecords,
    company: AuthorityCompany,
    signedNFe: string,
    { key, facts, alert }: Extract<ReturnType<typeof checkNfe>, { ok: true }>['document'],
    now: Date,
  ): Promise<NfeVerdict> {
    const cnpj = facts.emitCnpj!;
    const model = facts.mod!;
    const serie = Number(facts.serie);
    const number = Number(facts.nNF);
    const { same, other, voided } = await m.nfeAuthorizationFacts(key, cnpj, model, serie, number);
    if (same) {
      if (same.cancelled_at) return this.nfeVerdict(company, signedNFe, NFE.jaCancelada, now);
      const duplicate = `${NFE.duplicidade.xMotivo} [nProt:${same.n_prot}][dhAut:${same.received_at}]`;
      return this.nfeVerdict(company, signedNFe, { cStat: NFE.duplicidade.cStat, xMotivo: duplicate }, now);
    }
    if (other) {
      const duplicate = `${NFE.duplicidadeNumero.xMotivo} [chNFe:${other.access_key}][nProt:${other.n_prot}]`;
      return this.nfeVerdict(company, signedNFe, { cStat: NFE.duplicidadeNumero.cStat, xMotivo: duplicate }, now);
    }
    if (voided) return this.nfeVerdict(company, signedNFe, NFE.numeroInutilizado, now);
    const age = now.getTime() - Date.parse(facts.dhEmi!);
    if (-age > SANDBOX_DEADLINES.futureEmissionToleranceMs) return this.nfeVerdict(company, signedNFe, NFE.emissaoPosterior, now);
    if (model === '65' && facts.tpEmis === '1' && age > SANDBOX_DEADLINES.onlineEmissionDelayMs) {
      return this.nfeVerdict(company, signedNFe, NFE.emissaoAtrasada, now);
    }
    const late = facts.tpEmis === '9' && age > SANDBOX_DEADLINES.offlineTransmissionMs;
    // Late beats the alert: 150 has no room for a message of its own here.
    const outcome = late ? NFE.autorizadoForaDePrazo : alert ? AUTHORIZED_WITH_ALERT : NFE.autorizado;
    const nProt = await this.protocolNumber(m, key, now, this.nfeProtocolDigits);
    const verdict = this.nfeVerdict(company, signedNFe, outcome, now, nProt, late ? undefined : alert);
    await m.insertNfe({
      access_key: key,
      company_id: company.id,
      cnpj,
      model,
      serie,
      number,
      tp_emis: Number(facts.tpEmis),
      c_stat: verdict.cStat,
      x_motivo: verdict.xMotivo,
      n_prot: nProt,
      received_at: verdict.receivedAt,
      authorized_at_ms: now.getTime(),
      prot_nfe: verdict.protNFe,
    });
    return verdict;
  }

  async consultNfe(company: AuthorityCompany, key: string): Promise<NfeConsultation> {
    await this.gate(company);
    const row = await this.store.nfe(key);
    if (!row || row.cnpj !== company.cnpj) return { found: false, ...NFE.naoConsta };
    return { found: true, verdict: storedNfeVerdict(row), cancelled: row.cancelled_at !== null };
  }

  async registerNfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict> {
    await this.gate(company);
    const now = this.now(company);
    const checked = checkEvent(company, signedEvento, 'nfe');
    if (!checked.ok) return this.eventVerdict('nfe', company, signedEvento, checked.rejection, now);
    const { facts, key } = checked;
    const tpEvento = facts.tpEvento!;
    const nSeq = Number(facts.nSeqEvento);
    const refuse = (r: Rejection) => this.eventVerdict('nfe', company, signedEvento, r, now);

    return this.decide({ cnpj: key.slice(6, 20) }, async (m) => {
      const nfe = await m.nfe(key);
      if (!nfe || nfe.cnpj !== company.cnpj) return refuse(NFE.eventoExigeAutorizada);
      if (await m.nfeEvent(key, tpEvento, nSeq)) return refuse(NFE.eventoDuplicado);
      if (nfe.cancelled_at) return refuse(NFE.cancelamentoDeCancelada);
      if (facts.nProt !== nfe.n_prot) return refuse(NFE.protocoloDiferente);
      const elapsed = now.getTime() - nfe.authorized_at_ms;
      if (tpEvento === '110111') {
        if (elapsed > SANDBOX_DEADLINES.nfeCancellationMs) return refuse(NFE.prazoCancelamento);
      } else {
        if (elapsed > SANDBOX_DEADLINES.nfeSubstitutionMs) return refuse(NFE.prazoCancelamento);
        const problem = await this.substitutionProblem(m, nfe, facts.chNFeRef);
        if (problem) return refuse(problem);
      }
      const nProt = await this.protocolNumber(m, key, now);
      const verdict = this.eventVerdict('nfe', company, signedEvento, NFE.eventoRegistrado, now, nProt);
      await m.insertNfeEvent({
        access_key: key,
        tp_evento: tpEvento,
        n_seq: nSeq,
        company_id: company.id,
        n_prot: nProt,
        registered_at: verdict.registeredAt,
        ret_evento: verdict.retEvento,
      });
      await m.cancelNfe(key, verdict.registeredAt, tpEvento, nProt);
      return verdict;
    });
  }

  /** NT 2018.004: the substitute is another NFC-e of the same emitter, issued offline, authorized. */
  private async substitutionProblem(m: SandboxRecords, cancelled: NfeRow, chNFeRef: string | undefined): Promise<Rejection | undefined> {
    let ref;
    try {
      ref = parseAccessKey(chNFeRef);
    } catch {
      return NFE.substitutaInvalida;
    }
    if (ref.key === cancelled.access_key || ref.cnpj !== cancelled.cnpj || ref.model !== '65') return NFE.substitutaIncorreta;
    if (ref.tpEmis !== 9 || cancelled.tp_emis !== 1) return NFE.substituicaoTpEmis;
    const substitute = await m.nfe(ref.key);
    if (!substitute) return NFE.substitutaInexistente;
    if (substitute.cancelled_at) return NFE.substitutaCancelada;
    return undefined;
  }

  async voidNfeNumbers(company: AuthorityCompany, signedInutNFe: string): Promise<VoidingVerdict> {
    await this.gate(company);
    const now = this.now(company);
    const cUF = cUFOf(company.uf);
    const checked = checkInut(company, signedInutNFe, cUF);
    if (!checked.ok) return this.voidingVerdict(company, signedInutNFe, checked.rejection, now);
    const { facts, serie, first, last } = checked;
    const cnpj = facts.cnpj!;
    const model = facts.mod!;

    return this.decide({ cnpj }, async (m) => {
      if ((await m.authorizedInRange(cnpj, model, serie, first, last)) !== undefined) {
        return this.voidingVerdict(company, signedInutNFe, NFE.faixaUsada, now);
      }
      const voided = await m.voidedOverlap(cnpj, model, serie, first, last);
      if (voided) {
        const same = voided.first === first && voided.last === last;
        return this.voidingVerdict(company, signedInutNFe, same ? NFE.mesmaFaixa : NFE.faixaJaInutilizada, now);
      }
      const nProt = await this.protocolNumber(m, cUF, now);
      const verdict = this.voidingVerdict(company, signedInutNFe, NFE.inutilizado, now, nProt);
      await m.insertVoided({
        company_id: company.id,
        cnpj,
        model,
        serie,
        first_number: first,
        last_number: last,
        n_prot: nProt,
        received_at: verdict.receivedAt,
        ret_inut: verdict.retInutNFe,
      });
      return verdict;
    });
  }

  // -------------------------------------------------------------------------------------------
  // MDF-e

  async authorizeMdfe(company: AuthorityCompany, signedMDFe: string): Promise<MdfeVerdict> {
    await this.gate(company);
    const now = this.now(company);
    const checked = checkMdfe(company, signedMDFe);
    if (!checked.ok) return this.mdfeVerdict(company, signedMDFe, checked.rejection, now);
    const { key, facts } = checked.document;
    const cnpj = facts.emitCnpj!;
    const serie = Number(facts.serie);
    const number = Number(facts.nMDF);
    const plate = (facts.placa ?? '').toUpperCase();

    return this.decide({ cnpj }, async (m) => {
      // 611 before 204 (docs/api.md, "MDF-e"): an open manifest of the plate blocks even when it
      // is the one holding this number, so re-sending an open manifest says "close it first".
      const open = await m.openMdfeOfPlate(cnpj, plate);
      if (open) {
        const xMotivo = `${MDFE.naoEncerrado.xMotivo} [chMDFe:${open.access_key}]`;
        return this.mdfeVerdict(company, signedMDFe, { cStat: MDFE.naoEncerrado.cStat, xMotivo }, now);
      }
      if (await m.mdfeByNumber(cnpj, serie, number)) return this.mdfeVerdict(company, signedMDFe, MDFE.duplicidade, now);

      const nProt = await this.protocolNumber(m, key, now);
      const verdict = this.mdfeVerdict(company, signedMDFe, MDFE.autorizado, now, nProt);
      await m.insertMdfe({
        access_key: key,
        company_id: company.id,
        cnpj,
        serie,
        number,
        plate,
        uf_ini: facts.UFIni!,
        uf_fim: facts.UFFim!,
        c_stat: verdict.cStat,
        x_motivo: verdict.xMotivo,
        n_prot: nProt,
        received_at: verdict.receivedAt,
        authorized_at_ms: now.getTime(),
        prot_mdfe: verdict.protMDFe,
      });
      return verdict;
    });
  }

  async consultMdfe(company: AuthorityCompany, key: string): Promise<MdfeConsultation> {
    await this.gate(company);
    const row = await this.store.mdfe(key);
    if (!row || row.cnpj !== company.cnpj) return { found: false, ...MDFE.naoConsta };
    return { found: true, verdict: storedMdfeVerdict(row), state: row.state };
  }

  async registerMdfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict> {
    await this.gate(company);
    const now = this.now(company);
    const checked = checkEvent(company, signedEvento, 'mdfe');
    if (!checked.ok) return this.eventVerdict('mdfe', company, signedEvento, checked.rejection, now);
    const { facts, key } = checked;
    const tpEvento = facts.tpEvento!;
    const refuse = (r: Rejection) => this.eventVerdict('mdfe', company, signedEvento, r, now);

    return this.decide({ cnpj: key.slice(6, 20) }, async (m) => {
      const mdfe = await m.mdfe(key);
      if (!mdfe || mdfe.cnpj !== company.cnpj) return refuse(MDFE.naoConsta);
      if (mdfe.state === 'cancelado') return refuse(MDFE.jaCancelado);
      if (mdfe.state === 'encerrado') return refuse(MDFE.jaEncerrado);
      // 110114 (a driver joins) carries no protocol; the others name the authorization's.
      if (tpEvento !== '110114' && facts.nProt !== mdfe.n_prot) return refuse(MDFE.protocoloDiferente);
      if (await m.mdfeEvent(key, tpEvento, Number(facts.nSeqEvento))) return refuse(MDFE.duplicidadeEvento);
      if (tpEvento === '110111') {
        if (now.getTime() - mdfe.authorized_at_ms > SANDBOX_DEADLINES.mdfeCancellationMs) return refuse(MDFE.prazoCancelamento);
      } else if (tpEvento === '110112') {
        // The municipality code starts with its state's cUF (9999999 / 99 for abroad).
        if (!facts.cUF || !facts.cMun?.startsWith(facts.cUF)) return refuse(MDFE.municipioForaDaUf);
        if (!facts.dtEnc || facts.dtEnc < brasiliaDate(new Date(mdfe.authorized_at_ms))) return refuse(MDFE.encerramentoAntesDaAutorizacao);
      }
      const nProt = await this.protocolNumber(m, key, now);
      const verdict = this.eventVerdict('mdfe', company, signedEvento, MDFE.eventoRegistrado, now, nProt);
      await m.insertMdfeEvent({
        access_key: key,
        tp_evento: tpEvento,
        n_seq: Number(facts.nSeqEvento),
        company_id: company.id,
        n_prot: nProt,
        registered_at: verdict.registeredAt,
        ret_evento: verdict.retEvento,
      });
      // A driver or documents added (110114, 110115) leave the manifest open.
      if (tpEvento === '110111') await m.cancelMdfe(key, verdict.registeredAt);
      else if (tpEvento === '110112') await m.closeMdfe(key, verdict.registeredAt);
      return verdict;
    });
  }

  // -------------------------------------------------------------------------------------------
  // The way in: availability, latency, clock, transaction

  private async gate(company: AuthorityCompany): Promise<void> {
    if (!this.store.open) throw new AuthorityUnavailableError(CLOSED_MESSAGE);
    const { available, latencyMs } = this.settings(company.id);
    if (!available) throw new AuthorityUnavailableError();
    if (latencyMs > 0) await delay(latencyMs);
  }

  private now(company: AuthorityCompany): Date {
    return new Date(this.clock(company.id).getTime());
  }

  /**
   * The stateful decision about the emitter `cnpj` and its state change, committed together
   * before the answer leaves (sandbox-memory.ts). A decision that could not be made there (its
   * memory busy, unreachable or closed) is an unknown outcome to the caller: unavailable.
   */
  private decide<T>(scope: DecisionScope, decision: (m: SandboxRecords) => Promise<T>): Promise<T> {
    if (!this.store.open) throw new AuthorityUnavailableError(CLOSED_MESSAGE);
    return this.store.decide(scope, decision);
  }

  /** "1" + cUF (from a key or a cUF) + YY of the company clock + a 10-digit (or 12-digit) sequence. */
  private async protocolNumber(m: SandboxRecords, keyOrCUF: string, now: Date, digits: 15 | 17 = 15): Promise<string> {
    const yy = brasiliaDate(now).slice(2, 4);
    return `1${keyOrCUF.slice(0, 2)}${yy}${String(await m.nextProtocol()).padStart(digits - 5, '0')}`;
  }

  /** The emitter's authorized manifests, neither closed nor cancelled (MDFeConsNaoEnc). */
  async openManifests(company: AuthorityCompany): Promise<OpenManifests> {
    await this.gate(company);
    const manifests = (await this.store.openMdfes(company.cnpj)).map((r) => ({ chMDFe: r.access_key, nProt: r.n_prot }));
    return manifests.length
      ? { cStat: '111', xMotivo: 'Consulta não encerrados localizou MDF-e', manifests }
      : { cStat: '112', xMotivo: 'Consulta não encerrados não localizou MDF-e', manifests };
  }

  // -------------------------------------------------------------------------------------------
  // Answers. A document too broken to echo (the schema already failed) still gets an answer:
  // the minimal element built from what the authority knows, or '' when even the key is unknown.

  private nfeVerdict(company: AuthorityCompany, xml: string, outcome: Rejection, at: Date, nProt?: string, message?: VerdictMessage): NfeVerdict {
    const verdict = { cStat: outcome.cStat, xMotivo: outcome.xMotivo, verAplic: this.verAplic, dhRecbto: at, nProt, message };
    const protNFe = answer(
      () => nfeProtocolFor(xml, verdict),
      () => nfeProtocol({ ...verdict, key: keyIn(xml, 'NFe'), tpAmb: tpAmbOf(company) }),
    );
    return { cStat: outcome.cStat, xMotivo: outcome.xMotivo, ...(nProt && { nProt }), receivedAt: brasiliaDateTime(at), protNFe };
  }

  private mdfeVerdict(company: AuthorityCompany, xml: string, outcome: Rejection, at: Date, nProt?: string): MdfeVerdict {
    const verdict = { cStat: outcome.cStat, xMotivo: outcome.xMotivo, verAplic: this.verAplic, dhRecbto: at, nProt };
    const protMDFe = answer(
      () => mdfeProtocolFor(xml, verdict),
      () => mdfeProtocol({ ...verdict, key: keyIn(xml, 'MDFe'), tpAmb: tpAmbOf(company) }),
    );
    return { cStat: outcome.cStat, xMotivo: outcome.xMotivo, ...(nProt && { nProt }), receivedAt: brasiliaDateTime(at), protMDFe };
  }

  private eventVerdict(family: 'nfe' | 'mdfe', company: AuthorityCompany, xml: string, outcome: Rejection, at: Date, nProt?: string): EventVerdict {
    const verdict = { cStat: outcome.cStat, xMotivo: outcome.xMotivo, verAplic: this.verAplic, dhRegEvento: at, nProt };
    const answerXml = answer(
      () => retEvento(xml, verdict),
      () => eventAnswer(family, { ...verdict, tpAmb: tpAmbOf(company), cOrgao: cUFOf(company.uf) }),
    );
    return {
      cStat: outcome.cStat,
      xMotivo: outcome.xMotivo,
      ...(nProt && { nProt }),
      registeredAt: brasiliaDateTime(at),
      retEvento: answerXml,
    };
  }

  private voidingVerdict(company: AuthorityCompany, xml: string, outcome: Rejection, at: Date, nProt?: string): VoidingVerdict {
    const verdict = { cStat: outcome.cStat, xMotivo: outcome.xMotivo, verAplic: this.verAplic, dhRecbto: at, nProt };
    const retInut = answer(
      () => retInutNFeFor(xml, verdict),
      () => retInutNFe({ ...verdict, tpAmb: tpAmbOf(company), cUF: cUFOf(company.uf) }),
    );
    return { cStat: outcome.cStat, xMotivo: outcome.xMotivo, ...(nProt && { nProt }), receivedAt: brasiliaDateTime(at), retInutNFe: retInut };
  }
}

const tpAmbOf = (company: AuthorityCompany): 1 | 2 => (company.environment === 'producao' ? 1 : 2);

function keyIn(xml: string, prefix: 'NFe' | 'MDFe'): string {
  const key = keyInSignedXml(xml, prefix);
  if (!key) throw new Error('sem chave');
  return key;
}

function answer(...builders: (() => string)[]): string {
  for (const build of builders) {
    try {
      return build();
    } catch {
      // the next, simpler form
    }
  }
  return '';
}

function storedNfeVerdict(row: NfeRow): NfeVerdict {
  return { cStat: row.c_stat, xMotivo: row.x_motivo, nProt: row.n_prot, receivedAt: row.received_at, protNFe: row.prot_nfe };
}

function storedMdfeVerdict(row: MdfeRow): MdfeVerdict {
  return { cStat: row.c_stat, xMotivo: row.x_motivo, nProt: row.n_prot, receivedAt: row.received_at, protMDFe: row.prot_mdfe };
}
