// Companies: registration (with the first API token) and, for issuance, the emitter data and
// certificate in clear, decrypted on demand and kept in memory only.
//
// Validation errors name the field as the `balcao company create` option that carries it
// (`cnpj`, `csc-id`, `certificado`, ...), so the CLI can point at the exact option.

import { randomUUID } from 'node:crypto';
import { assertCnpj } from '../fiscal/br/documents.ts';
import { assertCep, assertMunicipality, ufOfCep } from '../fiscal/br/catalogs.ts';
import { BRASILIA_TZ, cUFOf } from '../fiscal/br/uf.ts';
import { generateTestCertificate, loadPfx, type Certificate } from '../fiscal/certificate.ts';
import type { Emitter, Environment, QrCodeVersion } from '../fiscal/company.ts';
import { FieldError, IssueCollector } from '../fiscal/errors.ts';
import { secretContext, type SecretBox } from './secrets.ts';
import type { CompanyAddress, CompanyRecord, CompanyStore, Crt } from './store.ts';
import { generateToken } from './tokens.ts';

/** What `balcao company create` collects; strings as typed, validated by `createCompany`. */
export type CompanyInput = {
  cnpj: string;
  uf: string;
  nome: string;
  fantasia?: string;
  ie?: string;
  crt?: string;
  cscId?: string;
  csc?: string;
  certificate?: { pfx: Buffer; password: string };
  ambiente?: string;
  qrcodeVersao?: string;
  logradouro?: string;
  numero?: string;
  complemento?: string;
  bairro?: string;
  municipio?: string;
  cep?: string;
  telefone?: string;
};

// Capital of each UF with the first CEP of the state's range (the capital's general CEP): the
// sandbox default address, so a test company needs nothing but a CNPJ, a UF and a name.
const CAPITALS: Readonly<Record<string, readonly [cMun: string, cep: string]>> = {
  AC: ['1200401', '69900000'], AL: ['2704302', '57000000'], AM: ['1302603', '69000000'], AP: ['1600303', '68900000'],
  BA: ['2927408', '40000000'], CE: ['2304400', '60000000'], DF: ['5300108', '70000000'], ES: ['3205309', '29000000'],
  GO: ['5208707', '74000000'], MA: ['2111300', '65000000'], MG: ['3106200', '30000000'], MS: ['5002704', '79000000'],
  MT: ['5103403', '78000000'], PA: ['1501402', '66000000'], PB: ['2507507', '58000000'], PE: ['2611606', '50000000'],
  PI: ['2211001', '64000000'], PR: ['4106902', '80000000'], RJ: ['3304557', '20000000'], RN: ['2408102', '59000000'],
  RO: ['1100205', '76800000'], RR: ['1400100', '69300000'], RS: ['4314902', '90000000'], SC: ['4205407', '88000000'],
  SE: ['2800308', '49000000'], SP: ['3550308', '01000000'], TO: ['1721000', '77000000'],
};

export const sandboxCapitalOf = (uf: string): readonly [cMun: string, cep: string] | undefined => CAPITALS[uf];

const SANDBOX_ADDRESS = { logradouro: 'Rua de Teste', numero: 'S/N', bairro: 'Centro' } as const;

type Validated = Omit<CompanyRecord, 'id' | 'csc' | 'certificate' | 'createdAt'> & {
  csc: { id: string; token: string } | null;
  certificate: { pfx: Buffer; password: string; loaded: Certificate };
};

function text(issues: IssueCollector, field: string, value: string | undefined, min: number, max: number): string | undefined {
  if (value === undefined) return undefined;
  const length = [...value].length;
  if (value.trim() !== value || length < min || length > max) {
    issues.add(field, `deve ter de ${min} a ${max} caracteres, sem espaços nas pontas`);
    return undefined;
  }
  return value;
}

function required<T>(issues: IssueCollector, field: string, value: T | undefined, why: string): T | undefined {
  if (value === undefined) issues.add(field, `obrigatório ${why}`);
  return value;
}

