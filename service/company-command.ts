// `balcao company create|update|token`: registers a company in the service's data (a folder or a
// PostgreSQL database, storage.ts) and
// prints its id and API token as JSON, once (only the token's hash is stored); changes its
// settings afterwards; replaces its token. A running service sees each change on its next
// request (companies.ts), so none of these needs a restart.

import { readFileSync } from 'node:fs';
import { parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { CompanyChangedError, createCompany, replaceToken, updateCompany, type CompanyInput, type CompanyUpdateInput, type Issuer } from './companies.ts';
import { formatRatePeriods } from './ibscbs-options.ts';
import { runOnService, type OpenedService } from './open-service.ts';
import { STORAGE_OPTIONS, storageOf, type Storage } from './storage.ts';

const OVERVIEW = `Uso: balcao company <ação> (--data DIR | --database URL) [opções]

Empresas do serviço de emissão:
  create    cadastra uma empresa e mostra, uma única vez, o seu token de acesso
  update    altera o cadastro de uma empresa (CSC, certificado, endereço, IE, CRT, ambiente...)
  token     gera um novo token de acesso; o anterior deixa de valer na hora

balcao company <ação> --help mostra as opções de cada ação.
`;

const CREATE_USAGE = `Uso: balcao company create (--data DIR | --database URL) --cnpj CNPJ --uf UF --nome "RAZÃO SOCIAL" [opções]

Cadastra uma empresa no serviço de emissão e mostra, uma única vez, o token de acesso:
  {"company_id": "...", "token": "blc_..."}

Opções:
  --data DIR               pasta de dados do serviço (SQLite), ou
  --database URL           o banco PostgreSQL do serviço (BALCAO_DATABASE_URL), com
                           --chave-mestra ARQUIVO ou BALCAO_MASTER_KEY
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
  --ibscbs sim|nao         reforma tributária: empresa do Simples Nacional (CRT 1, 2, 4) informa
                           IBS/CBS na NFC-e (padrão nao; o regime normal, CRT 3, sempre informa)
  --ibscbs-cst CST --ibscbs-cclasstrib CÓDIGO
                           classificação do IBS/CBS dos produtos que não têm a sua (padrão
                           000 / 000001, tributação integral), juntos
  --ibscbs-aliquotas "INICIO..FIM chave=valor ...; ..."
                           alíquotas próprias da empresa por período, no lugar das publicadas
                           (chaves ibs-uf, ibs-mun, cbs; FIM em branco: sem fim), por exemplo
                           "2027-01-01..2027-12-31 cbs=8.80" enquanto a CBS de 2027 não é publicada
`;

const UPDATE_USAGE = `Uso: balcao company update (--data DIR | --database URL) --empresa COMPANY_ID [opções]

Altera o cadastro de uma empresa: mudam só as opções informadas, as demais ficam como estão, e
valem as mesmas regras do cadastro (balcao company create). O CNPJ e a UF identificam a empresa
e não mudam. Um serviço em execução usa os novos dados a partir da requisição seguinte, sem
reiniciar. Mostra o cadastro resultante em JSON, sem segredos (nem o CSC nem a senha do
certificado; do certificado, só o titular, o emissor e a validade).

Opções:
  --data DIR               pasta de dados do serviço (SQLite), ou
  --database URL           o banco PostgreSQL do serviço (BALCAO_DATABASE_URL), com
                           --chave-mestra ARQUIVO ou BALCAO_MASTER_KEY
  --empresa COMPANY_ID     o company_id mostrado no cadastro (obrigatório)
  --nome TEXTO             razão social
  --fantasia TEXTO         nome fantasia (--fantasia "" remove)
  --ie NÚMERO              inscrição estadual, sem pontuação, ou ISENTO
  --crt 1|2|3|4            regime tributário
  --csc-id N --csc TOKEN   novo código de segurança do contribuinte (NFC-e), juntos
  --certificado ARQ.pfx --senha SENHA | --senha-arquivo ARQ
                           certificado A1 renovado e sua senha: do mesmo CNPJ da empresa e
                           dentro da validade (--senha-arquivo lê a senha da primeira linha
                           do arquivo, fora da linha de comando, que outros usuários veem).
                           Do certificado substituído ficam só os dados públicos (sha256,
                           validade, data da troca), nunca a chave privada: NFC-e de
                           contingência assinadas com ele antes da troca continuam aceitas
  --ambiente homologacao|producao
                           ao passar para produção, informe no mesmo comando --ie, o endereço
                           (--logradouro, --numero, --bairro, --municipio, --cep) e o
                           certificado, como num cadastro em produção
  --qrcode-versao 2|3      versão do QR Code da NFC-e
  --logradouro, --numero, --complemento, --bairro, --municipio CÓDIGO-IBGE, --cep, --telefone
                           endereço (--complemento "" e --telefone "" removem)
  --ibscbs sim|nao         reforma tributária: empresa do Simples Nacional (CRT 1, 2, 4) informa
                           IBS/CBS na NFC-e (padrão nao; o regime normal, CRT 3, sempre informa)
  --ibscbs-cst CST --ibscbs-cclasstrib CÓDIGO
                           classificação do IBS/CBS dos produtos que não têm a sua (padrão
                           000 / 000001, tributação integral), juntos
  --ibscbs-aliquotas "INICIO..FIM chave=valor ...; ..."
                           alíquotas próprias da empresa por período, no lugar das publicadas
                           (chaves ibs-uf, ibs-mun, cbs; FIM em branco: sem fim; "" remove todas), por exemplo
                           "2027-01-01..2027-12-31 cbs=8.80" enquanto a CBS de 2027 não é publicada
`;

const TOKEN_USAGE = `Uso: balcao company token (--data DIR | --database URL) --empresa COMPANY_ID

Gera um novo token de acesso para a empresa e o mostra, uma única vez:
  {"company_id": "...", "token": "blc_..."}
O token anterior deixa de valer na hora, inclusive num serviço em execução (respostas 401):
use quando o token vazar, e informe o novo token ao terminal da loja.

Opções:
  --data DIR               pasta de dados do serviço (SQLite), ou
  --database URL           o banco PostgreSQL do serviço (BALCAO_DATABASE_URL), com
                           --chave-mestra ARQUIVO ou BALCAO_MASTER_KEY
  --empresa COMPANY_ID     o company_id mostrado no cadastro (obrigatório)
`;

// The settings of a company, shared by create and update (update refuses --cnpj and --uf itself).
const COMPANY_OPTIONS = {
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
  ibscbs: { type: 'string' },
  'ibscbs-cst': { type: 'string' },
  'ibscbs-cclasstrib': { type: 'string' },
  'ibscbs-aliquotas': { type: 'string' },
} as const;

const COMMON_OPTIONS = { ...STORAGE_OPTIONS, help: { type: 'boolean', short: 'h' } } as const;

const CREATE_OPTIONS = { ...COMMON_OPTIONS, ...COMPANY_OPTIONS } as const;
const UPDATE_OPTIONS = { ...COMMON_OPTIONS, empresa: { type: 'string' }, ...COMPANY_OPTIONS } as const;
const TOKEN_OPTIONS = { ...COMMON_OPTIONS, empresa: { type: 'string' } } as const;

type CompanyValues = { [K in keyof typeof COMPANY_OPTIONS]?: string };

type Create = { action: 'create'; storage: Storage; input: CompanyInput; passwordOption?: string };
type Update = { action: 'update'; storage: Storage; companyId: string; changes: CompanyUpdateInput; passwordOption?: string };
type Token = { action: 'token'; storage: Storage; companyId: string };
type Parsed = Create | Update | Token;

function required(v: Record<string, unknown>, names: readonly string[]): void {
  const missing = names.filter((name) => v[name] === undefined);
  if (missing.length) throw new UsageError(missing.map((name) => `--${name}: obrigatório`).join('\n'));
}

/** The certificate and its password (from --senha or --senha-arquivo), read from their files. */
function certificateOf(v: CompanyValues): Pick<Create, 'passwordOption'> & { certificate?: CompanyInput['certificate'] } {
  if (v.senha !== undefined && v['senha-arquivo'] !== undefined) throw new UsageError('--senha-arquivo: use --senha ou --senha-arquivo, não os dois');
  const password = v['senha-arquivo'] !== undefined ? passwordFromFile(v['senha-arquivo']) : v.senha;
  if ((v.certificado === undefined) !== (password === undefined)) {
    throw new UsageError(v.certificado === undefined ? '--certificado: obrigatório junto com --senha' : '--senha: obrigatória junto com --certificado');
  }
  // Where the password came from, so that a wrong one is reported against that option.
  const passwordOption = v['senha-arquivo'] !== undefined ? { passwordOption: 'senha-arquivo' } : {};
  if (v.certificado === undefined) return passwordOption;
  try {
    return { ...passwordOption, certificate: { pfx: readFileSync(v.certificado), password: password! } };
  } catch (err) {
    throw new UsageError(`--certificado: não foi possível ler ${v.certificado} (${(err as NodeJS.ErrnoException).code ?? 'erro'})`);
  }
}

/** The options as companies.ts names them; absent ones stay absent (undefined). */
function settingsOf(v: CompanyValues, certificate: CompanyInput['certificate']): CompanyUpdateInput {
  const settings: CompanyUpdateInput = {
    nome: v.nome,
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
    ibscbs: v.ibscbs,
    ibscbsCst: v['ibscbs-cst'],
    ibscbsCclasstrib: v['ibscbs-cclasstrib'],
    ibscbsAliquotas: v['ibscbs-aliquotas'],
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

function parseCreate(args: string[]): Create | 'help' {
  const { values: v } = parseOptions(args, CREATE_OPTIONS);
  if (v.help) return 'help';
  required(v, ['cnpj', 'uf', 'nome']);
  const storage = storageOf(v);
  const { certificate, passwordOption } = certificateOf(v);
  return {
    action: 'create',
    storage,
    ...(passwordOption && { passwordOption }),
    input: { cnpj: v.cnpj!, uf: v.uf!, nome: v.nome!, ...settingsOf(v, certificate) },
  };
}

function parseUpdate(args: string[]): Update | 'help' {
  const { values: v } = parseOptions(args, UPDATE_OPTIONS);
  if (v.help) return 'help';
  required(v, ['empresa']);
  const storage = storageOf(v);
  const identity = [
    v.cnpj !== undefined && '--cnpj: o CNPJ identifica a empresa e não muda; para outro CNPJ, cadastre outra empresa (balcao company create)',
    v.uf !== undefined && '--uf: a UF identifica a empresa (está na chave de acesso de cada nota) e não muda; cadastre outra empresa',
  ].filter((line): line is string => line !== false);
  if (identity.length) throw new UsageError(identity.join('\n'));
  const { certificate, passwordOption } = certificateOf(v);
  const changes = settingsOf(v, certificate);
  if (Object.keys(changes).length === 0) throw new UsageError('informe ao menos uma opção a alterar (veja as opções abaixo)');
  return { action: 'update', storage, companyId: v.empresa!, changes, ...(passwordOption && { passwordOption }) };
}

function parseToken(args: string[]): Token | 'help' {
  const { values: v } = parseOptions(args, TOKEN_OPTIONS);
  if (v.help) return 'help';
  required(v, ['empresa']);
  return { action: 'token', storage: storageOf(v), companyId: v.empresa! };
}

const ACTIONS = {
  create: { usage: CREATE_USAGE, parse: parseCreate },
  update: { usage: UPDATE_USAGE, parse: parseUpdate },
  token: { usage: TOKEN_USAGE, parse: parseToken },
} as const;

type Action = keyof typeof ACTIONS;

function parseAction(action: string | undefined): Action | 'help' {
  if (action === '--help' || action === '-h' || action === 'help') return 'help';
  if (action === undefined) throw new UsageError('informe a ação: create, update ou token');
  if (!Object.hasOwn(ACTIONS, action)) throw new UsageError(`ação desconhecida: ${action} (disponíveis: create, update, token)`);
  return action as Action;
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

/** The company's settings as `company update` prints them: nothing secret, the certificate's public facts. */
function settingsView({ company: c, certificate, replacedCertificates }: Issuer) {
  const a = c.address;
  return {
    company_id: c.id,
    cnpj: c.cnpj,
    uf: a.uf,
    nome: c.nome,
    fantasia: c.fantasia,
    ie: c.ie,
    crt: c.crt,
    ambiente: c.ambiente,
    qrcode_versao: c.qrcodeVersao,
    csc_id: c.csc?.id ?? null,
    endereco: {
      logradouro: a.logradouro,
      numero: a.numero,
      complemento: a.complemento,
      bairro: a.bairro,
      municipio: a.codigoMunicipio,
      nome_municipio: a.municipio,
      cep: a.cep,
      telefone: a.telefone,
    },
    certificado: {
      titular: certificate.subject,
      emissor: certificate.issuer,
      cnpj: certificate.cnpj,
      valido_de: certificate.notBefore.toISOString(),
      valido_ate: certificate.notAfter.toISOString(),
      sha256: certificate.fingerprint256,
    },
    ibs_cbs: {
      opcao_simples: c.ibsCbs.optIn,
      cst: c.ibsCbs.defaultClassification.CST,
      cclasstrib: c.ibsCbs.defaultClassification.cClassTrib,
      aliquotas: formatRatePeriods(c.ibsCbs.rates),
    },
    certificados_substituidos: replacedCertificates.map((r) => ({
      sha256: r.sha256,
      valido_de: r.notBefore,
      valido_ate: r.notAfter,
      substituido_em: r.replacedAt,
    })),
    atualizada_em: c.updatedAt,
  };
}

async function perform(opened: OpenedService, parsed: Parsed): Promise<unknown> {
  switch (parsed.action) {
    case 'create': {
      const { companyId, token } = await createCompany(opened, parsed.input);
      return { company_id: companyId, token };
    }
    case 'update':
      return settingsView(await updateCompany(opened, parsed.companyId, parsed.changes));
    case 'token': {
      const { companyId, token } = await replaceToken(opened, parsed.companyId);
      return { company_id: companyId, token };
    }
  }
}

export async function run(args: string[]): Promise<number> {
  const chosen = parseCommand(args.slice(0, 1), OVERVIEW, ([action]) => parseAction(action));
  if ('exit' in chosen) return chosen.exit;
  const command = parseCommand<Parsed>(args.slice(1), ACTIONS[chosen.args].usage, ACTIONS[chosen.args].parse);
  if ('exit' in command) return command.exit;
  const parsed = command.args;
  // The fields are named after the options (companies.ts), so each line points at one.
  const passwordOption = 'passwordOption' in parsed ? parsed.passwordOption : undefined;
  const option = (field: string) => (field === 'senha' && passwordOption ? passwordOption : field);
  return runOnService(
    parsed.storage,
    (opened) => perform(opened, parsed),
    option,
    (err) => {
      if (!(err instanceof CompanyChangedError)) return undefined;
      process.stderr.write(`${err.message}\n`);
      return 1;
    },
  );
}
