// `balcao terminal`: the terminal core as a plain Node process, without a screen.
//
//   balcao terminal vendas --data DIR --servico URL --token TOKEN --serie N --quantidade N
//       Sells until the terminal has N finished sales (counting those of earlier runs on the same
//       data directory), then waits until every receipt is settled and exits 0. It can be killed
//       at any moment (the chaos test SIGKILLs it) and started again: it picks up where the
//       database says it is. One JSON line per event on stdout:
//       {"event":"ready"}, {"event":"finished","nNF":..}, {"event":"drained",...}.
//       With the company and its certificate in the folder's settings, the terminal goes into
//       offline contingency by itself while the service is away, and is drained only once it
//       is out of it with every in-doubt sale reconciled. No sale finishes without an open cash
//       session: when the till is closed, this command opens it (float --troco-inicial, R$ 0,00
//       by default, operator "balcao terminal vendas"), as a cashier would at the start of a day.
//   balcao terminal gerente --data DIR --nome NOME --pin PIN
//       Registers a manager (PIN stored as a scrypt hash) and prints {"id","nome"}.
//
// Sales are small and varied (1–4 demo products, cash with change or a not-integrated card),
// deterministic per sale number so a re-run sells the same things.

import { parseArgs } from 'node:util';
import { DEFAULT_SERVICE_URL } from './api-client.ts';
import type { SettingsPatch } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import { validateServiceUrl } from './settings.ts';
import { createTerminal, type Terminal } from './terminal.ts';
import { systemFault } from '../../base/node/system-faults.ts';
import { FolderInUseError } from '../../base/node/folder-lock.ts';

const USAGE = `Uso:
  balcao terminal vendas --data DIR --token TOKEN --serie N --quantidade N [opções]
      Vende até o terminal ter N vendas finalizadas e espera todas as NFC-e serem resolvidas.
      Serviço, token e série informados são gravados nas configurações do terminal e valem
      também nas execuções seguintes.
      --servico URL        serviço de emissão (padrão ${DEFAULT_SERVICE_URL})
      --intervalo-ms MS    pausa entre vendas (padrão 0)
      --troco-inicial CENTAVOS  troco inicial do caixa, quando ele está fechado (padrão 0)
      --espera-base-ms MS, --espera-max-ms MS   novas tentativas: espera inicial e máxima
  balcao terminal gerente --data DIR --nome NOME --pin PIN
      Cadastra um gerente (o PIN é guardado só como hash).
`;

const EXIT_USAGE = 2;

class UsageError extends Error {}

function options(args: string[]) {
  try {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        data: { type: 'string' },
        servico: { type: 'string' },
        token: { type: 'string' },
        serie: { type: 'string' },
        quantidade: { type: 'string' },
        'intervalo-ms': { type: 'string' },
        'troco-inicial': { type: 'string' },
        'espera-base-ms': { type: 'string' },
        'espera-max-ms': { type: 'string' },
        nome: { type: 'string' },
        pin: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function int(value: string | undefined, name: string, min: number, max: number, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name}: obrigatório`);
    return fallback;
  }
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name}: deve ser um inteiro de ${min} a ${max}`);
  return Number(value);
}

const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The n-th sale of the run: a few products, paid in cash (with change) or by card. */
async function sell(terminal: Terminal, n: number): Promise<void> {
  let sale = await terminal.openSale();
  const products = ['1001', '1002', '1003', '1004', '1005', '1006', '1007', '1008', '1009', '1010'];
  const count = 1 + (n % 4);
  for (let i = 0; i < count; i++) {
    const code = products[(n * 7 + i * 3) % products.length]!;
    sale = await terminal.addItem(sale.id, { code, quantity: code === '1006' ? '0.35' : String(1 + ((n + i) % 3)) });
  }
  if (n % 3 === 0) {
    sale = await terminal.addPayment(sale.id, { tPag: '03', amountCents: sale.totalCents, card: { tpIntegra: '2', tBand: '01' } });
  } else {
    sale = await terminal.addPayment(sale.id, { tPag: '01', amountCents: Math.ceil(sale.totalCents / 1000) * 1000 });
  }
  const { receipt } = await terminal.finishSale(sale.id);
  say({ event: 'finished', nNF: receipt.nNF, receiptId: receipt.id });
}

