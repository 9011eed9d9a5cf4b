// The NFC-e endpoints (docs/api.md, "NFC-e", "Errors", "Idempotency"): each reads its request,
// asks issuance.ts (or the store, for what it only shows) and shapes the answer. The queue that
// brings accepted receipts to a verdict (lane.ts) starts when the app is ready and stops when it
// closes.
//
// Decisions where the contract is silent (the others are issuance.ts's):
// - GET /xml and GET /danfe of a document whose signed XML does not exist yet (it is queued,
//   to be signed within moments) → 409 em_processamento with Retry-After, like a retry too soon.
//   The DANFE of a contingency receipt still processando is printed (pending authorization, as
//   the law allows); the DANFE of a rejected receipt → 422 estado_invalido; its XML is the signed
//   NFe that was rejected.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { encodeEscPos, PRINTER_PROFILES } from '../../fiscal/danfe/escpos.ts';
import { danfeModel } from '../../fiscal/danfe/model.ts';
import { renderDanfePdf } from '../../fiscal/danfe/pdf.ts';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { companyOf, ownedOr404 } from '../http/auth.ts';
import { ApiError, errorHandler, errorResponses, notFound, toApiError, withValueIssues } from '../http/errors.ts';
import type { ApiApp, ApiRoutes } from '../http/type-provider.ts';
import type { ServiceDeps } from '../deps.ts';
import { decodeIdempotencyHeader, readIdempotencyKey, requestFingerprint, sendReplay, type ClaimResult } from '../idempotency.ts';
import { AuthorityProbe, probeIntervalFromEnv } from '../queue/availability-probe.ts';
import { concurrencyFromEnv } from '../queue/authorization-queue.ts';
import { NfceIssuance, RETURN_REMEDY } from './issuance.ts';
import { NfceQueue } from './lane.ts';
import { MAX_WAIT_SECONDS, preferredWait } from '../http/prefer.ts';
import { VerdictWaiter } from '../queue/verdict-waiter.ts';
import {
  Accepted,
  CancelBody,
  DanfeQuery,
  DanfeResponse,
  IdParams,
  InutilizacaoList,
  InutilizacaoListQuery,
  InutilizacaoXmlResponse,
  IssueBody,
  KeyParams,
  ListQuery,
  NfceList,
  NfceReplay,
  NfceView,
  VoidBody,
  VoidView,
  IssueHeaders,
  XmlResponse,
} from './schemas.ts';
import type { InutilizacaoFilters, InutilizacaoSummary, NfceFilters, NfceRecord } from './store.ts';
import { nfceEventView, nfceView } from './view.ts';
import { EventList } from '../http/events.ts';
import { ExportQuery, ZipResponse } from '../export/schemas.ts';
import { dayFilters, envelope, pageRequest } from '../http/lists.ts';
import { exportPeriod } from '../export/period.ts';
import { nfceExport, nfceExportFileName } from './export.ts';

/** Seconds a client waits before asking again about a document still processando. */
const RETRY_AFTER_SECONDS = '1';

const NOT_FOUND = 'NFC-e não encontrada.';

const stillProcessing = (id: string, message: string) => new ApiError('em_processamento', message, { id, headers: { 'retry-after': RETRY_AFTER_SECONDS } });

/**
 * The issuance body is one of two forms (if/then/else on `xml`); Ajv adds an `if` error saying
 * only that the chosen form failed, on top of that form's own precise errors: drop it. A JSON
 * receipt of the wrong shape is also judged on its values, so that the 400 names every problem
 * at once (docs/api.md, "Errors").
 */
function issueErrorHandler(issuance: NfceIssuance) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (!Array.isArray(error.validation)) return errorHandler(error, request, reply);
    error.validation = error.validation.filter((e) => e.keyword !== 'if');
    // A body of the wrong shape: its 400 names the value problems of the parts that are right too.
    if ((error.validationContext ?? 'body') !== 'body' || !request.company) return errorHandler(error, request, reply);
    return errorHandler(withValueIssues(toApiError(error, request), await issuance.valueIssues(request.company.id, request.body)), request, reply);
  };
}

