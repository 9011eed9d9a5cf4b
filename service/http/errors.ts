// The error contract of every endpoint (docs/api.md, "Errors"): one body shape,
// `{ error: { code, message, details?: [{ field, message }] } }`, fixed codes, messages in
// Portuguese, field paths in the API's dotted style (`det[0].prod.NCM`). Whatever goes wrong,
// the caller gets this shape; stack traces and internal messages go to the log only.

import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { FieldError, type FieldIssue } from '../../fiscal/errors.ts';
import { AuthorityCertificateError } from '../authority/port.ts';
import { isDatabaseUnavailable } from '../database-faults.ts';
import { ERROR_STATUS, ErrorBody, type ErrorCode } from '../../base/common/api/errors.ts';
import { PATTERN_NAMES } from '../../base/common/api/schema.ts';
import { systemFault } from '../../base/node/system-faults.ts';

export { ERROR_STATUS, ErrorBody, type ErrorCode } from '../../base/common/api/errors.ts';

export type ErrorDetail = FieldIssue;

/** Response schemas of the given error statuses, for a route's OpenAPI description. */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<S, typeof ErrorBody>;
}

export type ApiErrorOptions = {
  details?: ErrorDetail[];
  /** Response headers (Retry-After, WWW-Authenticate, ...). */
  headers?: Record<string, string>;
  /** The id of the document concerned (409 em_processamento). */
  id?: string;
  /** The tax authority's refusal behind a 422 validacao (an event or an inutilização it rejected). */
  rejeicao?: { cStat: string; xMotivo: string };
};

/** An error meant for the caller: thrown anywhere in a request, answered as the contract says. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    const { details, id, rejeicao } = this.options;
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (details?.length) error.details = details;
    if (rejeicao) error.rejeicao = rejeicao;
    // The contract says the 409 "carries the id": in the error and at the top level, where a
    // client reads a document's id in every other response.
    if (id !== undefined) return { error: { ...error, id }, id };
    return { error };
  }
}

export const notFound = (message = 'Recurso não encontrado.'): ApiError => new ApiError('nao_encontrado', message);

export const invalidRequest = (message: string, details?: ErrorDetail[]): ApiError => new ApiError('requisicao_invalida', message, details ? { details } : {});

// --- schema validation → details ------------------------------------------------------------

const MAX_DETAILS = 50;

const ROOT_FIELD: Record<string, string> = { body: 'corpo', querystring: 'consulta', params: 'caminho', headers: 'cabeçalhos' };

/** JSON pointer (`/det/0/prod/NCM`) → API path (`det[0].prod.NCM`). */
/**
 * Where a JSON text holds a key the service refuses (a `__proto__`, or a `constructor` object
 * with a `prototype`: prototype poisoning), as a field path; undefined when it holds none or is
 * not JSON. JSON.parse keeps such keys as plain own properties, so they can be looked for.
 */
export function forbiddenKeyField(text: string): string | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  const walk = (node: unknown, path: string): string | undefined => {
    if (node === null || typeof node !== 'object') return undefined;
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) {
        const found = walk(item, `${path}[${i}]`);
        if (found) return found;
      }
      return undefined;
    }
    const at = (key: string) => (path ? `${path}.${key}` : key);
    if (Object.hasOwn(node, '__proto__')) return at('__proto__');
    const ctor = (node as Record<string, unknown>).constructor;
    if (Object.hasOwn(node, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return at('constructor');
    for (const [key, value] of Object.entries(node)) {
      const found = walk(value, at(key));
      if (found) return found;
    }
    return undefined;
  };
  return walk(root, '');
}

/** 400 naming a key refused as prototype poisoning. */
export const forbiddenKey = (field: string): ApiError =>
  invalidRequest('O corpo da requisição tem uma chave proibida.', [
    { field, message: 'chave não permitida (__proto__ ou constructor com prototype): remova-a do JSON' },
  ]);

export function apiFieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(?:0|[1-9][0-9]*)$/.test(segment)) out += `[${segment}]`;
    else out += (out ? '.' : '') + segment;
  }
  return out;
}

const joinField = (base: string, name: string): string => (base ? `${base}.${name}` : name);

const TYPE_NAMES: Record<string, string> = {
  string: 'texto',
  integer: 'número inteiro',
  number: 'número',
  boolean: 'booleano (true ou false)',
  object: 'objeto',
  array: 'lista',
  null: 'nulo',
};

const FORMAT_NAMES: Record<string, string> = {
  uri: 'URL absoluta',
  url: 'URL absoluta',
  uuid: 'UUID',
  date: 'data AAAA-MM-DD',
  'date-time': 'data e hora ISO 8601',
  email: 'e-mail',
};

