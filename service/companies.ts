// Companies: registration (with the first API token), later changes to the settings, a new API
// token, and, for issuance, the emitter data and certificate in clear, decrypted on demand and
// kept in memory only.
//
// Validation errors name the field as the `balcao company create` option that carries it
// (`cnpj`, `csc-id`, `certificado`, ...), so the CLI can point at the exact option. An update is
// validated by the very rules of a registration, run over the company as it would become.

import { randomUUID } from 'node:crypto';
import { assertCnpj } from '../fiscal/br/documents.ts';
import { assertCep, assertMunicipality, ufOfCep } from '../fiscal/br/catalogs.ts';
import { formatDateBR } from '../base/common/brasilia.ts';
import { cUFOf } from '../fiscal/br/uf.ts';
import { generateTestCertificate, loadPfx, type Certificate } from '../fiscal/certificate.ts';
import type { Emitter, Environment, QrCodeVersion } from '../fiscal/company.ts';
import type { TechnicalResponsible } from '../fiscal/resp-tec.ts';
import { loadTechnicalResponsible } from './resp-tec.ts';
import { FieldError, IssueCollector } from '../fiscal/errors.ts';
import type { IbptTable } from '../fiscal/ibpt/table.ts';
import type { RateOverride } from '../fiscal/ibscbs/rates.ts';
import type { IbsCbsSettings } from '../fiscal/ibscbs/settings.ts';
import { checkIbsCbsOptions, optionsOf, type IbsCbsOptions } from './ibscbs-options.ts';
import { readOnce, scopeKeys } from './read-scope.ts';
import { openText, secretContext, type SecretSealer } from './secrets.ts';
import type { CompanyAddress, CompanyRecord, CompanySettings, CompanyStore, Crt, ReplacedCertificate } from './store.ts';
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
} & IbsCbsOptions;

// Capital of each UF with the first CEP of the state's range (the capital's general CEP): the
// sandbox default address, so a test company needs nothing but a CNPJ, a UF and a name.
const CAPITALS: Readonly<Record<string, readonly [cMun: string, cep: string]>> = {
  AC: ['1200401', '69900000'],
  AL: ['2704302', '57000000'],
  AM: ['1302603', '69000000'],
  AP: ['1600303', '68900000'],
  BA: ['2927408', '40000000'],
  CE: ['2304400', '60000000'],
  DF: ['5300108', '70000000'],
  ES: ['3205309', '29000000'],
  GO: ['5208707', '74000000'],
  MA: ['2111300', '65000000'],
  MG: ['3106200', '30000000'],
  MS: ['5002704', '79000000'],
  MT: ['5103403', '78000000'],
  PA: ['1501402', '66000000'],
  PB: ['2507507', '58000000'],
  PE: ['2611606', '50000000'],
  PI: ['2211001', '64000000'],
  PR: ['4106902', '80000000'],
  RJ: ['3304557', '20000000'],
  RN: ['2408102', '59000000'],
  RO: ['1100205', '76800000'],
  RR: ['1400100', '69300000'],
  RS: ['4314902', '90000000'],
  SC: ['4205407', '88000000'],
  SE: ['2800308', '49000000'],
  SP: ['3550308', '01000000'],
  TO: ['1721000', '77000000'],
};

export const sandboxCapitalOf = (uf: string): readonly [cMun: string, cep: string] | undefined => CAPITALS[uf];

const SANDBOX_ADDRESS = { logradouro: 'Rua de Teste', numero: 'S/N', bairro: 'Centro' } as const;

type Validated = Omit<CompanyRecord, 'id' | 'csc' | 'certificate' | 'createdAt' | 'version' | 'updatedAt'> & {
  ibsCbs: IbsCbsSettings;
  csc: { id: string; token: string } | null;
  certificate: { pfx: Buffer; password: string; loaded: Certificate };
};

/** Validated, with the certificate only when one was given (the caller decides what else to use). */
type Checked = Omit<Validated, 'certificate'> & { certificate?: Validated['certificate'] };

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
  const v = checkCompany(input, now, false);
  if (v.certificate) return { ...v, certificate: v.certificate };
  // Homologação without a certificate: a self-signed one shaped like an e-CNPJ, for the sandbox.
  const test = generateTestCertificate({ cnpj: v.cnpj, xNome: v.nome });
  return { ...v, certificate: { pfx: test.pfx, password: test.password, loaded: test.certificate } };
}

/**
 * The rules of a registration. `certificateOnFile`: the company already has a certificate, so
 * produção does not demand one in `input` (an update that leaves the certificate as it is).
 */
