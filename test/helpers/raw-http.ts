// HTTP/1.1 over a bare TCP socket, for what fetch refuses to send: header bytes that are not
// UTF-8, a repeated header, control characters, unknown methods, huge request lines, a body
// that trickles in. The request goes out exactly as given; the answer is read until the server
// closes the connection (requests here say `Connection: close`) or `timeoutMs` passes.

import { connect, type Socket } from 'node:net';

export type RawAnswer = {
  /** 0 when the server closed without answering. */
  status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** The body, decoded as UTF-8 (chunked bodies de-chunked). */
  text: string;
  /** The body parsed as JSON when it is JSON, else undefined. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Milliseconds from the first byte sent to the connection's end. */
  closedAfterMs: number;
  /** The connection was ended by the test giving up waiting (answerOf's timeout), not by the server. */
  givenUp?: boolean;
};

/** A URL's host and port. */
export const addressOf = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};

/** Parses what a server sent on one connection (the first response). */
export function parseAnswer(raw: Buffer, closedAfterMs: number): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, text: raw.toString('utf8'), body: undefined, closedAfterMs };
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  let bodyBytes = raw.subarray(end + 4);
  if (headers['content-length'] !== undefined) bodyBytes = bodyBytes.subarray(0, Number(headers['content-length']));
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const line = bodyBytes.indexOf('\r\n', at);
      if (line < 0) break;
      const size = parseInt(bodyBytes.subarray(at, line).toString('latin1'), 16);
      if (!(size > 0)) break;
      parts.push(bodyBytes.subarray(line + 2, line + 2 + size));
      at = line + 2 + size + 2;
    }
    bodyBytes = Buffer.concat(parts);
  }
  const text = bodyBytes.toString('utf8');
  let body: unknown;
  if (/json/i.test(headers['content-type'] ?? '')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status, headers, text, body, closedAfterMs };
}

/** Opens a connection to `url`'s host and port. */
export function openSocket(url: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(addressOf(url), () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Collects everything `socket` receives until it closes (or `timeoutMs` passes, then it is
 * destroyed and the answer has whatever arrived).
 */
export function answerOf(socket: Socket, timeoutMs = 15_000): Promise<RawAnswer> {
  const started = Date.now();
  const chunks: Buffer[] = [];
  let givenUp = false;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve({ ...parseAnswer(Buffer.concat(chunks), Date.now() - started), ...(givenUp && { givenUp }) });
    };
    const timer = setTimeout(() => {
      givenUp = true;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset ends it like a close
    socket.once('close', done);
  });
}

/** Sends `request` (bytes as they are) on a new connection and reads the answer. */
export async function rawRequest(url: string, request: Buffer | string, timeoutMs?: number): Promise<RawAnswer> {
  const socket = await openSocket(url);
  const answer = answerOf(socket, timeoutMs);
  socket.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request);
  return answer;
}

export type RawPost = {
  token: string;
  /** Extra header lines, in order; a value given as a Buffer goes out as those bytes. */
  headers?: [string, string | Buffer][];
  body: unknown;
};

/** The bytes of a JSON POST to `path` with the given headers (repeats allowed), `Connection: close`. */
export function jsonPost(url: string, path: string, { token, headers = [], body }: RawPost): Buffer {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  const head = (name: string, value: string | Buffer) => Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value), Buffer.from('\r\n')]);
  return Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\n`, 'latin1'),
    head('Host', new URL(url).host),
    head('Authorization', `Bearer ${token}`),
    head('Content-Type', 'application/json'),
    head('Content-Length', String(payload.length)),
    head('Connection', 'close'),
    ...headers.map(([name, value]) => head(name, value)),
    Buffer.from('\r\n'),
    payload,
  ]);
}