async function runSales(args: ReturnType<typeof options>['values']): Promise<number> {
  if (!args.data) throw new UsageError('--data: obrigatório');
  if (!args.token) throw new UsageError('--token: obrigatório');
  const total = int(args.quantidade, 'quantidade', 1, 1_000_000);
  const pace = int(args['intervalo-ms'], 'intervalo-ms', 0, 60_000, 0);
  const terminal = await createTerminal({
    dataDir: args.data,
    serviceUrl: args.servico ?? DEFAULT_SERVICE_URL,
    token: args.token,
    series: int(args.serie, 'serie', 0, 999),
    retry: { baseMs: int(args['espera-base-ms'], 'espera-base-ms', 1, 600_000, 500), capMs: int(args['espera-max-ms'], 'espera-max-ms', 1, 600_000, 30_000) },
    startWorker: false,
  });
  // The options only seed a new folder; flags typed for this run win over what is stored.
  const wanted: SettingsPatch = {};
  if (args.servico !== undefined && validateServiceUrl(args.servico) !== terminal.settings.serviceUrl) wanted.serviceUrl = args.servico;
  if (args.token !== terminal.settings.token) wanted.token = args.token;
  if (args.serie !== undefined && Number(args.serie) !== terminal.serie) wanted.series = Number(args.serie);
  if (Object.keys(wanted).length) terminal.configure(wanted, 'balcao terminal vendas (opções da linha de comando)');
  terminal.start();
  const stop = async () => {
    await terminal.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  terminal.seedDemoCatalog();
  // A sale left open by an earlier life of this process (killed mid-sale) is abandoned, as a
  // cashier would start it again; it took no number.
  for (const open of await terminal.openSales()) await terminal.discardSale(open.id);
  if (!(await terminal.cashSession())) {
    await terminal.openCashSession({ floatCents: int(args['troco-inicial'], 'troco-inicial', 0, 100_000_000, 0), operator: 'balcao terminal vendas' });
  }
  say({ event: 'ready', finished: terminal.store.sales.countSales('finished') });

  for (let n = terminal.store.sales.countSales('finished'); n < total; n = terminal.store.sales.countSales('finished')) {
    await sell(terminal, n);
    if (pace) await sleep(pace);
  }

  // Drained: no command left to send or to follow, nothing waiting for an operator, and no
  // offline contingency still on or left to reconcile.
  for (;;) {
    const status = await terminal.queueStatus();
    if (status.pending === 0 && !status.contingency.active && status.contingency.openTasks.length === 0) {
      const receipts = terminal.store.receipts.allReceipts();
      const byState: Record<string, number> = {};
      for (const r of receipts) byState[r.state] = (byState[r.state] ?? 0) + 1;
      say({ event: 'drained', receipts: receipts.length, byState });
      break;
    }
    await sleep(50);
  }
  await terminal.close();
  return 0;
}

async function runManager(args: ReturnType<typeof options>['values']): Promise<number> {
  if (!args.data) throw new UsageError('--data: obrigatório');
  if (!args.nome) throw new UsageError('--nome: obrigatório');
  if (!args.pin) throw new UsageError('--pin: obrigatório');
  // Only the database is touched: no service, no worker, and no settings seeded (a later
  // `vendas` on this folder sets its service, token and series).
  const terminal = await createTerminal({ dataDir: args.data, startWorker: false });
  try {
    const m = await terminal.createManager({ name: args.nome, pin: args.pin });
    say({ id: m.id, nome: m.name });
    return 0;
  } finally {
    await terminal.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  let dataDir: string | undefined;
  try {
    const parsed = options(argv);
    dataDir = parsed.values.data;
    const [action] = parsed.positionals;
    if (parsed.values.help || action === undefined || action === 'help') {
      process.stdout.write(USAGE);
      return parsed.values.help || action === 'help' ? 0 : EXIT_USAGE;
    }
    if (action === 'vendas') return await runSales(parsed.values);
    if (action === 'gerente') return await runManager(parsed.values);
    throw new UsageError(`ação desconhecida: ${action}`);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    if (err instanceof TerminalError || err instanceof FolderInUseError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    // A fault of the machine (a read-only or forbidden folder, a full disk): what to do, then the system's words.
    const fault = systemFault(err, { path: dataDir });
    if (fault) {
      process.stderr.write(`O terminal não pôde continuar: ${fault.message}\n  (detalhe técnico: ${(err as Error).message})\n`);
      return 1;
    }
    throw err;
  }
}
