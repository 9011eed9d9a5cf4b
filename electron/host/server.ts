// Browser mode: the checkout screen (renderer/dist) served to a local browser, and the terminal
// core reached over HTTP and WebSocket instead of Electron IPC (protocol: electron/api/
// bridge-protocol.ts). Same dispatch as IPC (electron/ipc.ts).
//
// Who may drive the terminal: only a page that knows the per-start secret, which travels in the
// URL fragment printed at start (never sent over the network by a browser). On top of it:
// - bound to 127.0.0.1 unless the caller names another interface;
// - the Host header must be one of our names (DNS rebinding);
// - no CORS allowance is ever granted, so a foreign page cannot send the Authorization header;
// - calls carrying a foreign Origin are refused, and the events socket demands our Origin too;
// - a strict CSP and no-sniff / no-referrer / no-framing headers on every response.

import { createReadStream, existsSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino from 'pino';
import { DOWNLOADS_PATH, EVENTS_PATH, isDownloadName, RPC_PATH, SECRET_PARAM, type BridgeResult } from '../api/bridge-protocol.ts';
import type { TerminalApi, TerminalErrorData, TerminalEvent } from '../api/terminal-api.ts';
import { dispatch, INTERNAL_ERROR } from '../ipc.ts';
import { allowedHost, bearer, hostNames, newSecret, ownOrigins, sameSecret, securityHeaders } from './security.ts';

export type BrowserHostOptions = {
  terminal: TerminalApi;
  /** The built screen (renderer/dist). When missing, pages answer 503 saying so; the API still works. */
  staticDir: string;
  /** 0 (default): a free port. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. Anything else exposes the terminal to that network. */
  host?: string;
  /** Default: warnings and errors on stderr. */
  logger?: FastifyBaseLogger;
  /**
   * The folder of the files the terminal made for the manager to take away (the accountant's
   * exports, Terminal.exportsDir), served at DOWNLOADS_PATH to the page that holds the secret:
   * a browser cannot be handed a native folder dialog, so the file is a download.
   */
  downloadsDir?: string;
  /** The terminal's data folder, named in the words of a fault of the machine (a full disk). */
  dataDir?: string;
};

export type BrowserHost = {
  /** `http://127.0.0.1:<port>/#chave=<secret>`: what the browser opens. */
  url: string;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  port: number;
  secret: string;
  close(): Promise<void>;
};

/** CSV catalogs and .pfx files travel in the body; nothing else comes close. */
const BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** A screen that stops reading its socket is cut off rather than growing our memory. */
const MAX_SOCKET_BACKLOG_BYTES = 4 * 1024 * 1024;

/** What we use of a `ws` socket (the package ships no types here). */
type EventSocket = {
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'close' | 'message' | 'error', listener: () => void): void;
};

const errorBody = (error: TerminalErrorData): BridgeResult => ({ error });

