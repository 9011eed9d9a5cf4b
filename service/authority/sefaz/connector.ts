// The real tax authority behind the port (service/authority/port.ts): SEFAZ's NF-e/NFC-e 4.00
// and MDF-e 3.00 web services, over SOAP 1.2 and HTTPS with mutual TLS (transport.ts), at the
// endpoints of the company's UF and environment (endpoints.json).
//
// Every message is validated against its official schema before it leaves (a message that fails
// is a bug here, never something to send), and every answer is read by namespace (answer.ts).
// Answers are taken as SEFAZ really gives them (docs/fiscal.md):
// - enviNFe (indSinc=1, one NFe): 104 + protNFe decides by infProt/cStat; 103 + infRec (some
//   authorizers ignore indSinc) → consReciNFe after tMed; an infProt saying 103/105 → consult
//   by key; 204 (duplicate of this key) → consult, and the authorization is ours if its digVal
//   is our DigestValue; 539 (the number under another key) → the named key is consulted and
//   reported with the rejection; a batch-level rejection (225, 656, …) is a rejection.
// - 108/109 (paralysed), HTTP errors, SOAP Faults, timeouts, refused connections →
//   AuthorityUnavailableError: the outcome is unknown and the caller consults before resending.
//   After a 108/109 the authorizer is left alone: calls fail at once, and only the status
//   service is asked, at most once a minute, until it answers 107.
// - The company's certificate refused in the TLS handshake → AuthorityCertificateError.
// - consumption-guard.ts keeps repeated rejections and consultations below "656".

import { keyInSignedXml, keysInText, parseAccessKey } from '../../../fiscal/access-key.ts';
import { cUFOf } from '../../../fiscal/br/uf.ts';
import type { Environment } from '../../../fiscal/company.ts';
import { brasiliaDateTime, eventAnswer, mdfeProtocol, nfeProtocol, retEvento as retEventoFor } from '../../../fiscal/protocol.ts';
import { validateXml, type SchemaName } from '../../../fiscal/schema.ts';
import { digestValueOf } from '../../../fiscal/signature.ts';
import { firstText } from '../../../fiscal/xml.ts';
import {
  AUTHORIZED,
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
} from '../port.ts';
import { AnswerFormatError, child, childrenNamed, childText, readAnswer, serialize, SoapFaultError, type XmlElement } from './answer.ts';
import { ConsumptionGuard, type ConsumptionLimits, type DocumentKind } from './consumption-guard.ts';
import { authorizerOf, endpointOf } from './endpoints.ts';
import { bareMessage, soapRequest } from './envelope.ts';
import { MDFE_NS, NFE_NS, SERVICES, type Family, type ServiceName } from './services.ts';
import { SefazTransport, type TransportOptions } from './transport.ts';

const MINUTE_MS = 60_000;
const PARALYSED = new Set(['108', '109']);
const IN_PROCESSING = new Set(['103', '105']);
const NFE_CANCELLED = new Set(['101', '151', '155']);

