// A load balancer for tests: an HTTP proxy on 127.0.0.1 that hands each request to the next
// backend in turn (per request, not per connection, as an HTTP load balancer does), and counts
// what each one got. A backend that refuses the connection (its process died) is taken out of
// the rotation and the request goes to the next one, as a balancer's failed health check would;
// a request already sent to a backend that dies answers 502: the client does not know whether it
// was done, exactly as behind a real balancer.

import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RoundRobinProxy = {
  readonly url: string;
  /** Requests each backend received, by its URL. */
  readonly served: ReadonlyMap<string, number>;
  /** Takes a backend out of the rotation (before killing it, say). */
  remove(backendUrl: string): void;
  close(): Promise<void>;
};

export async function roundRobinProxy(backendUrls: readonly string[]): Promise<RoundRobinProxy> {
  const backends = backendUrls.map((u) => new URL(u));
  const live = new Set(backendUrls);
  const served = new Map(backendUrls.map((u) => [u, 0]));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;

  const pick = (): URL | undefined => {
    for (let i = 0; i < backends.length; i++) {
      const b = backends[next++ % backends.length]!;
      if (live.has(b.origin)) return b;
    }
    return undefined;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tries: number): void => {
    const backend = pick();
    if (!backend) {
      res.writeHead(502).end();
      return;
    }
    served.set(backend.origin, (served.get(backend.origin) ?? 0) + 1);
    const upstream = httpRequest(
      { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, host: backend.host }, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' && tries < backends.length) {
        live.delete(backend.origin);
        forward(req, res, body, tries + 1);
      } else if (!res.headersSent) {
        res.writeHead(502).end();
      } else {
        res.destroy();
      }
    });
    upstream.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    remove: (backendUrl) => live.delete(new URL(backendUrl).origin),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
