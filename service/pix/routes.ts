// The API Pix webhook at the service (docs/pix.md, "The webhook"; docs/api.md, "PIX received").
//
// The store's PSP tells of each PIX received by `POST <webhookUrl>/pix` with `{ "pix": [...] }`
// (the central bank's API Pix, callback of `PUT /webhook/{chave}`). A real PSP authenticates to
// the receiver with mutual TLS; the service's API port cannot ask every caller for a client
// certificate, so the webhook URL itself is the credential: it carries a per-company secret of
// 256 bits (`pixwh_…`), made by `POST /api/v1/pix/webhook`, shown once, kept only as its SHA-256
// like the API tokens. An unknown or malformed secret is 404 (the same as no such URL: nothing
// to probe), a body out of the API Pix is 400, and neither stores anything. A deployment that
// wants the PSP's mTLS as well puts it at its TLS proxy in front of this path.
//
// What the PSP reports is only a hint: the terminal asks `GET /api/v1/pix/recebidos?txid=` and,
// when the service has seen its charge's PIX, confirms it with one read at the PSP, which stays
// the source of truth.

import { Type } from '@sinclair/typebox';
import { strict } from '../../base/common/api/schema.ts';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { pixWebhookProblems } from '../../base/node/pix-api/pix-openapi.ts';
import { companyOf } from '../http/auth.ts';
import { errorResponses, invalidRequest, notFound } from '../http/errors.ts';
import type { ApiApp, ApiRoutes } from '../http/type-provider.ts';
import type { ServiceDeps } from '../deps.ts';
import { generateSecret, hashToken, isWellFormedSecret } from '../tokens.ts';
import type { ReceivedPix } from './store.ts';

const SECRET_PREFIX = 'pixwh_';
/** Where the PSP posts: `<webhookUrl>/pix`, webhookUrl being this path up to the secret. */
export const PIX_WEBHOOK_BASE = '/api/v1/pix/webhook';

const Received = Type.Object({
  endToEndId: Type.String(),
  txid: Type.Union([Type.String(), Type.Null()]),
  valor: Type.String({ description: 'Reais com duas casas, como a API Pix escreve ("12.34")' }),
  horario: Type.String({ description: 'Quando o PSP diz que foi pago (o texto do PSP)' }),
  recebido_em: Type.String({ description: 'Quando o serviço recebeu o aviso, horário de Brasília com o deslocamento' }),
});

const ReceivedList = Type.Object({
  webhook_configurado: Type.Boolean({ description: 'A empresa tem um endereço de webhook ativo: o PSP pode estar avisando' }),
  data: Type.Array(Received),
});

const WebhookCreated = Type.Object({
  webhook_url: Type.String({ description: 'O endereço a cadastrar no PSP (PUT /webhook/{chave} da API Pix); o PSP envia a POST <webhook_url>/pix' }),
  aviso: Type.String(),
});

const view = (p: ReceivedPix) => ({
  endToEndId: p.endToEndId,
  txid: p.txid,
  valor: p.valor,
  horario: p.horario,
  recebido_em: formatBrasilia(new Date(p.receivedAt)),
});

/** Under /api/v1, behind the company's token: the webhook's address, and the PIX received. */
export const pixRoutes: ApiRoutes = async (app, { deps }) => {
  app.post(
    '/pix/webhook',
    {
      schema: {
        tags: ['pix'],
        summary: 'Cria o endereço do webhook Pix da empresa (um novo segredo; o anterior deixa de valer)',
        description:
          'O endereço leva um segredo da empresa, mostrado só nesta resposta (o serviço guarda apenas o seu SHA-256). ' +
          'Cadastre-o no PSP como webhookUrl da chave PIX da loja; o PSP avisa cada PIX recebido em POST <webhook_url>/pix.',
        response: { 201: WebhookCreated, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const company = companyOf(request);
      const { token: secret, sha256 } = generateSecret(SECRET_PREFIX);
      await deps.store.pix.setWebhookSecret(company.id, sha256, new Date());
      return reply.code(201).send({
        // As this service saw the request; behind a proxy, the public address with the same path.
        webhook_url: `${request.protocol}://${request.host}${PIX_WEBHOOK_BASE}/${secret}`,
        aviso: 'Guarde este endereço: o segredo não é mostrado de novo. Criar outro invalida este.',
      });
    },
  );

  app.get(
    '/pix/recebidos',
    {
      schema: {
        tags: ['pix'],
        summary: 'Os PIX que o PSP avisou (webhook) para um txid',
        description: 'Um aviso, não a confirmação: o terminal confirma cada um com uma leitura no PSP.',
        querystring: Type.Object({ txid: Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$', description: 'O txid da cobrança' }) }, strict),
        response: { 200: ReceivedList, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const companyId = companyOf(request).id;
      const [configured, received] = await Promise.all([
        deps.store.pix.hasWebhookSecret(companyId),
        deps.store.pix.receivedOfTxid(companyId, request.query.txid),
      ]);
      return { webhook_configurado: configured, data: received.map(view) };
    },
  );
};

type WebhookPix = { endToEndId: string; txid?: string; valor: string; horario: string };

const hideSecret = (url: string): string => url.replace(/(\/pix\/webhook\/)[^/?]+/, '$1[oculto]');

/** Outside /api/v1's token: `POST /api/v1/pix/webhook/{segredo}/pix`, the PSP's call. */
export function pixWebhookReceiver(app: ApiApp, deps: ServiceDeps): void {
  // The secret is in the URL, which the request log line shows: there, it is hidden.
  const logSerializers = {
    req: (req: { method: string; url: string; ip: string }) => ({ method: req.method, url: hideSecret(req.url), remoteAddress: req.ip }),
  };
  app.post(`${PIX_WEBHOOK_BASE}/:segredo/pix`, { schema: { hide: true }, logSerializers }, async (request, reply) => {
    const { segredo } = request.params as { segredo: string };
    const companyId = isWellFormedSecret(SECRET_PREFIX, segredo) ? await companyOfSecret(deps, segredo) : undefined;
    if (!companyId) throw notFound('Endereço de webhook Pix desconhecido.');
    const problems = pixWebhookProblems(request.body);
    const list = problems.length ? [] : (request.body as { pix: WebhookPix[] }).pix;
    // The API Pix's endToEndId has 32 letters and digits; its pattern in the document is unanchored.
    for (const [i, p] of list.entries()) if (!/^[A-Za-z0-9]{32}$/.test(p.endToEndId)) problems.push(`pix[${i}].endToEndId: 32 letras e dígitos`);
    if (problems.length)
      throw invalidRequest(
        'Aviso de PIX fora da API Pix.',
        problems.map((message) => ({ field: 'pix', message })),
      );
    const novos = await deps.store.pix.recordReceived(
      companyId,
      list.map((p) => ({ endToEndId: p.endToEndId, txid: p.txid ?? null, valor: p.valor, horario: p.horario })),
      new Date(),
    );
    return reply.code(200).send({ recebidos: list.length, novos });
  });
}

// Looked up by its hash, so timing says nothing of the secret (as the API tokens, http/auth.ts).
const companyOfSecret = (deps: ServiceDeps, secret: string) => deps.store.pix.companyOfWebhookSecret(hashToken(secret));
