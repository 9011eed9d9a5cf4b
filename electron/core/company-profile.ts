// The company as this terminal knows it: what it needs to sign and issue a receipt by itself in
// offline contingency (the emitter of the fiscal core), checked field by field when the manager
// saves it, with the same Brazilian reference checks the service uses (fiscal/br).

import { assertCep, assertMunicipality, ufOfCep } from '../../fiscal/br/catalogs.ts';
import { assertCnpj } from '../../fiscal/br/documents.ts';
import { isUF } from '../../fiscal/br/uf.ts';
import type { Emitter } from '../../fiscal/company.ts';
import { IssueCollector, type FieldIssue } from '../../fiscal/errors.ts';
import { checkIbsCbsSettings } from '../../fiscal/ibscbs/settings.ts';
import type { CompanyProfile } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';

const LABELS: Readonly<Record<string, string>> = {
  cnpj: 'CNPJ',
  ie: 'Inscrição estadual',
  xNome: 'Razão social',
  xFant: 'Nome fantasia',
  'address.xLgr': 'Logradouro',
  'address.nro': 'Número',
  'address.xCpl': 'Complemento',
  'address.xBairro': 'Bairro',
  'address.cMun': 'Município (código IBGE)',
  'address.xMun': 'Município',
  'address.UF': 'UF',
  'address.CEP': 'CEP',
  'address.fone': 'Telefone',
  crt: 'Regime tributário (CRT)',
  environment: 'Ambiente',
  qrCodeVersion: 'Versão do QR Code',
  cscId: 'Identificador do CSC',
  cscToken: 'CSC',
  'ibsCbs.optIn': 'IBS/CBS no Simples Nacional',
  'ibsCbs.defaultClassification.CST': 'CST do IBS/CBS padrão',
  'ibsCbs.defaultClassification.cClassTrib': 'Classificação tributária (cClassTrib) padrão',
  'ibsCbs.rates': 'Alíquotas do IBS/CBS por período',
};

const RATE_FIELDS: Readonly<Record<string, string>> = { from: 'início', to: 'fim', pIBSUF: 'IBS da UF', pIBSMun: 'IBS do município', pCBS: 'CBS' };

/** "ibsCbs.rates[1].pCBS" → "Alíquotas do IBS/CBS por período, período 2, CBS". */
function labelOf(field: string): string {
  const rate = /^ibsCbs\.rates\[([0-9]+)\](?:\.(\w+))?$/.exec(field);
  if (rate) return `${LABELS['ibsCbs.rates']}, período ${Number(rate[1]) + 1}${rate[2] ? `, ${RATE_FIELDS[rate[2]] ?? rate[2]}` : ''}`;
  return LABELS[field] ?? field;
}

/** FieldIssues (fields relative to the company) as one TerminalError naming the first field. */
export function companyError(issues: FieldIssue[], prefix = 'company'): TerminalError {
  const message = issues.map((i) => `${labelOf(i.field)}: ${i.message}`).join('; ');
  return new TerminalError('configuracao_invalida', message, { field: `${prefix}.${issues[0]!.field}` });
}

function text(issues: IssueCollector, field: string, value: unknown, min: number, max: number, optional = false): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (!optional) issues.add(field, 'obrigatório');
    return undefined;
  }
  const length = typeof value === 'string' ? [...value].length : 0;
  if (typeof value !== 'string' || value.trim() !== value || length < min || length > max || /[\r\n\t]/.test(value)) {
    issues.add(field, `deve ter de ${min} a ${max} caracteres, sem espaços nas pontas`);
    return undefined;
  }
  return value;
}

/**
 * Checks a company profile from the screen. Returns it normalised (the municipality's name as
 * in the IBGE table); throws a `configuracao_invalida` TerminalError naming the field
 * (`company.address.CEP`, ...) with every problem in its message.
 */