function checkCompany(input: CompanyInput, now: Date, certificateOnFile: boolean): Checked {
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

  const ibsCbs = checkIbsCbsOptions(input, issues);

  let certificate: Validated['certificate'] | undefined;
  if (input.certificate) {
    if (cnpj) {
      const { pfx, password } = input.certificate;
      const loaded = issues.capture(() => loadPfx(pfx, password, { expectedCnpj: cnpj, now }));
      if (loaded) certificate = { pfx, password, loaded };
    }
  } else if (production && !certificateOnFile) {
    issues.add('certificado', `obrigatório ${inProduction} (arquivo .pfx A1 do CNPJ, com --senha)`);
  }

  issues.throwIfAny();
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
  return {
    cnpj: cnpj!,
    ie: ie!,
    nome: nome!,
    fantasia: fantasia ?? null,
    address,
    crt,
    csc,
    qrcodeVersao,
    ambiente,
    ibsCbs: ibsCbs!,
    ...(certificate && { certificate }),
  };
}

// Sealed exactly alike at registration and at every update: same contexts, bound to the company.
const sealCsc = (secrets: SecretSealer, companyId: string, csc: NonNullable<Validated['csc']>): NonNullable<CompanyRecord['csc']> => ({
  id: csc.id,
  sealed: secrets.seal(csc.token, secretContext.csc(companyId)),
});

function sealCertificate(secrets: SecretSealer, companyId: string, c: Validated['certificate']): CompanyRecord['certificate'] {
  return {
    pfxSealed: secrets.seal(c.pfx, secretContext.pfx(companyId)),
    passwordSealed: secrets.seal(c.password, secretContext.pfxPassword(companyId)),
    sha256: c.loaded.fingerprint256,
    notAfter: c.loaded.notAfter.toISOString(),
  };
}

export type CreatedCompany = { companyId: string; token: string };

export type CompanyDeps = { store: CompanyStore; secrets: SecretSealer };

/** Registers a company and its first API token. The token is returned here and never again. */
export async function createCompany(deps: CompanyDeps, input: CompanyInput): Promise<CreatedCompany> {
  const v = validateCompany(input);
  const id = randomUUID();
  const { token, sha256 } = generateToken();
  const { secrets } = deps;
  await deps.store.insertCompany(
    {
      ...v,
      id,
      csc: v.csc && sealCsc(secrets, id, v.csc),
      certificate: sealCertificate(secrets, id, v.certificate),
      createdAt: new Date().toISOString(),
    },
    sha256,
  );
  return { companyId: id, token };
}

/**
 * What `balcao company update` collects: any option of create but the identity (CNPJ, UF);
 * strings as typed. An empty `fantasia`, `complemento` or `telefone` removes it.
 */
export type CompanyUpdateInput = Partial<Omit<CompanyInput, 'cnpj' | 'uf'>>;

const REMOVABLE = ['fantasia', 'complemento', 'telefone'] as const;

// In homologação these may hold defaults or sandbox placeholders (ISENTO, "Rua de Teste", the
// capital), indistinguishable from typed values once stored, and a test certificate may be on
// file. A move to produção therefore states them again, as a registration in produção must.
const STATED_FOR_PRODUCTION = ['ie', 'logradouro', 'numero', 'bairro', 'municipio', 'cep'] as const;

/** The company as a registration's input, so that an update runs the registration's rules. */
function inputOf(c: CompanyRecord): CompanyInput {
  const a = c.address;
  return {
    cnpj: c.cnpj,
    uf: a.uf,
    nome: c.nome,
    ...(c.fantasia !== null && { fantasia: c.fantasia }),
    ie: c.ie,
    crt: String(c.crt),
    ambiente: c.ambiente,
    qrcodeVersao: String(c.qrcodeVersao),
    logradouro: a.logradouro,
    numero: a.numero,
    ...(a.complemento !== null && { complemento: a.complemento }),
    bairro: a.bairro,
    municipio: a.codigoMunicipio,
    cep: a.cep,
    ...(a.telefone !== null && { telefone: a.telefone }),
    ...optionsOf(c.ibsCbs),
  };
}

type SettingsChange = { settings: CompanySettings; replaced?: Omit<ReplacedCertificate, 'replacedAt'> };

/**
 * The settings `current` would have with `changes`, checked and with new secrets sealed; with a
 * new certificate, also the public facts of the one it replaces, which the store keeps.
 */
