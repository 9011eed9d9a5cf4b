// A SEFAZ on the same wire as the real one, for the sandbox and the tests: HTTPS on loopback that
// requires a client certificate (mutual TLS), the official paths of every authorizer
// (endpoints.json), SOAP 1.2 with the action in the Content-Type, the message validated against
// its official schema, and the decision taken by the sandbox authority (sandbox.ts and
// sandbox-rules.ts: one rule book for the in-process sandbox and this one).
//
// What a real authorizer does and this one does too:
// - refuses, at the TLS handshake, a client without a certificate or with one it does not trust
//   (here: the certificates of the companies enrolled with it, its stand-in for ICP-Brasil);
// - answers HTTP 500 with a SOAP Fault to a wrong action, envelope or body wrapper, and 415 to a
//   SOAP 1.1 request;
// - rejects the message before any business rule: 404 (namespace prefix), 588 (blanks between
//   tags), 225/215 (schema), 242 (MDF-e header missing), 252 (environment), 452 (asynchronous
//   NFC-e);
// - counts for "656 Consumo Indevido" with the thresholds of NT 2018.002 (more than 30 identical
//   rejections of a document, 20 of an event or inutilização, 10 consultations of a key, 40 of a
//   recibo, in an hour) and then answers 656 to that CNPJ for an hour.
// And what the tests need to provoke: 108/109 (paralysed), 103 + recibo instead of the
// synchronous answer, protNFe with infProt 105 (the MG quirk), and an answer sent after the
// client gave up, the decision having been committed before (a lost answer).