export async function startBrowserHost(options: BrowserHostOptions): Promise<BrowserHost> {
  const { terminal } = options;
  const bindHost = options.host ?? '127.0.0.1';
  const staticDir = resolve(options.staticDir);
  const secret = newSecret();
  const log = options.logger ?? pino({ name: 'balcao-host', level: 'warn' }, pino.destination(2));

  // No request logging: the events URL carries the secret in its query string.
  const app = Fastify({
    loggerInstance: log,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: false,
  });
  // Known once listening (the port may be chosen by the OS); every hook below reads these.
  let names: string[] = [];
  let origins: string[] = [];
  let headers: Record<string, string> = {};

  // JSON only: text/plain (a fastify default) would let a foreign page post without a preflight.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));

  app.addHook('onRequest', async (req, reply) => {
    // A refused WebSocket upgrade is answered on a socket no HTTP parser owns any more: close
    // it once the answer is out, or it would linger (and hold up close()). An accepted upgrade
    // never finishes this response.
    if (req.headers.upgrade !== undefined) {
      reply.header('connection', 'close');
      reply.raw.once('finish', () => req.raw.socket.end());
    }
    if (!allowedHost(req.headers.host, names)) {
      return reply.code(421).header('content-type', 'text/plain; charset=utf-8').send('Endereço não reconhecido por este terminal');
    }
  });
  app.addHook('onSend', async (req, reply, payload) => {
    reply.headers(headers);
    if (req.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
    return payload;
  });

  app.setErrorHandler((err: { statusCode?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) {
      // The route pattern, not the URL: the events URL carries the secret.
      req.log.error({ err, route: req.routeOptions.url }, 'erro interno no host do terminal');
      return reply.code(500).send(errorBody({ ...INTERNAL_ERROR }));
    }
    const message =
      status === 413 ? 'Requisição grande demais' : status === 415 ? 'O corpo deve ser JSON (Content-Type: application/json)' : 'Requisição inválida';
    return reply.code(status).send(errorBody({ code: 'estado_invalido', message, field: 'body' }));
  });

  const foreignOrigin = (req: FastifyRequest) => req.headers.origin !== undefined && !origins.includes(req.headers.origin);

  // Checked before the body is read: an unauthenticated caller costs us nothing.
  const authorize = async (req: FastifyRequest, reply: FastifyReply) => {
    if (foreignOrigin(req)) return reply.code(403).send(errorBody({ code: 'estado_invalido', message: 'Origem não autorizada' }));
    if (!sameSecret(bearer(req.headers.authorization), secret)) {
      return reply.code(401).send(errorBody({ code: 'estado_invalido', message: 'Chave de acesso do terminal ausente ou inválida' }));
    }
  };

  app.post<{ Params: { method: string }; Body: unknown }>(`${RPC_PATH}/:method`, { onRequest: authorize }, async (req, reply) => {
    const body = req.body as { args?: unknown } | null | undefined;
    const out = await dispatch(terminal, req.params.method, body && typeof body === 'object' ? body.args : undefined, {
      onInternalError: (err, method) => req.log.error({ err, method }, 'erro interno ao executar chamada do terminal'),
      dataDir: options.dataDir,
    });
    return reply.code(out.status).send(out.body);
  });

  // A file the terminal made (exportDocuments), streamed to the page that asked for it. Only
  // plain names the terminal itself gives (bridge-protocol.ts isDownloadName), only from its folder.
  app.get<{ Params: { name: string } }>(`${DOWNLOADS_PATH}/:name`, { onRequest: authorize }, async (req, reply) => {
    const dir = options.downloadsDir;
    const name = req.params.name;
    const file = dir && isDownloadName(name) ? join(dir, name) : undefined;
    if (!file || !existsSync(file) || !statSync(file).isFile())
      return reply.code(404).send(errorBody({ code: 'nao_encontrado', message: 'Arquivo não encontrado' }));
    return reply
      .type('application/zip')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('content-length', String(statSync(file).size))
      .send(createReadStream(file));
  });

  await app.register(fastifyWebsocket, { options: { maxPayload: 1024 } });
  const sockets = new Set<EventSocket>();
  app.get<{ Querystring: Record<string, string | undefined> }>(
    EVENTS_PATH,
    {
      websocket: true,
      // Runs before the upgrade: a refusal here is a plain HTTP answer and no socket is opened.
      onRequest: async (req, reply) => {
        if (req.headers.origin === undefined || foreignOrigin(req))
          return reply.code(403).send(errorBody({ code: 'estado_invalido', message: 'Origem não autorizada' }));
        if (!sameSecret(req.query[SECRET_PARAM], secret)) {
          return reply.code(401).send(errorBody({ code: 'estado_invalido', message: 'Chave de acesso do terminal ausente ou inválida' }));
        }
      },
    },
    (socket: EventSocket) => {
      sockets.add(socket);
      const off = terminal.subscribe((event: TerminalEvent) => {
        if (socket.readyState !== 1) return;
        if (socket.bufferedAmount > MAX_SOCKET_BACKLOG_BYTES) return socket.close(1013, 'fila cheia');
        socket.send(JSON.stringify(event));
      });
      const done = () => {
        off();
        sockets.delete(socket);
      };
      socket.on('close', done);
      socket.on('error', done);
      // The socket carries events one way: the screen talks over RPC.
      socket.on('message', () => socket.close(1008, 'somente leitura'));
    },
  );

  const haveScreen = existsSync(resolve(staticDir, 'index.html'));
  if (haveScreen) {
    await app.register(fastifyStatic, { root: staticDir, index: 'index.html', dotfiles: 'deny', serve: true });
  }
  app.setNotFoundHandler((req, reply) => {
    if (req.method === 'GET' && !req.url.startsWith('/api/') && (req.headers.accept ?? '').includes('text/html')) {
      // A page reload on a client-side route gets the screen; without a screen, say why. A
      // missing asset stays a 404 (never index.html posing as a script).
      if (haveScreen) return reply.type('text/html; charset=utf-8').sendFile('index.html');
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('A tela do caixa não está compilada (renderer/dist). Rode npm run build:renderer ou npm start.');
    }
    return reply.code(404).send(errorBody({ code: 'nao_encontrado', message: 'Endereço não encontrado' }));
  });

  await app.listen({ port: options.port ?? 0, host: bindHost });
  const { port } = app.server.address() as AddressInfo;
  names = hostNames(bindHost, port);
  origins = ownOrigins(names);
  headers = securityHeaders(names);
  const origin = `http://${names[0]}`;

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/#${SECRET_PARAM}=${secret}`,
    origin,
    port,
    secret,
    close: () =>
      (closing ??= (async () => {
        for (const s of sockets) s.close(1001, 'terminal encerrando');
        await app.close();
      })()),
  };
}