function settingsAfter(secrets: SecretSealer, current: CompanyRecord, changes: CompanyUpdateInput, now: Date): SettingsChange {
  const toProduction = changes.ambiente === 'producao' && current.ambiente !== 'producao';
  const input = inputOf(current);
  if (toProduction) for (const field of STATED_FOR_PRODUCTION) delete input[field];
  for (const [field, value] of Object.entries(changes) as [keyof CompanyUpdateInput, CompanyUpdateInput[keyof CompanyUpdateInput]][]) {
    if (value !== undefined) Object.assign(input, { [field]: value });
  }
  for (const field of REMOVABLE) if (changes[field] === '') delete input[field];
  // The CSC and the certificate are in `input` only when given, so only new ones are checked.
  const v = checkCompany(input, now, !toProduction);
  const settings: CompanySettings = {
    ie: v.ie,
    nome: v.nome,
    fantasia: v.fantasia,
    address: v.address,
    crt: v.crt,
    qrcodeVersao: v.qrcodeVersao,
    ambiente: v.ambiente,
    ibsCbs: v.ibsCbs,
    csc: v.csc ? sealCsc(secrets, current.id, v.csc) : current.csc,
    certificate: v.certificate ? sealCertificate(secrets, current.id, v.certificate) : current.certificate,
  };
  // The same certificate given again (a new password, a re-exported file) replaces nothing.
  if (settings.certificate.sha256 === current.certificate.sha256) return { settings };
  const old = openCertificate(secrets, current);
  return {
    settings,
    replaced: { sha256: old.fingerprint256, notBefore: old.notBefore.toISOString(), notAfter: old.notAfter.toISOString() },
  };
}

/** An update kept meeting concurrent ones (see UPDATE_ATTEMPTS); nothing of it was written. */
export class CompanyChangedError extends Error {
  override name = 'CompanyChangedError';
}

const notFound = (companyId: string) => new FieldError('empresa', `empresa ${companyId} não encontrada neste serviço`);

// Two updates of one company at once are rare (two people at the same settings); each retry
// re-reads and re-validates, so a handful is plenty and a bound keeps a livelock impossible.
const UPDATE_ATTEMPTS = 5;

/**
 * Changes the given settings of a company (validated with the registration's rules over the
 * result). Returns the company as updated, with its credentials opened: proof that what was
 * sealed opens, and the certificate's public facts for display.
 */
export async function updateCompany(deps: CompanyDeps, companyId: string, changes: CompanyUpdateInput, now: Date = new Date()): Promise<Issuer> {
  for (let attempt = 1; ; attempt++) {
    const current = await deps.store.getCompany(companyId);
    if (!current) throw notFound(companyId);
    const { settings, replaced } = settingsAfter(deps.secrets, current, changes, now);
    // Written only over the version validated against: a concurrent update is never overwritten
    // by settings merged from what it replaced.
    const updated = await deps.store.updateCompanySettings(companyId, current.version, settings, replaced);
    if (updated) return openIssuer(deps.secrets, updated, await deps.store.replacedCertificates(companyId), await deps.store.getOperatorRates());
    if (attempt === UPDATE_ATTEMPTS) throw new CompanyChangedError(`a empresa ${companyId} foi alterada por outro processo ao mesmo tempo; repita o comando`);
  }
}

/** A new API token for the company; every previous one stops working at once. Shown once. */
export async function replaceToken(deps: CompanyDeps, companyId: string): Promise<CreatedCompany> {
  const { token, sha256 } = generateToken();
  if (!(await deps.store.replaceApiTokens(companyId, sha256))) throw notFound(companyId);
  return { companyId, token };
}

/**
 * A company ready to issue: the fiscal core's emitter and the certificate, in clear; and the
 * certificates it had before, by which contingency receipts signed before a renewal are still
 * recognised as its own.
 */
export type Issuer = {
  company: CompanyRecord;
  emitter: Emitter;
  certificate: Certificate;
  replacedCertificates: readonly ReplacedCertificate[];
  /** The IBPT tables of the company's UF (Lei 12.741): its NFC-e's vTotTrib by NCM (nfce/accept.ts). */
  ibpt?: readonly IbptTable[];
};

/** Decrypts and parses the company's certificate on file (the .pfx costs tens of milliseconds). */
function openCertificate(secrets: SecretSealer, company: CompanyRecord): Certificate {
  const pfx = secrets.open(company.certificate.pfxSealed, secretContext.pfx(company.id));
  const password = openText(secrets, company.certificate.passwordSealed, secretContext.pfxPassword(company.id));
  // Validity is checked per use (Companies.issuer), against the company's clock; parse at a time
  // the certificate is valid so an expired one still loads and yields the precise message.
  const notAfter = new Date(company.certificate.notAfter);
  return loadPfx(pfx, password, { expectedCnpj: company.cnpj, now: new Date(notAfter.getTime() - 1000) });
}

