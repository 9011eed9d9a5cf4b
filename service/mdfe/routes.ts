// The MDF-e endpoints (docs/api.md, "MDF-e"), mounted under /api/v1 behind
// authentication: emitir (synchronous), encerrar, cancelar, the list, the detail, the XML, the
// DAMDFE and the percurso utility. On start (onReady) the plugin settles manifests a stopped
// process left in flight (issuance.ts `recover`) and warms the tax authority up; when several
// processes share the store, it keeps looking every few seconds, since another process may stop
// at any time and never start again.

import { type Static } from '@sinclair/typebox';
import { suggestRoute, validateRoute } from '../../fiscal/percurso.ts';
import type { MdfeRequest } from '../../fiscal/mdfe/types.ts';
import { wrapMdfeProc } from '../../fiscal/protocol.ts';
import { companyOf } from '../http/auth.ts';
import { ApiError, errorResponses, invalidRequest, notFound } from '../http/errors.ts';
import { pdfAnswer, xmlAnswer } from '../http/media.ts';
import { dayFilters, envelope, pageRequest } from '../http/lists.ts';
import { MAX_OFFSET } from '../paging.ts';
import type { ApiApp, ApiRoutes } from '../http/type-provider.ts';
import type { ServiceDeps } from '../deps.ts';
import { decodeIdempotencyHeader, IdempotencyHeaders, sendReplay } from '../idempotency.ts';
import { ExportQuery, ZipResponse } from '../export/schemas.ts';
import { exportPeriod } from '../export/period.ts';
import { damdfeModel, renderDamdfe } from './damdfe.ts';
import { mdfeExport, mdfeExportFileName } from './export.ts';
import { MdfeIssuance, newDocumentId } from './issuance.ts';
import { CarrierEvents } from './carrier-events.ts';
import {
  CancelBody,
  CloseBody,
  DocumentsBody,
  DriverBody,
  EventList,
  IdParams,
  KeyParams,
  ListQuery,
  MdfeBody,
  MdfeList,
  MdfeView,
  OpenManifestsView,
  RouteBody,
  RouteView,
} from './schemas.ts';
import type { MdfeFilters } from './store.ts';
import { eventView, fullView, summaryView } from './view.ts';

/** How often manifests left in flight by a stopped process are retried while the authority is unreachable. */
const RECOVERY_RETRY_MS = 30_000;
/** Shared store: how often this process looks for what another one left when it stopped. */
export const RECOVERY_SWEEP_MS = 5_000;

const missing = () => notFound('MDF-e não encontrado.');

/** What the MDF-e routes share: the dependencies, issuance, and the full view of a manifest. */
type MdfeRoutesContext = {
  deps: ServiceDeps;
  issuance: MdfeIssuance;
  /** The manifest with its documents and events, or 404. */
  view: (companyId: string, id: string) => Promise<Static<typeof MdfeView>>;
};

export const mdfeRoutes: ApiRoutes = async (app, { deps }) => {
  const issuance = new MdfeIssuance(deps, app.log);
  const store = deps.store.mdfe;
  recoverInFlight(app, deps, issuance);
  const ctx: MdfeRoutesContext = {
    deps,
    issuance,
    async view(companyId, id) {
      const record = await store.get(companyId, id);
      if (!record) throw missing();
      const [documents, events] = await Promise.all([store.documents(id), store.events(id)]);
      return fullView(record, documents, events);
    },
  };
  issueRoute(app, ctx);
  listRoute(app, ctx);
  routeSuggestionRoute(app);
  exportRoute(app, ctx);
  readRoutes(app, ctx);
  eventRoutes(app, ctx);
  carrierRoutes(app, ctx);
};

/**
 * On start, settles the manifests a stopped process left in flight; while the authority is
 * unreachable, tries again; on a shared store, keeps looking for what other processes leave.
 */