/** Checks every field at once (all problems reported together) and fills the sandbox defaults. */
export function validateCompany(input: CompanyInput, now: Date = new Date()): Validated {
  const issues = new IssueCollector();
  const cnpj = issues.capture(() => assertCnpj(input.cnpj, 'cnpj'));
  const uf = issues.capture(() => (cUFOf(input.uf, 'uf'), input.uf));
  const nome = input.nome === undefined ? required(issues, 'nome', undefined, '(razão social)') : text(issues, 'nome', input.nome, 2, 60);
  const fantasia = text(issues, 'fantasia', input.fantasia, 1, 60);

  let ambiente: Environment = 'homologacao';
  if (input.ambiente !== undefined) {
    if (input.ambiente === 'homologacao' || input.ambiente === 'producao') ambiente = input.ambiente;
    else issues.add('ambiente', 'deve ser homologacao ou producao');
  }
  const production = ambiente === 'producao';
  const inProduction = 'em produção';

  let ie: string | undefined = 'ISENTO';
  if (input.ie !== undefined) {
    if (/^(?:[0-9]{2,14}|ISENTO)$/.test(input.ie)) ie = input.ie;
    else issues.add('ie', 'inscrição estadual deve ter de 2 a 14 dígitos, sem pontuação (ou ISENTO)');
  } else if (production) {
    issues.add('ie', `obrigatória ${inProduction}`);
  }

  let crt: Crt = 1;
  if (input.crt !== undefined) {
    if (/^[1-4]$/.test(input.crt)) crt = Number(input.crt) as Crt;
    else issues.add('crt', 'deve ser 1 (Simples Nacional), 2 (SN, excesso de sublimite), 3 (Regime Normal) ou 4 (MEI)');
  }

  let qrcodeVersao: QrCodeVersion = 2;
  if (input.qrcodeVersao !== undefined) {
    if (input.qrcodeVersao === '2' || input.qrcodeVersao === '3') qrcodeVersao = Number(input.qrcodeVersao) as QrCodeVersion;
    else issues.add('qrcode-versao', 'deve ser 2 ou 3');
  }

  let csc: Validated['csc'] = null;
  if (input.cscId !== undefined || input.csc !== undefined) {
    if (input.cscId === undefined) issues.add('csc-id', 'obrigatório junto com --csc');
    else if (!/^[0-9]{1,6}$/.test(input.cscId)) issues.add('csc-id', 'identificador do CSC: de 1 a 6 dígitos (ex.: 000001)');
    if (input.csc === undefined) issues.add('csc', 'obrigatório junto com --csc-id');
    else if (!/^[\x21-\x7e]{1,36}$/.test(input.csc)) issues.add('csc', 'código de segurança do contribuinte: de 1 a 36 caracteres, sem espaços');
    if (input.cscId !== undefined && input.csc !== undefined) csc = { id: input.cscId, token: input.csc };
  }

  // Address: required in produção; in homologação the gaps are filled with the UF's capital.
  const capital = uf ? CAPITALS[uf] : undefined;
  const orDefault = (field: string, value: string | undefined, fallback: string | undefined) =>
    value ?? (production ? required(issues, field, undefined, inProduction) : fallback);
  const logradouro = orDefault('logradouro', text(issues, 'logradouro', input.logradouro, 2, 60), SANDBOX_ADDRESS.logradouro);
  const numero = orDefault('numero', text(issues, 'numero', input.numero, 1, 60), SANDBOX_ADDRESS.numero);
  const complemento = text(issues, 'complemento', input.complemento, 1, 60) ?? null;
  const bairro = orDefault('bairro', text(issues, 'bairro', input.bairro, 2, 60), SANDBOX_ADDRESS.bairro);
  let municipio: { code: string; name: string } | undefined;
  const cMun = orDefault('municipio', input.municipio, capital?.[0]);
  if (cMun !== undefined && uf) municipio = issues.capture(() => assertMunicipality(cMun, uf, 'municipio'));
  let cep = orDefault('cep', input.cep === undefined ? undefined : issues.capture(() => assertCep(input.cep, 'cep')), capital?.[1]);
  if (input.cep !== undefined && cep !== undefined && uf && ufOfCep(cep) !== uf) {
    issues.add('cep', `CEP ${cep} não pertence à UF ${uf}`);
    cep = undefined;
  }
  let telefone: string | null = null;
  if (input.telefone !== undefined) {
    if (/^[0-9]{6,14}$/.test(input.telefone)) telefone = input.telefone;
    else issues.add('telefone', 'de 6 a 14 dígitos, com DDD, sem pontuação');
  }

  let certificate: Validated['certificate'] | undefined;
  if (input.certificate) {
    if (cnpj) {
      const { pfx, password } = input.certificate;
      const loaded = issues.capture(() => loadPfx(pfx, password, { expectedCnpj: cnpj, now }));
      if (loaded) certificate = { pfx, password, loaded };
    }
  } else if (production) {
    issues.add('certificado', `obrigatório ${inProduction} (arquivo .pfx A1 do CNPJ, com --senha)`);
  }

  issues.throwIfAny();
  if (!certificate) {
    // Homologação without a certificate: a self-signed one shaped like an e-CNPJ, for the sandbox.
    const test = generateTestCertificate({ cnpj: cnpj!, xNome: nome! });
    certificate = { pfx: test.pfx, password: test.password, loaded: test.certificate };
  }
  const address: CompanyAddress = {
    logradouro: logradouro!,
    numero: numero!,
    complemento,
    bairro: bairro!,
    codigoMunicipio: municipio!.code,
    municipio: municipio!.name,
    uf: uf!,
    cep: cep!,
    telefone,
  };
  return { cnpj: cnpj!, ie: ie!, nome: nome!, fantasia: fantasia ?? null, address, crt, csc, qrcodeVersao, ambiente, certificate };
}