export type SefazAuthorityOptions = TransportOptions & {
  /** Replaces the origin of every endpoint (BALCAO_SEFAZ_URL). */
  origin?: string;
  limits?: Partial<ConsumptionLimits>;
  /** While an authorizer is paralysed: the least time between two status queries. */
  statusIntervalMs?: number;
  /** Most time spent waiting for a recibo (103) before consulting by key instead. */
  receiptWaitMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

/** What the status service said (NFeStatusServico4 / MDFeStatusServico). */
export type ServiceStatus = {
  service: ServiceName;
  url: string;
  cStat: string;
  xMotivo: string;
  dhRecbto?: string;
  tMed?: string;
  xObs?: string;
  /** Answered from the last query (less than statusIntervalMs ago), not asked again. */
  cached: boolean;
};

/** A message that fails its own schema: never sent. A bug in the builder, not the user's input. */
export class SefazMessageError extends Error {
  override name = 'SefazMessageError';
}

type Paused = { cStat: string; xMotivo: string; lastStatusAt: number };

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const tpAmbOf = (environment: Environment): '1' | '2' => (environment === 'producao' ? '1' : '2');

/** idLote: 1..15 digits, distinct per process. */
let lote = 0;
const nextLote = (): string => `${Date.now() % 1e12}${String(++lote % 1000).padStart(3, '0')}`;

export class SefazAuthority implements TaxAuthority {
  readonly #transport: SefazTransport;
  readonly #origin: string | undefined;
  readonly #guard: ConsumptionGuard<unknown>;
  readonly #paused = new Map<string, Paused>();
  readonly #status = new Map<string, { at: number; status: Omit<ServiceStatus, 'cached'> }>();
  readonly #statusIntervalMs: number;
  readonly #receiptWaitMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: SefazAuthorityOptions = {}) {
    this.#transport = new SefazTransport(options);
    this.#origin = options.origin;
    this.#now = options.now ?? Date.now;
    this.#guard = new ConsumptionGuard({ now: this.#now, limits: options.limits });
    this.#statusIntervalMs = options.statusIntervalMs ?? MINUTE_MS;
    this.#receiptWaitMs = options.receiptWaitMs ?? 10_000;
    this.#sleep = options.sleep ?? sleepFor;
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  // -------------------------------------------------------------------------------------------
  // The exchange

  private authorizerKey(family: Family, company: AuthorityCompany): string {
    return `${family}|${authorizerOf(family, company.uf)}|${company.environment}`;
  }

  /** Validates, sends and reads one message; returns the ret* element of the answer. */
  private async exchange(service: ServiceName, company: AuthorityCompany, message: string, schema: SchemaName, guarded = true): Promise<XmlElement> {
    const checked = validateXml(message, schema);
    if (!checked.valid) {
      throw new SefazMessageError(`mensagem ${SERVICES[service].request} não confere com o schema (${checked.errors[0]}); nada foi enviado à SEFAZ`);
    }
    const family = SERVICES[service].family;
    if (guarded) await this.awaitAuthorizer(family, company);
    const url = endpointOf(service, company.uf, company.environment, { origin: this.#origin });
    const { body, contentType } = soapRequest(service, message, cUFOf(company.uf));
    const http = await this.#transport.post(url, body, contentType, company.credentials);
    let answer: XmlElement;
    try {
      answer = readAnswer(service, http.text);
    } catch (err) {
      if (err instanceof SoapFaultError) throw new AuthorityUnavailableError(`SEFAZ (${url.host}) recusou a mensagem ${service}: ${err.message}`);
      if (err instanceof AnswerFormatError) {
        throw new AuthorityUnavailableError(`SEFAZ (${url.host}) respondeu HTTP ${http.status} sem uma resposta legível de ${service}: ${err.message}`);
      }
      throw err;
    }
    if (http.status !== 200) throw new AuthorityUnavailableError(`SEFAZ (${url.host}) respondeu HTTP ${http.status} a ${service}`);
    const cStat = childText(answer, this.ns(family), 'cStat') ?? '';
    if (PARALYSED.has(cStat)) {
      const xMotivo = childText(answer, this.ns(family), 'xMotivo') ?? '';
      this.#paused.set(this.authorizerKey(family, company), { cStat, xMotivo, lastStatusAt: this.#now() });
      throw new AuthorityUnavailableError(`SEFAZ paralisada (${cStat} ${xMotivo})`);
    }
    return answer;
  }

  private ns(family: Family): string {
    return family === 'nfe' ? NFE_NS : MDFE_NS;
  }

  /**
   * An authorizer that said 108/109 is not called again until its status service says 107,
   * and that is asked at most once per statusIntervalMs.
   */
  private async awaitAuthorizer(family: Family, company: AuthorityCompany): Promise<void> {
    const key = this.authorizerKey(family, company);
    const paused = this.#paused.get(key);
    if (!paused) return;
    if (this.#now() - paused.lastStatusAt < this.#statusIntervalMs) {
      throw new AuthorityUnavailableError(
        `SEFAZ paralisada (${paused.cStat} ${paused.xMotivo}); nova consulta de status em até ${Math.round(this.#statusIntervalMs / 1000)} s`,
      );
    }
    paused.lastStatusAt = this.#now();
    const status = await this.queryStatus(family, company);
    if (status.cStat !== '107') {
      paused.cStat = status.cStat;
      paused.xMotivo = status.xMotivo;
      throw new AuthorityUnavailableError(`SEFAZ paralisada (${status.cStat} ${status.xMotivo})`);
    }
    this.#paused.delete(key);
  }

  /** Whether calls to the company's authorizer are held after a 108/109. */
  paused(family: Family, company: AuthorityCompany): boolean {
    return this.#paused.has(this.authorizerKey(family, company));
  }

  // -------------------------------------------------------------------------------------------
  // Status

  /**
   * NFeStatusServico4 / MDFeStatusServico for the company's UF and environment. Asked at most
   * once per statusIntervalMs per authorizer: a repeated call gets the last answer (cached).
   */
  async status(family: Family, company: AuthorityCompany): Promise<ServiceStatus> {
    const key = this.authorizerKey(family, company);
    const last = this.#status.get(key);
    if (last && this.#now() - last.at < this.#statusIntervalMs) return { ...last.status, cached: true };
    const status = await this.queryStatus(family, company);
    if (status.cStat === '107') this.#paused.delete(key);
    return { ...status, cached: false };
  }

  /** The port's status question (authority/port.ts): answers when in operation (107), else unavailable. */
  async nfeStatus(company: AuthorityCompany): Promise<ServiceStatusVerdict> {
    const status = await this.status('nfe', company);
    if (status.cStat !== '107') throw new AuthorityUnavailableError(`SEFAZ paralisada (${status.cStat} ${status.xMotivo})`);
    return { cStat: status.cStat, xMotivo: status.xMotivo };
  }

  private async queryStatus(family: Family, company: AuthorityCompany): Promise<Omit<ServiceStatus, 'cached'>> {
    const service: ServiceName = family === 'nfe' ? 'NFeStatusServico4' : 'MDFeStatusServico';
    const tpAmb = tpAmbOf(company.environment);
    const message =
      family === 'nfe'
        ? `<consStatServ xmlns="${NFE_NS}" versao="4.00"><tpAmb>${tpAmb}</tpAmb><cUF>${cUFOf(company.uf)}</cUF><xServ>STATUS</xServ></consStatServ>`
        : `<consStatServMDFe xmlns="${MDFE_NS}" versao="3.00"><tpAmb>${tpAmb}</tpAmb><xServ>STATUS</xServ></consStatServMDFe>`;
    const url = endpointOf(service, company.uf, company.environment, { origin: this.#origin }).toString();
    let answer: XmlElement;
    try {
      answer = await this.exchange(service, company, message, family === 'nfe' ? 'consStatServ' : 'consStatServMDFe', false);
    } catch (err) {
      // The status service itself saying 108/109 is an answer, not a failure.
      const m = err instanceof AuthorityUnavailableError ? /^SEFAZ paralisada \((10[89]) (.*)\)$/.exec(err.message) : null;
      if (!m) throw err;
      const status = { service, url, cStat: m[1]!, xMotivo: m[2]! };
      this.#status.set(this.authorizerKey(family, company), { at: this.#now(), status });
      return status;
    }
    const ns = this.ns(family);
    const status = {
      service,
      url,
      cStat: childText(answer, ns, 'cStat') ?? '',
      xMotivo: childText(answer, ns, 'xMotivo') ?? '',
      dhRecbto: childText(answer, ns, 'dhRecbto'),
      tMed: childText(answer, ns, 'tMed'),
      xObs: childText(answer, ns, 'xObs'),
    };
    this.#status.set(this.authorizerKey(family, company), { at: this.#now(), status });
    return status;
  }

  // -------------------------------------------------------------------------------------------
  // NF-e / NFC-e

  async authorizeNfe(company: AuthorityCompany, signedNFe: string): Promise<NfeVerdict> {
    const nfe = bareMessage(signedNFe);
    const key = keyOf(nfe, 'NFe');
    if (key.slice(20, 22) === '55') {
      // The NF-e (model 55) has its own hosts in every UF, not in endpoints.json yet: sending it
      // to the NFC-e host would only get it rejected there.
      throw new SefazMessageError('NF-e modelo 55: os endpoints da NF-e ainda não estão na tabela do conector SEFAZ (só NFC-e e MDF-e); nada foi enviado');
    }
    const digest = digestValueOf(nfe);
    const held = this.held<NfeVerdict>('documento', company, key, digest);
    if (held) return held;

    const message = `<enviNFe xmlns="${NFE_NS}" versao="4.00"><idLote>${nextLote()}</idLote><indSinc>1</indSinc>${nfe}</enviNFe>`;
    const answer = await this.exchange('NFeAutorizacao4', company, message, 'enviNFe');
    const cStat = childText(answer, NFE_NS, 'cStat') ?? '';
    let protNFe: XmlElement | undefined;
    if (cStat === '104') {
      protNFe = child(answer, NFE_NS, 'protNFe');
    } else if (cStat === '103') {
      const infRec = child(answer, NFE_NS, 'infRec');
      const nRec = infRec && childText(infRec, NFE_NS, 'nRec');
      if (!nRec) throw new AuthorityUnavailableError('SEFAZ respondeu 103 sem número de recibo');
      protNFe = await this.awaitReceipt(company, nRec, Number(childText(infRec!, NFE_NS, 'tMed') ?? '1'), key);
      if (!protNFe) return this.settleByConsultation(company, key, digest, 'lote sem resposta no recibo');
    }
    if (!protNFe) {
      // A batch-level answer (225, 656, 252, …): nothing was decided about the document.
      const verdict = batchVerdict(answer, key, company);
      this.#guard.rejected('documento', company.cnpj, key, digest, verdict.cStat, verdict);
      return verdict;
    }
    return this.judgeProtNFe(company, protNFe, key, digest);
  }

  private async judgeProtNFe(company: AuthorityCompany, protNFe: XmlElement, key: string, digest: string): Promise<NfeVerdict> {
    const verdict = nfeVerdictOf(protNFe);
    if (IN_PROCESSING.has(verdict.cStat)) return this.settleByConsultation(company, key, digest, `infProt ${verdict.cStat}`);
    if (AUTHORIZED.has(verdict.cStat)) {
      const digVal = firstText(verdict.protNFe, 'digVal');
      if (digVal !== undefined && digVal !== digest) {
        throw new AuthorityUnavailableError(`SEFAZ autorizou a chave ${key} com digVal ${digVal}, diferente do DigestValue enviado (${digest})`);
      }
      this.#guard.accepted('documento', company.cnpj, key);
      return verdict;
    }
    if (verdict.cStat === '204') {
      // The key is authorized already: an earlier send of this very document whose answer was lost.
      const known = await this.consultNfe(company, key);
      if (known.found && firstText(known.verdict.protNFe, 'digVal') === digest) {
        this.#guard.accepted('documento', company.cnpj, key);
        return known.verdict;
      }
    }
    if (verdict.cStat === '539') {
      const other = keysInText(verdict.xMotivo).find((k) => k !== key);
      if (other && other !== key) {
        const known = await this.consultNfe(company, other).catch(() => undefined);
        if (known) {
          verdict.duplicateOf = known.found
            ? { key: other, cStat: known.verdict.cStat, xMotivo: known.verdict.xMotivo, nProt: known.verdict.nProt }
            : { key: other, cStat: known.cStat, xMotivo: known.xMotivo };
        }
      }
    }
    this.#guard.rejected('documento', company.cnpj, key, digest, verdict.cStat, verdict);
    return verdict;
  }

  /** An outcome SEFAZ has not told: its consultation by key decides, or it stays unknown. */
  private async settleByConsultation(company: AuthorityCompany, key: string, digest: string, why: string): Promise<NfeVerdict> {
    const known = await this.consultNfe(company, key);
    if (known.found && firstText(known.verdict.protNFe, 'digVal') === digest) return known.verdict;
    throw new AuthorityUnavailableError(`NF-e ${key} ainda sem resultado na SEFAZ (${why})`);
  }

  /** consReciNFe until the recibo answers (waiting tMed between polls), within receiptWaitMs. */
  private async awaitReceipt(company: AuthorityCompany, nRec: string, tMed: number, key: string): Promise<XmlElement | undefined> {
    const until = this.#now() + this.#receiptWaitMs;
    let wait = Math.min(Math.max(1, Number.isFinite(tMed) ? tMed : 1) * 1000, this.#receiptWaitMs);
    for (;;) {
      await this.#sleep(Math.min(wait, Math.max(0, until - this.#now())));
      if (!this.#guard.allowed('recibo', company.cnpj, nRec)) return undefined;
      const message = `<consReciNFe xmlns="${NFE_NS}" versao="4.00"><tpAmb>${tpAmbOf(company.environment)}</tpAmb><nRec>${nRec}</nRec></consReciNFe>`;
      const answer = await this.exchange('NFeRetAutorizacao4', company, message, 'consReciNFe');
      this.#guard.counted('recibo', company.cnpj, nRec);
      const cStat = childText(answer, NFE_NS, 'cStat');
      if (cStat === '104') {
        return childrenNamed(answer, NFE_NS, 'protNFe').find((p) => {
          const inf = child(p, NFE_NS, 'infProt');
          return inf && childText(inf, NFE_NS, 'chNFe') === key;
        });
      }
      if (cStat !== '105' || this.#now() >= until) return undefined;
      wait = Math.min(wait, 4_000);
    }
  }

  async consultNfe(company: AuthorityCompany, key: string): Promise<NfeConsultation> {
    if (!this.#guard.allowed('chave', company.cnpj, key)) {
      throw new AuthorityUnavailableError(
        `consulta da chave ${key} adiada: ${this.#guard.limits.keyConsultations} consultas na última hora (limite contra consumo indevido)`,
      );
    }
    const message = `<consSitNFe xmlns="${NFE_NS}" versao="4.00"><tpAmb>${tpAmbOf(company.environment)}</tpAmb><xServ>CONSULTAR</xServ><chNFe>${key}</chNFe></consSitNFe>`;
    const answer = await this.exchange('NFeConsultaProtocolo4', company, message, 'consSitNFe');
    this.#guard.counted('chave', company.cnpj, key);
    const cStat = childText(answer, NFE_NS, 'cStat') ?? '';
    const xMotivo = childText(answer, NFE_NS, 'xMotivo') ?? '';
    const protNFe = child(answer, NFE_NS, 'protNFe');
    if (protNFe) {
      const verdict = nfeVerdictOf(protNFe);
      if (AUTHORIZED.has(verdict.cStat)) {
        const cancelled =
          NFE_CANCELLED.has(cStat) ||
          childrenNamed(answer, NFE_NS, 'procEventoNFe').some((p) => {
            const inf = child(p, NFE_NS, 'retEvento') && child(child(p, NFE_NS, 'retEvento')!, NFE_NS, 'infEvento');
            return (
              !!inf &&
              ['110111', '110112'].includes(childText(inf, NFE_NS, 'tpEvento') ?? '') &&
              ['135', '136', '155'].includes(childText(inf, NFE_NS, 'cStat') ?? '')
            );
          });
        return { found: true, verdict, cancelled };
      }
    }
    if (cStat === '217') return { found: false, cStat, xMotivo };
    // Anything else (656, 226, a denial…) settles nothing about this key.
    throw new AuthorityUnavailableError(`consulta da chave ${key} sem resultado: ${cStat} ${xMotivo}`);
  }

  async registerNfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict> {
    const evento = bareMessage(signedEvento);
    const id = /<infEvento\s[^>]*?\bId="([^"]+)"/.exec(evento)?.[1] ?? '';
    const held = this.held<EventVerdict>('evento', company, id, digestValueOf(evento));
    if (held) return held;
    const tpEvento = firstText(evento, 'tpEvento');
    const message = `<envEvento xmlns="${NFE_NS}" versao="1.00"><idLote>${nextLote()}</idLote>${evento}</envEvento>`;
    const answer = await this.exchange('NFeRecepcaoEvento4', company, message, tpEvento === '110112' ? 'envEventoCancSubst' : 'envEventoCancNFe');
    const ret = child(answer, NFE_NS, 'retEvento');
    const verdict = ret ? eventVerdictOf(ret, NFE_NS) : batchEventVerdict(answer, evento, NFE_NS);
    return this.recordEvent('evento', company, id, evento, verdict);
  }

  async voidNfeNumbers(company: AuthorityCompany, signedInutNFe: string): Promise<VoidingVerdict> {
    const inut = bareMessage(signedInutNFe);
    const id = /<infInut\s[^>]*?\bId="([^"]+)"/.exec(inut)?.[1] ?? '';
    const digest = digestValueOf(inut);
    const held = this.held<VoidingVerdict>('inutilizacao', company, id, digest);
    if (held) return held;
    const answer = await this.exchange('NFeInutilizacao4', company, inut, 'inutNFe');
    const inf = child(answer, NFE_NS, 'infInut');
    const text = (name: string) => (inf && childText(inf, NFE_NS, name)) ?? '';
    const verdict: VoidingVerdict = {
      cStat: text('cStat'),
      xMotivo: text('xMotivo'),
      ...(text('nProt') && { nProt: text('nProt') }),
      receivedAt: text('dhRecbto') || brasiliaDateTime(new Date(this.#now())),
      retInutNFe: serialize(answer, NFE_NS),
    };
    if (verdict.cStat === '102') this.#guard.accepted('inutilizacao', company.cnpj, id);
    else this.#guard.rejected('inutilizacao', company.cnpj, id, digest, verdict.cStat, verdict);
    return verdict;
  }

  // -------------------------------------------------------------------------------------------
  // MDF-e

  async authorizeMdfe(company: AuthorityCompany, signedMDFe: string): Promise<MdfeVerdict> {
    const mdfe = bareMessage(signedMDFe);
    const key = keyOf(mdfe, 'MDFe');
    const digest = digestValueOf(mdfe);
    const held = this.held<MdfeVerdict>('documento', company, key, digest);
    if (held) return held;
    const answer = await this.exchange('MDFeRecepcaoSinc', company, mdfe, 'mdfe');
    const protMDFe = child(answer, MDFE_NS, 'protMDFe');
    // Whether the top-level cStat of a success is 100 or 104 is not settled in the sources:
    // the protocol decides when there is one.
    const verdict = protMDFe ? mdfeVerdictOf(protMDFe) : mdfeBatchVerdict(answer, key, company);
    if (AUTHORIZED.has(verdict.cStat)) {
      const digVal = firstText(verdict.protMDFe, 'digVal');
      if (digVal !== undefined && digVal !== digest) {
        throw new AuthorityUnavailableError(`SEFAZ autorizou o MDF-e ${key} com digVal ${digVal}, diferente do DigestValue enviado (${digest})`);
      }
      this.#guard.accepted('documento', company.cnpj, key);
      return verdict;
    }
    if (verdict.cStat === '204') {
      // Our own earlier attempt, its answer lost: the same document, authorized and still open.
      // One the service already closed or cancelled is not that: a duplicate, as answered.
      const known = await this.consultMdfe(company, key);
      if (known.found && known.state === 'autorizado' && firstText(known.verdict.protMDFe, 'digVal') === digest) return known.verdict;
    }
    this.#guard.rejected('documento', company.cnpj, key, digest, verdict.cStat, verdict);
    return verdict;
  }

  async consultMdfe(company: AuthorityCompany, key: string): Promise<MdfeConsultation> {
    if (!this.#guard.allowed('chave', company.cnpj, key)) {
      throw new AuthorityUnavailableError(
        `consulta da chave ${key} adiada: ${this.#guard.limits.keyConsultations} consultas na última hora (limite contra consumo indevido)`,
      );
    }
    const message = `<consSitMDFe xmlns="${MDFE_NS}" versao="3.00"><tpAmb>${tpAmbOf(company.environment)}</tpAmb><xServ>CONSULTAR</xServ><chMDFe>${key}</chMDFe></consSitMDFe>`;
    const answer = await this.exchange('MDFeConsulta', company, message, 'consSitMDFe');
    this.#guard.counted('chave', company.cnpj, key);
    const cStat = childText(answer, MDFE_NS, 'cStat') ?? '';
    const xMotivo = childText(answer, MDFE_NS, 'xMotivo') ?? '';
    const protMDFe = child(answer, MDFE_NS, 'protMDFe');
    if (protMDFe) {
      const verdict = mdfeVerdictOf(protMDFe);
      if (AUTHORIZED.has(verdict.cStat)) {
        const events = childrenNamed(answer, MDFE_NS, 'procEventoMDFe').flatMap((p) => {
          const ret = child(p, MDFE_NS, 'retEventoMDFe');
          const inf = ret && child(ret, MDFE_NS, 'infEvento');
          return inf && ['135', '136'].includes(childText(inf, MDFE_NS, 'cStat') ?? '') ? [childText(inf, MDFE_NS, 'tpEvento')] : [];
        });
        const state = cStat === '101' || events.includes('110111') ? 'cancelado' : cStat === '132' || events.includes('110112') ? 'encerrado' : 'autorizado';
        return { found: true, verdict, state };
      }
    }
    if (cStat === '217') return { found: false, cStat, xMotivo };
    throw new AuthorityUnavailableError(`consulta do MDF-e ${key} sem resultado: ${cStat} ${xMotivo}`);
  }

  async registerMdfeEvent(company: AuthorityCompany, signedEvento: string): Promise<EventVerdict> {
    const evento = bareMessage(signedEvento);
    const id = /<infEvento\s[^>]*?\bId="([^"]+)"/.exec(evento)?.[1] ?? '';
    const held = this.held<EventVerdict>('evento', company, id, digestValueOf(evento));
    if (held) return held;
    const answer = await this.exchange('MDFeRecepcaoEvento', company, evento, 'eventoMDFe');
    return this.recordEvent('evento', company, id, evento, eventVerdictOf(answer, MDFE_NS));
  }

  /** MDFeConsNaoEnc: the emitter's manifests not closed yet, as SEFAZ knows them. */
  async openManifests(company: AuthorityCompany): Promise<OpenManifests> {
    const message = `<consMDFeNaoEnc xmlns="${MDFE_NS}" versao="3.00"><tpAmb>${tpAmbOf(company.environment)}</tpAmb><xServ>CONSULTAR NÃO ENCERRADOS</xServ><CNPJ>${company.cnpj}</CNPJ></consMDFeNaoEnc>`;
    const answer = await this.exchange('MDFeConsNaoEnc', company, message, 'consMDFeNaoEnc');
    return {
      cStat: childText(answer, MDFE_NS, 'cStat') ?? '',
      xMotivo: childText(answer, MDFE_NS, 'xMotivo') ?? '',
      manifests: childrenNamed(answer, MDFE_NS, 'infMDFe').map((m) => ({
        chMDFe: childText(m, MDFE_NS, 'chMDFe') ?? '',
        nProt: childText(m, MDFE_NS, 'nProt') ?? '',
      })),
    };
  }

  // -------------------------------------------------------------------------------------------
  // The guard

  private held<V extends { xMotivo: string }>(kind: DocumentKind, company: AuthorityCompany, id: string, digest: string): V | undefined {
    const held = this.#guard.held(kind, company.cnpj, id, digest);
    if (!held) return undefined;
    const verdict = held.verdict as V;
    const note = ` [não reenviado à SEFAZ: ${held.reason}]`;
    return { ...verdict, xMotivo: fit(verdict.xMotivo, note) };
  }

  private recordEvent(kind: DocumentKind, company: AuthorityCompany, id: string, evento: string, verdict: EventVerdict): EventVerdict {
    if (['135', '136', '155'].includes(verdict.cStat)) this.#guard.accepted(kind, company.cnpj, id);
    else this.#guard.rejected(kind, company.cnpj, id, digestValueOf(evento), verdict.cStat, verdict);
    return verdict;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading verdicts

/** xMotivo with a note, within its 255 characters. */
function fit(xMotivo: string, note: string): string {
  const room = 255 - [...note].length;
  const chars = [...xMotivo];
  return (chars.length <= room ? xMotivo : chars.slice(0, room).join('')) + note;
}

function keyOf(xml: string, prefix: 'NFe' | 'MDFe'): string {
  const key = keyInSignedXml(xml, prefix);
  if (!key) throw new SefazMessageError(`documento sem inf${prefix}/@Id`);
  return parseAccessKey(key).key;
}

function nfeVerdictOf(protNFe: XmlElement): NfeVerdict {
  const inf = child(protNFe, NFE_NS, 'infProt');
  const text = (name: string) => (inf && childText(inf, NFE_NS, name)) ?? '';
  const nProt = text('nProt');
  return { cStat: text('cStat'), xMotivo: text('xMotivo'), ...(nProt && { nProt }), receivedAt: text('dhRecbto'), protNFe: serialize(protNFe, NFE_NS) };
}

function mdfeVerdictOf(protMDFe: XmlElement): MdfeVerdict {
  const inf = child(protMDFe, MDFE_NS, 'infProt');
  const text = (name: string) => (inf && childText(inf, MDFE_NS, name)) ?? '';
  const nProt = text('nProt');
  return { cStat: text('cStat'), xMotivo: text('xMotivo'), ...(nProt && { nProt }), receivedAt: text('dhRecbto'), protMDFe: serialize(protMDFe, MDFE_NS) };
}

/** A batch-level answer: the verdict is the batch's, with a protNFe written from it. */
function batchVerdict(answer: XmlElement, key: string, company: AuthorityCompany): NfeVerdict {
  const text = (name: string) => childText(answer, NFE_NS, name) ?? '';
  const cStat = text('cStat');
  const xMotivo = text('xMotivo') || `cStat ${cStat}`;
  const receivedAt = text('dhRecbto') || brasiliaDateTime();
  let protNFe = '';
  try {
    protNFe = nfeProtocol({ cStat, xMotivo, verAplic: text('verAplic') || 'SEFAZ', dhRecbto: receivedAt, key, tpAmb: tpAmbOf(company.environment) });
  } catch {
    protNFe = '';
  }
  return { cStat, xMotivo, receivedAt, protNFe };
}

function mdfeBatchVerdict(answer: XmlElement, key: string, company: AuthorityCompany): MdfeVerdict {
  const text = (name: string) => childText(answer, MDFE_NS, name) ?? '';
  const cStat = text('cStat');
  const xMotivo = text('xMotivo') || `cStat ${cStat}`;
  const receivedAt = text('dhRecbto') || brasiliaDateTime();
  let protMDFe = '';
  try {
    protMDFe = mdfeProtocol({ cStat, xMotivo, verAplic: text('verAplic') || 'SEFAZ', dhRecbto: receivedAt, key, tpAmb: tpAmbOf(company.environment) });
  } catch {
    protMDFe = '';
  }
  return { cStat, xMotivo, receivedAt, protMDFe };
}

/** retEvento (NF-e) / retEventoMDFe: the verdict from its infEvento, the element kept for procEvento. */
function eventVerdictOf(ret: XmlElement, ns: string): EventVerdict {
  const inf = child(ret, ns, 'infEvento');
  const text = (name: string) => (inf && childText(inf, ns, name)) ?? '';
  const nProt = text('nProt');
  return {
    cStat: text('cStat'),
    xMotivo: text('xMotivo'),
    ...(nProt && { nProt }),
    registeredAt: text('dhRegEvento') || brasiliaDateTime(),
    retEvento: serialize(ret, ns),
  };
}

/** An envEvento refused as a whole (no retEvento): the batch's cStat, with a retEvento written from it. */
function batchEventVerdict(answer: XmlElement, evento: string, ns: string): EventVerdict {
  const text = (name: string) => childText(answer, ns, name) ?? '';
  const cStat = text('cStat');
  const xMotivo = text('xMotivo') || `cStat ${cStat}`;
  const registeredAt = brasiliaDateTime();
  let ret = '';
  try {
    ret = retEventoFor(evento, { cStat, xMotivo, verAplic: text('verAplic') || 'SEFAZ', dhRegEvento: registeredAt });
  } catch {
    try {
      ret = eventAnswer('nfe', {
        cStat,
        xMotivo,
        verAplic: text('verAplic') || 'SEFAZ',
        dhRegEvento: registeredAt,
        tpAmb: text('tpAmb') === '1' ? 1 : 2,
        cOrgao: text('cOrgao') || '91',
      });
    } catch {
      ret = '';
    }
  }
  return { cStat, xMotivo, registeredAt, retEvento: ret };
}
