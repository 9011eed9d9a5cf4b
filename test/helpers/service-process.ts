// Test harness: the real `balcao` command in real child processes. `startService` runs
// `balcao service` on a free port and waits for its ready line; `createCompany` runs
// `balcao company create`; `api` is a small fetch wrapper. Every process started here is
// stopped by its test (stop/kill in afterAll) and, as a safety net, killed when the test
// process exits; temporary data directories created here are removed then too.
//
// A service's data is a temporary folder (SQLite), or a PostgreSQL database (`database`, see
// test/helpers/postgres.ts and stores.ts) with its master key in a file of that folder, shared by
// every process and command started on the same data, as a deployment shares it.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const balcao = join(repoRoot, 'bin', 'balcao.js');

/** How `balcao` is launched: the arguments given to node before the subcommand. */
export type Launcher = readonly string[];

/** The compiled command, as users run it (bin/balcao.js; dist/node, see bin/build.ts). */
export const COMPILED: Launcher = [balcao];

/** The command run from its TypeScript sources, transpiled at start by tsx: how every command
 * ran before the compiled build, kept for the start bench's comparison. */
export const FROM_SOURCES: Launcher = [
  '--import',
  'tsx',
  '--input-type=module',
  '-e',
  `const { main } = await import(${JSON.stringify(join(repoRoot, 'bin', 'cli.ts'))}); process.exitCode = await main(process.argv.slice(1));`,
  '--',
];

const running = new Set<ChildProcess>();
const tempDirs = new Set<string>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A 127.0.0.1 port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A temporary data directory, removed when the test process exits. */
export function tempDataDir(prefix = 'balcao-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Where a service keeps its data: the folder, and the PostgreSQL database when there is one. */
export type ServiceData = { dataDir: string; database?: string };

const dataOf = (where: string | ServiceData): ServiceData => (typeof where === 'string' ? { dataDir: where } : where);

/**
 * The command-line options and environment that point `balcao` at `where`'s data. On PostgreSQL
 * webhooks may only reach public addresses unless the operator lists more: the tests' receivers
 * listen on 127.0.0.1, listed as an operator would list a store's own network.
 */
export function storageArgs(where: string | ServiceData): { args: string[]; env: Record<string, string> } {
  const { dataDir, database } = dataOf(where);
  return database
    ? { args: ['--database', database], env: { BALCAO_MASTER_KEY_FILE: join(dataDir, 'master.key'), BALCAO_WEBHOOK_DESTINOS: '127.0.0.1' } }
    : { args: ['--data', dataDir], env: {} };
}

export type StartOptions = {
  dataDir?: string;
  /** A PostgreSQL database instead of the folder's SQLite file (the folder keeps the master key). */
  database?: string;
  env?: Record<string, string>;
  mode?: 'sandbox' | 'producao';
  /**
   * Sandbox mode: how the service reaches its simulated tax authority. `wire`: through the SEFAZ
   * connector and the SEFAZ simulator, over HTTPS with mutual TLS on loopback (--sandbox-wire).
   */
  transport?: Transport;
  /** Extra arguments for `balcao service` (e.g. --sefaz-url, --sefaz-ca). */
  args?: string[];
  /** Port to bind; 0 (default) lets the OS pick a free one. */
  port?: number;
  /** How long to wait for the ready line; default 90 s (a start takes about a second, much longer on a machine under load). */
  readyTimeoutMs?: number;
  /** Default: COMPILED. */
  launcher?: Launcher;
};

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** How a sandbox service reaches its tax authority: the suites that matter run over both. */
export type Transport = 'in-process' | 'wire';
export const TRANSPORTS: readonly Transport[] = ['in-process', 'wire'];

// A production-mode service must never try the real SEFAZ from a test: unless the test points it
// somewhere, its endpoints go to a closed loopback port (connection refused → "unavailable").
const NO_SEFAZ = 'https://127.0.0.1:9';

export type ServiceProcess = {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The PostgreSQL database, when the service runs on one. */
  readonly database: string | undefined;
  /** Its data, for createCompany and registerCompany. */
  readonly data: ServiceData;
  readonly pid: number;
  /** Every stdout/stderr line so far (JSON log lines of the service). */
  readonly output: string[];
  /** SIGTERM and wait for the exit (SIGKILL after `timeoutMs`, then throws). */
  stop(timeoutMs?: number): Promise<Exit>;
  /** SIGKILL and wait for the exit: a crash, for recovery tests. */
  kill(): Promise<Exit>;
  /** Stops (gracefully unless `hard`) and starts again on the same port and data directory. */
  restart(options?: { hard?: boolean }): Promise<void>;
};

function waitForExit(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** `balcao service` started on `port`: its child process, its exit, and its URL once it says it listens. */
function spawnOn(dataDir: string, port: number, options: StartOptions, output: string[]) {
  const storage = storageArgs({ dataDir, database: options.database });
  const args = [
    ...(options.launcher ?? COMPILED),
    'service',
    '--port',
    String(port),
    ...storage.args,
    '--modo',
    options.mode ?? 'sandbox',
    ...(options.args ?? []),
  ];
  if (options.transport === 'wire') args.push('--sandbox-wire');
  const production = options.mode === 'producao' && !options.env?.BALCAO_SEFAZ_URL && !(options.args ?? []).includes('--sefaz-url');
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...storage.env, ...(production && { BALCAO_SEFAZ_URL: NO_SEFAZ }), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const exited = waitForExit(child);
  createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'listening' && entry.url) resolve(entry.url);
      } catch {
        // not a log line; kept in output
      }
    });
    void exited.then(({ code, signal }) => reject(new Error(`o serviço terminou antes de ficar pronto (código ${code}, sinal ${signal})`)));
  });
  ready.catch(() => undefined); // a caller that does not wait for it (spawnService) is told by `exited`
  return { child, exited, ready };
}

