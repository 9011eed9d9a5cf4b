// The NF-e endpoints (docs/api.md, "NFC-e", end): the return of goods sold with an NFC-e
// (NF-e de devolução, model 55), queued like the NFC-e, with the same idempotency rules, its
// detail and its XML. The queue (the NFC-e's authorization queue over the returns' lane) starts
// when the app is ready, after the keys a stopped process left claimed are settled (and, when
// several processes share the store, those another one leaves, looked for every few seconds).

import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { companyOf, ownedOr404 } from '../http/auth.ts';
import { ApiError, errorResponses, notFound } from '../http/errors.ts';
import { dayFilters, envelope, pageRequest } from '../http/lists.ts';
import type { ApiApp, ApiRoutes } from '../http/type-provider.ts';
import type { ServiceDeps } from '../deps.ts';
import { decodeIdempotencyHeader, IdempotencyHeaders, sendReplay } from '../idempotency.ts';
import { Returns } from './issuance.ts';
import { nfeQueue } from './lane.ts';
import { danfeNfeModel, renderDanfeNfe } from './danfe.ts';
import { Accepted, DanfeResponse, DevolucaoBody, IdParams, KeyParams, ListQuery, NfeList, NfeReplay, NfeView, XmlResponse } from './schemas.ts';
import type { NfeFilters, NfeRecord } from './store.ts';
import { nfeSummaryView, nfeView } from './view.ts';

const NOT_FOUND = 'NF-e não encontrada.';
/** Shared store: how often this process looks for keys another one left claimed when it stopped. */
const KEY_SWEEP_MS = 5_000;