const plural = (n: unknown, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function messageOf(e: FastifySchemaValidationError): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
    case 'dependentRequired':
      return 'obrigatório';
    case 'additionalProperties':
      return 'campo não permitido';
    case 'type':
      return `deve ser ${String(p.type)
        .split(',')
        .map((t) => TYPE_NAMES[t] ?? t)
        .join(' ou ')}`;
    case 'minLength':
      return p.limit === 1 ? 'não pode ser vazio' : `deve ter no mínimo ${plural(p.limit, 'caractere', 'caracteres')}`;
    case 'maxLength':
      return `deve ter no máximo ${plural(p.limit, 'caractere', 'caracteres')}`;
    case 'pattern': {
      const named = PATTERN_NAMES[String(p.pattern)];
      return named ? `formato inválido (esperado ${named})` : `formato inválido (padrão ${String(p.pattern)})`;
    }
    case 'format':
      return `formato inválido (esperado ${FORMAT_NAMES[String(p.format)] ?? String(p.format)})`;
    case 'enum':
      return `deve ser um destes valores: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `deve ser ${JSON.stringify(p.allowedValue)}`;
    case 'minimum':
      return `deve ser no mínimo ${String(p.limit)}`;
    case 'maximum':
      return `deve ser no máximo ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `deve ser maior que ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `deve ser menor que ${String(p.limit)}`;
    case 'multipleOf':
      return `deve ser múltiplo de ${String(p.multipleOf)}`;
    case 'minItems':
      return `deve ter no mínimo ${plural(p.limit, 'item', 'itens')}`;
    case 'maxItems':
      return `deve ter no máximo ${plural(p.limit, 'item', 'itens')}`;
    case 'uniqueItems':
      return 'não pode ter itens repetidos';
    case 'minProperties':
      return `deve ter no mínimo ${plural(p.limit, 'campo', 'campos')}`;
    case 'maxProperties':
      return `deve ter no máximo ${plural(p.limit, 'campo', 'campos')}`;
    case 'anyOf':
    case 'oneOf':
      return 'não corresponde a nenhuma das formas aceitas';
    default:
      return 'inválido';
  }
}

/** Ajv errors of one request part → contract details (deduplicated, unions summarised). */
export function validationDetails(errors: FastifySchemaValidationError[], context: string): ErrorDetail[] {
  const root = ROOT_FIELD[context] ?? context;
  // A union (anyOf/oneOf) reports every branch's failure and then itself; the branches are
  // noise for the caller, except that a union of constants is best told as its list of values.
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const inside = (e: FastifySchemaValidationError, u: FastifySchemaValidationError) => e !== u && e.schemaPath.startsWith(u.schemaPath + '/');
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (unions.some((u) => inside(e, u))) continue;
    let path = apiFieldPath(e.instancePath);
    if (context !== 'body' && path === '' && e.keyword !== 'required' && e.keyword !== 'additionalProperties') path = root;
    let field = path;
    if (e.keyword === 'required' || e.keyword === 'dependentRequired') field = joinField(path, String(e.params.missingProperty));
    else if (e.keyword === 'additionalProperties') field = joinField(path, String(e.params.additionalProperty));
    let message = messageOf(e);
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      const branches = errors.filter((b) => inside(b, e));
      if (branches.length && branches.every((b) => b.keyword === 'const' && b.instancePath === e.instancePath)) {
        message = `deve ser um destes valores: ${branches.map((b) => JSON.stringify(b.params.allowedValue)).join(', ')}`;
      }
    }
    field ||= root;
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push({ field, message });
    if (details.length === MAX_DETAILS) break;
  }
  return details;
}

/** Whether two fields are the same, or one lies inside the other (`det[0]` and `det[0].prod.NCM`). */
const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}.`) || a.startsWith(`${b}[`) || b.startsWith(`${a}.`) || b.startsWith(`${a}[`);

/**
 * The 400 of a body whose shape is wrong, also naming the value problems (what a 422 validacao
 * would name) of the parts whose shape is right, so that a payload is fixed in one round
 * (docs/api.md, "Errors"). A value problem on a field the shape already names, or inside or
 * around it, is left out: the shape's is the one to fix, and the value is judged again after.
 */
export function withValueIssues(shape: ApiError, values: readonly FieldIssue[]): ApiError {
  const shapeDetails = shape.options.details ?? [];
  const more = values.filter((v) => !shapeDetails.some((d) => overlaps(d.field, v.field)));
  if (more.length === 0) return shape;
  return new ApiError(shape.code, shape.message, { ...shape.options, details: [...shapeDetails, ...more].slice(0, MAX_DETAILS) });
}