/** Decrypts and parses a company's credentials. */
function openIssuer(
  secrets: SecretSealer,
  company: CompanyRecord,
  replacedCertificates: readonly ReplacedCertificate[],
  operatorRates: readonly RateOverride[],
  respTec?: TechnicalResponsible,
): Issuer {
  const companyId = company.id;
  const certificate = openCertificate(secrets, company);
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
    ...(company.csc && { csc: { id: company.csc.id, token: openText(secrets, company.csc.sealed, secretContext.csc(companyId)) } }),
    qrCodeVersion: company.qrcodeVersao,
    ibsCbs: company.ibsCbs,
    ...(respTec && { respTec }),
    ...(operatorRates.length > 0 && { operatorRates }),
  };
  return { company, emitter, certificate, replacedCertificates };
}

type CachedIssuer = { version: number; issuer: Promise<Issuer | undefined> };

/**
 * Keeps each company's credentials decrypted and parsed in memory, and checks the certificate's
 * validity on every use against the company's clock. `balcao company update` changes a company
 * from another process, so every use first reads the company's settings version (one indexed
 * read) and reloads when the database holds a newer one: the next request after an update
 * signs with the new certificate and CSC, and no request signs with settings older than the
 * version it read.
 */
export class Companies {
  readonly #issuers = new Map<string, CachedIssuer>();
  /** The IBPT tables by UF, one copy for all the UF's companies, with the stamp they were read at. */
  readonly #ibpt = new Map<string, { stamp: string; tables: Promise<IbptTable[]> }>();
  #respTec: Promise<TechnicalResponsible | undefined> | undefined;

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
    // Once per request or queue batch (read-scope.ts): the token lookup already read it.
    const version = await readOnce(scopeKeys.settingsVersion(companyId), () => this.deps.store.getCompanyVersion(companyId));
    if (version === undefined) {
      this.#issuers.delete(companyId);
      return undefined;
    }
    let cached = this.#issuers.get(companyId);
    // `<`, not `!==`: a request that read an older version while a newer copy was being loaded
    // must not replace it. A copy is loaded after its version was read, so it is never older.
    if (!cached || cached.version < version) {
      const entry: CachedIssuer = { version, issuer: this.load(companyId) };
      this.#issuers.set(companyId, entry);
      entry.issuer.catch(() => {
        if (this.#issuers.get(companyId) === entry) this.#issuers.delete(companyId);
      });
      cached = entry;
    }
    const issuer = await cached.issuer;
    if (!issuer) {
      this.#issuers.delete(companyId);
      return undefined;
    }
    const { notBefore, notAfter } = issuer.certificate;
    if (now > notAfter) throw new FieldError('certificado', `certificado vencido em ${formatDateBR(notAfter)}`);
    if (now < notBefore) throw new FieldError('certificado', `certificado válido somente a partir de ${formatDateBR(notBefore)}`);
    return issuer;
  }

  private async load(companyId: string): Promise<Issuer | undefined> {
    const company = await this.deps.store.getCompany(companyId);
    // Read after the company: a replacement committed in between only adds the certificate the
    // copy still holds as current, so no certificate of the company is ever missing from both.
    if (!company) return undefined;
    const replaced = await this.deps.store.replacedCertificates(companyId);
    // The operator's rates bump every company's version when they change (store.ts), so they are
    // as fresh as the rest of the copy.
    const issuer = openIssuer(this.deps.secrets, company, replaced, await this.deps.store.getOperatorRates(), await this.technicalResponsible());
    // An import bumps the versions of the UF's companies (store.ts), so the tables are as fresh as the rest.
    const ibpt = await this.ibptTables(company.address.uf);
    return ibpt.length > 0 ? { ...issuer, ibpt } : issuer;
  }

  /** The IBPT tables of `uf`, read again only when they changed. */
  private async ibptTables(uf: string): Promise<IbptTable[]> {
    const stamp = await this.deps.store.ibptStamp(uf);
    let cached = this.#ibpt.get(uf);
    if (cached?.stamp !== stamp) {
      cached = { stamp, tables: this.deps.store.ibptTables(uf) };
      this.#ibpt.set(uf, cached);
      cached.tables.catch(() => this.#ibpt.delete(uf));
    }
    return cached.tables;
  }

  /** The deployment's technical responsible, read once per process (resp-tec.ts); read again after a failed read. */
  technicalResponsible(): Promise<TechnicalResponsible | undefined> {
    this.#respTec ??= loadTechnicalResponsible(this.deps).catch((err: unknown) => {
      this.#respTec = undefined;
      throw err;
    });
    return this.#respTec;
  }
}