export type CreatedCompany = { companyId: string; token: string };

export type CompanyDeps = { store: CompanyStore; secrets: SecretBox };

/** Registers a company and its first API token. The token is returned here and never again. */
export async function createCompany(deps: CompanyDeps, input: CompanyInput): Promise<CreatedCompany> {
  const v = validateCompany(input);
  const id = randomUUID();
  const { token, sha256 } = generateToken();
  const { secrets } = deps;
  const record: CompanyRecord = {
    ...v,
    id,
    csc: v.csc && { id: v.csc.id, sealed: secrets.seal(v.csc.token, secretContext.csc(id)) },
    certificate: {
      pfxSealed: secrets.seal(v.certificate.pfx, secretContext.pfx(id)),
      passwordSealed: secrets.seal(v.certificate.password, secretContext.pfxPassword(id)),
      sha256: v.certificate.loaded.fingerprint256,
      notAfter: v.certificate.loaded.notAfter.toISOString(),
    },
    createdAt: new Date().toISOString(),
  };
  await deps.store.insertCompany(record, sha256);
  return { companyId: id, token };
}

/** A company ready to issue: the fiscal core's emitter and the certificate, in clear. */
export type Issuer = { company: CompanyRecord; emitter: Emitter; certificate: Certificate };

const formatDay = (d: Date): string => d.toLocaleDateString('pt-BR', { timeZone: BRASILIA_TZ });

/**
 * Decrypts and parses a company's credentials once per process (parsing a .pfx costs tens of
 * milliseconds), and checks the certificate's validity on every use against the company's clock.
 */
export class Companies {
  readonly #issuers = new Map<string, Promise<Issuer | undefined>>();

  constructor(private readonly deps: CompanyDeps) {}

  create(input: CompanyInput): Promise<CreatedCompany> {
    return createCompany(this.deps, input);
  }

  get(companyId: string): Promise<CompanyRecord | undefined> {
    return this.deps.store.getCompany(companyId);
  }

  /**
   * The issuer, or undefined for an unknown company. Throws a FieldError (`certificado`) when
   * the certificate is not valid at `now`, which the API reports as 422 `validacao`.
   */
  async issuer(companyId: string, now: Date): Promise<Issuer | undefined> {
    let pending = this.#issuers.get(companyId);
    if (!pending) {
      pending = this.load(companyId);
      this.#issuers.set(companyId, pending);
      pending.catch(() => this.#issuers.delete(companyId));
    }
    const issuer = await pending;
    if (!issuer) {
      this.#issuers.delete(companyId);
      return undefined;
    }
    const { notBefore, notAfter } = issuer.certificate;
    if (now > notAfter) throw new FieldError('certificado', `certificado vencido em ${formatDay(notAfter)}`);
    if (now < notBefore) throw new FieldError('certificado', `certificado válido somente a partir de ${formatDay(notBefore)}`);
    return issuer;
  }

  /** Drops the cached credentials (after a company's settings change). */
  forget(companyId: string): void {
    this.#issuers.delete(companyId);
  }

  private async load(companyId: string): Promise<Issuer | undefined> {
    const company = await this.deps.store.getCompany(companyId);
    if (!company) return undefined;
    const { secrets } = this.deps;
    const pfx = secrets.open(company.certificate.pfxSealed, secretContext.pfx(companyId));
    const password = secrets.openText(company.certificate.passwordSealed, secretContext.pfxPassword(companyId));
    // Validity is checked per use (above), against the company's clock; parse at a time the
    // certificate is valid so an expired one still loads and yields the precise message.
    const notAfter = new Date(company.certificate.notAfter);
    const certificate = loadPfx(pfx, password, { expectedCnpj: company.cnpj, now: new Date(notAfter.getTime() - 1000) });
    const a = company.address;
    const emitter: Emitter = {
      cnpj: company.cnpj,
      ie: company.ie,
      xNome: company.nome,
      ...(company.fantasia !== null && { xFant: company.fantasia }),
      address: {
        xLgr: a.logradouro,
        nro: a.numero,
        ...(a.complemento !== null && { xCpl: a.complemento }),
        xBairro: a.bairro,
        cMun: a.codigoMunicipio,
        xMun: a.municipio,
        UF: a.uf,
        CEP: a.cep,
        ...(a.telefone !== null && { fone: a.telefone }),
      },
      crt: company.crt,
      environment: company.ambiente,
      ...(company.csc && { csc: { id: company.csc.id, token: secrets.openText(company.csc.sealed, secretContext.csc(companyId)) } }),
      qrCodeVersion: company.qrcodeVersao,
    };
    return { company, emitter, certificate };
  }
}
