// `balcao sefaz status (--data DIR | --database URL) --empresa ID`: asks the status services (NFeStatusServico4 for
// the NFC-e, MDFeStatusServico for the MDF-e) of the company's UF and environment, with the
// company's own certificate, and prints cStat/xMotivo. The first thing an operator runs on a new
// install: it proves the certificate, the ICP-Brasil chain (BALCAO_SEFAZ_CA), the network and the
// endpoints in one go, without issuing anything.
//
// Exit codes: 0 every service answered 107 (em operação); 1 some service answered otherwise or
// could not be reached; 2 bad usage or configuration.

import { EXIT_USAGE, parseCommand, parseOptions, UsageError } from './cli-args.ts';
import { AuthorityCertificateError, type AuthorityCompany } from './authority/port.ts';
import { SefazAuthority, type ServiceStatus } from './authority/sefaz/connector.ts';
import { SefazConfigError, sefazOptions, type SefazSettings } from './authority/sefaz/config.ts';
import { Companies } from './companies.ts';
import { openServiceForCommand } from './open-service.ts';
import { describeStorage, STORAGE_OPTIONS, STORAGE_USAGE, storageOf, type Storage } from './storage.ts';
import { FieldError } from '../fiscal/errors.ts';

const USAGE = `Uso: balcao sefaz status (--data DIR | --database URL) --empresa ID [--sefaz-url https://HOST:PORTA] [--sefaz-ca ARQUIVO.pem]

Consulta o status dos serviços da SEFAZ (NFC-e: NFeStatusServico4; MDF-e: MDFeStatusServico)
da UF e do ambiente da empresa, com o certificado A1 dela, e mostra cStat e xMotivo.
${STORAGE_USAGE}
  --empresa ID   identificador da empresa (company_id de balcao company create)
  --sefaz-url URL  troca a origem dos endpoints (o mesmo que BALCAO_SEFAZ_URL)
  --sefaz-ca ARQUIVO  certificados PEM acrescentados às raízes confiáveis (o mesmo que BALCAO_SEFAZ_CA)
Saída: 0 se todos responderam 107 (em operação); 1 se algum respondeu outra coisa ou não respondeu.
`;

type Args = { storage: Storage; companyId: string; sefaz: SefazSettings };

function parse(args: string[]): Args | 'help' {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') return 'help';
  if (sub !== 'status') throw new UsageError(sub === undefined ? 'informe o subcomando: status' : `subcomando desconhecido: ${sub}`);
  const { values: v } = parseOptions(rest, {
    ...STORAGE_OPTIONS,
    empresa: { type: 'string' },
    'sefaz-url': { type: 'string' },
    'sefaz-ca': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (v.help) return 'help';
  const storage = storageOf(v);
  if (!v.empresa) throw new UsageError('--empresa: obrigatório');
  return { storage, companyId: v.empresa, sefaz: { url: v['sefaz-url'], ca: v['sefaz-ca'] } };
}

const ENVIRONMENT = { homologacao: 'homologação', producao: 'produção' } as const;

function line(label: string, s: ServiceStatus): string {
  const extra = [s.tMed && `tMed ${s.tMed} s`, s.xObs].filter(Boolean).join('; ');
  return `${label}  ${s.service}  ${s.url}\n       cStat ${s.cStat}: ${s.xMotivo}${extra ? ` (${extra})` : ''}\n`;
}

export async function run(args: string[]): Promise<number> {
  const command = parseCommand(args, USAGE, parse);
  if ('exit' in command) return command.exit;
  const { storage, companyId, sefaz } = command.args;
  let options;
  try {
    options = sefazOptions(sefaz);
  } catch (err) {
    if (!(err instanceof SefazConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return EXIT_USAGE;
  }
  const opened = await openServiceForCommand(storage);
  if (!opened) return EXIT_USAGE;
  const authority = new SefazAuthority(options);
  try {
    let issuer;
    try {
      issuer = await new Companies(opened).issuer(companyId, new Date());
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      process.stderr.write(`Empresa ${companyId}: ${err.issues.map((i) => `${i.field}: ${i.message}`).join('; ')}\n`);
      return 1;
    }
    if (!issuer) {
      process.stderr.write(`--empresa: empresa ${companyId} não encontrada em ${describeStorage(storage)}\n`);
      return EXIT_USAGE;
    }
    const { company, certificate } = issuer;
    const who: AuthorityCompany = {
      id: company.id,
      cnpj: company.cnpj,
      uf: company.address.uf,
      environment: company.ambiente,
      credentials: { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem },
    };
    process.stdout.write(`Empresa ${company.nome} (CNPJ ${company.cnpj}), UF ${who.uf}, ambiente de ${ENVIRONMENT[company.ambiente]}\n`);
    let ok = true;
    for (const [label, family] of [
      ['NFC-e', 'nfe'],
      ['MDF-e', 'mdfe'],
    ] as const) {
      try {
        const status = await authority.status(family, who);
        process.stdout.write(line(label, status));
        if (status.cStat !== '107') ok = false;
      } catch (err) {
        ok = false;
        const kind = err instanceof AuthorityCertificateError ? 'certificado recusado' : 'sem resposta';
        process.stdout.write(`${label}  ${kind}: ${(err as Error).message}\n`);
      }
    }
    return ok ? 0 : 1;
  } finally {
    await authority.close();
    await opened.store.close();
  }
}