export const nfeRoutes: ApiRoutes = async (app, { deps }) => {
  const log = app.log.child({ component: 'fila-nfe' });
  const queue = nfeQueue(deps, log);
  const returns = new Returns(deps, log);
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    deps.authority.warmUp();
    await returns.recover();
    queue.start();
    if (deps.store.shared) {
      sweep = setInterval(() => void returns.recover().catch((err) => log.error({ err }, 'recuperação das chaves de devolução falhou')), KEY_SWEEP_MS);
      sweep.unref();
    }
  });
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    await queue.stop();
  });

  app.post(
    '/nfe/devolucao',
    {
      preValidation: decodeIdempotencyHeader,
      schema: {
        tags: ['nfe'],
        summary: 'Emite a NF-e de devolução (modelo 55, entrada) de mercadorias vendidas com uma NFC-e (enfileirada: 202)',
        description:
          'Depois do prazo de cancelamento da NFC-e, a devolução desfaz a venda, no todo ou em parte. A NFC-e deve ser desta empresa ' +
          '(senão 404) e estar autorizada (cancelada, rejeitada ou em processamento: 422 estado_invalido). Cada quantidade vai até o ' +
          'vendido menos o já devolvido pelas devoluções autorizadas ou em processamento (senão 422 validacao, nomeando itens[i].quantidade). ' +
          'O serviço numera as NF-e (série 1); um número rejeitado pela autoridade é reaproveitado na próxima devolução. ' +
          'Idempotência como na NFC-e: cabeçalho Idempotency-Key ou referencia_externa, por empresa e tipo de documento. ' +
          'Resultado por GET /api/v1/nfe/{id} ou pelo webhook (nfe.autorizada, nfe.rejeitada).',
        headers: IdempotencyHeaders,
        body: DevolucaoBody,
        response: { 202: Accepted, 200: NfeReplay, ...errorResponses(400, 401, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const id = randomUUID();
      const claim = await deps.idempotency.begin(request, 'nfe', id);
      if (claim.kind === 'replay') {
        const document = await deps.store.nfe.getDocument(company.id, claim.documentId);
        if (!document) throw new Error(`NF-e ${claim.documentId} da chave de idempotência não encontrada`);
        return sendReplay(reply, nfeView(document));
      }
      const record = await returns.accept(company.id, request.body, id, claim.kind === 'new' ? claim.key : undefined);
      queue.wake();
      request.log.info({ documentId: id, chave: record.chave }, 'NF-e de devolução recebida');
      // Where the verdict will be read, as the NFC-e's 202 says it (RFC 9110 §15.3.3).
      reply.header('location', `/api/v1/nfe/${id}`);
      return reply.code(202).send({
        id,
        tipo: 'devolucao',
        situacao: 'processando',
        serie: record.serie,
        numero: record.numero,
        chave: record.chave,
        message: `NF-e de devolução recebida e em processamento; acompanhe por GET /api/v1/nfe/${id} ou pelo webhook.`,
      });
    },
  );

  listRoutes(app, deps);

  readRoutes(app, deps);
};

/** The company's returns, found by filters or by access key (docs/api.md, "Lists and paging"). */
function listRoutes(app: ApiApp, deps: ServiceDeps): void {
  app.get(
    '/nfe',
    {
      schema: {
        tags: ['nfe'],
        summary: 'Lista as NF-e (devoluções) da empresa, da emissão mais recente à mais antiga, filtradas e paginadas por cursor (sem os itens)',
        querystring: ListQuery,
        response: { 200: NfeList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const q = request.query;
      const filters: NfeFilters = {
        ...(q.situacao !== undefined && { status: q.situacao }),
        ...(q.serie !== undefined && { serie: q.serie }),
        ...(q.chave !== undefined && { chave: q.chave }),
        ...(q.chave_nfce !== undefined && { chaveNfce: q.chave_nfce }),
        ...(q.referencia_externa !== undefined && { referenciaExterna: q.referencia_externa }),
        ...dayFilters(q.de, q.ate),
      };
      const page = pageRequest(q, 'nfe', filters);
      return envelope(await deps.store.nfe.list(companyOf(request).id, filters, page), page.limit, nfeSummaryView, 'nfe', filters);
    },
  );

  app.get(
    '/nfe/chave/:chave',
    {
      schema: {
        tags: ['nfe'],
        summary: 'A NF-e pela chave de acesso (a viva; se todas foram rejeitadas, a tentativa mais recente)',
        params: KeyParams,
        response: { 200: NfeView, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const found = await deps.store.nfe.findByKey(companyOf(request).id, request.params.chave);
      if (!found) throw notFound(NOT_FOUND);
      return nfeView(found);
    },
  );
}

/** A return now: its state, its XML, its DANFE. */
function readRoutes(app: ApiApp, deps: ServiceDeps): void {
  const documentOf = async (request: FastifyRequest, id: string): Promise<NfeRecord> => {
    const company = companyOf(request);
    return ownedOr404(await deps.store.nfe.getDocument(company.id, id), company, NOT_FOUND);
  };

  app.get(
    '/nfe/:id',
    {
      schema: {
        tags: ['nfe'],
        summary: 'Estado atual da NF-e (devolução)',
        params: IdParams,
        response: { 200: NfeView, ...errorResponses(401, 404) },
      },
    },
    async (request) => nfeView(await documentOf(request, request.params.id)),
  );

  app.get(
    '/nfe/:id/xml',
    {
      schema: {
        tags: ['nfe'],
        summary: 'XML fiscal: nfeProc (procNFe_v4.00.xsd) quando autorizada; a NFe assinada nos demais estados',
        params: IdParams,
        response: { 200: XmlResponse, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const document = await documentOf(request, request.params.id);
      const xml = await deps.store.nfe.getXml(document.companyId, document.id);
      if (!xml) throw new ApiError('nao_encontrado', NOT_FOUND);
      const body = document.status === 'autorizado' && xml.nfeProc ? xml.nfeProc : xml.signedXml;
      return reply.type('application/xml; charset=utf-8').send(body);
    },
  );

  app.get(
    '/nfe/:id/danfe',
    {
      schema: {
        tags: ['nfe'],
        summary: 'DANFE da NF-e (modelo 55, A4) em PDF, depois de autorizada',
        params: IdParams,
        response: { 200: DanfeResponse, ...errorResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const document = await documentOf(request, request.params.id);
      if (document.status === 'rejeitado') throw new ApiError('estado_invalido', 'NF-e rejeitada não tem DANFE: ela não foi autorizada.');
      const xml = await deps.store.nfe.getXml(document.companyId, document.id);
      if (document.status === 'processando' || !xml?.nfeProc) {
        throw new ApiError('em_processamento', 'A NF-e ainda não foi autorizada; o DANFE sai assim que ela for. Repita em instantes.', {
          id: document.id,
          headers: { 'retry-after': '1' },
        });
      }
      const pdf = await renderDanfeNfe(danfeNfeModel(xml.nfeProc));
      return reply.type('application/pdf').header('content-disposition', `inline; filename="nfe-${document.chave}.pdf"`).send(pdf);
    },
  );
}