import { X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { keyInSignedXml } from '../../../../fiscal/access-key.ts';
import { cUFOf } from '../../../../fiscal/br/uf.ts';
import { nfeProtocol } from '../../../../fiscal/protocol.ts';
import { validateXml, type SchemaName } from '../../../../fiscal/schema.ts';
import { firstText } from '../../../../fiscal/xml.ts';
import { AUTHORIZED, AuthorityUnavailableError, type AuthorityCompany } from '../../port.ts';
import type { SandboxAuthority } from '../../sandbox.ts';
import { motivoWithDetail } from '../../sandbox-rules.ts';
import { child, elements, parseXml, AnswerFormatError, type XmlElement } from '../answer.ts';
import { officialPaths } from '../endpoints.ts';
import { requestWrapper, SERVICES, SOAP12_NS, soapAction, wsdlNamespace, type ServiceName } from '../services.ts';
import * as answers from './answers.ts';
import { createTlsIdentity, type TlsIdentity } from './tls-identity.ts';

export const SIMULATOR_VER_APLIC = 'BALCAO-SEFAZ-SIM-1.0';
const HOUR_MS = 60 * 60_000;
const MAX_BODY = 5 * 1024 * 1024;

/** One request as the simulator received it, kept when `capture` is on. */
export type CapturedRequest = {
  service: ServiceName;
  path: string;
  contentType: string;
  /** The message inside the body wrapper (for MDFeRecepcaoSinc: the MDFe, decompressed). */
  message: string;
  schema: SchemaName | undefined;
  /** The message against its official schema. */
  valid: boolean;
  errors: string[];
  /** The client certificate's SHA-256 fingerprint. */
  certificate: string;
  /** cStat answered (top level), or the HTTP status when there was no SOAP answer. */
  answered: string;
  /** The ret* element answered (inside the SOAP body), when there was one. */
  answer?: string;
};

export type SimulatorOptions = {
  /** The rule book: the sandbox authority that decides (and remembers). */
  authority: SandboxAuthority;
  host?: string;
  port?: number;
  /** Keep every request in `requests` (tests). */
  capture?: boolean;
  verAplic?: string;
  /** Thresholds of "656", per hour (NT 2018.002 values by default). */
  consumptionLimits?: Partial<typeof NT_2018_002>;
};

/** NT 2018.002: more than these in an hour is "656 Consumo Indevido". */
export const NT_2018_002 = { document: 30, event: 20, voiding: 20, keyConsultation: 10, receiptConsultation: 40 };

type Mode = 'protNFe' | 'recibo' | 'infProt105';

type Receipt = { company: AuthorityCompany; protNFe?: string; cStat: string; xMotivo: string; pendingPolls: number };

class BadRequest extends Error {
  constructor(
    readonly status: number,
    readonly faultCode: 'Sender' | 'Receiver' | 'VersionMismatch' | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** An early answer: the message refused before the business rules, as a ret* with this cStat. */
class Refusal extends Error {
  constructor(
    readonly cStat: string,
    readonly xMotivo: string,
  ) {
    super(`${cStat} ${xMotivo}`);
  }
}

export class SefazSimulator {
  readonly origin: string;
  readonly caPem: string;
  /** Every request received, in order (only with `capture`). */
  readonly requests: CapturedRequest[] = [];
  /** How NFeAutorizacao4 answers: synchronously (protNFe), with a recibo, or protNFe saying 105. */
  syncAnswer: Mode = 'protNFe';
  /** With `recibo`: how many consReciNFe get 105 before the answer. */
  receiptPolls = 0;

  readonly #server: Server;
  readonly #identity: TlsIdentity;
  readonly #authority: SandboxAuthority;
  readonly #capture: boolean;
  readonly #verAplic: string;
  readonly #limits: typeof NT_2018_002;
  readonly #paths = officialPaths();
  readonly #companies = new Map<string, AuthorityCompany>();
  readonly #fingerprints = new Map<string, string>();
  readonly #peers = new WeakMap<TLSSocket, string>();
  readonly #receipts = new Map<string, Receipt>();
  readonly #counts = new Map<string, number[]>();
  readonly #blockedUntil = new Map<string, number>();
  #paralysed: '108' | '109' | undefined;
  #late: { ms: number; left: number; services: ReadonlySet<ServiceName> } | undefined;
  #receiptSeq = 0;

  private constructor(server: Server, identity: TlsIdentity, origin: string, options: SimulatorOptions) {
    this.#server = server;
    this.#identity = identity;
    this.origin = origin;
    this.caPem = identity.caPem;
    this.#authority = options.authority;
    this.#capture = options.capture ?? false;
    this.#verAplic = options.verAplic ?? SIMULATOR_VER_APLIC;
    this.#limits = { ...NT_2018_002, ...options.consumptionLimits };
  }

  /** Starts on `host:port` (default 127.0.0.1 and a free port) with a fresh CA. */
  static async start(options: SimulatorOptions): Promise<SefazSimulator> {
    const identity = createTlsIdentity();
    // The trusted client certificates change as companies enroll (setSecureContext); until the
    // first one, a placeholder CA that signs nobody's certificate keeps every client out.
    const server = createServer({
      key: identity.keyPem,
      cert: identity.certPem,
      ca: [identity.caPem],
      requestCert: true,
      rejectUnauthorized: true,
      // TLS 1.2, as the authorizers' IIS hosts speak it: the client certificate is judged inside
      // the handshake, so a refused one never sees the connection established (in TLS 1.3 the
      // client would finish first and only see the connection close afterwards).
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { address, port, family } = server.address() as AddressInfo;
    const host = family === 'IPv6' ? `[${address}]` : address;
    const simulator = new SefazSimulator(server, identity, `https://${host}:${port}`, options);
    server.on('request', (req, res) => void simulator.handle(req, res));
    // A client refused at the handshake is the point, not an error of the server.
    server.on('tlsClientError', () => undefined);
    return simulator;
  }

  /**
   * Makes a company known: its certificate is trusted at the TLS handshake from the next
   * connection on, and requests made with it are judged as this company's (CSC, UF, environment).
   */
  enroll(company: AuthorityCompany): void {
    const pem = company.credentials.certificatePem;
    let fingerprint = this.#fingerprints.get(pem);
    if (fingerprint === undefined) {
      fingerprint = new X509Certificate(pem).fingerprint256;
      this.#fingerprints.set(pem, fingerprint);
    }
    const known = this.#companies.has(fingerprint);
    this.#companies.set(fingerprint, company);
    if (!known) this.refreshTrust();
  }

  private refreshTrust(): void {
    const trusted = [...this.#companies.values()].map((c) => c.credentials.certificatePem);
    this.#server.setSecureContext({
      key: this.#identity.keyPem,
      cert: this.#identity.certPem,
      ca: trusted.length > 0 ? trusted : [this.#identity.caPem],
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
    });
  }

  /** 108 or 109: every service answers it (status too); undefined: back in operation (107). */
  paralyse(cStat: '108' | '109' | undefined): void {
    this.#paralysed = cStat;
  }

  /**
   * The next `count` requests to `services` are decided and committed at once, but answered
   * only after `ms`: a client that gave up before never hears what was decided.
   */
  answerLate(ms: number, count = 1, services: readonly ServiceName[] = ['NFeAutorizacao4', 'MDFeRecepcaoSinc']): void {
    this.#late = { ms, left: count, services: new Set(services) };
  }

  /** Requests received per service (with `capture`). */
  received(service: ServiceName): CapturedRequest[] {
    return this.requests.filter((r) => r.service === service);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // -------------------------------------------------------------------------------------------
  // The request

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let service: ServiceName | undefined;
    let captured: CapturedRequest | undefined;
    try {
      const path = new URL(req.url ?? '/', 'https://x').pathname.toLowerCase();
      service = this.#paths.get(path);
      if (!service) throw new BadRequest(404, undefined, `Serviço não encontrado: ${path}`);
      if (req.method !== 'POST') throw new BadRequest(405, undefined, 'Somente POST (SOAP 1.2)');
      const company = this.companyOf(req);
      const contentType = String(req.headers['content-type'] ?? '');
      const raw = await readBody(req);
      const envelope = this.readEnvelope(service, contentType, raw);
      captured = this.capture(service, path, contentType, envelope.message, company);
      const ret = await this.answer(service, company, envelope, captured);
      const late = this.#late;
      if (late && late.left > 0 && late.services.has(service)) {
        late.left -= 1;
        await delay(late.ms);
      }
      if (captured) {
        captured.answered = firstText(ret, 'cStat') ?? '';
        captured.answer = ret;
      }
      this.send(res, 200, 'application/soap+xml; charset=utf-8', answers.soapAnswer(service, ret, envelope.cUF));
    } catch (err) {
      if (captured) captured.answered = err instanceof BadRequest ? String(err.status) : '503';
      if (err instanceof BadRequest) {
        if (err.faultCode) this.send(res, err.status, 'application/soap+xml; charset=utf-8', answers.soapFault(err.faultCode, err.message));
        else this.send(res, err.status, 'text/plain; charset=utf-8', err.message);
      } else if (err instanceof AuthorityUnavailableError) {
        this.send(res, 503, 'text/html; charset=utf-8', '<html><body><h1>Service Unavailable</h1></body></html>');
      } else {
        this.send(res, 500, 'application/soap+xml; charset=utf-8', answers.soapFault('Receiver', `Erro interno: ${(err as Error).message}`));
      }
    }
  }

  private send(res: ServerResponse, status: number, contentType: string, body: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private companyOf(req: IncomingMessage): AuthorityCompany {
    const socket = req.socket as TLSSocket;
    // A kept-alive connection carries many requests with the certificate of its handshake.
    let fingerprint = this.#peers.get(socket);
    if (fingerprint === undefined) {
      const peer = socket.getPeerCertificate();
      fingerprint = peer?.raw ? new X509Certificate(peer.raw).fingerprint256 : '';
      this.#peers.set(socket, fingerprint);
    }
    const company = this.#companies.get(fingerprint);
    // The handshake only lets enrolled certificates in; this guards a certificate dropped since.
    if (!company) throw new BadRequest(403, undefined, 'Certificado do transmissor não credenciado (280)');
    return company;
  }

  private readEnvelope(service: ServiceName, contentType: string, raw: Buffer): { message: string; cUF?: string; header?: XmlElement } {
    const media = contentType.split(';')[0]!.trim().toLowerCase();
    if (media === 'text/xml') {
      throw new BadRequest(
        415,
        undefined,
        `Cannot process the message because the content type '${contentType}' was not the expected type 'application/soap+xml'`,
      );
    }
    if (media !== 'application/soap+xml') throw new BadRequest(415, undefined, `Content-Type não suportado: ${contentType}`);
    const action = /;\s*action\s*=\s*"?([^";]+)"?/i.exec(contentType)?.[1];
    if (action !== soapAction(service)) {
      throw new BadRequest(500, 'Sender', `Server did not recognize the value of HTTP Header SOAPAction: ${action ?? '(ausente)'}.`);
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)?.[1];
    if (charset && !/^utf-?8$/i.test(charset)) throw new Refusal('402', 'Rejeição: XML da área de dados com codificação diferente de UTF-8');
    const text = raw.toString('utf8');
    // The message as sent, byte for byte (its signature covers those bytes). The envelope is
    // parsed without it: the message is judged by its schema (libxml2), and a DOM of a whole
    // NF-e would cost more than the rest of the frame.
    const wrapperName = requestWrapper(service);
    const m = new RegExp(`(<(?:[A-Za-z_][\\w.-]*:)?${wrapperName}(?:\\s[^>]*)?>)([\\s\\S]*)(</(?:[A-Za-z_][\\w.-]*:)?${wrapperName}>)`).exec(text);
    const frame = m ? text.slice(0, m.index) + m[1] + m[3] + text.slice(m.index + m[0].length) : text;
    let root: XmlElement;
    try {
      root = parseXml(frame);
    } catch (err) {
      throw new BadRequest(500, 'Sender', err instanceof AnswerFormatError ? err.message : 'XML malformado');
    }
    if (root.localName !== 'Envelope') throw new BadRequest(500, 'Sender', 'O corpo não é um envelope SOAP');
    if (root.namespaceURI !== SOAP12_NS) throw new BadRequest(500, 'VersionMismatch', 'Somente SOAP 1.2 (http://www.w3.org/2003/05/soap-envelope)');
    const body = child(root, SOAP12_NS, 'Body');
    const wrapper = body && elements(body)[0];
    const ns = wsdlNamespace(service);
    if (!wrapper || wrapper.localName !== wrapperName || wrapper.namespaceURI !== ns) {
      throw new BadRequest(500, 'Sender', `Esperado {${ns}}${wrapperName} no Body`);
    }
    const soapHeader = child(root, SOAP12_NS, 'Header');
    const header = soapHeader && child(soapHeader, ns, 'mdfeCabecMsg');
    const cUF = header ? textIn(header, ns, 'cUF') : undefined;
    let message = m?.[2] ?? '';
    if (SERVICES[service].gzip) {
      try {
        message = gunzipSync(Buffer.from(message.trim(), 'base64')).toString('utf8');
      } catch {
        throw new Refusal('244', 'Rejeição: Falha na descompactação da área de dados');
      }
    }
    return { message, cUF, header };
  }

  private capture(service: ServiceName, path: string, contentType: string, message: string, company: AuthorityCompany): CapturedRequest | undefined {
    if (!this.#capture) return undefined;
    const schema = schemaFor(service, message);
    const checked = schema ? validateXml(message, schema) : { valid: false, errors: ['sem schema'] };
    const entry: CapturedRequest = {
      service,
      path,
      contentType,
      message,
      schema,
      valid: checked.valid,
      errors: checked.errors,
      certificate: new X509Certificate(company.credentials.certificatePem).fingerprint256,
      answered: '',
    };
    this.requests.push(entry);
    return entry;
  }

  // -------------------------------------------------------------------------------------------
  // The answer

  private common(company: AuthorityCompany, cStat: string, xMotivo: string) {
    return { tpAmb: (company.environment === 'producao' ? '1' : '2') as '1' | '2', verAplic: this.#verAplic, cUF: cUFOf(company.uf), cStat, xMotivo };
  }

  private async answer(
    service: ServiceName,
    company: AuthorityCompany,
    envelope: { message: string; header?: XmlElement },
    captured?: CapturedRequest,
  ): Promise<string> {
    const refuse = (cStat: string, xMotivo: string) => answers.plainAnswer(service, this.common(company, cStat, xMotivo), extraOf(service, envelope.message));
    try {
      return await this.decide(service, company, envelope, captured);
    } catch (err) {
      if (err instanceof Refusal) return refuse(err.cStat, err.xMotivo);
      throw err;
    }
  }

  private async decide(
    service: ServiceName,
    company: AuthorityCompany,
    { message, header }: { message: string; header?: XmlElement },
    captured?: CapturedRequest,
  ): Promise<string> {
    const spec = SERVICES[service];
    if (spec.header && !header) throw new Refusal('242', 'Rejeição: Elemento mdfeCabecMsg inexistente no SOAP Header');
    if (!spec.gzip) {
      if (/<[A-Za-z_][\w.-]*:[A-Za-z_]/.test(message)) throw new Refusal('404', 'Rejeição: Uso de prefixo de namespace não permitido');
      if (/>\s+</.test(message) || message !== message.trim()) {
        throw new Refusal('588', 'Rejeição: Não é permitida a presença de caracteres de edição no início/fim da mensagem ou entre as tags da mensagem');
      }
    }
    const schema = captured ? captured.schema : schemaFor(service, message);
    const checked = captured ?? (schema ? validateXml(message, schema) : { valid: false, errors: [] });
    // MDFeRecepcaoSinc carries the document itself: its schema is the rule book's first check (215).
    if (!checked.valid && !spec.gzip) {
      const base = service === 'NFeAutorizacao4' ? 'Rejeição: Falha no Schema XML do lote de NFe' : 'Rejeição: Falha no schema XML';
      throw new Refusal(service === 'NFeAutorizacao4' ? '225' : '215', motivoWithDetail(base, checked.errors[0]));
    }
    if (this.#paralysed) {
      throw new Refusal(this.#paralysed, this.#paralysed === '108' ? 'Serviço Paralisado Momentaneamente (curto prazo)' : 'Serviço Paralisado sem Previsão');
    }
    if ((this.#blockedUntil.get(company.cnpj) ?? 0) > Date.now()) throw new Refusal('656', 'Rejeição: Consumo Indevido');
    const tpAmb = firstText(message, 'tpAmb');
    const expected = company.environment === 'producao' ? '1' : '2';
    if (tpAmb !== undefined && tpAmb !== expected && service !== 'NFeAutorizacao4' && service !== 'MDFeRecepcaoSinc') {
      throw new Refusal('252', 'Rejeição: Ambiente informado diverge do Ambiente de recebimento');
    }

    switch (service) {
      case 'NFeAutorizacao4':
        return this.authorizeNfe(company, message);
      case 'NFeRetAutorizacao4':
        return this.receipt(company, firstText(message, 'nRec') ?? '');
      case 'NFeConsultaProtocolo4':
        return this.consultNfe(company, firstText(message, 'chNFe') ?? '');
      case 'NFeStatusServico4':
      case 'MDFeStatusServico':
        return answers.retConsStatServ(service, this.common(company, '107', 'Serviço em Operação'), 1);
      case 'NFeRecepcaoEvento4': {
        const evento = slice(message, 'evento');
        const verdict = await this.#authority.registerNfeEvent(company, evento);
        this.count(company, 'event', firstIdOf(evento, 'infEvento'), verdict.cStat, ['135', '136', '155']);
        const idLote = firstText(message, 'idLote') ?? '0';
        if (!verdict.retEvento) return answers.plainAnswer(service, this.common(company, verdict.cStat, verdict.xMotivo), { idLote });
        return answers.retEnvEvento(this.common(company, '128', 'Lote de evento processado'), idLote, verdict.retEvento);
      }
      case 'NFeInutilizacao4': {
        const verdict = await this.#authority.voidNfeNumbers(company, message);
        this.count(company, 'voiding', firstIdOf(message, 'infInut'), verdict.cStat, ['102']);
        if (!verdict.retInutNFe) return answers.plainAnswer(service, this.common(company, verdict.cStat, verdict.xMotivo));
        return answers.withNamespace(verdict.retInutNFe, service);
      }
      case 'MDFeRecepcaoSinc': {
        const verdict = await this.#authority.authorizeMdfe(company, message);
        this.count(company, 'document', keyIn(message, 'MDFe'), verdict.cStat, [...AUTHORIZED]);
        return answers.retMDFe(this.common(company, verdict.cStat, verdict.xMotivo), verdict.protMDFe || undefined);
      }
      case 'MDFeRecepcaoEvento': {
        const verdict = await this.#authority.registerMdfeEvent(company, message);
        this.count(company, 'event', firstIdOf(message, 'infEvento'), verdict.cStat, ['135', '136']);
        if (!verdict.retEvento) return answers.plainAnswer(service, this.common(company, verdict.cStat, verdict.xMotivo));
        return answers.withNamespace(verdict.retEvento, service);
      }
      case 'MDFeConsulta': {
        const key = firstText(message, 'chMDFe') ?? '';
        this.countConsultation(company, 'keyConsultation', key);
        const known = await this.#authority.consultMdfe(company, key);
        if (!known.found) return answers.retConsSitMDFe(this.common(company, known.cStat, known.xMotivo));
        const [cStat, xMotivo] =
          known.state === 'cancelado'
            ? ['101', 'Cancelamento de MDF-e homologado']
            : known.state === 'encerrado'
              ? ['132', 'Encerramento de MDF-e homologado']
              : [known.verdict.cStat, known.verdict.xMotivo];
        return answers.retConsSitMDFe(this.common(company, cStat, xMotivo), known.verdict.protMDFe);
      }
      case 'MDFeConsNaoEnc': {
        const open = await this.#authority.openManifests(company);
        return answers.retConsMDFeNaoEnc(this.common(company, open.cStat, open.xMotivo), open.manifests);
      }
    }
  }

  private async authorizeNfe(company: AuthorityCompany, message: string): Promise<string> {
    const documents = (message.match(/<NFe[\s>]/g) ?? []).length;
    const nfe = slice(message, 'NFe');
    if (firstText(message, 'indSinc') === '0' && documents === 1 && firstText(nfe, 'mod') === '65') {
      throw new Refusal('452', 'Rejeição: Solicitada resposta assíncrona para Lote com somente 1 (uma) NFC-e');
    }
    const verdict = await this.#authority.authorizeNfe(company, nfe);
    const key = keyIn(nfe, 'NFe');
    this.count(company, 'document', key, verdict.cStat, [...AUTHORIZED]);
    if (!verdict.protNFe) throw new Refusal(verdict.cStat, verdict.xMotivo);
    const processed = this.common(company, '104', 'Lote processado');
    if (this.syncAnswer === 'recibo') {
      const nRec = `${cUFOf(company.uf)}${String(Date.now() % 1e9).padStart(9, '0')}${String(++this.#receiptSeq % 10_000).padStart(4, '0')}`;
      this.#receipts.set(nRec, { company, protNFe: verdict.protNFe, cStat: verdict.cStat, xMotivo: verdict.xMotivo, pendingPolls: this.receiptPolls });
      return answers.retEnviNFe(this.common(company, '103', 'Lote recebido com sucesso'), { infRec: { nRec, tMed: 1 } });
    }
    if (this.syncAnswer === 'infProt105') {
      const pending = nfeProtocol({
        cStat: '105',
        xMotivo: 'Lote em processamento',
        verAplic: this.#verAplic,
        dhRecbto: new Date(),
        key,
        tpAmb: company.environment === 'producao' ? 1 : 2,
      });
      return answers.retEnviNFe(processed, { protNFe: pending });
    }
    return answers.retEnviNFe(processed, { protNFe: verdict.protNFe });
  }

  private receipt(company: AuthorityCompany, nRec: string): string {
    this.countConsultation(company, 'receiptConsultation', nRec);
    const receipt = this.#receipts.get(nRec);
    if (!receipt || receipt.company.cnpj !== company.cnpj) {
      return answers.retConsReciNFe(this.common(company, '106', 'Rejeição: Lote não localizado'), nRec);
    }
    if (receipt.pendingPolls > 0) {
      receipt.pendingPolls -= 1;
      return answers.retConsReciNFe(this.common(company, '105', 'Lote em processamento'), nRec);
    }
    return answers.retConsReciNFe(this.common(company, '104', 'Lote processado'), nRec, receipt.protNFe);
  }

  private async consultNfe(company: AuthorityCompany, key: string): Promise<string> {
    this.countConsultation(company, 'keyConsultation', key);
    const known = await this.#authority.consultNfe(company, key);
    if (!known.found) return answers.retConsSitNFe(this.common(company, known.cStat, known.xMotivo), key);
    const c = known.cancelled
      ? this.common(company, '101', 'Cancelamento de NF-e homologado')
      : this.common(company, known.verdict.cStat, known.verdict.xMotivo);
    return answers.retConsSitNFe(c, key, known.verdict.protNFe);
  }

  // -------------------------------------------------------------------------------------------
  // "656 Consumo Indevido"

  private tick(key: string, limit: number, company: AuthorityCompany): void {
    const now = Date.now();
    const list = (this.#counts.get(key) ?? []).filter((at) => at > now - HOUR_MS);
    list.push(now);
    this.#counts.set(key, list);
    if (list.length > limit) this.#blockedUntil.set(company.cnpj, now + HOUR_MS);
  }

  private count(company: AuthorityCompany, kind: 'document' | 'event' | 'voiding', id: string, cStat: string, accepted: readonly string[]): void {
    if (accepted.includes(cStat)) return;
    this.tick(`${kind}|${company.cnpj}|${id}|${cStat}`, this.#limits[kind], company);
  }

  private countConsultation(company: AuthorityCompany, kind: 'keyConsultation' | 'receiptConsultation', id: string): void {
    this.tick(`${kind}|${company.cnpj}|${id}`, this.#limits[kind], company);
    if ((this.#blockedUntil.get(company.cnpj) ?? 0) > Date.now()) throw new Refusal('656', 'Rejeição: Consumo Indevido');
  }

  /** Whether the CNPJ is serving a "656" block now. */
  blocked(cnpj: string): boolean {
    return (this.#blockedUntil.get(cnpj) ?? 0) > Date.now();
  }
}

// ---------------------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new BadRequest(413, undefined, 'Mensagem grande demais'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function textIn(parent: XmlElement, ns: string, name: string): string | undefined {
  const c = child(parent, ns, name);
  if (!c) return undefined;
  let out = '';
  for (let i = 0; i < c.childNodes.length; i++) out += c.childNodes[i]!.nodeValue ?? '';
  return out.trim();
}

/** The schema a message is judged by: events by tpEvento, the others by service. */
function schemaFor(service: ServiceName, message: string): SchemaName | undefined {
  if (service === 'NFeRecepcaoEvento4') return firstText(message, 'tpEvento') === '110112' ? 'envEventoCancSubst' : 'envEventoCancNFe';
  return SERVICES[service].requestSchemas[0];
}

/** `<name …>…</name>` as it appears in the message (first opening to last closing). */
function slice(message: string, name: string): string {
  const start = message.search(new RegExp(`<${name}[\\s>]`));
  const end = message.lastIndexOf(`</${name}>`);
  return start >= 0 && end > start ? message.slice(start, end + name.length + 3) : '';
}

function keyIn(xml: string, prefix: 'NFe' | 'MDFe'): string {
  return keyInSignedXml(xml, prefix) ?? '';
}

function firstIdOf(xml: string, element: string): string {
  return new RegExp(`<${element}\\s[^>]*?\\bId="([^"]*)"`).exec(xml)?.[1] ?? '';
}

function extraOf(service: ServiceName, message: string): { nRec?: string; chNFe?: string; idLote?: string } {
  if (service === 'NFeRetAutorizacao4') return { nRec: firstText(message, 'nRec') };
  if (service === 'NFeConsultaProtocolo4') return { chNFe: firstText(message, 'chNFe') };
  if (service === 'NFeRecepcaoEvento4') return { idLote: firstText(message, 'idLote') };
  return {};
}
