// `balcao ibpt import <arquivo.csv>`: imports an IBPT table ("De Olho no Imposto", Lei 12.741/2012,
// the CSV IBPT publishes per UF) into the terminal's database of a data folder — what the manager's
// screen does, for whoever prepares a terminal by hand — or, with --servico, into the service's
// (SQLite folder or PostgreSQL), for its companies of that UF. docs/fiscal.md, "Approximate taxes".

import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { brasiliaDay, formatDateBR } from '../base/common/brasilia.ts';
import { openPosDatabase, POS_DB_FILE } from '../electron/core/db.ts';
import { TerminalError } from '../electron/core/errors.ts';
import { readIbptFile } from '../electron/core/ibpt/ibpt.ts';
import { IbptStore } from '../electron/core/ibpt/ibpt-store.ts';
import type { IbptStoredTable, IbptTable } from '../fiscal/ibpt/table.ts';
import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from '../service/cli-args.ts';
import { openServiceForCommand } from '../service/open-service.ts';
import { STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from '../service/storage.ts';

const USAGE = `Uso: balcao ibpt import <arquivo.csv> --data DIR
     balcao ibpt import <arquivo.csv> --servico (--data DIR | --database URL)

Importa a tabela do IBPT ("De Olho no Imposto", Lei 12.741/2012) no banco do terminal da pasta
de dados: o arquivo CSV que o IBPT publica por UF (TabelaIBPTax<UF><versão>.csv; a UF vem do nome).
A mesma UF e versão importadas de novo substituem a anterior. Os tributos aproximados de cada item
passam a vir da tabela da UF da loja vigente no dia da venda; um NCM que a tabela não traz usa a
alíquota média (a tela do gerente, em Configurações › Tabela IBPT, lista esses produtos).
  --data DIR    pasta de dados do terminal (a de um balcao start serve: usa DIR/terminal)
  --servico     importa no serviço de emissão, para as NFC-e em JSON das suas empresas daquela UF
                (as de integradores); um serviço em execução passa a usá-la na requisição seguinte
${STORAGE_USAGE}
Saída: 0 importada; 1 arquivo recusado (o erro diz a linha e a coluna); 2 uso incorreto.
`;

type Args = { file: string; where: { terminal: string } | { service: Storage } };

function parse(args: string[]): Args | 'help' {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return 'help';
  if (action !== 'import') throw new UsageError(action === undefined ? 'informe a ação: import' : `ação desconhecida: ${action}`);
  const { values, positionals } = parseOptions(rest, { ...STORAGE_OPTIONS, servico: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, true);
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('informe um arquivo CSV do IBPT');
  const file = resolve(positionals[0]!);
  if (values.servico) return { file, where: { service: storageOf(values) } };
  if (values.database !== undefined || values['chave-mestra'] !== undefined) throw new UsageError('--database e --chave-mestra: só com --servico');
  if (!values.data) throw new UsageError('--data: obrigatório');
  const dir = resolve(values.data);
  // A `balcao start` folder keeps the terminal's database in its terminal/ subfolder.
  return { file, where: { terminal: !existsSync(join(dir, POS_DB_FILE)) && existsSync(join(dir, 'terminal')) ? join(dir, 'terminal') : dir } };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const { file, where } = command.args;
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch (err) {
    process.stderr.write(`${basename(file)}: não foi possível ler o arquivo (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})\n`);
    return 1;
  }
  let table;
  try {
    table = readIbptFile(content, basename(file));
  } catch (err) {
    if (!(err instanceof TerminalError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
  const stored =
    'terminal' in where ? importIntoTerminal(where.terminal, table, basename(file)) : await importIntoService(where.service, table, basename(file));
  if (!stored) return EXIT_USAGE;
  const day = (iso: string) => formatDateBR(new Date(`${iso}T12:00:00-03:00`));
  process.stdout.write(
    `Tabela do IBPT importada${'terminal' in where ? '' : ' no serviço'}: UF ${stored.uf}, versão ${stored.versao}, chave ${stored.chave}, ` +
      `vigência de ${day(stored.vigencia_inicio)} a ${day(stored.vigencia_fim)}, ${stored.ncm_count} NCMs.\n`,
  );
  if (stored.vigencia_fim < brasiliaDay(Date.now())) process.stdout.write('Atenção: a vigência desta tabela já terminou; importe a mais recente do IBPT.\n');
  return 0;
}

function importIntoTerminal(dataDir: string, table: IbptTable, fileName: string): IbptStoredTable {
  const db = openPosDatabase(dataDir);
  try {
    return new IbptStore(db).importTable(table, fileName, new Date().toISOString());
  } finally {
    db.close();
  }
}

async function importIntoService(storage: Storage, table: IbptTable, fileName: string): Promise<IbptStoredTable | undefined> {
  const opened = await openServiceForCommand(storage);
  if (!opened) return undefined;
  try {
    return await opened.store.importIbptTable(table, fileName);
  } finally {
    await opened.store.close();
  }
}
