// `balcao start` (what `npm start` runs): a working demo store from a fresh clone, in one
// process. Everything lives under one data directory (BALCAO_DATA or --data, default ./.data):
//
//   service/          the embedded issuance service (sandbox: simulated tax authority)
//   terminal/         the terminal core's database; terminal/impressora: the virtual printer
//   demo-company.json the demo company's id and API token (created once, mode 0600)
//   certificado-demo.pfx / .json  the one test A1 certificate the service and the terminal share,
//                     with the demo company's CNPJ (--cnpj on the first start; 11222333000181 by
//                     default, an alphanumeric one such as 12ABC34501DE35 as well)
//   psp-simulado.json how to reach this start's simulated PSP (dynamic PIX): its URLs, client id
//                     and secret, CA and client certificate (mode 0600; new on every start)
//
// Dynamic PIX goes to a simulated PSP (service/pix-psp/simulator.ts) started here, as the tax
// authority is a sandbox: the screen then offers "Simular pagamento". With BALCAO_PIX_URL set,
// the store's real PSP from BALCAO_PIX_* is used instead, and no simulator starts.
//
// A second start reuses all of it. When ready it prints a banner for people and one line
// `BALCAO_READY {...json}` for tests and the bench. SIGTERM / SIGINT stop everything cleanly.

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTestCertificateAsync } from '../fiscal/certificate.ts';
import { DEMO_CNPJ, DEMO_CSC, demoEmitter } from '../fiscal/samples.ts';
import { cnpjProblem, formatCnpj } from '../base/common/tax-ids.ts';
import type { SettingsPatch } from '../electron/api/terminal-api.ts';
import { profileOfEmitter } from '../electron/core/company-profile.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { VIRTUAL_PRINTER_DIR } from '../electron/core/printing.ts';
import { findChromium, openAppWindow } from '../electron/host/open-browser.ts';
import { ensureRendererBuilt } from './build.ts';
import { startBrowserHost, type BrowserHost } from '../electron/host/server.ts';
import { buildApp } from '../service/app.ts';
import { parseCommand, parseOptions, UsageError } from '../service/cli-args.ts';
import { createCompany } from '../service/companies.ts';
import { createLogger } from '../service/logger.ts';
import { openService, type OpenedService } from '../service/open-service.ts';
import { scheduleBackups } from '../service/backups.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { pspSetupFromEnv, type PspSetup } from '../electron/core/pix/psp-settings.ts';
import { faultWords, systemFault } from '../base/node/system-faults.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export const DEMO_MANAGER = { name: 'Gerente Demo', pin: '1234' } as const;

const USAGE = `Uso: balcao start [--data DIR] [--port PORTA] [--terminal-port PORTA] [--cnpj CNPJ] [--abrir]

Inicia a loja de demonstração: serviço de emissão em sandbox, terminal e tela do caixa no navegador.
  --data DIR             pasta de dados (padrão: BALCAO_DATA ou ./.data)
  --cnpj CNPJ            CNPJ da loja, numérico ou alfanumérico, na primeira vez que a pasta é usada
                         (padrão: ${DEMO_CNPJ}; ex.: 12ABC34501DE35)
  --port PORTA           serviço de emissão (padrão: BALCAO_PORT ou 8765; 0 = porta livre)
  --terminal-port PORTA  tela do caixa (padrão: BALCAO_TERMINAL_PORT ou 8766; 0 = porta livre)
  --abrir                abre a tela do caixa numa janela do Chromium
`;

type StartArgs = { dataDir: string; servicePort: number; terminalPort: number; open: boolean; cnpj?: string };

function port(value: string, name: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`${name}: deve ser um número de 0 a 65535`);
  return Number(value);
}

