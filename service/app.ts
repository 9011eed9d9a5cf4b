// The HTTP application: JSON only, at most 1 MiB per body, the contract's error bodies, bearer
// authentication on /api/v1 (except the OpenAPI document), the sandbox and webhook settings
// routes, and the seam where document types mount their routes (routes.ts).

import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TaxAuthority } from './authority/port.ts';
import type { ServiceMode } from './clock.ts';
import { createServiceDeps, type SandboxTransport, type ServiceDeps } from './deps.ts';
import { authenticate, identifyIfPresent } from './http/auth.ts';
import { ApiError, errorHandler, forbiddenKey, forbiddenKeyField, invalidRequest, notFoundHandler } from './http/errors.ts';
import { coerceQueryAndParams } from './http/query-coercion.ts';
import { assertOperator, OperatorRatesAnswer, OperatorRatesBody, operatorRates, operatorTokenHash, replaceOperatorRates } from './operator-rates.ts';
import { inReadScope } from './read-scope.ts';
import { pixWebhookReceiver } from './pix/routes.ts';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { ratesWarning } from '../fiscal/ibscbs/readiness.ts';
import { documentRoutes } from './routes.ts';
import { sandboxRoutes } from './http/sandbox-routes.ts';
import { httpTimeouts, requestTimeoutFromEnv } from './http/timeouts.ts';
import type { ApiRoutes, TypeBoxTypeProvider } from './http/type-provider.ts';
import { webhookRoutes } from './http/webhook-routes.ts';
import { clientErrorHandler, frameworkErrors } from './http/wire-errors.ts';
import type { SecretSealer } from './secrets.ts';
import type { ServiceStore } from './store.ts';
import { WebhookDelivery } from './webhooks/delivery.ts';
import type { DestinationPolicy } from './webhooks/destinations.ts';

export const API_PREFIX = '/api/v1';
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
export const BODY_LIMIT_BYTES = 1024 * 1024;

export type BuildAppOptions = {
  store: ServiceStore;
  secrets: SecretSealer;
  mode: ServiceMode;
  /** A pino logger (or any fastify-compatible one); omitted = silent. */
  logger?: FastifyBaseLogger;
  /** Route plugins mounted under /api/v1 behind authentication; default: routes.ts. */
  routes?: readonly ApiRoutes[];
  /** Real time source, for the company clocks. */
  realNow?: () => number;
  /** Production mode only: the real tax authority behind the port (service/authority/port.ts). */
  authority?: TaxAuthority;
  /** Sandbox mode only: reach the simulated authority in-process (default) or over the wire. */
  sandboxTransport?: SandboxTransport;
  /** How long a request may take to arrive (http/timeouts.ts); default: BALCAO_REQUEST_TIMEOUT_MS or 30 s. */
  requestTimeoutMs?: number;
  /** GET /metrics also reports the process's own metrics (the service process; not in-process tests). */
  processMetrics?: boolean;
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP without (loopback only, service/main.ts). */
  tls?: { cert: string; key: string };
  /** Where companies' webhooks may point (webhooks/destinations.ts); default any address. */
  webhookDestinations?: DestinationPolicy;
  /** The operator's token (BALCAO_OPERATOR_TOKEN): turns on /api/v1/operador (operator-rates.ts). */
  operatorToken?: string;
};

export type ServiceApp = FastifyInstance & { deps: ServiceDeps };

const notJson = () => new ApiError('tipo_de_conteudo_invalido', 'O corpo da requisição deve ser JSON em UTF-8 (Content-Type: application/json).');

export function buildApp(options: BuildAppOptions): ServiceApp {
  const deps = createServiceDeps(options);
  const app = createFastify(options);

  app.decorate('deps', deps);
  // An expectation other than 100-continue (the only one HTTP defines) is ignored and the request
  // served as without it, which HTTP allows: Node's own 417 would have no contract body.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));
  // Added first so it runs last: onClose hooks run newest first, and the document queues (whose
  // in-flight work may still be talking to the sandbox) stop in the route plugins' hooks.
  app.addHook('onClose', async () => deps.authority.close());

  // Webhook outbox delivery lives as long as the app: started when ready, stopped on close
  // (after the HTTP server, before the caller closes the store). Built here so a malformed
  // BALCAO_WEBHOOK_BACKOFF_MS fails the start instead of the first delivery.
  const webhookDelivery = new WebhookDelivery({
    store: deps.store,
    secrets: deps.secrets,
    logger: app.log,
    ...(options.webhookDestinations && { destinations: options.webhookDestinations }),
  });
  app.addHook('onReady', async () => webhookDelivery.start());
  app.addHook('onClose', async () => webhookDelivery.stop());

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  acceptJsonOnly(app);
  requestHooks(app, deps);
  describeInOpenApi(app, options.mode);
  operationalRoutes(app, deps);
  operatorRoutes(app, deps, operatorTokenHash(options.operatorToken));
  // The PSP's call carries no company token: its URL's secret says whose it is (pix/routes.ts).
  pixWebhookReceiver(app, deps);

  void app.register(
    async (api) => {
      api.addHook('onRequest', authenticate(deps.store));
      if (options.mode === 'sandbox') await api.register(sandboxRoutes, { deps });
      await api.register(webhookRoutes, { deps });
      for (const routes of options.routes ?? documentRoutes) await api.register(routes, { deps });
    },
    { prefix: API_PREFIX },
  );

  return app as unknown as ServiceApp;
}

