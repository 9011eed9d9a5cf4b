// The NFC-e endpoints (docs/api.md, "NFC-e", "Errors", "Idempotency") and the
// queue that brings accepted receipts to a verdict (queue.ts), started when the app is ready and
// stopped when it closes.
//
// Decisions where the contract is silent:
// - POST with a contingency XML whose access key already belongs to a live (not rejected)
//   document of the company: it is the same receipt. While that one is processando → 409
//   em_processamento with its id; once it ended → 200 with it and `idempotent_replay: true`.
//   Never a second document, never a second transmission of the same key.
// - GET /xml and GET /danfe of a document whose signed XML does not exist yet (it is queued,
//   to be signed within moments) → 409 em_processamento with Retry-After, like a retry too soon.
//   The DANFE of a contingency receipt still processando is printed (pending authorization, as
//   the law allows); the DANFE of a rejected receipt → 422 estado_invalido; its XML is the signed
//   NFe that was rejected.
// - Cancelling a document that is not autorizado, an already cancelled one included → 422
//   estado_invalido (as the MDF-e does). A client whose first answer was lost reads the state
//   with GET: `cancelado` means its earlier call worked.
// - Cancellation refused by the authority → 422 validacao with its cStat and xMotivo; the
//   authority unreachable → 503 autoridade_indisponivel (nothing recorded; retry).
// - Inutilização of a range already voided through this service → 200 with the stored answer
//   (a retry is safe); any refusal (241, 256, 563, ...) → 422 validacao with the authority's text.

import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isValidAccessKey } from '../../fiscal/access-key.ts';
import { encodeEscPos, PRINTER_PROFILES } from '../../fiscal/danfe/escpos.ts';
import { danfeModel } from '../../fiscal/danfe/model.ts';
import { renderDanfePdf } from '../../fiscal/danfe/pdf.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { justification, nfeCancellationEvent, nfeSubstitutionCancellationEvent } from '../../fiscal/events.ts';
import { buildInutilizacao } from '../../fiscal/inutilizacao.ts';
import { DEFAULT_VERPROC } from '../../fiscal/nfce/build.ts';
import { wrapProcEventoNFe, wrapProcInutNFe } from '../../fiscal/protocol.ts';
import { AuthorityUnavailableError, EVENT_REGISTERED } from '../authority/port.ts';
import { brasiliaDay, formatBrasilia } from '../clock.ts';
import { companyOf, ownedOr404 } from '../http/auth.ts';
import { ApiError, errorHandler, errorResponses, invalidRequest } from '../http/errors.ts';
import type { ApiRoutes } from '../http/type-provider.ts';
import { decodeIdempotencyHeader, IdempotencyHeaders, readIdempotencyKey, requestFingerprint, sendReplay, type ClaimResult } from '../idempotency.ts';
import { acceptContingency, acceptJson } from './accept.ts';
import { AuthorityProbe, probeIntervalFromEnv } from './availability-probe.ts';
import { ExportQuery, ZipResponse } from '../export/schemas.ts';
import { exportPeriod } from '../export/period.ts';
import { nfceExport, nfceExportFileName } from './export.ts';
import { nfceIssuer } from './issuer.ts';
import { concurrencyFromEnv, NfceQueue } from './queue.ts';
import {
  Accepted,
  CancelBody,
  DanfeQuery,
  DanfeResponse,
  IdParams,
  IssueBody,
  NfceReplay,
  NfceView,
  VoidBody,
  VoidView,
  XmlResponse,
} from './schemas.ts';
import type { NfceRecord, NfceStatus } from './store.ts';
import { nfceView, webhookEvent } from './view.ts';