export function validateCompanyProfile(input: unknown): Omit<CompanyProfile, 'cscSet'> {
  if (typeof input !== 'object' || input === null) throw new TerminalError('configuracao_invalida', 'Dados da empresa ausentes', { field: 'company' });
  const c = input as Record<string, unknown>;
  const a = (typeof c.address === 'object' && c.address !== null ? c.address : {}) as Record<string, unknown>;
  const issues = new IssueCollector();

  const cnpj = issues.capture(() => assertCnpj(c.cnpj, 'cnpj'));
  let ie: string | undefined;
  if (typeof c.ie === 'string' && /^(?:[0-9]{2,14}|ISENTO)$/.test(c.ie)) ie = c.ie;
  else issues.add('ie', 'de 2 a 14 dígitos, sem pontuação (ou ISENTO)');
  const xNome = text(issues, 'xNome', c.xNome, 2, 60);
  const xFant = text(issues, 'xFant', c.xFant, 1, 60, true);

  const xLgr = text(issues, 'address.xLgr', a.xLgr, 2, 60);
  const nro = text(issues, 'address.nro', a.nro, 1, 60);
  const xCpl = text(issues, 'address.xCpl', a.xCpl, 1, 60, true);
  const xBairro = text(issues, 'address.xBairro', a.xBairro, 2, 60);
  const uf = isUF(a.UF) ? a.UF : undefined;
  if (!uf) issues.add('address.UF', 'sigla de UF inválida (ex.: SP)');
  const mun = issues.capture(() => assertMunicipality(a.cMun, uf, 'address.cMun'));
  let cep = issues.capture(() => assertCep(a.CEP, 'address.CEP'));
  if (cep && uf && ufOfCep(cep) !== uf) {
    issues.add('address.CEP', `o CEP ${cep} não pertence à UF ${uf}`);
    cep = undefined;
  }
  let fone: string | undefined;
  if (a.fone !== undefined && a.fone !== null && a.fone !== '') {
    if (typeof a.fone === 'string' && /^[0-9]{6,14}$/.test(a.fone)) fone = a.fone;
    else issues.add('address.fone', 'de 6 a 14 dígitos, com DDD, sem pontuação');
  }

  const crt = c.crt;
  if (crt !== 1 && crt !== 2 && crt !== 3 && crt !== 4)
    issues.add('crt', 'deve ser 1 (Simples Nacional), 2 (SN, excesso de sublimite), 3 (Regime Normal) ou 4 (MEI)');
  const environment = c.environment;
  if (environment !== 'producao' && environment !== 'homologacao') issues.add('environment', 'deve ser producao ou homologacao');
  const qrCodeVersion = c.qrCodeVersion;
  if (qrCodeVersion !== 2 && qrCodeVersion !== 3) issues.add('qrCodeVersion', 'deve ser 2 ou 3');
  let cscId: string | null = null;
  if (c.cscId !== undefined && c.cscId !== null && c.cscId !== '') {
    if (typeof c.cscId === 'string' && /^[0-9]{1,6}$/.test(c.cscId)) cscId = c.cscId;
    else issues.add('cscId', 'de 1 a 6 dígitos (ex.: 000001)');
  }

  const ibsCbs = checkIbsCbsSettings(c.ibsCbs, 'ibsCbs', issues);

  if (issues.issues.length) throw companyError(issues.issues);
  return {
    cnpj: cnpj!,
    ie: ie!,
    xNome: xNome!,
    ...(xFant !== undefined && { xFant }),
    address: {
      xLgr: xLgr!,
      nro: nro!,
      ...(xCpl !== undefined && { xCpl }),
      xBairro: xBairro!,
      cMun: mun!.code,
      xMun: mun!.name,
      UF: uf!,
      CEP: cep!,
      ...(fone !== undefined && { fone }),
    },
    crt: crt as CompanyProfile['crt'],
    environment: environment as CompanyProfile['environment'],
    qrCodeVersion: qrCodeVersion as CompanyProfile['qrCodeVersion'],
    cscId,
    // Absent stays absent (the defaults apply); given, it is kept as checked.
    ...(c.ibsCbs !== undefined && c.ibsCbs !== null && { ibsCbs: ibsCbs! }),
  };
}

/** The CSC token (código de segurança do contribuinte): what the authority issues, 1 to 36 printable characters. */
export function validateCscToken(value: unknown): string {
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,36}$/.test(value)) {
    throw companyError([{ field: 'cscToken', message: 'de 1 a 36 caracteres, sem espaços' }]);
  }
  return value;
}

/** The fiscal core's emitter for a profile and its CSC. */
export function emitterOf(profile: Omit<CompanyProfile, 'cscSet'>, csc: { id: string; token: string } | undefined): Emitter {
  return {
    cnpj: profile.cnpj,
    ie: profile.ie,
    xNome: profile.xNome,
    ...(profile.xFant !== undefined && { xFant: profile.xFant }),
    address: { ...profile.address },
    crt: profile.crt,
    environment: profile.environment,
    qrCodeVersion: profile.qrCodeVersion,
    ...(csc && { csc }),
    ...(profile.ibsCbs && { ibsCbs: profile.ibsCbs }),
  };
}

/** The profile of a fiscal-core emitter (the demo company of fiscal/samples.ts, for `npm start`). */
export function profileOfEmitter(emitter: Emitter): Omit<CompanyProfile, 'cscSet'> {
  return {
    cnpj: emitter.cnpj,
    ie: emitter.ie,
    xNome: emitter.xNome,
    ...(emitter.xFant !== undefined && { xFant: emitter.xFant }),
    address: { ...emitter.address },
    crt: emitter.crt,
    environment: emitter.environment,
    qrCodeVersion: emitter.qrCodeVersion,
    cscId: emitter.csc?.id ?? null,
    ...(emitter.ibsCbs && { ibsCbs: emitter.ibsCbs }),
  };
}
