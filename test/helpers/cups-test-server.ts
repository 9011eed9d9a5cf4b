// For tests: a private CUPS scheduler (Debian's cupsd, the real one) started by the test itself,
// with its own configuration directory in a temporary folder and listening on a free loopback
// port, so no system print service is assumed or touched. Its queues are raw queues (no
// driver) whose device is a network printer on the AppSocket/JetDirect protocol (CUPS' `socket`
// backend, as for a thermal printer on port 9100), played by `startAppSocketPrinter`: a TCP
// listener on 127.0.0.1 that keeps every job it receives, byte for byte.
//
// The scheduler runs with the distribution's default access policy (cupsd.conf.default), so
// what a job may do here is what it may do on a store's computer. `.ci/run` installs the
// packages (cups-daemon and the `cups` backends).

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const CUPSD = '/usr/sbin/cupsd';
const SERVER_BIN = '/usr/lib/cups';
const DATA_DIR = '/usr/share/cups';

// ---------------------------------------------------------------------------------------------
// The printer at the end of the queue

export type AppSocketPrinter = {
  port: number;
  /** Every job received so far (one connection, one job), in order. */
  jobs(): Buffer[];
  /** Resolves with the next job to be completed from now on. */
  nextJob(): Promise<Buffer>;
  close(): Promise<void>;
};

