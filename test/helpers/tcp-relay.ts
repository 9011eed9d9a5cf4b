// A TCP relay on 127.0.0.1 in front of a server (the test run's PostgreSQL, for the outage
// tests): a service pointed at the relay reaches the real server through it, until `cut()` drops
// every connection and refuses new ones, as a database host that went away; `restore()` takes
// connections again on the same port, as the database coming back.

import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type TcpRelay = {
  readonly port: number;
  /** Drops every connection; new ones are refused until `restore()`. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
};

export async function tcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const cut = async () => {
    const closed = stopListening();
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return { port, cut, restore: () => listen(port), close: cut };
}