type App = ReturnType<typeof createFastify>;

/** The server: TLS when configured, limits, timeouts, the contract's answers to what Node refuses, Ajv's options. */
function createFastify(options: BuildAppOptions) {
  const timeouts = httpTimeouts(options.requestTimeoutMs ?? requestTimeoutFromEnv());
  // Fastify's types would follow the `https` option to another server type (hence `as object`);
  // the routes only ever see requests and replies, the same either way.
  const https = options.tls ? ({ https: { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' } } as object) : {};
  return Fastify({
    ...https,
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Answers of Node's parser and of the router, in the contract's shape (http/wire-errors.ts).
    clientErrorHandler: clientErrorHandler(options.logger),
    frameworkErrors,
    // Slow clients are cut (408) so they cannot pile up; slow answers are not (http/timeouts.ts).
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: {
      requestTimeout: timeouts.requestTimeout,
      headersTimeout: timeouts.headersTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
      // An HTTP/1.1 request without Host is refused below, with the contract's body; Node's own
      // refusal has none.
      requireHostHeader: false,
    },
    // Our own 503 (below) speaks the contract's error body; fastify's would not.
    return503OnClosing: false,
    // Request ids are ours (UUIDs), never taken from a client header that could forge log lines.
    requestIdHeader: false,
    genReqId: () => randomUUID(),
    ajv: {
      customOptions: {
        coerceTypes: false, // bodies are never coerced; query strings: http/query-coercion.ts
        removeAdditional: false, // an unexpected field is refused, not silently dropped
        useDefaults: true,
        // Every problem at once, so a caller fixes a payload in one round; the body limit bounds
        // the cost that makes fastify default this off.
        allErrors: true,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** JSON in UTF-8 and nothing else: text/plain (a fastify default) and other charsets are 415. */
function acceptJsonOnly(app: App): void {
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset && !/^utf-?8$/i.test(charset)) {
      done(notJson(), undefined);
      return;
    }
    parseJson(request, body as string, (error, parsed) => {
      // The parser says only "invalid JSON" for a forbidden key: name the key instead.
      const field = error ? forbiddenKeyField(body as string) : undefined;
      done(field ? forbiddenKey(field) : error, parsed);
    });
  });
}

/** Every request: its id, the Host HTTP/1.1 requires, 503 while closing, the company's Date, one read scope. */
function requestHooks(app: App, deps: ServiceDeps): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (request.headers.host === undefined && (httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1))) {
      throw invalidRequest('Requisição HTTP/1.1 sem o cabeçalho Host.', [{ field: 'Host', message: 'obrigatório em HTTP/1.1' }]);
    }
    if (closing) {
      throw new ApiError('servico_indisponivel', 'O serviço está sendo encerrado; tente novamente em instantes.', {
        headers: { connection: 'close', 'retry-after': '1' },
      });
    }
  });
  // A request that was in flight when closing began ends its keep-alive connection with its
  // response; otherwise the idle socket would hold close() open until the keep-alive timeout.
  app.addHook('onSend', async (request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    // An answer to a company's token is dated by that company's clock, which sandbox mode can
    // move forward (contract 5): a terminal reads HTTP's own Date header to judge the 30-minute
    // cancellation window on the service's time, not on its own clock. In production the
    // company clock is real time, so Date means what it always means.
    if (request.company) {
      const { id } = request.company;
      reply.header('date', (await inReadScope(() => deps.clock.now(id), request.reads)).toUTCString());
    }
    return payload;
  });
  // What a request reads once (read-scope.ts): its scope made first, seeded by the token lookup,
  // and entered from preValidation on (after the body is read: a stream's callbacks would not
  // carry it), so the handler and its continuations share it.
  app.decorateRequest('reads');
  app.addHook('onRequest', (request, _reply, done) => {
    request.reads = new Map();
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => inReadScope(done, request.reads));
  app.addHook('preValidation', coerceQueryAndParams);
}

/** The OpenAPI document the routes' schemas describe (served at OPENAPI_PATH). */
function describeInOpenApi(app: App, mode: BuildAppOptions['mode']): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Balcão: API de emissão de NFC-e, NF-e de devolução e MDF-e',
        version: '1',
        description:
          'Autenticação: Authorization: Bearer <token da empresa>. Erros: { error: { code, message, details? } }. ' +
          (mode === 'sandbox' ? 'Modo sandbox: autoridade fiscal simulada.' : 'Modo produção.'),
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Token da empresa (blc_...)' },
          operatorAuth: { type: 'http', scheme: 'bearer', description: 'Token do operador do serviço (BALCAO_OPERATOR_TOKEN)' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
  });
}