function recoverInFlight(app: ApiApp, deps: ServiceDeps, issuance: MdfeIssuance): void {
  let retry: NodeJS.Timeout | undefined;
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    deps.authority.warmUp();
    const settle = async (ids?: string[]) => {
      const left = await issuance.recover(ids);
      if (left.length)
        retry = setTimeout(() => void settle(left).catch((err) => app.log.error({ err }, 'recuperação de MDF-e falhou')), RECOVERY_RETRY_MS).unref();
    };
    await settle();
    if (deps.store.shared) {
      let sweeping = false;
      sweep = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        issuance
          .recover()
          .catch((err) => app.log.error({ err }, 'recuperação de MDF-e falhou'))
          .finally(() => (sweeping = false));
      }, RECOVERY_SWEEP_MS).unref();
    }
  });
  app.addHook('onClose', async () => {
    clearTimeout(retry);
    clearInterval(sweep);
  });
}

/** POST /mdfe/emitir: synchronous, the authority's verdict in the answer; a replay of the same key answers the same manifest. */
function issueRoute(app: ApiApp, { deps, issuance, view }: MdfeRoutesContext): void {
  app.post(
    '/mdfe/emitir',
    {
      preValidation: decodeIdempotencyHeader,
      schema: {
        tags: ['mdfe'],
        summary: 'Emite um MDF-e (síncrono: a resposta traz o veredito da autoridade fiscal)',
        headers: IdempotencyHeaders,
        body: MdfeBody,
        response: { 200: MdfeView, 201: MdfeView, ...errorResponses(400, 401, 409, 413, 415, 422, 503) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const documentId = newDocumentId();
      const claim = await deps.idempotency.begin(request, 'mdfe', documentId);
      if (claim.kind === 'replay') return sendReplay(reply, await view(company.id, claim.documentId));
      const body = request.body as unknown as MdfeRequest;
      const { record, documents } = await issuance.issue(company.id, body, documentId, claim.kind === 'new' ? claim.key : undefined);
      return reply.code(201).send(fullView(record, documents, []));
    },
  );
}

/** GET /mdfe: the company's manifests, newest first, filtered and paged. */
function listRoute(app: ApiApp, { deps }: MdfeRoutesContext): void {
  const store = deps.store.mdfe;
  app.get(
    '/mdfe',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Lista os MDF-e da empresa, do mais recente ao mais antigo',
        querystring: ListQuery,
        response: { 200: MdfeList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const company = companyOf(request);
      const q = request.query;
      const filters: MdfeFilters = {
        ...(q.status !== undefined && { status: q.status }),
        ...(q.situacao !== undefined && { situacao: q.situacao }),
        ...(q.uf_inicio !== undefined && { ufInicio: q.uf_inicio }),
        ...(q.uf_fim !== undefined && { ufFim: q.uf_fim }),
        ...dayFilters(q.de, q.ate),
      };
      const offset = q.offset ?? 0;
      if (offset > MAX_OFFSET) {
        throw invalidRequest('Página funda demais para offset.', [
          { field: 'offset', message: `no máximo ${MAX_OFFSET}; para ir além, siga o proximo_cursor das páginas anteriores (parâmetro cursor)` },
        ]);
      }
      if (offset > 0 && q.cursor !== undefined) {
        throw invalidRequest('offset e cursor não se combinam.', [
          { field: 'offset', message: 'não use offset junto com cursor: o cursor já diz onde a página começa' },
        ]);
      }
      const page = pageRequest(q, 'mdfe', filters);
      const found = await store.list(company.id, filters, offset ? { ...page, offset } : page);
      return { ...envelope(found, page.limit, summaryView, 'mdfe', filters), offset };
    },
  );
}

/** POST /mdfe/percurso: the UFs a trip crosses, suggested or checked (rejection 663). */
function routeSuggestionRoute(app: ApiApp): void {
  app.post(
    '/mdfe/percurso',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Sugere as UFs de percurso (caminho mais curto entre UFs que fazem divisa) ou valida um percurso informado',
        description:
          'Sem infPercurso: devolve um caminho mais curto; entre vários, o de menor sequência de siglas em ordem alfabética ' +
          '(ex.: PE→RN dá CE). Com infPercurso: valida as regras da rejeição 663 (UFs na ordem da viagem, cada uma fazendo divisa ' +
          'com a seguinte, sem repetir início e fim).',
        body: RouteBody,
        response: { 200: RouteView, ...errorResponses(400, 401, 413, 415, 422) },
      },
    },
    async (request) => {
      const { UFIni, UFFim, infPercurso } = request.body;
      if (infPercurso === undefined) return { infPercurso: suggestRoute(UFIni, UFFim).map((UFPer) => ({ UFPer })) };
      const check = validateRoute(
        UFIni,
        UFFim,
        infPercurso.map((p) => p.UFPer),
      );
      if (check.valid) return { valido: true as const };
      throw new ApiError('validacao', `Percurso inválido: ${check.message}.`, { details: [{ field: check.field, message: check.message }] });
    },
  );
}