/** A network printer on 127.0.0.1 (free port, or `port`): reads until the sender ends, then closes. */
export async function startAppSocketPrinter(port = 0): Promise<AppSocketPrinter> {
  const jobs: Buffer[] = [];
  const waiting: ((job: Buffer) => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      const job = Buffer.concat(chunks);
      jobs.push(job);
      for (const w of waiting.splice(0)) w(job);
      // The backend waits for the printer's close as the proof that every byte arrived.
      socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    jobs: () => [...jobs],
    nextJob: () => new Promise<Buffer>((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The scheduler

export type TestQueue = {
  name: string;
  /** socket://127.0.0.1:PORT (an AppSocketPrinter), or any device URI CUPS accepts. */
  device: string;
  /** A stopped queue keeps jobs without printing them (cupsdisable). */
  stopped?: boolean;
  /** A queue that refuses new jobs (cupsreject). */
  rejecting?: boolean;
  /** A queue whose jobs only an authenticated administrator may cancel (stricter than the default policy). */
  noCancel?: boolean;
};

export type CupsTestServer = {
  port: number;
  /** "127.0.0.1:PORT": what SystemQueuePrinter's `localServer` takes. */
  server: string;
  dir: string;
  /** The scheduler's error log (LogLevel debug), for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
};

/** A port nothing listens on right now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function printersConf(queues: readonly TestQueue[]): string {
  return queues
    .map((q) =>
      [
        `<Printer ${q.name}>`,
        `Info ${q.name}`,
        `DeviceURI ${q.device}`,
        `State ${q.stopped ? 'Stopped' : 'Idle'}`,
        ...(q.stopped ? ['StateMessage Pausada pelo teste'] : []),
        `Accepting ${q.rejecting ? 'No' : 'Yes'}`,
        'Shared No',
        'ErrorPolicy stop-printer',
        ...(q.noCancel ? [`OpPolicy ${NO_CANCEL_POLICY}`] : []),
        '</Printer>',
      ].join('\n'),
    )
    .join('\n');
}

const NO_CANCEL_POLICY = 'balcao-sem-cancelar';

/** The distribution's default cupsd.conf (its access policies) with our listener and logging. */
function cupsdConf(port: number): string {
  const defaults = readFileSync(join(DATA_DIR, 'cupsd.conf.default'), 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(Listen|Port|Browsing|BrowseLocalProtocols|IdleExitTimeout|LogLevel|WebInterface|MaxLogSize)\b/i.test(line))
    .join('\n');
  // Cancelling takes an administrator's password (as with the "authenticated" policy some
  // sites use); an address rule would not do, since CUPS always lets localhost in.
  const noCancel = [
    `<Policy ${NO_CANCEL_POLICY}>`,
    '  <Limit Cancel-Job Cancel-Jobs Cancel-My-Jobs>',
    '    AuthType Basic',
    '    Require user @SYSTEM',
    '    Order deny,allow',
    '  </Limit>',
    '  <Limit All>',
    '    Order deny,allow',
    '  </Limit>',
    '</Policy>',
  ];
  return [`Listen 127.0.0.1:${port}`, 'Browsing No', 'WebInterface No', 'LogLevel debug', 'MaxLogSize 0', defaults, ...noCancel].join('\n');
}

function waitForPort(port: number, child: ChildProcess, ms: number, log: () => string): Promise<void> {
  const until = Date.now() + ms;
  return new Promise<void>((resolve, reject) => {
    const attempt = (): void => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error(`cupsd terminou ao iniciar (${child.exitCode ?? child.signalCode}):\n${log()}`));
        return;
      }
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > until) reject(new Error(`cupsd não abriu a porta ${port} em ${ms} ms:\n${log()}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** Starts a private cupsd with `queues`; `stop()` ends it and removes its folder. */
export async function startCupsd(queues: readonly TestQueue[]): Promise<CupsTestServer> {
  if (!existsSync(CUPSD) || !existsSync(join(SERVER_BIN, 'backend', 'socket'))) {
    throw new Error(`CUPS não está instalado (${CUPSD} e ${SERVER_BIN}/backend/socket): apt-get install cups-daemon cups (o .ci/run instala)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'balcao-cupsd-'));
  const root = process.getuid?.() === 0;
  // As root, cupsd runs the backends as the unprivileged "lp" user, which must reach the spool
  // files below this folder.
  if (root) chmodSync(dir, 0o711);
  for (const d of ['etc', 'spool', 'spool/tmp', 'cache', 'state', 'log']) mkdirSync(join(dir, d), { recursive: true });
  const port = await freePort();
  writeFileSync(join(dir, 'etc', 'cupsd.conf'), cupsdConf(port));
  writeFileSync(
    join(dir, 'etc', 'cups-files.conf'),
    [
      `ServerRoot ${join(dir, 'etc')}`,
      `RequestRoot ${join(dir, 'spool')}`,
      `TempDir ${join(dir, 'spool', 'tmp')}`,
      `CacheDir ${join(dir, 'cache')}`,
      `StateDir ${join(dir, 'state')}`,
      `ServerBin ${SERVER_BIN}`,
      `DataDir ${DATA_DIR}`,
      `AccessLog ${join(dir, 'log', 'access_log')}`,
      `ErrorLog ${join(dir, 'log', 'error_log')}`,
      `PageLog ${join(dir, 'log', 'page_log')}`,
      `Printcap ${join(dir, 'printcap')}`,
      // cupsd refuses to run jobs as root; as anyone else it runs them as that user.
      ...(root ? [] : [`User ${userInfo().username}`]),
    ].join('\n'),
  );
  writeFileSync(join(dir, 'etc', 'printers.conf'), printersConf(queues));
  const log = (): string => {
    try {
      return readFileSync(join(dir, 'log', 'error_log'), 'utf8')
        .split('\n')
        .slice(-60)
        .join('\n');
    } catch {
      return '(sem log)';
    }
  };
  const child = spawn(CUPSD, ['-f', '-c', join(dir, 'etc', 'cupsd.conf'), '-s', join(dir, 'etc', 'cups-files.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test runner that dies must not leave the scheduler behind.
  const orphan = (): void => void child.kill('SIGKILL');
  process.once('exit', orphan);
  const stop = async (): Promise<void> => {
    process.removeListener('exit', orphan);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, child, 15_000, () => `${stderr}\n${log()}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, server: `127.0.0.1:${port}`, dir, log, stop };
}