/** What a company is warned about (in words): next year's IBS/CBS rates, when it writes the groups. */
async function companyNotices(deps: ServiceDeps, companyId: string): Promise<string[]> {
  const now = await deps.clock.now(companyId);
  // A certificate out of its validity is the issuance's business, not the health check's.
  const issuer = await deps.companies.issuer(companyId, now).catch(() => undefined);
  const emitter = issuer?.emitter;
  if (!emitter || (emitter.crt !== 3 && emitter.ibsCbs?.optIn !== true)) return [];
  const warning = ratesWarning(brasiliaDay(now), emitter.ibsCbs?.rates ?? [], emitter.operatorRates ?? [], 'empresa');
  return warning ? [warning.message] : [];
}

/** The operator's API, outside the companies' authentication: its own token (operator-rates.ts). */
function operatorRoutes(app: App, deps: ServiceDeps, tokenHash: Buffer | undefined): void {
  const onRequest = async (request: { headers: { authorization?: string } }) => assertOperator(tokenHash, request.headers.authorization);
  const path = `${API_PREFIX}/operador/aliquotas-ibscbs`;
  const tags = ['Operador'];
  const security = [{ operatorAuth: [] }];
  app.get(
    path,
    {
      onRequest,
      schema: { tags, security, summary: 'Alíquotas do IBS/CBS definidas pelo operador para todas as empresas', response: { 200: OperatorRatesAnswer } },
    },
    async () => operatorRates(deps.store, deps.clock.real()),
  );
  app.put(
    path,
    {
      onRequest,
      schema: { tags, security, summary: 'Substitui as alíquotas do IBS/CBS do operador', body: OperatorRatesBody, response: { 200: OperatorRatesAnswer } },
    },
    async (request) => replaceOperatorRates(deps.store, (request.body as { periodos: unknown }).periodos, 'periodos', deps.clock.real()),
  );
}

/** Outside /api/v1 and its authentication: liveness, readiness, metrics, the OpenAPI document. */
function operationalRoutes(app: App, deps: ServiceDeps): void {
  // Liveness: the process answers (the database is /readyz's business: a process is not
  // restarted because its database is away). With a company's token, also what the service last
  // learned of that company's tax authority, so a terminal can issue in offline contingency
  // without waiting on a sale to find out.
  // With the token, also the company's warnings in words (next year's IBS/CBS rates, on the
  // company's clock), which the terminal shows its manager.
  app.get('/healthz', { schema: { hide: true }, onRequest: identifyIfPresent(deps.store) }, async (request) => {
    if (!request.company) return { status: 'ok' };
    const id = request.company.id;
    const avisos = await companyNotices(deps, id);
    return { status: 'ok', autoridade: deps.authority.availability.of(id), ...(avisos.length > 0 && { avisos }) };
  });

  // Readiness: the database answers and its schema is the one this code ships. A load balancer
  // sends traffic only to a ready process; 503 in the contract's shape otherwise.
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      await deps.store.checkReady();
    } catch (err) {
      throw new ApiError('servico_indisponivel', `O serviço não está pronto: ${(err as Error).message}`, { headers: { 'retry-after': '5' } });
    }
    // Ready whatever the rates say (a store sells with the provisional one), but the operator is
    // told, in words, when next year's rates are not all stated (from 1 December).
    const aviso = (await operatorRates(deps.store, deps.clock.real())).aviso;
    return aviso ? { status: 'ok', avisos: [aviso] } : { status: 'ok' };
  });

  // Prometheus (metrics.ts). Open like /healthz: counts and durations, nothing of a company's.
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => reply.type(deps.metrics.contentType).send(await deps.metrics.text()));

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