/** GET /mdfe/exportacao: the accountant's ZIP of a period, streamed. */
function exportRoute(app: ApiApp, { deps }: MdfeRoutesContext): void {
  const store = deps.store.mdfe;
  app.get(
    '/mdfe/exportacao',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Exportação para a contabilidade: ZIP com os MDF-e do período (por chave), seus eventos e resumo.csv',
        description:
          'MDF-e autorizados (também os depois encerrados ou cancelados), pela data de emissão em dias de Brasília; cada um uma vez, ' +
          'como <chave>-mdfe.xml (mdfeProc), com <chave>-evento-110112.xml (encerramento) ou <chave>-evento-110111.xml (cancelamento); ' +
          'resumo.csv (separador ;, vírgula decimal, UTF-8 com BOM). O arquivo é transmitido à medida que é escrito.',
        querystring: ExportQuery,
        response: { 200: ZipResponse, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const period = exportPeriod(request.query.de, request.query.ate);
      const zip = mdfeExport(store, company.id, period);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${mdfeExportFileName(company.cnpj, period)}"`)
        .send(zip);
    },
  );
}

/** A manifest now: its view, its XML, its DAMDFE. */
function readRoutes(app: ApiApp, { deps, view }: MdfeRoutesContext): void {
  const store = deps.store.mdfe;
  app.get(
    '/mdfe/:id',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'O MDF-e, com os documentos vinculados e os eventos',
        params: IdParams,
        response: { 200: MdfeView, ...errorResponses(401, 404) },
      },
    },
    async (request) => view(companyOf(request).id, request.params.id),
  );

  app.get(
    '/mdfe/:id/xml',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'XML do MDF-e: mdfeProc quando autorizado; o MDFe assinado quando rejeitado',
        params: IdParams,
        response: { 200: xmlAnswer('mdfeProc (MDFe + protMDFe) quando autorizado; o MDFe assinado quando rejeitado'), ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      const found = await store.xml(companyOf(request).id, request.params.id);
      if (!found) throw missing();
      if (found.situacao === 'processando') throw new ApiError('estado_invalido', 'O MDF-e ainda está em processamento.');
      const xml = found.situacao === 'rejeitado' || !found.protXml ? found.xml : wrapMdfeProc(found.xml, found.protXml);
      return reply.type('application/xml; charset=utf-8').send(`<?xml version="1.0" encoding="UTF-8"?>${xml}`);
    },
  );

  app.get(
    '/mdfe/:id/damdfe',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'DAMDFE em PDF (A4)',
        params: IdParams,
        response: { 200: pdfAnswer('DAMDFE, A4'), ...errorResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      const found = await store.xml(companyOf(request).id, request.params.id);
      if (!found) throw missing();
      if (found.situacao === 'processando' || found.situacao === 'rejeitado' || !found.protXml) {
        throw new ApiError('estado_invalido', 'Só há DAMDFE de um MDF-e autorizado (este foi rejeitado ou ainda está em processamento).');
      }
      const marca = found.situacao === 'encerrado' ? 'ENCERRADO' : found.situacao === 'cancelado' ? 'CANCELADO' : undefined;
      const pdf = await renderDamdfe(damdfeModel(wrapMdfeProc(found.xml, found.protXml), marca));
      return reply.type('application/pdf').header('content-disposition', `inline; filename="damdfe-${request.params.id}.pdf"`).send(pdf);
    },
  );
}

