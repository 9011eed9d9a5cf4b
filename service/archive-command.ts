// `balcao arquivar (--data DIR | --database URL) --empresa ID --mes AAAA-MM --pasta DIR`: writes the
// company's NFC-e of the month to a ZIP in the folder (the accountant's export), reads it back
// whole, and only then deletes those documents from the database (service/nfce/archive.ts). A
// month still inside the legal five years is refused with nothing written. Run again after an
// interruption, it carries on where it stopped.
//
// Exit codes: 0 the month is archived and out of the database (documents an NF-e de devolução
// refers to stay, and are counted); 1 refused, or a document of the month is not in the archive
// (it stays: the output says how many); 2 bad usage.

import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { ArchiveError, archiveNfceMonth } from './nfce/archive.ts';
import { openServiceForCommand } from './open-service.ts';
import { describeStorage, STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from './storage.ts';

const USAGE = `Uso: balcao arquivar (--data DIR | --database URL) --empresa ID --mes AAAA-MM --pasta DIR

Arquiva as NFC-e de um mês da empresa e as tira do banco do serviço: grava na pasta o ZIP da
exportação do contador (nfce-CNPJ-AAAA-MM-01-a-AAAA-MM-DD.zip: os XML, os eventos, as
inutilizações, as devoluções e o resumo.csv), lê o ZIP de volta inteiro (cada arquivo contra o seu
CRC) e só então remove do banco as NFC-e que estão nele, com as suas chaves de idempotência.
Só aceita meses fora do prazo legal de guarda: cinco anos contados de 1º de janeiro do ano
seguinte ao da emissão (as de 2021 a partir de 2027-01-01). Interrompido, basta rodar de novo.
${STORAGE_USAGE}
  --empresa ID   identificador da empresa (company_id de balcao company create)
  --mes AAAA-MM  o mês de emissão (dhEmi, dias de Brasília)
  --pasta DIR    pasta onde o ZIP fica (guarde-a com as cópias de segurança)
Saída: uma linha JSON com o que foi feito; 0 se o mês saiu do banco, 1 se foi recusado ou
se alguma NFC-e do mês não está no arquivo (ela fica no banco).
`;

type Args = { storage: Storage; companyId: string; month: string; dir: string };

function parse(args: string[]): Args | 'help' {
  const { values: v } = parseOptions(args, {
    ...STORAGE_OPTIONS,
    empresa: { type: 'string' },
    mes: { type: 'string' },
    pasta: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return 'help';
  const storage = storageOf(v);
  if (!v.empresa) throw new UsageError('--empresa: obrigatório');
  if (!v.mes) throw new UsageError('--mes: obrigatório (AAAA-MM)');
  if (!v.pasta) throw new UsageError('--pasta: obrigatório');
  return { storage, companyId: v.empresa, month: v.mes, dir: v.pasta };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const { storage, companyId, month, dir } = command.args;
  const opened = await openServiceForCommand(storage);
  if (!opened) return 1;
  const { store } = opened;
  try {
    const company = await store.getCompany(companyId);
    if (!company) {
      process.stderr.write(`--empresa: empresa ${companyId} não encontrada em ${describeStorage(storage)}\n`);
      return EXIT_USAGE;
    }
    const done = await archiveNfceMonth({ store: store.nfce, returns: store.nfe, company }, month, dir, new Date());
    process.stdout.write(
      JSON.stringify({
        arquivo: done.file,
        gravado_agora: done.written,
        entradas_verificadas: done.entries,
        nfce_no_arquivo: done.nfceEntries,
        removidas_do_banco: done.deleted,
        mantidas_por_devolucao: done.keptForReturns,
        fora_do_arquivo: done.notInArchive,
      }) + '\n',
    );
    if (done.notInArchive > 0) {
      process.stderr.write(
        `${done.notInArchive} NFC-e de ${month} não estão em ${done.file} (gravado antes delas) e ficaram no banco: ` +
          'mova esse arquivo para outro lugar e rode de novo para arquivar o mês inteiro.\n',
      );
      return 1;
    }
    return 0;
  } catch (err) {
    if (!(err instanceof ArchiveError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