const MINUTE = 60_000;
/** Cancellation windows from authorization (docs/api.md, "NFC-e"). */
export const CANCEL_WINDOW_MS = { cancelamento: 30 * MINUTE, substituicao: 168 * 60 * MINUTE } as const;
const RETURN_REMEDY = 'POST /api/v1/nfe/devolucao';
/** Seconds a client waits before asking again about a document still processando. */
const RETRY_AFTER_SECONDS = '1';
/** cStat of a cancellation already registered (its answer lost): 420 already cancelled, 573 duplicate event. */
const ALREADY_CANCELLED = new Set(['420', '573']);

const NOT_FOUND = 'NFC-e não encontrada.';
/** The states as a refusal names them. */
const STATE_NAMES: Record<NfceStatus, string> = {
  processando: 'em processamento',
  autorizado: 'autorizada',
  rejeitado: 'rejeitada',
  cancelado: 'cancelada',
};

const stillProcessing = (id: string, message: string) =>
  new ApiError('em_processamento', message, { id, headers: { 'retry-after': RETRY_AFTER_SECONDS } });

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

/**
 * The issuance body is one of two forms (if/then/else on `xml`); Ajv adds an `if` error saying
 * only that the chosen form failed, on top of that form's own precise errors: drop it.
 */
function issueErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (Array.isArray(error.validation)) error.validation = error.validation.filter((e) => e.keyword !== 'if');
  return errorHandler(error, request, reply);
}

