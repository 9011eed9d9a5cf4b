// `balcao service`: runs the issuance API until SIGTERM/SIGINT. Binds to loopback unless told
// otherwise (ARCHITECTURE.md: nothing listens beyond loopback unless configured), and beyond
// loopback only over TLS (service/tls.ts): the operator's certificate, or one the service makes
// and keeps, whose SHA-256 fingerprint the terminals pin. When ready it logs one line
// `{"msg":"listening","url":"http://127.0.0.1:PORT"}` (with `tls: { sha256, origem }` when it
// speaks HTTPS), which supervisors and the test harness wait for. On a signal it stops accepting,
// lets in-flight requests finish, closes the database and exits 0 (on PostgreSQL, releasing its
// lease first: what it held is free for the other processes at once). The signals are its own
// from the first moment: one that comes while it starts (its database opened and its lease
// taken, its queues perhaps already at work) ends the start at the next step and stops the same
// way, never by the default action that would leave its lease to run out. A second signal exits
// at once (1), leaving what it held to its lease.
//
// Its data: a folder (SQLite, one process) or a PostgreSQL database several processes share
// (storage.ts). Every log line carries the process's pid and, on PostgreSQL, its id in the
// database (`processo`, the one its leases name).

import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { buildApp, type ServiceApp } from './app.ts';
import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { SefazAuthority } from './authority/sefaz/connector.ts';
import { SefazConfigError, sefazOptions, type SefazSettings } from './authority/sefaz/config.ts';
import type { ServiceMode } from './clock.ts';
import type { SandboxTransport } from './deps.ts';
import { createLogger } from './logger.ts';
import type { PgStore } from './pg-store.ts';
import { openService } from './open-service.ts';
import { scheduleBackups } from './backups.ts';
import { describeStorage, STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from './storage.ts';
import { operatorTokenHash } from './operator-rates.ts';
import { generatedTls, isLoopback, operatorTls, tlsChoice, TlsConfigError, type TlsMaterial } from './tls.ts';
import { faultWords, systemFault } from '../base/node/system-faults.ts';
import { destinationPolicy, type DestinationPolicy } from './webhooks/destinations.ts';

const USAGE = `Uso: balcao service --port PORTA (--data DIR | --database URL) [--host 127.0.0.1] [--modo sandbox|producao]
                      [--tls | --tls-cert ARQUIVO.pem --tls-key ARQUIVO.pem]
                      [--sandbox-wire] [--sefaz-url https://HOST:PORTA] [--sefaz-ca ARQUIVO.pem]

Inicia o serviço de emissão (API HTTP de NFC-e, NF-e de devolução e MDF-e).
  --port PORTA   porta TCP (0 = uma porta livre qualquer)
${STORAGE_USAGE}
  --host ENDEREÇO  interface de escuta (padrão 127.0.0.1, só esta máquina); fora desta máquina
                 (ex.: 0.0.0.0, 192.168.0.10) o serviço só fala HTTPS
  --tls          HTTPS também em 127.0.0.1; sem --tls-cert, com o certificado que o serviço gera na
                 primeira vez (DIR/tls/) e cuja impressão digital SHA-256 ele mostra ao iniciar: é ela
                 que cada caixa fixa nas configurações (com --database, informe --tls-cert e --tls-key)
  --tls-cert ARQUIVO.pem, --tls-key ARQUIVO.pem  o certificado e a chave do operador (HTTPS)
  --modo sandbox|producao  sandbox (padrão): autoridade fiscal simulada e controles /api/v1/sandbox;
                 producao: a SEFAZ real (SOAP 1.2 com TLS mútuo, certificado A1 da empresa)
  --sandbox-wire (sandbox) fala com a autoridade simulada pela rede: o conector SEFAZ real, por
                 HTTPS com TLS mútuo, contra o simulador SEFAZ numa porta local
  --sefaz-url URL  (producao) troca a origem (esquema, host e porta) de todos os endpoints da
                 SEFAZ, mantendo o caminho oficial; o mesmo que BALCAO_SEFAZ_URL
  --sefaz-ca ARQUIVO  (producao) certificados PEM acrescentados às raízes confiáveis (a cadeia
                 ICP-Brasil); o mesmo que BALCAO_SEFAZ_CA

Para onde os webhooks das empresas podem apontar: BALCAO_WEBHOOK_DESTINOS=qualquer | publicos |
REDES (ex.: 10.20.0.0/16,192.168.0.50: endereços públicos e estes). Padrão: qualquer com --data em
127.0.0.1; publicos com --database ou --host fora desta máquina.

API do operador: BALCAO_OPERATOR_TOKEN, o token do operador (32 caracteres ou mais), liga
/api/v1/operador/aliquotas-ibscbs (alíquotas do IBS/CBS de todas as empresas).
`;

// In-flight requests get this long after a stop signal; then open connections are cut. An
// unfinished issuance keeps its idempotency key locked and is settled on the next start.
const DEFAULT_GRACE_MS = 30_000;

type ServiceArgs = {
  port: number;
  host: string;
  /** Undefined: plain HTTP (loopback only). */
  tls: { cert: string; key: string } | 'generated' | undefined;
  storage: Storage;
  mode: ServiceMode;
  sandboxTransport: SandboxTransport;
  sefaz: SefazSettings;
  webhookDestinations: DestinationPolicy;
};

function parse(args: string[]): ServiceArgs | 'help' {
  const { values: v } = parseOptions(args, {
    port: { type: 'string' },
    ...STORAGE_OPTIONS,
    host: { type: 'string' },
    modo: { type: 'string' },
    'sandbox-wire': { type: 'boolean' },
    'sefaz-url': { type: 'string' },
    'sefaz-ca': { type: 'string' },
    tls: { type: 'boolean' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return 'help';
  if (v.port === undefined) throw new UsageError('--port: obrigatório');
  if (!/^[0-9]{1,5}$/.test(v.port) || Number(v.port) > 65535) throw new UsageError('--port: deve ser um número de 0 a 65535');
  const storage = storageOf(v);
  const modo = v.modo ?? 'sandbox';
  if (modo !== 'sandbox' && modo !== 'producao') throw new UsageError('--modo: deve ser sandbox ou producao');
  if (v['sandbox-wire'] && modo !== 'sandbox') throw new UsageError('--sandbox-wire: só no modo sandbox');
  for (const option of ['sefaz-url', 'sefaz-ca'] as const) {
    if (v[option] !== undefined && modo !== 'producao') throw new UsageError(`--${option}: só no modo producao`);
  }
  if ((v['tls-cert'] === undefined) !== (v['tls-key'] === undefined)) throw new UsageError('--tls-cert e --tls-key: informe os dois');
  const host = v.host ?? '127.0.0.1';
  if (host === '') throw new UsageError('--host: informe um endereço (ex.: 0.0.0.0 ou 192.168.0.10)');
  // The token travels in every request: beyond this machine, never in clear.
  const tls = tlsChoice(host, { tls: v.tls, cert: v['tls-cert'], key: v['tls-key'] });
  // A generated certificate is kept in the data folder: a database has none, and several
  // processes must present the one certificate the terminals pin.
  if (tls === 'generated' && storage.kind === 'postgres') {
    throw new UsageError(
      '--database: o HTTPS (--tls, ou --host fora desta máquina) precisa de --tls-cert e --tls-key, o mesmo certificado em todos os processos',
    );
  }
  let webhookDestinations: DestinationPolicy;
  try {
    webhookDestinations = destinationPolicy(process.env, { sharedDatabase: storage.kind === 'postgres', beyondLoopback: !isLoopback(host) });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    port: Number(v.port),
    host,
    tls,
    storage,
    webhookDestinations,
    mode: modo === 'producao' ? 'production' : 'sandbox',
    sandboxTransport: v['sandbox-wire'] ? 'wire' : 'in-process',
    sefaz: { url: v['sefaz-url'], ca: v['sefaz-ca'] },
  };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const parsed = command.args;
  let log: Logger;
  try {
    log = createLogger();
  } catch (err) {
    process.stderr.write(`BALCAO_LOG_LEVEL inválido: ${(err as Error).message}\n`);
    return EXIT_USAGE;
  }
  try {
    operatorTokenHash(process.env.BALCAO_OPERATOR_TOKEN);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return EXIT_USAGE;
  }
  try {
    return await serve(parsed, log);
  } catch (err) {
    if (err instanceof SefazConfigError || err instanceof TlsConfigError) {
      process.stderr.write(`${err.message}\n`);
      return EXIT_USAGE;
    }
    // The operator reads the console: the sentence that says what to do, the system's words in the log line.
    const place = { path: parsed.storage.kind === 'sqlite' ? parsed.storage.dataDir : undefined, port: parsed.port, portOption: '--port' };
    const fault = systemFault(err, place);
    log.fatal({ err, ...(fault && { falha: fault.code }) }, `o serviço não pôde iniciar${fault ? `: ${fault.message}` : ''}`);
    process.stderr.write(`O serviço de emissão não pôde iniciar: ${faultWords(err, place)}\n`);
    return 1;
  }
}

/** SIGTERM and SIGINT, handled from the start of `serve` to its end (see the header). */
function stopSignals(log: Logger) {
  let received: NodeJS.Signals | undefined;
  let signalled!: (signal: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((resolve) => (signalled = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      log.warn({ signal }, 'segundo sinal: encerrando imediatamente');
      process.exit(1);
    }
    received = signal;
    signalled(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    /** The first signal, once one came. */
    get received() {
      return received;
    },
    first,
    dispose() {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    },
  };
}

type StopSignals = ReturnType<typeof stopSignals>;

async function serve(args: ServiceArgs, baseLog: Logger): Promise<number> {
  const signals = stopSignals(baseLog);
  try {
    return await startAndServe(args, baseLog, signals);
  } finally {
    signals.dispose();
  }
}

async function startAndServe(
  { port, host, tls: tlsChoice, storage, mode, sandboxTransport, sefaz, webhookDestinations }: ServiceArgs,
  baseLog: Logger,
  signals: StopSignals,
): Promise<number> {
  // The SEFAZ and TLS settings are checked before anything opens: a wrong file fails the start.
  const authority = mode === 'production' ? new SefazAuthority(sefazOptions(sefaz)) : undefined;
  const tls: TlsMaterial | undefined =
    tlsChoice === undefined
      ? undefined
      : tlsChoice === 'generated'
        ? generatedTls(storage.kind === 'sqlite' ? storage.dataDir : '', [host])
        : operatorTls(tlsChoice.cert, tlsChoice.key);
  const { store, secrets } = await openService(storage, process.env, { holdsWork: true, log: baseLog });
  const log = storage.kind === 'postgres' ? baseLog.child({ processo: (store as PgStore).processId }) : baseLog;
  // Lifecycle lines (listening, stopping, stopped) are what supervisors wait for: they are
  // written whatever BALCAO_LOG_LEVEL says.
  const lifecycle = log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
  // Copies of a data folder's database while it serves (PostgreSQL's are its own tooling's).
  let backups: ReturnType<typeof scheduleBackups> | undefined;
  /** A signal came while starting: what was opened is closed, the lease released, exit 0. */
  const stoppedWhileStarting = async (app?: ServiceApp) => {
    lifecycle.info({ signal: signals.received }, 'stopping');
    try {
      await app?.close();
    } finally {
      await backups?.stop();
      await store.close();
    }
    lifecycle.info('stopped');
    return 0;
  };
  if (signals.received) return stoppedWhileStarting();
  if (storage.kind === 'sqlite') backups = scheduleBackups(store, storage.dataDir, log);

  const operatorToken = process.env.BALCAO_OPERATOR_TOKEN;
  const app = buildApp({
    store,
    secrets,
    mode,
    logger: log,
    authority,
    sandboxTransport,
    processMetrics: true,
    webhookDestinations,
    ...(tls && { tls }),
    ...(operatorToken && { operatorToken }),
  });
  try {
    await app.listen({ port, host });
  } catch (err) {
    await app.close().catch(() => undefined);
    await backups?.stop();
    await store.close();
    throw err;
  }
  if (signals.received) return stoppedWhileStarting(app);
  const address = app.server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const where = storage.kind === 'sqlite' ? { dataDir: storage.dataDir } : { database: describeStorage(storage) };
  lifecycle.info(
    {
      url: `${tls ? 'https' : 'http'}://${urlHost}:${address.port}`,
      mode,
      ...where,
      ...(mode === 'sandbox' && { sandboxTransport }),
      ...(tls && { tls: { sha256: tls.fingerprint256, origem: tls.origin } }),
    },
    'listening',
  );
  // For people: the fingerprint each checkout pins (Configurações → Serviço).
  if (tls)
    process.stderr.write(
      `Certificado TLS do serviço (${tls.origin === 'gerado' ? 'gerado pelo serviço' : 'do operador'}), SHA-256:\n  ${tls.fingerprint256}\n`,
    );

  const signal = await signals.first;
  const graceMs = Number(process.env.BALCAO_SHUTDOWN_GRACE_MS ?? DEFAULT_GRACE_MS);
  lifecycle.info({ signal }, 'stopping');
  const cut = setTimeout(() => {
    log.warn({ graceMs }, 'prazo de encerramento esgotado: fechando as conexões abertas');
    app.server.closeAllConnections();
  }, graceMs);
  let code = 0;
  try {
    await app.close();
  } catch (err) {
    log.error({ err }, 'falha ao encerrar o servidor HTTP');
    code = 1;
  } finally {
    clearTimeout(cut);
    await backups?.stop();
    await store.close();
  }
  lifecycle.info('stopped');
  // Should anything (a plugin's stray timer) keep the event loop alive, still exit.
  setTimeout(() => process.exit(code), 2_000).unref();
  return code;
}
