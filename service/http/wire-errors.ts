// The error contract (docs/api.md, "Errors") for what never becomes a fastify request: bytes
// Node's HTTP parser refuses (a control character in a header, headers over its limit, an
// unknown method, broken chunked encoding, a request too slow to arrive), and URLs the router
// refuses before any route or hook runs (broken percent-encoding, a path segment too long).
// Node and fastify would answer those themselves with bodies of their own; these answer with
// the contract's body and an X-Request-Id, like every other answer.

import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendApiError, toApiError } from './errors.ts';

const malformed = (message: string) => new ApiError('requisicao_invalida', message);

/** Node's parser and connection errors (err.code) → the answer, in Portuguese. */
export function parserError(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'cabecalhos_muito_grandes',
        'A linha de requisição (método e URL) e os cabeçalhos excedem juntos o limite de 16 KiB; encurte a URL ou os cabeçalhos.',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('tempo_esgotado', 'A requisição não chegou inteira (cabeçalhos e corpo) no tempo permitido; envie-a de novo.');
    case 'HPE_INVALID_METHOD':
      return malformed('Método HTTP desconhecido; use GET, POST, PUT ou DELETE.');
    case 'HPE_INVALID_HEADER_TOKEN':
      return malformed('Cabeçalho HTTP inválido: nome ou valor com caractere não permitido (caracteres de controle, por exemplo).');
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return malformed('Corpo com enquadramento inválido (Content-Length ou Transfer-Encoding: chunked malformados ou conflitantes).');
    case 'HPE_INVALID_URL':
      return malformed('URL inválida na linha de requisição.');
    case 'HPE_INVALID_VERSION':
      return malformed('Versão do protocolo HTTP inválida; use HTTP/1.1.');
    default:
      return malformed('Requisição HTTP malformada.');
  }
}

/** The whole HTTP/1.1 answer, head and body, for writing straight to a socket. */
export function rawAnswer(error: ApiError, requestId: string, now = new Date()): string {
  const body = JSON.stringify(error.toBody());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    `Date: ${now.toUTCString()}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const SOCKET_LINGER_MS = 2_000;

type InFlight = { _httpMessage?: { headersSent?: boolean } | null };

/**
 * fastify's clientErrorHandler: answers a connection whose bytes Node could not take as a
 * request (or took too long to arrive), then closes it. Nothing is written when the peer is gone
 * or a response has already begun on the socket (it would corrupt that response).
 */
export function clientErrorHandler(log: FastifyBaseLogger | undefined) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const answering = (socket as Socket & InFlight)._httpMessage;
    if (!socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    const error = parserError(err.code);
    const requestId = randomUUID();
    log?.debug({ reqId: requestId, code: err.code, status: error.status }, 'requisição recusada pelo parser HTTP');
    // Closed once the answer is handed to the kernel, or soon in any case: a peer that reads
    // nothing must not keep the socket.
    socket.end(rawAnswer(error, requestId), () => socket.destroy());
    setTimeout(() => socket.destroy(), SOCKET_LINGER_MS).unref();
  };
}

/**
 * fastify's frameworkErrors: errors raised while routing, before any hook runs (so the
 * X-Request-Id of the onRequest hook is set here).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  let apiError: ApiError;
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      apiError = malformed('URL com codificação percentual inválida (%XX) no caminho.');
      break;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      apiError = new ApiError('uri_muito_longa', 'Um segmento do caminho da URL excede 100 caracteres.');
      break;
    default:
      apiError = toApiError(error, request);
  }
  void sendApiError(reply, apiError);
}