export const nfceRoutes: ApiRoutes = async (app, { deps }) => {
  const queue = new NfceQueue({ deps, log: app.log.child({ component: 'fila-nfce' }), concurrency: concurrencyFromEnv() });
  const probe = new AuthorityProbe(deps, app.log.child({ component: 'autoridade' }), probeIntervalFromEnv());
  app.addHook('onReady', async () => {
    deps.authority.warmUp();
    queue.start();
    probe.start();
  });
  app.addHook('onClose', async () => {
    probe.stop();
    await queue.stop();
  });

  const documentOf = async (request: FastifyRequest, id: string): Promise<NfceRecord> => {
    const company = companyOf(request);
    return ownedOr404(await deps.store.nfce.getDocument(company.id, id), company, NOT_FOUND);
  };

  const replay = async (reply: FastifyReply, companyId: string, id: string) => {
    const document = await deps.store.nfce.getDocument(companyId, id);
    if (!document) throw new Error(`NFC-e ${id} da chave de idempotência não encontrada`);
    return sendReplay(reply, nfceView(document));
  };

  app.post(
    '/nfce',
    {
      errorHandler: issueErrorHandler,
      preValidation: decodeIdempotencyHeader,
      schema: {
        tags: ['nfce'],
        summary: 'Emite uma NFC-e (enfileirada: responde 202 com a chave; o resultado vem por GET ou webhook)',
        description:
          'Corpo JSON da especificação 2.3, ou { "xml": "<NFe ...>" } de uma NFC-e emitida em contingência offline (tpEmis 9), ' +
          'transmitida sem alteração. Idempotência: cabeçalho Idempotency-Key ou referencia_externa (até 200 caracteres), por empresa.',
        headers: IdempotencyHeaders,
        body: IssueBody,
        response: {
          202: Accepted,
          200: NfceReplay,
          ...errorResponses(400, 401, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const body = request.body;
      const key = readIdempotencyKey(request.headers['idempotency-key'], body);
      const fingerprint = requestFingerprint(body);
      // A key already bound to a document answers as bound (replay, 409, reuse) before the body
      // is checked again: an authorized receipt replays even if the company has since lost its
      // CSC or its certificate expired. The claim itself is made below, atomically with the
      // document, once the body has passed.
      if (key !== undefined) {
        const bound = await deps.idempotency.peek({ companyId: company.id, docType: 'nfce', key, fingerprint });
        if (bound) return answerBound(reply, company.id, bound);
      }
      const now = await deps.clock.now(company.id);
      const issuer = await nfceIssuer(deps, company.id, now);
      if (!issuer.emitter.csc) {
        throw new ApiError(
          'csc_nao_configurado',
          'A empresa não tem CSC (código de segurança do contribuinte) cadastrado: sem ele o QR Code da NFC-e não valida. ' +
            'Cadastre o CSC e o seu identificador nas configurações da empresa.',
        );
      }
      const id = randomUUID();
      const accepted = 'xml' in body ? acceptContingency(body.xml, issuer, id) : acceptJson(body, issuer, id, now);
      const claim = key === undefined ? undefined : { companyId: company.id, docType: 'nfce' as const, key, fingerprint, documentId: id };
      const result = await deps.store.nfce.insertDocument({ ...accepted, idempotencyKey: key ?? null }, claim);
      switch (result.kind) {
        case 'new':
          queue.wake();
          return reply.code(202).send({
            id,
            chave: accepted.chave,
            status: 'processando',
            message: `NFC-e recebida e em processamento; acompanhe por GET /api/v1/nfce/${id} ou pelo webhook.`,
            autoridade: deps.authority.availability.of(company.id),
          });
        case 'same_key':
          if (result.status === 'processando') {
            throw stillProcessing(result.documentId, 'Esta NFC-e (mesma chave de acesso) já foi recebida e está em processamento; repita em instantes.');
          }
          return replay(reply, company.id, result.documentId);
        default:
          // Bound between the look above and the claim: a concurrent twin won.
          return answerBound(reply, company.id, result);
      }
    },
  );

  /** The answer to a key bound to a document (docs/api.md, "Idempotency"). */
  async function answerBound(reply: FastifyReply, companyId: string, bound: Exclude<ClaimResult, { kind: 'new' }>) {
    switch (bound.kind) {
      case 'replay':
        return replay(reply, companyId, bound.documentId);
      case 'in_progress':
        throw stillProcessing(
          bound.documentId,
          'Uma requisição com esta chave de idempotência ainda está em processamento; repita em instantes com a mesma chave.',
        );
      case 'mismatch':
        throw new ApiError(
          'chave_idempotencia_reutilizada',
          'Esta chave de idempotência já foi usada com outro conteúdo; use uma chave nova para uma operação diferente.',
        );
    }
  }

  app.get(
    '/nfce/exportacao',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Exportação para a contabilidade: ZIP com as NFC-e do período (por chave), seus eventos, as inutilizações e resumo.csv',
        description:
          'NFC-e autorizadas, canceladas e emitidas em contingência (ainda aguardando a autoridade), pela data de emissão (dhEmi) em ' +
          'dias de Brasília; cada uma uma vez, como <chave>-nfce.xml (nfeProc; a NFe assinada da contingência pendente); o evento de ' +
          'cancelamento como <chave>-evento-110111.xml (110112 por substituição); inutilizações registradas no período como ' +
          'inutilizacao-serie-<serie>-numeros-<inicial>-a-<final>.xml; resumo.csv (separador ;, vírgula decimal, UTF-8 com BOM). ' +
          'O arquivo é transmitido à medida que é escrito.',
        querystring: ExportQuery,
        response: { 200: ZipResponse, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const period = exportPeriod(request.query.de, request.query.ate);
      const zip = await nfceExport(deps.store.nfce, company.id, period);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${nfceExportFileName(company.cnpj, period)}"`)
        .send(zip);
    },
  );

  app.get(
    '/nfce/:id',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Estado atual da NFC-e',
        params: IdParams,
        response: { 200: NfceView, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const document = await documentOf(request, request.params.id);
      // While it waits, whether the authority answers: the caller decides whether to wait.
      if (document.status !== 'processando') return nfceView(document);
      return { ...nfceView(document), autoridade: deps.authority.availability.of(document.companyId) };
    },
  );

  app.get(
    '/nfce/:id/xml',
    {
      schema: {
        tags: ['nfce'],
        summary: 'XML fiscal: nfeProc (procNFe_v4.00.xsd) quando autorizada ou cancelada; a NFe assinada nos demais estados',
        params: IdParams,
        response: { 200: XmlResponse, ...errorResponses(401, 404, 409) },
      },
    },
    async (request, reply) => {
      const document = await documentOf(request, request.params.id);
      const xml = (await deps.store.nfce.getXml(document.companyId, document.id))!;
      const finished = document.status === 'autorizado' || document.status === 'cancelado';
      const body = finished ? xml.nfeProc : xml.signedXml;
      if (!body) throw stillProcessing(document.id, 'A NFC-e ainda está sendo assinada; repita em instantes.');
      return reply.type('application/xml; charset=utf-8').send(body);
    },
  );

  app.get(
    '/nfce/:id/danfe',
    {
      schema: {
        tags: ['nfce'],
        summary: 'DANFE NFC-e de 80 mm com QR Code: PDF (padrão) ou ESC/POS (?formato=escpos, 48 colunas)',
        params: IdParams,
        querystring: DanfeQuery,
        response: { 200: DanfeResponse, ...errorResponses(400, 401, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const document = await documentOf(request, request.params.id);
      if (document.status === 'rejeitado') {
        throw new ApiError('estado_invalido', 'NFC-e rejeitada não tem DANFE: corrija os dados e emita de novo.');
      }
      const xml = (await deps.store.nfce.getXml(document.companyId, document.id))!;
      const source = document.status === 'processando' ? (document.contingencia ? xml.signedXml : null) : xml.nfeProc;
      if (!source) throw stillProcessing(document.id, 'A NFC-e ainda não foi autorizada; o DANFE sai assim que ela for. Repita em instantes.');
      const cancelled =
        document.status === 'cancelado'
          ? { at: document.canceladoEm ?? formatBrasilia(new Date()), nProt: document.protocoloCancelamento ?? '' }
          : undefined;
      const model = danfeModel(source, cancelled ? { cancelled } : {});
      if (request.query.formato === 'escpos') {
        const bytes = encodeEscPos(model, { profile: PRINTER_PROFILES['epson-tm-t20'], paperWidth: 80 });
        return reply
          .type('application/octet-stream')
          .header('content-disposition', `attachment; filename="nfce-${document.chave}.bin"`)
          .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      }
      const pdf = await renderDanfePdf(model);
      return reply.type('application/pdf').header('content-disposition', `inline; filename="nfce-${document.chave}.pdf"`).send(pdf);
    },
  );

  // One cancellation at a time per document: a client's retry waits for the first and then
  // finds the document cancelled (422 estado_invalido), instead of racing it to the authority.
  const cancelling = new Map<string, Promise<unknown>>();
  const oneAtATime = async <T>(id: string, run: () => Promise<T>): Promise<T> => {
    const turn = (cancelling.get(id) ?? Promise.resolve()).catch(() => undefined).then(run);
    cancelling.set(id, turn);
    try {
      return await turn;
    } finally {
      if (cancelling.get(id) === turn) cancelling.delete(id);
    }
  };

  app.post(
    '/nfce/:id/cancelar',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Cancela a NFC-e: até 30 minutos após a autorização (evento 110111), ou até 168 horas por substituição (110112)',
        description:
          `Depois do prazo, o remédio é a devolução: ${RETURN_REMEDY}. Só uma NFC-e autorizada pode ser cancelada: ` +
          'cancelar uma NFC-e já cancelada (ou rejeitada, ou em processamento) responde 422 estado_invalido; ' +
          'quem perdeu a resposta do primeiro cancelamento consulta GET /api/v1/nfce/{id}.',
        params: IdParams,
        body: CancelBody,
        response: { 200: NfceView, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const xJust = checkedJustification(request.body.justificativa);
      const substitute = request.body.chave_substituta;
      if (substitute !== undefined && (!isValidAccessKey(substitute) || substitute.slice(20, 22) !== '65')) {
        throw invalidRequest('Chave substituta inválida.', [
          { field: 'chave_substituta', message: 'deve ser a chave de acesso (44 dígitos, dígito verificador correto) de uma NFC-e (modelo 65)' },
        ]);
      }
      return oneAtATime(request.params.id, async () => {
        const document = await documentOf(request, request.params.id);
        if (document.status !== 'autorizado') {
          throw new ApiError('estado_invalido', `Só uma NFC-e autorizada pode ser cancelada; esta está ${STATE_NAMES[document.status]}.`);
        }
        const now = await deps.clock.now(company.id);
        const window = substitute === undefined ? CANCEL_WINDOW_MS.cancelamento : CANCEL_WINDOW_MS.substituicao;
        if (now.getTime() - Date.parse(document.autorizadoEm!) > window) {
          throw new ApiError(
            'prazo_expirado',
            substitute === undefined
              ? `O prazo de cancelamento da NFC-e (30 minutos após a autorização) terminou. Registre a devolução (NF-e de entrada) com ${RETURN_REMEDY}.`
              : `O cancelamento por substituição só é permitido até 168 horas após a autorização. Registre a devolução (NF-e de entrada) com ${RETURN_REMEDY}.`,
          );
        }
        const issuer = await nfceIssuer(deps, company.id, now);
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
          cancellation = { canceladoEm: verdict.registeredAt, protocolo: verdict.nProt ?? null, eventoXml: wrapProcEventoNFe(event, verdict.retEvento) };
        } else if (ALREADY_CANCELLED.has(verdict.cStat) && (await isCancelledAtAuthority(document.chave, issuer))) {
          // An earlier request registered it and its answer was lost: record what the authority knows.
          cancellation = { canceladoEm: formatBrasilia(now), protocolo: null, eventoXml: null };
        } else {
          throw new ApiError('validacao', `A autoridade fiscal recusou o cancelamento (cStat ${verdict.cStat}): ${verdict.xMotivo}`, {
            rejeicao: { cStat: verdict.cStat, xMotivo: verdict.xMotivo },
          });
        }
        await deps.store.nfce.recordCancellation(document.id, cancellation, webhookEvent('nfce.cancelada'));
        return nfceView(await documentOf(request, document.id));
      });
    },
  );

  async function isCancelledAtAuthority(chave: string, issuer: Awaited<ReturnType<typeof nfceIssuer>>): Promise<boolean> {
    const known = await deps.authority.consultNfe(issuer.authority, chave);
    return known.found && known.cancelled;
  }

  app.post(
    '/nfce/inutilizar',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Inutiliza uma faixa de números de NFC-e nunca autorizados',
        description: 'Uma faixa com número autorizado é recusada pela autoridade (241): 422 validacao.',
        body: VoidBody,
        response: { 200: VoidView, ...errorResponses(400, 401, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const { serie, numero_inicial: first, numero_final: last } = request.body;
      const xJust = checkedJustification(request.body.justificativa);
      const answer = (r: { protocolo: string; codigoStatus: string; motivo: string }) => ({
        protocolo: r.protocolo,
        codigo_status: r.codigoStatus,
        motivo: r.motivo,
      });
      const stored = await deps.store.nfce.findInutilizacao(company.id, serie, first, last);
      if (stored) return answer(stored);
      const now = await deps.clock.now(company.id);
      const issuer = await nfceIssuer(deps, company.id, now);
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
        const winner = await deps.store.nfce.findInutilizacao(company.id, serie, first, last);
        if (winner) return answer(winner);
        throw new ApiError('validacao', `A autoridade fiscal recusou a inutilização (cStat ${verdict.cStat}): ${verdict.xMotivo}`, {
          details: [{ field: 'numero_inicial', message: `faixa ${first} a ${last} da série ${serie}: ${verdict.xMotivo}` }],
          rejeicao: { cStat: verdict.cStat, xMotivo: verdict.xMotivo },
        });
      }
      const record = {
        id: randomUUID(),
        companyId: company.id,
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
      return answer(record);
    },
  );
};