/** The events on a manifest: its closing on arrival, its cancellation. */
function eventRoutes(app: ApiApp, { issuance, view }: MdfeRoutesContext): void {
  app.post(
    '/mdfe/:id/encerrar',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Encerra o MDF-e na chegada (evento 110112)',
        params: IdParams,
        body: CloseBody,
        response: { 200: MdfeView, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      await issuance.close(companyId, request.params.id, request.body as Static<typeof CloseBody>);
      return view(companyId, request.params.id);
    },
  );

  app.post(
    '/mdfe/:id/cancelar',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Cancela o MDF-e em até 24 horas da autorização (evento 110111)',
        params: IdParams,
        body: CancelBody,
        response: { 200: MdfeView, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      await issuance.cancel(companyId, request.params.id, request.body);
      return view(companyId, request.params.id);
    },
  );
}

/** On the road: a driver joins, NF-e are added, the manifests still open are listed; a manifest by key, its events with their XML. */
function carrierRoutes(app: ApiApp, { deps, issuance, view }: MdfeRoutesContext): void {
  const store = deps.store.mdfe;
  const carrier = new CarrierEvents(deps, store, issuance);
  app.post(
    '/mdfe/:id/incluir-condutor',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Inclui um condutor no MDF-e autorizado (evento 110114)',
        params: IdParams,
        body: DriverBody,
        response: { 200: MdfeView, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      await carrier.includeDriver(companyId, request.params.id, request.body);
      return view(companyId, request.params.id);
    },
  );

  app.post(
    '/mdfe/:id/incluir-dfe',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Inclui NF-e carregadas no caminho no MDF-e autorizado (evento 110115)',
        params: IdParams,
        body: DocumentsBody,
        response: { 200: MdfeView, ...errorResponses(400, 401, 404, 413, 415, 422, 503) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      await carrier.includeDocuments(companyId, request.params.id, request.body);
      return view(companyId, request.params.id);
    },
  );

  app.get(
    '/mdfe/nao-encerrados',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Consulta à autoridade os MDF-e da empresa ainda não encerrados (MDFeConsNaoEnc)',
        response: { 200: OpenManifestsView, ...errorResponses(401, 422, 503) },
      },
    },
    async (request) => {
      const open = await carrier.openManifests(companyOf(request).id);
      return { status: open.cStat, motivo: open.xMotivo, data: open.manifests.map((m) => ({ chave: m.chave, protocolo: m.protocolo, mdfe_id: m.mdfeId })) };
    },
  );

  app.get(
    '/mdfe/chave/:chave',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'O MDF-e pela chave de acesso (o autorizado; sem um, a tentativa mais recente)',
        params: KeyParams,
        response: { 200: MdfeView, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      const found = await store.findByKey(companyId, request.params.chave);
      if (!found) throw missing();
      return view(companyId, found.id);
    },
  );

  app.get(
    '/mdfe/:id/eventos',
    {
      schema: {
        tags: ['mdfe'],
        summary: 'Os eventos registrados do MDF-e, com o XML de cada um (procEventoMDFe)',
        params: IdParams,
        response: { 200: EventList, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const found = await store.get(companyOf(request).id, request.params.id);
      if (!found) throw missing();
      return { data: (await store.events(found.id)).map(eventView) };
    },
  );
}