/** What the NFC-e routes share: the dependencies, issuance, and the lookups of a company's documents. */
type NfceRoutesContext = {
  deps: ServiceDeps;
  issuance: NfceIssuance;
  /** Requests waiting for a verdict (Prefer: wait). */
  verdicts: VerdictWaiter<NfceRecord>;
  /** The caller's company's document, or 404. */
  documentOf: (request: FastifyRequest, id: string) => Promise<NfceRecord>;
  /** The document as GET shows it: while it waits, whether the authority answers (the caller decides whether to wait). */
  shown: (document: NfceRecord) => NfceView;
  /** The answer already given for a document, replayed. */
  replay: (reply: FastifyReply, companyId: string, id: string) => Promise<FastifyReply>;
};

export const nfceRoutes: ApiRoutes = async (app, { deps }) => {
  const verdicts = new VerdictWaiter<NfceRecord>((document) => document.status !== 'processando', deps.store.shared);
  const queue = new NfceQueue({
    deps,
    log: app.log.child({ component: 'fila-nfce' }),
    concurrency: concurrencyFromEnv(),
    settled: (id) => verdicts.settled(id),
  });
  const probe = new AuthorityProbe(deps, app.log.child({ component: 'autoridade' }), probeIntervalFromEnv());
  const issuance = new NfceIssuance(deps, () => queue.wake());
  app.addHook('onReady', async () => {
    deps.authority.warmUp();
    queue.start();
    probe.start();
  });
  // Before the server waits for requests in flight: a request waiting for a verdict answers now.
  app.addHook('preClose', async () => verdicts.close());
  app.addHook('onClose', async () => {
    probe.stop();
    await queue.stop();
  });

  const ctx: NfceRoutesContext = {
    deps,
    issuance,
    verdicts,
    async documentOf(request, id) {
      const company = companyOf(request);
      return ownedOr404(await deps.store.nfce.getDocument(company.id, id), company, NOT_FOUND);
    },
    shown(document) {
      if (document.status !== 'processando') return nfceView(document);
      return { ...nfceView(document), autoridade: deps.authority.availability.of(document.companyId) };
    },
    async replay(reply, companyId, id) {
      const document = await deps.store.nfce.getDocument(companyId, id);
      if (!document) throw new Error(`NFC-e ${id} da chave de idempotência não encontrada`);
      return sendReplay(reply, nfceView(document));
    },
  };
  issueRoute(app, ctx);
  exportRoute(app, ctx);
  listRoutes(app, ctx);
  readRoutes(app, ctx);
  eventRoutes(app, ctx);
};

