// `balcao ibpt import <arquivo.csv>`: imports an IBPT table ("De Olho no Imposto", Lei 12.741/2012,
// the CSV IBPT publishes per UF) into the terminal's database of a data folder — what the manager's
// screen does, for whoever prepares a terminal by hand. docs/fiscal.md, "Approximate taxes".

import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { brasiliaDay, formatDateBR } from '../base/common/brasilia.ts';
import { openPosDatabase, POS_DB_FILE } from '../electron/core/db.ts';
import { TerminalError } from '../electron/core/errors.ts';
import { readIbptFile } from '../electron/core/ibpt/ibpt.ts';
import { IbptStore } from '../electron/core/ibpt/ibpt-store.ts';
import { parseCommand, parseOptions, UsageError } from '../service/cli-args.ts';

const USAGE = `Uso: balcao ibpt import <arquivo.csv> --data DIR

Importa a tabela do IBPT ("De Olho no Imposto", Lei 12.741/2012) no banco do terminal da pasta
de dados: o arquivo CSV que o IBPT publica por UF (TabelaIBPTax<UF><versão>.csv; a UF vem do nome).
A mesma UF e versão importadas de novo substituem a anterior. Os tributos aproximados de cada item
passam a vir da tabela da UF da loja vigente no dia da venda; um NCM que a tabela não traz usa a
alíquota média (a tela do gerente, em Configurações › Tabela IBPT, lista esses produtos).
  --data DIR    pasta de dados do terminal (a de um balcao start serve: usa DIR/terminal)
Saída: 0 importada; 1 arquivo recusado (o erro diz a linha e a coluna); 2 uso incorreto.
`;

type Args = { file: string; dataDir: string };

function parse(args: string[]): Args | 'help' {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return 'help';
  if (action !== 'import') throw new UsageError(action === undefined ? 'informe a ação: import' : `ação desconhecida: ${action}`);
  const { values, positionals } = parseOptions(rest, { data: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('informe um arquivo CSV do IBPT');
  if (!values.data) throw new UsageError('--data: obrigatório');
  const dir = resolve(values.data);
  // A `balcao start` folder keeps the terminal's database in its terminal/ subfolder.
  const dataDir = !existsSync(join(dir, POS_DB_FILE)) && existsSync(join(dir, 'terminal')) ? join(dir, 'terminal') : dir;
  return { file: resolve(positionals[0]!), dataDir };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const { file, dataDir } = command.args;
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
  const db = openPosDatabase(dataDir);
  try {
    const stored = new IbptStore(db).importTable(table, basename(file), new Date().toISOString());
    const day = (iso: string) => formatDateBR(new Date(`${iso}T12:00:00-03:00`));
    process.stdout.write(
      `Tabela do IBPT importada: UF ${stored.uf}, versão ${stored.versao}, chave ${stored.chave}, ` +
        `vigência de ${day(stored.vigencia_inicio)} a ${day(stored.vigencia_fim)}, ${stored.ncm_count} NCMs.\n`,
    );
    if (stored.vigencia_fim < brasiliaDay(Date.now())) process.stdout.write('Atenção: a vigência desta tabela já terminou; importe a mais recente do IBPT.\n');
    return 0;
  } finally {
    db.close();
  }
}