function parse(args: string[]): StartArgs | 'help' {
  const { values: v } = parseOptions(args, {
    data: { type: 'string' },
    port: { type: 'string' },
    'terminal-port': { type: 'string' },
    cnpj: { type: 'string' },
    abrir: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return 'help';
  return {
    dataDir: resolve(v.data ?? process.env.BALCAO_DATA ?? '.data'),
    servicePort: port(v.port ?? process.env.BALCAO_PORT ?? '8765', v.port === undefined && process.env.BALCAO_PORT ? 'BALCAO_PORT' : '--port'),
    terminalPort: port(
      v['terminal-port'] ?? process.env.BALCAO_TERMINAL_PORT ?? '8766',
      v['terminal-port'] === undefined && process.env.BALCAO_TERMINAL_PORT ? 'BALCAO_TERMINAL_PORT' : '--terminal-port',
    ),
    open: v.abrir ?? false,
    ...(v.cnpj !== undefined && { cnpj: demoCnpjOption(v.cnpj) }),
  };
}

function demoCnpjOption(value: string): string {
  const problem = cnpjProblem(value);
  if (problem) throw new UsageError(`--cnpj: ${problem}`);
  return value;
}

// ---- The demo identity: one certificate, one company, one manager, created once ---------------

type DemoCertificate = { pfx: Buffer; password: string; cnpj: string };

/**
 * The demo certificate on file, or a new one for `cnpj` (its key made on another core while the
 * caller goes on). The CNPJ of a folder is the one of its first start: another one is refused.
 */
async function demoCertificate(dataDir: string, cnpj: string | undefined): Promise<DemoCertificate & { created: boolean }> {
  const pfxFile = join(dataDir, 'certificado-demo.pfx');
  const infoFile = join(dataDir, 'certificado-demo.json');
  if (existsSync(pfxFile) && existsSync(infoFile)) {
    const info = JSON.parse(readFileSync(infoFile, 'utf8')) as { password: string; cnpj?: string };
    const onFile = info.cnpj ?? DEMO_CNPJ;
    if (cnpj !== undefined && cnpj !== onFile) {
      throw new UsageError(
        `a pasta ${dataDir} já tem a loja de demonstração do CNPJ ${formatCnpj(onFile)}; para o CNPJ ${formatCnpj(cnpj)}, use outra pasta (--data)`,
      );
    }
    return { pfx: readFileSync(pfxFile), password: info.password, cnpj: onFile, created: false };
  }
  const chosen = cnpj ?? DEMO_CNPJ;
  const { pfx, password } = await generateTestCertificateAsync({ cnpj: chosen, xNome: demoEmitter().xNome });
  writeFileSync(pfxFile, pfx, { mode: 0o600 });
  writeFileSync(infoFile, JSON.stringify({ arquivo: pfxFile, password, cnpj: chosen }, null, 2) + '\n', { mode: 0o600 });
  return { pfx, password, cnpj: chosen, created: true };
}

type DemoCompany = { company_id: string; token: string };

async function demoCompany(service: OpenedService, file: string, certificate: DemoCertificate): Promise<DemoCompany> {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DemoCompany;
  const e = demoEmitter({ cnpj: certificate.cnpj });
  const { companyId, token } = await createCompany(service, {
    cnpj: e.cnpj,
    uf: e.address.UF,
    nome: e.xNome,
    fantasia: e.xFant,
    ie: e.ie,
    crt: String(e.crt),
    cscId: DEMO_CSC.id,
    csc: DEMO_CSC.token,
    certificate,
    logradouro: e.address.xLgr,
    numero: e.address.nro,
    bairro: e.address.xBairro,
    municipio: e.address.cMun,
    cep: e.address.CEP,
    telefone: e.address.fone,
  });
  const created = { company_id: companyId, token };
  // The API shows a token once; the demo keeps it for the next start, readable only by this
  // user (it authorizes issuance for the demo company).
  writeFileSync(file, JSON.stringify(created, null, 2) + '\n', { mode: 0o600 });
  return created;
}

/**
 * The demo catalog, manager, company profile and certificate, each only when missing (what a
 * manager changed survives a restart); the service's address and the demo company's token on
 * every start, since they belong to this start (the port may change).
 */
async function prepareTerminal(terminal: Terminal, serviceUrl: string, token: string, certificate: DemoCertificate): Promise<void> {
  if (terminal.store.products.countProducts() === 0) terminal.seedDemoCatalog();
  const manager = (await terminal.listManagers()).find((m) => m.name === DEMO_MANAGER.name) ?? (await terminal.createManager({ ...DEMO_MANAGER }));
  const settings = await terminal.getSettings();
  const patch: SettingsPatch = {
    ...(settings.serviceUrl !== serviceUrl && { serviceUrl }),
    ...(terminal.settings.token !== token && { token }),
    ...(settings.company === null && { company: { ...profileOfEmitter(demoEmitter({ cnpj: certificate.cnpj })), cscToken: DEMO_CSC.token } }),
    // The demo store receives static PIX on its CNPJ as key (BALCAO_PIX_CHAVE sets another).
    ...(settings.pix.key === null && { pix: { key: process.env.BALCAO_PIX_CHAVE ?? certificate.cnpj } }),
  };
  if (Object.keys(patch).length) terminal.configure(patch, 'balcao start: loja de demonstração');
  // The same .pfx the service's demo company signs with: contingency receipts carry its signature.
  if (settings.certificate === null) {
    await terminal.importCertificate({
      managerId: manager.id,
      pin: DEMO_MANAGER.pin,
      pfxBase64: certificate.pfx.toString('base64'),
      password: certificate.password,
    });
  }
}

/** The simulated PSP's setup for the demo terminal, and its file for whoever wants to look at it (tests, curl). */
/**
 * The demo service's PIX webhook address, made as a store makes it (README, "PIX"): POST
 * /api/v1/pix/webhook with the company's token. A new one on every start, like the simulator it is
 * handed to, so the simulator tells the service of each PIX and the sale finishes sooner.
 */
async function demoPixWebhook(serviceUrl: string, token: string): Promise<string> {
  const res = await fetch(`${serviceUrl}/api/v1/pix/webhook`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 201) throw new Error(`webhook PIX da demonstração: o serviço respondeu ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { webhook_url: string }).webhook_url;
}

function simulatedPspSetup(psp: PixPspSimulator, file: string): PspSetup {
  const setup: PspSetup = psp.terminalSetup;
  writeFileSync(file, JSON.stringify(setup, null, 2) + '\n', { mode: 0o600 });
  return setup;
}

// ---- Running -----------------------------------------------------------------------------------

class Stack {
  private readonly steps: { what: string; undo: () => unknown }[] = [];
  push(what: string, undo: () => unknown): void {
    this.steps.push({ what, undo });
  }
  /** Undoes in reverse order; a failing step is reported and the rest still run. */
  async unwind(report: (what: string, err: unknown) => void): Promise<boolean> {
    let ok = true;
    for (const { what, undo } of this.steps.reverse()) {
      try {
        await undo();
      } catch (err) {
        ok = false;
        report(what, err);
      }
    }
    this.steps.length = 0;
    return ok;
  }
}

const say = (lines: string[]) => process.stdout.write(lines.join('\n') + '\n');

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const parsed = command.args;
  const { dataDir } = parsed;
  // The embedded service logs JSON lines on stdout; only warnings by default, so the banner
  // stays readable (BALCAO_LOG_LEVEL=info shows every request).
  const log = createLogger({ level: process.env.BALCAO_LOG_LEVEL ?? 'warn' });
  const stack = new Stack();
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });

  try {
    const serviceDir = join(dataDir, 'service');
    const terminalDir = join(dataDir, 'terminal');
    for (const dir of [dataDir, serviceDir, terminalDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });

    // On a first start the certificate's key is generated on the thread pool meanwhile: the
    // service's database, its schemas and its server are made on this thread.
    const certificateMade = demoCertificate(dataDir, parsed.cnpj);
    certificateMade.catch(() => undefined); // awaited below; a failure is reported there
    const service = await openService({ kind: 'sqlite', dataDir: serviceDir }, process.env, { holdsWork: true });
    stack.push('banco do serviço', () => service.store.close());
    const backups = scheduleBackups(service.store, serviceDir, log);
    stack.push('cópias de segurança do serviço', () => backups?.stop());

    const app = buildApp({ store: service.store, secrets: service.secrets, mode: 'sandbox', logger: log });
    stack.push('serviço de emissão', () => app.close());
    try {
      await app.listen({ port: parsed.servicePort, host: '127.0.0.1' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new Error(`serviço de emissão: ${systemFault(err, { port: parsed.servicePort, portOption: '--port' })!.message}`);
      throw err;
    }
    const serviceUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    const certificate = await certificateMade;
    const companyFile = join(dataDir, 'demo-company.json');
    const companyExisted = existsSync(companyFile);
    const company = await demoCompany(service, companyFile, certificate);
    if (companyExisted && certificate.created) {
      process.stderr.write(
        `Aviso: ${companyFile} é de uma versão anterior e a empresa no serviço usa outro certificado. Para recomeçar a demonstração do zero, apague ${dataDir}.\n`,
      );
    }

    // The store's own PSP when configured; else the simulator, started again on every start.
    const realPsp = pspSetupFromEnv(process.env);
    const pspFile = join(dataDir, 'psp-simulado.json');
    let simulator: PixPspSimulator | undefined;
    if (!realPsp) {
      simulator = await startPixPspSimulator({ webhookUrl: await demoPixWebhook(serviceUrl, company.token) });
      stack.push('PSP simulado', () => simulator?.close());
    }
    const terminal = await createTerminal({
      dataDir: terminalDir,
      serviceUrl,
      token: company.token,
      series: 1,
      ...(realPsp && { pixPsp: realPsp }),
      ...(simulator && { pixSimulator: simulator }),
    });
    stack.push('terminal', () => terminal.close());
    await prepareTerminal(terminal, serviceUrl, company.token, certificate);
    // Its address and certificates are new on every start, like the service's port.
    if (simulator) terminal.psp.save(simulatedPspSetup(simulator, pspFile), { replace: true });

    const screen = await ensureRendererBuilt();
    if (screen.state === 'missing') process.stderr.write(`Aviso: ${screen.reason}; a tela do caixa não será servida.\n`);
    const staticDir = screen.state === 'missing' ? join(repoRoot, 'renderer', 'dist') : screen.staticDir;
    let host: BrowserHost;
    try {
      host = await startBrowserHost({ terminal, staticDir, port: parsed.terminalPort, downloadsDir: terminal.exportsDir, dataDir: terminal.dataDir });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new Error(`tela do caixa: ${systemFault(err, { port: parsed.terminalPort, portOption: '--terminal-port' })!.message}`);
      throw err;
    }
    stack.push('tela do caixa', () => host.close());

    const printerDir = join(terminalDir, VIRTUAL_PRINTER_DIR);
    say([
      '',
      'Balcão — loja de demonstração (autoridade fiscal simulada, sem valor fiscal).',
      `  Caixa:       ${host.url}`,
      `               (abra este endereço no navegador; a chave depois de # dá acesso ao terminal)`,
      `  Gerente:     ${DEMO_MANAGER.name}, PIN ${DEMO_MANAGER.pin}`,
      `  Impressões:  ${printerDir}  (impressora virtual)`,
      simulator
        ? `  PIX:         PSP simulado em ${simulator.url} ("Simular pagamento" na tela; acesso em ${pspFile}), avisando o serviço pelo webhook`
        : `  PIX:         PSP da loja em ${realPsp!.baseUrl}`,
      `  Serviço:     ${serviceUrl}/api/v1  (documentação: /api/v1/openapi.json)`,
      `  Empresa:     ${company.company_id}  (token em ${companyFile})`,
      `  Dados:       ${dataDir}`,
      ...(screen.state === 'built' ? [`  Tela compilada agora (${screen.ms} ms).`] : []),
      'Ctrl+C encerra.',
      '',
    ]);
    say([
      `BALCAO_READY ${JSON.stringify({ checkoutUrl: host.url, serviceUrl, dataDir, printerDir, companyId: company.company_id, manager: DEMO_MANAGER, screen: screen.state !== 'missing' })}`,
    ]);

    let browser: ChildProcess | undefined;
    if (parsed.open) {
      const executable = findChromium();
      if (!executable) process.stderr.write('Aviso: nenhum Chromium encontrado (defina BALCAO_NAVEGADOR); abra o endereço do caixa à mão.\n');
      else {
        browser = openAppWindow(executable, host.url, join(dataDir, 'navegador'));
        stack.push('navegador', () => browser?.kill());
      }
    }

    await stopRequested;
  } catch (err) {
    // The sentence for people; the system's own words after it, for whoever reads the log.
    const fault = systemFault(err, { path: dataDir });
    process.stderr.write(`Não foi possível iniciar a loja: ${faultWords(err, { path: dataDir })}\n`);
    if (fault) process.stderr.write(`  (detalhe técnico: ${(err as Error).message})\n`);
    await stack.unwind((what, e) => process.stderr.write(`Falha ao encerrar ${what}: ${(e as Error).message}\n`));
    return 1;
  }
  const ok = await stack.unwind((what, err) => log.error({ err }, `falha ao encerrar ${what}`));
  // Should anything (a stray timer) keep the event loop alive, still exit.
  setTimeout(() => process.exit(ok ? 0 : 1), 2_000).unref();
  return ok ? 0 : 1;
}