async function launch(dataDir: string, port: number, options: StartOptions, output: string[]) {
  const { child, exited, ready } = spawnOn(dataDir, port, options, output);
  const timeoutMs = options.readyTimeoutMs ?? 90_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`o serviço não ficou pronto em ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const url = await Promise.race([ready, timedOut]);
    return { child, url, exited };
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n--- saída ---\n${output.join('\n')}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A service process as it starts, for tests of what happens before it is ready (a stop signal). */
export type StartingService = {
  readonly pid: number;
  /** Every stdout/stderr line so far. */
  readonly output: string[];
  /** Its URL once it says it listens (rejected if it exits first). */
  readonly ready: Promise<string>;
  readonly exited: Promise<Exit>;
  signal(signal: NodeJS.Signals): void;
};

/** Starts `balcao service` without waiting for it to be ready. */
export function spawnService(options: StartOptions = {}): StartingService {
  const output: string[] = [];
  const { child, exited, ready } = spawnOn(options.dataDir ?? tempDataDir(), options.port ?? 0, options, output);
  return { pid: child.pid!, output, ready, exited, signal: (signal) => child.kill(signal) };
}

export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? tempDataDir();
  const output: string[] = [];
  let current = await launch(dataDir, options.port ?? 0, options, output);
  const port = Number(new URL(current.url).port);

  const stop = async (timeoutMs = 60_000): Promise<Exit> => {
    const { child, exited } = current;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const result = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`o serviço não terminou em ${timeoutMs} ms após SIGTERM`);
    }
    return result;
  };
  const kill = async (): Promise<Exit> => {
    current.child.kill('SIGKILL');
    return current.exited;
  };

  return {
    get url() {
      return current.url;
    },
    port,
    dataDir,
    database: options.database,
    data: { dataDir, database: options.database },
    get pid() {
      return current.child.pid!;
    },
    output,
    stop,
    kill,
    async restart({ hard = false } = {}) {
      await (hard ? kill() : stop());
      current = await launch(dataDir, port, options, output);
    },
  };
}

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs `balcao <args>` to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [balcao, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `balcao company create` options without the dashes, e.g. `{ 'csc-id': '1', csc: '...' }`. */
export type CompanyOptions = Record<string, string>;

/** Registers a company with the real CLI (defaults: a valid CNPJ, SP, a test name). */
export async function createCompany(where: string | ServiceData, options: CompanyOptions = {}): Promise<{ companyId: string; token: string }> {
  const all: CompanyOptions = { cnpj: '11222333000181', uf: 'SP', nome: 'Loja de Teste', ...options };
  const storage = storageArgs(where);
  const args = ['company', 'create', ...storage.args, ...Object.entries(all).flatMap(([k, v]) => [`--${k}`, v])];
  const result = await runCli(args, storage.env);
  if (result.code !== 0) throw new Error(`balcao company create falhou (${result.code}): ${result.stderr}`);
  const { company_id, token } = JSON.parse(result.stdout) as { company_id: string; token: string };
  return { companyId: company_id, token };
}

export type ApiResponse<T = any> = { status: number; headers: Headers; body: T; text: string }; // eslint-disable-line @typescript-eslint/no-explicit-any

export type RequestOptions = {
  /** JSON-encoded unless a string (sent as is). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Overrides the client's token; null sends no Authorization header. */
  token?: string | null;
};

/** fetch against one service as one company: JSON in, parsed JSON (or text) out. */
export function api(url: string, token?: string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const bearer = options.token === undefined ? token : options.token;
    const headers: Record<string, string> = { ...(bearer && { authorization: `Bearer ${bearer}` }) };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers: { ...headers, ...options.headers }, body, signal: AbortSignal.timeout(120_000) });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
  return {
    request,
    get: <T = any>(path: string, options?: RequestOptions) => request<T>('GET', path, options), // eslint-disable-line @typescript-eslint/no-explicit-any
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) => request<T>('POST', path, { ...options, body }), // eslint-disable-line @typescript-eslint/no-explicit-any
    put: <T = any>(path: string, body?: unknown, options?: RequestOptions) => request<T>('PUT', path, { ...options, body }), // eslint-disable-line @typescript-eslint/no-explicit-any
    delete: <T = any>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options), // eslint-disable-line @typescript-eslint/no-explicit-any
  };
}
