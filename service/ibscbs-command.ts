// `balcao ibscbs aliquotas|status`: the IBS/CBS rates whoever runs the service sets once for all
// its companies (operator-rates.ts), in the service's data (a folder or a PostgreSQL database).
// A running service uses them from each company's next request on, without a restart.

import { IssueCollector } from '../fiscal/errors.ts';
import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { checkRatePeriodsText } from './ibscbs-options.ts';
import { operatorRates, replaceOperatorRates } from './operator-rates.ts';
import { openServiceForCommand } from './open-service.ts';
import { STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from './storage.ts';

const USAGE = `Uso: balcao ibscbs aliquotas (--data DIR | --database URL) --periodos "INICIO..FIM chave=valor ...; ..."
     balcao ibscbs status (--data DIR | --database URL) [--em AAAA-MM-DD]

Alíquotas do IBS/CBS que o operador do serviço define uma vez para todas as suas empresas,
no lugar das publicadas (ou da provisória do Balcão, enquanto a CBS do ano não é publicada);
a alíquota própria de uma empresa (balcao company update --ibscbs-aliquotas) continua valendo
sobre estas. Um serviço em execução passa a usá-las na requisição seguinte, sem reiniciar.
  aliquotas   substitui os períodos do operador e mostra o resultado em JSON
  status      mostra os períodos e o aviso, se faltar alguma alíquota (hoje, ou a partir de
              1º de dezembro as do ano seguinte)
${STORAGE_USAGE}
  --periodos TEXTO  cada período como INICIO..FIM chave=valor, separados por ";" (chaves ibs-uf,
              ibs-mun, cbs; FIM em branco: sem fim), por exemplo "2027-01-01..2027-12-31 cbs=8.80";
              "" remove todos
  --em DATA   (status) o aviso como será dado nesse dia, AAAA-MM-DD (padrão: hoje, em Brasília)
Saída: 0 feito; 1 períodos inválidos (o erro diz qual); 2 uso incorreto.
`;

type Args = { storage: Storage; action: 'aliquotas' | 'status'; periodos?: string; em?: Date };

const DAY = /^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/;

function parse(args: string[]): Args | 'help' {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return 'help';
  if (action !== 'aliquotas' && action !== 'status')
    throw new UsageError(action === undefined ? 'informe a ação: aliquotas ou status' : `ação desconhecida: ${action}`);
  const { values: v } = parseOptions(rest, { ...STORAGE_OPTIONS, periodos: { type: 'string' }, em: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (v.help) return 'help';
  const storage = storageOf(v);
  if (action === 'aliquotas' && v.periodos === undefined) throw new UsageError('--periodos: obrigatório (use "" para remover todos)');
  if (action === 'status' && v.periodos !== undefined) throw new UsageError('--periodos: só com a ação aliquotas');
  if (v.em !== undefined && (action !== 'status' || !DAY.test(v.em))) throw new UsageError('--em: uma data AAAA-MM-DD, só com a ação status');
  // Noon in Brasília: the day asked for, whatever the machine's zone.
  const em = v.em === undefined ? undefined : new Date(`${v.em}T12:00:00-03:00`);
  return { storage, action, ...(v.periodos !== undefined && { periodos: v.periodos }), ...(em && { em }) };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const { storage, action, periodos, em } = command.args;
  let periods;
  if (periodos !== undefined) {
    const issues = new IssueCollector();
    periods = checkRatePeriodsText(periodos, 'periodos', issues);
    if (!periods) {
      process.stderr.write(`${issues.issues.map((i) => `--${i.field}: ${i.message}`).join('\n')}\n`);
      return 1;
    }
  }
  const opened = await openServiceForCommand(storage);
  if (!opened) return EXIT_USAGE;
  try {
    const now = em ?? new Date();
    const view = action === 'aliquotas' ? await replaceOperatorRates(opened.store, periods, 'periodos', now) : await operatorRates(opened.store, now);
    process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    if (view.aviso) process.stderr.write(`Aviso: ${view.aviso}\n`);
    return 0;
  } finally {
    await opened.store.close();
  }
}
