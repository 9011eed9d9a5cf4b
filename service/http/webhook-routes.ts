// Webhook settings of the caller's company (docs/api.md, "Webhooks"): PUT sets (secret generated
// when absent), GET shows, DELETE removes.

import { Type } from '@sinclair/typebox';
import { companyOf } from './auth.ts';
import { errorResponses, notFound } from './errors.ts';
import type { ApiRoutes } from './type-provider.ts';

const WebhookBody = Type.Object(
  {
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'URL http(s) que recebe os eventos' }),
    segredo: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Segredo da assinatura X-Assinatura; gerado quando ausente' })),
  },
  { additionalProperties: false, examples: [{ url: 'http://127.0.0.1:8080/balcao/eventos' }] },
);

const WebhookView = Type.Object({ url: Type.String(), segredo: Type.String() });

const noWebhook = () => notFound('Nenhum webhook configurado para esta empresa.');

export const webhookRoutes: ApiRoutes = async (app, { deps }) => {
  app.put(
    '/webhook',
    {
      schema: {
        tags: ['webhook'],
        summary: 'Configura o webhook da empresa',
        body: WebhookBody,
        response: { 200: WebhookView, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (request) => deps.webhooks.put(companyOf(request).id, request.body),
  );

  app.get(
    '/webhook',
    {
      schema: {
        tags: ['webhook'],
        summary: 'Mostra o webhook da empresa',
        response: { 200: WebhookView, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const webhook = await deps.webhooks.get(companyOf(request).id);
      if (!webhook) throw noWebhook();
      return webhook;
    },
  );

  app.delete(
    '/webhook',
    {
      schema: {
        tags: ['webhook'],
        summary: 'Remove o webhook da empresa (idempotente: 204 também quando não havia)',
        response: { 204: Type.Null({ description: 'Removido' }), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      // Idempotent on purpose: a client that retries a DELETE after a lost response must not
      // be told it failed.
      await deps.webhooks.remove(companyOf(request).id);
      return reply.code(204).send(null);
    },
  );
};
