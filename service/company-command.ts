// `balcao company create`: registers a company in the service's data directory and prints its
// id and API token as JSON, once (only the token's hash is stored).

import { readFileSync } from 'node:fs';
import { FieldError } from '../fiscal/errors.ts';
import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { createCompany, type CompanyInput } from './companies.ts';
import { openService } from './open-service.ts';

const USAGE = `Uso: balcao company create --data DIR --cnpj CNPJ --uf UF --nome "RAZÃO SOCIAL" [opções]

Cadastra uma empresa no serviço de emissão e mostra, uma única vez, o token de acesso:
  {"company_id": "...", "token": "blc_..."}

Opções:
  --data DIR               pasta de dados do serviço (obrigatória)
  --cnpj CNPJ              14 caracteres, sem pontuação (obrigatório)
  --uf UF                  sigla da UF do emitente (obrigatória)
  --nome TEXTO             razão social (obrigatória)
  --fantasia TEXTO         nome fantasia
  --ie NÚMERO              inscrição estadual (padrão em homologação: ISENTO)
  --crt 1|2|3|4            regime tributário (padrão 1, Simples Nacional)
  --csc-id N --csc TOKEN   código de segurança do contribuinte (NFC-e), juntos
  --certificado ARQ.pfx --senha SENHA | --senha-arquivo ARQ
                           certificado A1 do CNPJ e sua senha (--senha-arquivo lê a senha
                           da primeira linha do arquivo, fora da linha de comando, que
                           outros usuários veem); em homologação, sem certificado é
                           gerado um certificado de teste
  --ambiente homologacao|producao    (padrão homologacao)
  --qrcode-versao 2|3      versão do QR Code da NFC-e (padrão 2)
  --logradouro, --numero, --complemento, --bairro, --municipio CÓDIGO-IBGE, --cep, --telefone
                           endereço; em homologação, o que faltar é preenchido com a capital da UF
`;

const OPTIONS = {
  data: { type: 'string' },
  cnpj: { type: 'string' },
  uf: { type: 'string' },
  nome: { type: 'string' },
  fantasia: { type: 'string' },
  ie: { type: 'string' },
  crt: { type: 'string' },
  'csc-id': { type: 'string' },
  csc: { type: 'string' },
  certificado: { type: 'string' },
  senha: { type: 'string' },
  'senha-arquivo': { type: 'string' },
  ambiente: { type: 'string' },
  'qrcode-versao': { type: 'string' },
  logradouro: { type: 'string' },
  numero: { type: 'string' },
  complemento: { type: 'string' },
  bairro: { type: 'string' },
  municipio: { type: 'string' },
  cep: { type: 'string' },
  telefone: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(args: string[]): { dataDir: string; input: CompanyInput; passwordOption?: string } | 'help' {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h' || action === 'help') return 'help';
  if (action === undefined) throw new UsageError('informe a ação: create');
  if (action !== 'create') throw new UsageError(`ação desconhecida: ${action} (disponível: create)`);
  const { values: v } = parseOptions(rest, OPTIONS);
  if (v.help) return 'help';
  const missing = (['data', 'cnpj', 'uf', 'nome'] as const).filter((name) => v[name] === undefined);
  if (missing.length) throw new UsageError(missing.map((name) => `--${name}: obrigatório`).join('\n'));
  if (v.senha !== undefined && v['senha-arquivo'] !== undefined) throw new UsageError('--senha-arquivo: use --senha ou --senha-arquivo, não os dois');
  const password = v['senha-arquivo'] !== undefined ? passwordFromFile(v['senha-arquivo']) : v.senha;
  if ((v.certificado === undefined) !== (password === undefined)) {
    throw new UsageError(v.certificado === undefined ? '--certificado: obrigatório junto com --senha' : '--senha: obrigatória junto com --certificado');
  }
  let certificate: CompanyInput['certificate'];
  if (v.certificado !== undefined) {
    try {
      certificate = { pfx: readFileSync(v.certificado), password: password! };
    } catch (err) {
      throw new UsageError(`--certificado: não foi possível ler ${v.certificado} (${(err as NodeJS.ErrnoException).code ?? 'erro'})`);
    }
  }
  return {
    dataDir: v.data!,
    // Where the password came from, so that a wrong one is reported against that option.
    ...(v['senha-arquivo'] !== undefined && { passwordOption: 'senha-arquivo' }),
    input: {
      cnpj: v.cnpj!,
      uf: v.uf!,
      nome: v.nome!,
      fantasia: v.fantasia,
      ie: v.ie,
      crt: v.crt,
      cscId: v['csc-id'],
      csc: v.csc,
      certificate,
      ambiente: v.ambiente,
      qrcodeVersao: v['qrcode-versao'],
      logradouro: v.logradouro,
      numero: v.numero,
      complemento: v.complemento,
      bairro: v.bairro,
      municipio: v.municipio,
      cep: v.cep,
      telefone: v.telefone,
    },
  };
}

/** The first line of the file, without its line ending: the password stays off the command line. */
function passwordFromFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--senha-arquivo: não foi possível ler ${file} (${(err as NodeJS.ErrnoException).code ?? 'erro'})`);
  }
  return text.split(/\r?\n/, 1)[0] ?? '';
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const parsed = command.args;

  let opened: Awaited<ReturnType<typeof openService>>;
  try {
    opened = await openService(parsed.dataDir);
  } catch (err) {
    process.stderr.write(`Não foi possível abrir os dados do serviço em ${parsed.dataDir}: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const { companyId, token } = await createCompany(opened, parsed.input);
    process.stdout.write(JSON.stringify({ company_id: companyId, token }) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof FieldError) {
      // The fields are named after the options (companies.ts), so each line points at one.
      const option = (field: string) => (field === 'senha' && parsed.passwordOption ? parsed.passwordOption : field);
      process.stderr.write(err.issues.map((i) => `--${option(i.field)}: ${i.message}`).join('\n') + '\n');
      return EXIT_USAGE;
    }
    throw err;
  } finally {
    await opened.store.close();
  }
}