/** POST /nfce: a new receipt (JSON, or the signed XML of one issued offline), or the same one again. */
function issueRoute(app: ApiApp, { deps, issuance, replay, verdicts }: NfceRoutesContext): void {
  app.post(
    '/nfce',
    {
      errorHandler: issueErrorHandler(issuance),
      preValidation: decodeIdempotencyHeader,
      schema: {
        tags: ['nfce'],
        summary: 'Emite uma NFC-e (enfileirada: responde 202 com a chave; o resultado vem por GET ou webhook)',
        description:
          'Corpo JSON da NFC-e (docs/api.md, NFC-e), ou { "xml": "<NFe ...>" } de uma NFC-e emitida em contingência offline (tpEmis 9), ' +
          'transmitida sem alteração. Idempotência: cabeçalho Idempotency-Key ou referencia_externa (até 200 caracteres), por empresa. ' +
          `Com Prefer: wait=N (RFC 7240, até ${MAX_WAIT_SECONDS} segundos), a resposta espera o veredito: 201 com a NFC-e autorizada ou ` +
          'rejeitada se ele chegar a tempo, o 202 de sempre se não; Preference-Applied diz a espera aplicada.',
        headers: IssueHeaders,
        body: IssueBody,
        response: {
          202: Accepted,
          201: NfceView,
          200: NfceReplay,
          ...errorResponses(400, 401, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const body = request.body;
      const key = readIdempotencyKey(request.headers['idempotency-key'], body);
      const outcome = await issuance.issue(company.id, body, key, requestFingerprint(body));
      switch (outcome.kind) {
        case 'accepted': {
          request.log.info({ documentId: outcome.id, chave: outcome.chave }, 'NFC-e recebida');
          reply.header('location', `/api/v1/nfce/${outcome.id}`);
          const wait = preferredWait(request.headers.prefer);
          if (wait !== undefined) {
            reply.header('preference-applied', `wait=${wait}`);
            const final = await verdicts.wait(outcome.id, wait * 1000, () => deps.store.nfce.getDocument(company.id, outcome.id));
            if (final) return reply.code(201).send(nfceView(final));
          }
          return reply.code(202).send({
            id: outcome.id,
            chave: outcome.chave,
            status: 'processando',
            message: `NFC-e recebida e em processamento; acompanhe por GET /api/v1/nfce/${outcome.id} ou pelo webhook.`,
            autoridade: deps.authority.availability.of(company.id),
          });
        }
        case 'same_key':
          if (outcome.status === 'processando') {
            throw stillProcessing(outcome.documentId, 'Esta NFC-e (mesma chave de acesso) já foi recebida e está em processamento; repita em instantes.');
          }
          return replay(reply, company.id, outcome.documentId);
        case 'bound':
          return answerBound(reply, company.id, outcome.bound);
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
}

/** GET /nfce/exportacao: the accountant's ZIP of a period, streamed. */
function exportRoute(app: ApiApp, { deps }: NfceRoutesContext): void {
  app.get(
    '/nfce/exportacao',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Exportação para a contabilidade: ZIP com as NFC-e do período (por chave), seus eventos, as inutilizações, as devoluções e resumo.csv',
        description:
          'NFC-e autorizadas, canceladas e emitidas em contingência (ainda aguardando a autoridade), pela data de emissão (dhEmi) em ' +
          'dias de Brasília; cada uma uma vez, como <chave>-nfce.xml (nfeProc; a NFe assinada da contingência pendente); o evento de ' +
          'cancelamento como <chave>-evento-110111.xml (110112 por substituição); inutilizações registradas no período como ' +
          'inutilizacao-serie-<serie>-numeros-<inicial>-a-<final>.xml; as NF-e de devolução autorizadas emitidas no período em ' +
          'devolucoes/<chave>-nfe.xml (nfeProc); resumo.csv (separador ;, vírgula decimal, UTF-8 com BOM). ' +
          'O arquivo é transmitido à medida que é escrito.',
        querystring: ExportQuery,
        response: { 200: ZipResponse, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const period = exportPeriod(request.query.de, request.query.ate);
      const zip = nfceExport(deps.store.nfce, deps.store.nfe, company.id, period);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${nfceExportFileName(company.cnpj, period)}"`)
        .send(zip);
    },
  );
}

/** The company's receipts and inutilizações, found by filters or by access key (docs/api.md, "Lists and paging"). */
function listRoutes(app: ApiApp, { deps, shown }: NfceRoutesContext): void {
  app.get(
    '/nfce',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Lista as NFC-e da empresa, da emissão (dhEmi) mais recente à mais antiga, filtradas e paginadas por cursor',
        querystring: ListQuery,
        response: { 200: NfceList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const q = request.query;
      const filters: NfceFilters = {
        ...(q.status !== undefined && { status: q.status }),
        ...(q.serie !== undefined && { serie: q.serie }),
        ...(q.chave !== undefined && { chave: q.chave }),
        ...(q.referencia_externa !== undefined && { referenciaExterna: q.referencia_externa }),
        ...dayFilters(q.de, q.ate),
      };
      const page = pageRequest(q, 'nfce', filters);
      return envelope(await deps.store.nfce.list(company.id, filters, page), page.limit, nfceView, 'nfce', filters);
    },
  );

  app.get(
    '/nfce/chave/:chave',
    {
      schema: {
        tags: ['nfce'],
        summary: 'A NFC-e pela chave de acesso (a viva; se todas foram rejeitadas, a tentativa mais recente)',
        params: KeyParams,
        response: { 200: NfceView, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const found = await deps.store.nfce.findByKey(companyOf(request).id, request.params.chave);
      if (!found) throw notFound(NOT_FOUND);
      return shown(found);
    },
  );

  app.get(
    '/nfce/inutilizacoes',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Lista as inutilizações de numeração da empresa, da mais recente à mais antiga, paginadas por cursor',
        querystring: InutilizacaoListQuery,
        response: { 200: InutilizacaoList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const q = request.query;
      const filters: InutilizacaoFilters = { ...(q.serie !== undefined && { serie: q.serie }), ...dayFilters(q.de, q.ate) };
      const page = pageRequest(q, 'inutilizacoes', filters);
      const found = await deps.store.nfce.listInutilizacoes(companyOf(request).id, filters, page);
      return envelope(found, page.limit, inutilizacaoView, 'inutilizacoes', filters);
    },
  );

  app.get(
    '/nfce/inutilizacoes/:id/xml',
    {
      schema: {
        tags: ['nfce'],
        summary: 'XML da inutilização: ProcInutNFe (pedido assinado e resposta da autoridade)',
        params: IdParams,
        response: { 200: InutilizacaoXmlResponse, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const found = await deps.store.nfce.getInutilizacao(companyOf(request).id, request.params.id);
      if (!found) throw notFound('Inutilização não encontrada.');
      return reply.type('application/xml; charset=utf-8').send(found.xml);
    },
  );
}

const inutilizacaoView = (i: InutilizacaoSummary) => ({
  id: i.id,
  serie: i.serie,
  numero_inicial: i.numeroInicial,
  numero_final: i.numeroFinal,
  justificativa: i.justificativa,
  protocolo: i.protocolo,
  codigo_status: i.codigoStatus,
  motivo: i.motivo,
  registrado_em: formatBrasilia(i.createdAt),
});

/** What a receipt is now: its state, its XML, its DANFE. */
function readRoutes(app: ApiApp, { deps, documentOf, shown }: NfceRoutesContext): void {
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
    async (request) => shown(await documentOf(request, request.params.id)),
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
        document.status === 'cancelado' ? { at: document.canceladoEm ?? formatBrasilia(new Date()), nProt: document.protocoloCancelamento ?? '' } : undefined;
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
}

/** The events on receipts: cancellation, and the inutilização of numbers never authorized; a receipt's events with their XML. */
function eventRoutes(app: ApiApp, { deps, issuance, documentOf }: NfceRoutesContext): void {
  app.get(
    '/nfce/:id/eventos',
    {
      schema: {
        tags: ['nfce'],
        summary: 'Os eventos registrados da NFC-e (o cancelamento), com o XML de cada um (procEventoNFe)',
        description:
          'Um cancelamento que o serviço só soube por consulta à autoridade (a resposta do próprio pedido perdida) não tem evento guardado: ' +
          'a NFC-e mostra status cancelado sem ele.',
        params: IdParams,
        response: { 200: EventList, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const document = await documentOf(request, request.params.id);
      const xml = await deps.store.nfce.getXml(document.companyId, document.id);
      return { data: xml?.eventoXml ? [nfceEventView(xml.eventoXml)] : [] };
    },
  );

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
      const document = await documentOf(request, request.params.id);
      await issuance.cancel(document, request.body);
      return nfceView(await documentOf(request, document.id));
    },
  );

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
      const voided = await issuance.voidNumbers(companyOf(request).id, request.body);
      return { protocolo: voided.protocolo, codigo_status: voided.codigoStatus, motivo: voided.motivo };
    },
  );
}
