// `balcao responsavel-tecnico definir|mostrar|remover`: the deployment's technical responsible
// (infRespTec, resp-tec.ts), one for every company of the service. The CSRT is sealed under the
// master key and never printed. The service processes read it at their first issuance, so a
// change takes effect when they restart.

import { readFileSync } from 'node:fs';
import { parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { runOnService, type OpenedService } from './open-service.ts';
import { loadTechnicalResponsible, setTechnicalResponsible } from './resp-tec.ts';
import { STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from './storage.ts';

const USAGE = `Uso: balcao responsavel-tecnico <ação> (--data DIR | --database URL) [opções]

O responsável técnico (grupo infRespTec, NT 2018.005) escrito em toda NFC-e, NF-e e MDF-e
que o serviço emite, para todas as empresas: quem desenvolve e mantém o software. AM, MS, PE,
PR, SC e TO rejeitam (972) o documento sem ele.
  definir   grava o responsável técnico (substitui o anterior)
  mostrar   mostra o que está gravado, sem o CSRT
  remover   deixa de escrever o grupo
${STORAGE_USAGE}
Opções de definir:
  --cnpj CNPJ          CNPJ do responsável técnico, sem pontuação (obrigatório)
  --contato NOME       pessoa de contato (obrigatório)
  --email E-MAIL       (obrigatório)
  --telefone NÚMERO    DDD e número, de 7 a 12 dígitos (obrigatório)
  --csrt-id N --csrt-arquivo ARQ | --csrt CSRT
                       identificador e código de segurança do responsável técnico (CSRT)
                       que a SEFAZ forneceu, juntos; --csrt-arquivo lê o CSRT da primeira
                       linha do arquivo, fora da linha de comando. Guardado cifrado com a
                       chave mestra; gera o hashCSRT de cada documento.
Os processos do serviço leem o responsável técnico na primeira emissão: reinicie-os depois
de alterá-lo.
`;

type Parsed = { storage: Storage; action: 'definir'; input: Record<string, unknown>; csrtOption: string } | { storage: Storage; action: 'mostrar' | 'remover' };

/** The option each field of checkTechnicalResponsible comes from. */
const OPTION_OF: Record<string, string> = { cnpj: 'cnpj', contato: 'contato', email: 'email', telefone: 'telefone', csrtId: 'csrt-id', csrt: 'csrt' };

function parse(args: string[]): Parsed | 'help' {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return 'help';
  if (action !== 'definir' && action !== 'mostrar' && action !== 'remover') {
    throw new UsageError(action === undefined ? 'informe a ação: definir, mostrar ou remover' : `ação desconhecida: ${action}`);
  }
  const { values: v } = parseOptions(rest, {
    ...STORAGE_OPTIONS,
    help: { type: 'boolean', short: 'h' },
    ...(action === 'definir' && {
      cnpj: { type: 'string' },
      contato: { type: 'string' },
      email: { type: 'string' },
      telefone: { type: 'string' },
      'csrt-id': { type: 'string' },
      csrt: { type: 'string' },
      'csrt-arquivo': { type: 'string' },
    }),
  });
  if (v.help) return 'help';
  const storage = storageOf(v);
  if (action !== 'definir') return { storage, action };
  const o = v as Record<string, string | undefined>;
  if (o.csrt !== undefined && o['csrt-arquivo'] !== undefined) throw new UsageError('informe --csrt ou --csrt-arquivo, não os dois');
  const token = o['csrt-arquivo'] !== undefined ? firstLine(o['csrt-arquivo']) : o.csrt;
  if ((o['csrt-id'] === undefined) !== (token === undefined)) throw new UsageError('--csrt-id e o CSRT (--csrt ou --csrt-arquivo) vão juntos');
  const csrt = o['csrt-id'] === undefined ? undefined : { id: /^[0-9]{1,3}$/.test(o['csrt-id']) ? Number(o['csrt-id']) : o['csrt-id'], token };
  return {
    storage,
    action,
    input: { cnpj: o.cnpj, contact: o.contato, email: o.email, phone: o.telefone, ...(csrt && { csrt }) },
    csrtOption: o['csrt-arquivo'] !== undefined ? 'csrt-arquivo' : 'csrt',
  };
}

function firstLine(path: string): string {
  try {
    return readFileSync(path, 'utf8').split(/\r?\n/)[0]!;
  } catch (err) {
    throw new UsageError(`--csrt-arquivo: não foi possível ler ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

async function perform(opened: OpenedService, parsed: Parsed): Promise<unknown> {
  if (parsed.action === 'definir') await setTechnicalResponsible(opened, parsed.input);
  if (parsed.action === 'remover') await opened.store.setTechnicalResponsible(undefined);
  const rt = await loadTechnicalResponsible(opened);
  const stored = rt && (await opened.store.technicalResponsible());
  return {
    responsavel_tecnico: rt
      ? {
          cnpj: rt.cnpj,
          contato: rt.contact,
          email: rt.email,
          telefone: rt.phone,
          csrt_id: rt.csrt?.id ?? null,
          csrt: rt.csrt ? 'definido' : null,
          atualizado_em: stored!.updatedAt,
        }
      : null,
  };
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand<Parsed>(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const parsed = command.args;
  const option = (field: string) => {
    const name = OPTION_OF[field.replace(/^responsavelTecnico\./, '')] ?? field;
    return name === 'csrt' && 'csrtOption' in parsed ? parsed.csrtOption : name;
  };
  return runOnService(parsed.storage, (opened) => perform(opened, parsed), option);
}