// --- the handlers ---------------------------------------------------------------------------

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Status of a FieldError thrown by the route: 422 `validacao` (default) or 400. */
    fieldErrorStatus?: 400 | 422;
  }
}

const INTERNAL_MESSAGE = 'Erro interno do serviço. A falha foi registrada; tente novamente em instantes.';

/** The database cannot answer now (database-faults.ts): retry, with the same idempotency key for an issuance. */
const databaseUnavailable = (): ApiError =>
  new ApiError(
    'servico_indisponivel',
    'O banco de dados do serviço não está respondendo agora. Tente novamente em instantes (com a mesma chave de idempotência).',
    {
      headers: { 'retry-after': '5' },
    },
  );

const PART_NAMES: Record<string, string> = {
  body: 'no corpo',
  querystring: 'nos parâmetros de consulta',
  params: 'no caminho',
  headers: 'nos cabeçalhos',
};

/** Any error thrown while serving a request → the ApiError the caller sees. */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof FieldError) {
    return request.routeOptions.config?.fieldErrorStatus === 400
      ? new ApiError('requisicao_invalida', 'Requisição inválida.', { details: error.issues })
      : new ApiError('validacao', 'Os dados não passaram na validação.', { details: error.issues });
  }
  if (error instanceof AuthorityCertificateError) {
    // The authority refused the company's certificate at the TLS handshake: nothing was sent,
    // and nothing will be until the certificate is fixed. The message names the certificate.
    return new ApiError('validacao', 'A SEFAZ recusou o certificado digital da empresa; nada foi enviado.', {
      details: [{ field: 'certificado', message: error.message }],
    });
  }
  const e = error as Partial<FastifyError> & { validation?: FastifySchemaValidationError[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const context = e.validationContext ?? 'body';
    return new ApiError('requisicao_invalida', `Campos inválidos ${PART_NAMES[context] ?? 'na requisição'}; veja os detalhes.`, {
      details: validationDetails(e.validation, context),
    });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('tipo_de_conteudo_invalido', 'O corpo da requisição deve ser JSON (Content-Type: application/json).');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_muito_grande', 'O corpo da requisição excede o limite de 1 MiB.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('requisicao_invalida', 'JSON malformado no corpo da requisição.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('requisicao_invalida', 'Corpo vazio com Content-Type application/json: envie um objeto JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('requisicao_invalida', 'O tamanho do corpo não confere com o cabeçalho Content-Length.');
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  // The machine failed (a full disk, a read-only folder): nothing was done, and the same request
  // will work once the operator fixes it. 503 with Retry-After, so a client retries later.
  const fault = systemFault(error);
  if (fault) return new ApiError('servico_indisponivel', `O serviço de emissão não pôde gravar: ${fault.message}`, { headers: { 'retry-after': '30' } });
  // Other client errors raised by the framework (bad URL encoding, ...): keep the status class,
  // never the English text.
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 404) return notFound();
  if (status === 413) return new ApiError('payload_muito_grande', 'O corpo da requisição excede o limite de 1 MiB.');
  if (status === 415) return new ApiError('tipo_de_conteudo_invalido', 'O corpo da requisição deve ser JSON (Content-Type: application/json).');
  if (status >= 400 && status < 500) return new ApiError('requisicao_invalida', 'Requisição inválida.');
  return new ApiError('erro_interno', INTERNAL_MESSAGE);
}

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.options.headers ?? {})) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

/** fastify setErrorHandler: the contract body for everything, details of 5xx only in the log. */
export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = toApiError(error, request);
  if (apiError.status >= 500 && !(error instanceof ApiError)) {
    // In the operator's console, the sentence that says what to do (a fault of the machine).
    request.log.error({ err: error }, apiError.code === 'servico_indisponivel' ? apiError.message : 'erro interno ao atender a requisição');
  } else {
    request.log.debug({ code: apiError.code, status: apiError.status }, apiError.message);
  }
  return sendApiError(reply, apiError);
}

/** fastify setNotFoundHandler: unknown route (or a route absent in this mode). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/**
 * No route for this method and path: 405 with `Allow` when the path is known under other methods
 * (RFC 9110 15.5.6), 404 otherwise.
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  const allowed = METHODS.filter((method) => method !== request.method && request.server.findRoute({ method, url: path }));
  if (allowed.length) {
    return sendApiError(
      reply,
      new ApiError('metodo_nao_permitido', `Método ${request.method} não permitido em ${path}; use ${allowed.join(', ')}.`, {
        headers: { allow: allowed.join(', ') },
      }),
    );
  }
  return sendApiError(reply, notFound(`Rota não encontrada: ${request.method} ${path}`));
}
