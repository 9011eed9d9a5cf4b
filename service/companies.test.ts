import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertMunicipality, ufOfCep } from '../fiscal/br/catalogs.ts';
import { UFS } from '../fiscal/br/uf.ts';
import { generateTestCertificate, loadPfx, type Certificate } from '../fiscal/certificate.ts';
import { FieldError } from '../fiscal/errors.ts';
import {
  Companies,
  createCompany,
  replaceToken,
  sandboxCapitalOf,
  updateCompany,
  validateCompany,
  type CompanyDeps,
  type CompanyInput,
  type CompanyUpdateInput,
} from './companies.ts';
import { serviceDbPath } from './db.ts';
import { openService, type OpenedService } from './open-service.ts';
import { openText, secretContext } from './secrets.ts';
import type { CompanyRecord } from './store.ts';
import { hashToken, isWellFormedToken } from './tokens.ts';

const legacyPfx = readFileSync(new URL('../fiscal/testdata/legacy-rc2-40.pfx', import.meta.url));
const LEGACY_CNPJ = '11222333000181';

function issuesOf(input: CompanyInput): Record<string, string> {
  try {
    validateCompany(input);
  } catch (err) {
    expect(err).toBeInstanceOf(FieldError);
    return Object.fromEntries((err as FieldError).issues.map((i) => [i.field, i.message]));
  }
  throw new Error('expected a FieldError');
}

describe('validateCompany', () => {
  it('fills the sandbox defaults: capital of the UF, ISENTO, Simples Nacional, QR v2, homologação, a test certificate', () => {
    const v = validateCompany({ cnpj: '11444777000161', uf: 'BA', nome: 'Loja Teste' });
    expect(v.address).toMatchObject({ codigoMunicipio: '2927408', municipio: 'Salvador', uf: 'BA', cep: '40000000', bairro: 'Centro' });
    expect(v).toMatchObject({ ie: 'ISENTO', crt: 1, qrcodeVersao: 2, ambiente: 'homologacao', csc: null, fantasia: null });
    expect(v.certificate.loaded.cnpj).toBe('11444777000161');
  });

  it('has a valid default municipality and CEP for every UF', () => {
    for (const uf of UFS) {
      const [cMun, cep] = sandboxCapitalOf(uf)!;
      expect(assertMunicipality(cMun, uf, 'municipio').uf).toBe(uf);
      expect(ufOfCep(cep)).toBe(uf);
    }
  });

  it('keeps what was given', () => {
    const v = validateCompany({
      cnpj: LEGACY_CNPJ,
      uf: 'SP',
      nome: 'LOJA LEGADA LTDA',
      fantasia: 'Legada',
      ie: '110042490114',
      crt: '3',
      cscId: '000001',
      csc: 'CSC-DE-TESTE-123456',
      certificate: { pfx: legacyPfx, password: 'senha-antiga' },
      ambiente: 'producao',
      qrcodeVersao: '3',
      logradouro: 'Rua Augusta',
      numero: '100',
      complemento: 'Loja 2',
      bairro: 'Consolação',
      municipio: '3550308',
      cep: '01305000',
      telefone: '1133334444',
    });
    expect(v).toMatchObject({
      ie: '110042490114',
      crt: 3,
      csc: { id: '000001', token: 'CSC-DE-TESTE-123456' },
      ambiente: 'producao',
      qrcodeVersao: 3,
      fantasia: 'Legada',
      address: { logradouro: 'Rua Augusta', numero: '100', complemento: 'Loja 2', municipio: 'São Paulo', cep: '01305000', telefone: '1133334444' },
    });
    expect(v.certificate.password).toBe('senha-antiga');
  });

  it('reports every problem at once, each named after its option', () => {
    expect(issuesOf({ cnpj: '11222333000180', uf: 'sp', nome: 'X', crt: '5', qrcodeVersao: '4', ambiente: 'teste', cscId: '1' })).toEqual({
      cnpj: expect.stringContaining('dígito verificador'),
      uf: expect.stringContaining('UF inexistente'),
      nome: expect.stringContaining('de 2 a 60'),
      crt: expect.any(String),
      'qrcode-versao': 'deve ser 2 ou 3',
      ambiente: 'deve ser homologacao ou producao',
      csc: 'obrigatório junto com --csc-id',
    });
  });

  it('checks the municipality and the CEP against the UF', () => {
    expect(issuesOf({ cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja', municipio: '3304557' })).toEqual({
      municipio: expect.stringContaining('não pertence à UF SP'),
    });
    expect(issuesOf({ cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja', cep: '40000000' })).toEqual({ cep: 'CEP 40000000 não pertence à UF SP' });
    expect(issuesOf({ cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja', municipio: '355030' })).toHaveProperty('municipio');
  });

  it('requires the address, the IE and a real certificate in produção', () => {
    expect(Object.keys(issuesOf({ cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja', ambiente: 'producao' })).sort()).toEqual(
      ['bairro', 'cep', 'certificado', 'ie', 'logradouro', 'municipio', 'numero'].sort(),
    );
  });

  it('refuses a wrong certificate password and a certificate of another CNPJ', () => {
    expect(issuesOf({ cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja', certificate: { pfx: legacyPfx, password: 'errada' } })).toEqual({
      senha: 'senha do certificado incorreta',
    });
    expect(issuesOf({ cnpj: '11444777000161', uf: 'SP', nome: 'Loja', certificate: { pfx: legacyPfx, password: 'senha-antiga' } })).toEqual({
      certificado: expect.stringContaining('11222333000181'),
    });
  });
});

describe('createCompany and Companies.issuer', () => {
  let dir: string;
  let opened: OpenedService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-companies-'));
    opened = await openService(dir, {});
  });

  afterAll(async () => {
    await opened?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns the token once; the store resolves its hash to the company', async () => {
    const { companyId, token } = await createCompany(opened, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja Token' });
    expect(isWellFormedToken(token)).toBe(true);
    const owner = await opened.store.findTokenOwner(hashToken(token));
    expect(owner?.company).toEqual({ id: companyId, cnpj: LEGACY_CNPJ, uf: 'SP', ambiente: 'homologacao' });
    expect(await opened.store.findTokenOwner(hashToken(token + 'x'))).toBeUndefined();
  });

  it('gives the emitter and certificate in clear for issuance, and checks validity on every use', async () => {
    const { companyId } = await createCompany(opened, {
      cnpj: LEGACY_CNPJ,
      uf: 'SP',
      nome: 'LOJA LEGADA LTDA',
      fantasia: 'Legada',
      cscId: '000001',
      csc: 'CSC-DE-TESTE-123456',
      certificate: { pfx: legacyPfx, password: 'senha-antiga' },
    });
    const companies = new Companies(opened);
    const now = new Date();
    const issuer = (await companies.issuer(companyId, now))!;
    expect(issuer.emitter).toEqual({
      cnpj: LEGACY_CNPJ,
      ie: 'ISENTO',
      xNome: 'LOJA LEGADA LTDA',
      xFant: 'Legada',
      address: { xLgr: 'Rua de Teste', nro: 'S/N', xBairro: 'Centro', cMun: '3550308', xMun: 'São Paulo', UF: 'SP', CEP: '01000000' },
      crt: 1,
      environment: 'homologacao',
      csc: { id: '000001', token: 'CSC-DE-TESTE-123456' },
      qrCodeVersion: 2,
      ibsCbs: { optIn: false, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] },
    });
    expect(issuer.certificate.cnpj).toBe(LEGACY_CNPJ);
    expect(issuer.certificate.privateKeyPem).toContain('PRIVATE KEY');
    expect(await companies.issuer(companyId, now)).toBe(issuer); // parsed once

    const afterExpiry = new Date(issuer.certificate.notAfter.getTime() + 1000);
    await expect(companies.issuer(companyId, afterExpiry)).rejects.toThrow(/certificado vencido/);
    expect(await companies.issuer('00000000-0000-0000-0000-000000000000', now)).toBeUndefined();
  });
});

describe('updateCompany', () => {
  let dir: string;
  let opened: OpenedService;
  const DAY = 24 * 3600_000;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-company-update-'));
    opened = await openService(dir, {});
  });

  afterAll(async () => {
    await opened?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const register = async (input: Partial<CompanyInput> = {}) =>
    (await createCompany(opened, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'LOJA LEGADA LTDA', ...input })).companyId;
  const record = async (id: string): Promise<CompanyRecord> => (await opened.store.getCompany(id))!;
  const renewal = (options: { cnpj?: string; notBefore?: Date; notAfter?: Date } = {}) => {
    const { pfx, certificate } = generateTestCertificate({ cnpj: LEGACY_CNPJ, xNome: 'LOJA LEGADA LTDA', password: 'senha-nova-2027', ...options });
    return { pfx, password: 'senha-nova-2027', certificate };
  };

  async function issuesOfUpdate(id: string, changes: CompanyUpdateInput): Promise<Record<string, string>> {
    const before = await record(id);
    const err = await updateCompany(opened, id, changes).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FieldError);
    // A refused update writes nothing: same settings, same sealed secrets, same version.
    expect(await record(id)).toEqual(before);
    return Object.fromEntries((err as FieldError).issues.map((i) => [i.field, i.message]));
  }

  it('changes only the given options and bumps the version; the secrets on file stay as they were', async () => {
    const id = await register({ fantasia: 'Legada', cscId: '000001', csc: 'CSC-ANTIGO', telefone: '1133334444', complemento: 'Loja 2' });
    const before = await record(id);
    const { company } = await updateCompany(opened, id, { nome: 'LOJA LEGADA NOVA LTDA', crt: '3', logradouro: 'Rua Augusta', numero: '100' });
    expect(company).toEqual({
      ...before,
      nome: 'LOJA LEGADA NOVA LTDA',
      crt: 3,
      address: { ...before.address, logradouro: 'Rua Augusta', numero: '100' },
      version: before.version + 1,
      updatedAt: expect.any(String),
    });
    expect(company.updatedAt >= before.updatedAt).toBe(true);
    expect(await record(id)).toEqual(company);
  });

  it('adds a CSC to a company registered without one, sealed for that company like at registration', async () => {
    const id = await register();
    expect((await record(id)).csc).toBeNull();
    const { company, emitter } = await updateCompany(opened, id, { cscId: '000002', csc: 'CSC-NOVO-987654' });
    expect(emitter.csc).toEqual({ id: '000002', token: 'CSC-NOVO-987654' });
    expect(company.csc!.id).toBe('000002');
    expect(company.csc!.sealed.includes(Buffer.from('CSC-NOVO-987654'))).toBe(false);
    expect(openText(opened.secrets, company.csc!.sealed, secretContext.csc(id))).toBe('CSC-NOVO-987654');
  });

  it('renews the certificate: the new one is sealed and is what the company signs with', async () => {
    const id = await register({ certificate: { pfx: legacyPfx, password: 'senha-antiga' } });
    const before = await record(id);
    const renewed = renewal();
    const { company, certificate } = await updateCompany(opened, id, { certificate: { pfx: renewed.pfx, password: renewed.password } });
    expect(certificate.fingerprint256).toBe(renewed.certificate.fingerprint256);
    expect(company.certificate.sha256).toBe(renewed.certificate.fingerprint256);
    expect(company.certificate.notAfter).toBe(renewed.certificate.notAfter.toISOString());
    expect(company.certificate.sha256).not.toBe(before.certificate.sha256);
    expect(opened.secrets.open(company.certificate.pfxSealed, secretContext.pfx(id)).equals(renewed.pfx)).toBe(true);
    expect(openText(opened.secrets, company.certificate.passwordSealed, secretContext.pfxPassword(id))).toBe(renewed.password);
  });

  it("keeps the replaced certificate's public facts, dated by the update; the same certificate given again replaces nothing", async () => {
    const id = await register({ certificate: { pfx: legacyPfx, password: 'senha-antiga' } });
    const legacy = loadPfx(legacyPfx, 'senha-antiga');
    const factsOf = (c: Certificate) => ({ sha256: c.fingerprint256, notBefore: c.notBefore.toISOString(), notAfter: c.notAfter.toISOString() });
    const first = renewal();
    const renewed = await updateCompany(opened, id, { certificate: { pfx: first.pfx, password: first.password } });
    expect(renewed.replacedCertificates).toEqual([{ ...factsOf(legacy), replacedAt: renewed.company.updatedAt }]);

    // The current certificate given again (with other changes): it replaces nothing.
    const samePfx = await updateCompany(opened, id, { certificate: { pfx: first.pfx, password: first.password }, nome: 'LOJA LEGADA DE NOVO' });
    expect(samePfx.certificate.fingerprint256).toBe(first.certificate.fingerprint256);
    expect(samePfx.replacedCertificates).toEqual(renewed.replacedCertificates);

    const second = generateTestCertificate({ cnpj: LEGACY_CNPJ, xNome: 'LOJA LEGADA LTDA', password: 'outra-senha' });
    const again = await updateCompany(opened, id, { certificate: { pfx: second.pfx, password: 'outra-senha' } });
    expect(again.replacedCertificates).toEqual([
      { ...factsOf(legacy), replacedAt: renewed.company.updatedAt },
      { ...factsOf(first.certificate), replacedAt: again.company.updatedAt },
    ]);
    expect(await opened.store.replacedCertificates(id)).toEqual(again.replacedCertificates);
  });

  it('refuses, naming the option and changing nothing: a certificate of another CNPJ, an expired one, a wrong password', async () => {
    const id = await register({ cscId: '000001', csc: 'CSC-ANTIGO' });
    const foreign = generateTestCertificate({ cnpj: '11444777000161', xNome: 'OUTRA LOJA', password: 'x-senha' });
    expect(await issuesOfUpdate(id, { certificate: { pfx: foreign.pfx, password: 'x-senha' } })).toEqual({
      certificado: `o certificado é do CNPJ 11444777000161, não do CNPJ da empresa ${LEGACY_CNPJ}`,
    });
    const expired = renewal({ notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - 35 * DAY) });
    expect(await issuesOfUpdate(id, { certificate: { pfx: expired.pfx, password: expired.password }, nome: 'OUTRO NOME' })).toEqual({
      certificado: expect.stringContaining('certificado vencido em'),
    });
    expect(await issuesOfUpdate(id, { certificate: { pfx: legacyPfx, password: 'errada' } })).toEqual({ senha: 'senha do certificado incorreta' });
  });

  it("applies the registration's rules to every option, all problems at once", async () => {
    const id = await register();
    expect(await issuesOfUpdate(id, { cscId: '1', crt: '5', qrcodeVersao: '4', ambiente: 'teste', cep: '40000000', nome: 'X' })).toEqual({
      csc: 'obrigatório junto com --csc-id',
      crt: expect.any(String),
      'qrcode-versao': 'deve ser 2 ou 3',
      ambiente: 'deve ser homologacao ou producao',
      cep: 'CEP 40000000 não pertence à UF SP',
      nome: expect.stringContaining('de 2 a 60'),
    });
    expect(await issuesOfUpdate(id, { municipio: '3304557' })).toEqual({ municipio: expect.stringContaining('não pertence à UF SP') });
    expect(await issuesOfUpdate(id, { csc: 'só o código' })).toEqual({ 'csc-id': 'obrigatório junto com --csc', csc: expect.any(String) });
  });

  it('IBS/CBS settings: the Simples opt-in, the default classification and the company rates per period reach the emitter; each problem names its option', async () => {
    const id = await register({ crt: '1' });
    expect((await record(id)).ibsCbs).toEqual({ optIn: false, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] });
    const { emitter, company } = await updateCompany(opened, id, {
      ibscbs: 'sim',
      ibscbsCst: '200',
      ibscbsCclasstrib: '200034',
      ibscbsAliquotas: '2028-01-01.. cbs=9,00; 2027-01-01..2027-12-31 cbs=8.80 ibs-uf=0.05',
    });
    expect(emitter.ibsCbs).toEqual({
      optIn: true,
      defaultClassification: { CST: '200', cClassTrib: '200034' },
      rates: [
        { from: '2027-01-01', to: '2027-12-31', pIBSUF: '0.05', pCBS: '8.80' },
        { from: '2028-01-01', pCBS: '9.00' },
      ],
    });
    // An update that does not mention them keeps them; "" removes the rates.
    expect((await updateCompany(opened, id, { nome: 'LOJA LEGADA ME' })).emitter.ibsCbs).toEqual(company.ibsCbs);
    expect((await updateCompany(opened, id, { ibscbsAliquotas: '' })).emitter.ibsCbs?.rates).toEqual([]);

    expect(
      await issuesOfUpdate(id, {
        ibscbs: 'talvez',
        ibscbsCst: '000',
        ibscbsCclasstrib: '200003',
        ibscbsAliquotas: '2027-01-01..2027-12-31 cbs=8.8; 2027-06-01.. cbs=9',
      }),
    ).toEqual({
      ibscbs: expect.stringContaining('sim ou nao'),
      'ibscbs-cclasstrib': expect.stringContaining('rejeição 1024'),
      'ibscbs-aliquotas': 'períodos sobrepostos: o que começa em 2027-01-01 e o que começa em 2027-06-01',
    });
    expect(await issuesOfUpdate(id, { ibscbsCst: '999' })).toEqual({ 'ibscbs-cst': expect.stringContaining('rejeição 1020') });
    expect(await issuesOfUpdate(id, { ibscbsAliquotas: '2027-01-01 cbs=8' })).toEqual({ 'ibscbs-aliquotas': expect.stringContaining('INICIO..FIM') });
    expect(await issuesOfUpdate(id, { ibscbsAliquotas: '2027-01-01.. pis=1' })).toEqual({ 'ibscbs-aliquotas': expect.stringContaining('"pis=1"') });
    expect(await issuesOfUpdate(id, { ibscbsAliquotas: '2027-01-01.. cbs=101' })).toEqual({ 'ibscbs-aliquotas': expect.stringMatching(/^período 1: .*100/) });
  });

  it('removes the trade name (fantasia), the complement and the phone when given empty', async () => {
    const id = await register({ fantasia: 'Legada', complemento: 'Loja 2', telefone: '1133334444' });
    const { company, emitter } = await updateCompany(opened, id, { fantasia: '', complemento: '', telefone: '' });
    expect(company).toMatchObject({ fantasia: null, address: { complemento: null, telefone: null } });
    expect(emitter).not.toHaveProperty('xFant');
    expect(emitter.address).not.toHaveProperty('xCpl');
    expect(emitter.address).not.toHaveProperty('fone');
  });

  it('moves to produção only with what a registration in produção states: IE, address and certificate', async () => {
    const id = await register();
    expect(Object.keys(await issuesOfUpdate(id, { ambiente: 'producao' })).sort()).toEqual(
      ['bairro', 'cep', 'certificado', 'ie', 'logradouro', 'municipio', 'numero'].sort(),
    );
    const { company } = await updateCompany(opened, id, {
      ambiente: 'producao',
      ie: '110042490114',
      logradouro: 'Rua Augusta',
      numero: '100',
      bairro: 'Consolação',
      municipio: '3550308',
      cep: '01305000',
      certificate: { pfx: legacyPfx, password: 'senha-antiga' },
    });
    expect(company).toMatchObject({ ambiente: 'producao', ie: '110042490114', address: { logradouro: 'Rua Augusta', cep: '01305000' } });
    // Once in produção, the other settings change alone again; the certificate on file is kept.
    const { company: later } = await updateCompany(opened, id, { qrcodeVersao: '3' });
    expect(later).toMatchObject({ ambiente: 'producao', qrcodeVersao: 3, certificate: { sha256: company.certificate.sha256 } });
  });

  it('an unknown company is reported against --empresa', async () => {
    const err = await updateCompany(opened, '00000000-0000-0000-0000-000000000000', { nome: 'Outra' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FieldError);
    expect((err as FieldError).issues).toEqual([{ field: 'empresa', message: expect.stringContaining('não encontrada') }]);
  });

  it('never touches another company', async () => {
    const a = await register({ cscId: '000001', csc: 'CSC-DE-A' });
    const b = await register({ cscId: '000001', csc: 'CSC-DE-B' });
    const bBefore = await record(b);
    await updateCompany(opened, a, {
      nome: 'LOJA A RENOVADA',
      cscId: '000009',
      csc: 'CSC-NOVO-DE-A',
      certificate: { pfx: legacyPfx, password: 'senha-antiga' },
    });
    expect(await record(b)).toEqual(bBefore);
  });

  it('an update that met a concurrent one is validated again over it, and neither change is lost', async () => {
    const id = await register();
    let interleaved = false;
    const racing: CompanyDeps = {
      secrets: opened.secrets,
      store: {
        getCompany: async (companyId) => {
          const read = await opened.store.getCompany(companyId);
          // Between this read and the write, another process changes the phone.
          if (!interleaved) {
            interleaved = true;
            await updateCompany(opened, id, { telefone: '1144445555' });
          }
          return read;
        },
        getCompanyVersion: (companyId) => opened.store.getCompanyVersion(companyId),
        getOperatorRates: () => opened.store.getOperatorRates(),
        setOperatorRates: (periods) => opened.store.setOperatorRates(periods),
        updateCompanySettings: (...args) => opened.store.updateCompanySettings(...args),
        replaceApiTokens: (...args) => opened.store.replaceApiTokens(...args),
        insertCompany: (...args) => opened.store.insertCompany(...args),
        technicalResponsible: () => opened.store.technicalResponsible(),
        setTechnicalResponsible: (value) => opened.store.setTechnicalResponsible(value),
        findTokenOwner: (...args) => opened.store.findTokenOwner(...args),
        replacedCertificates: (...args) => opened.store.replacedCertificates(...args),
        importIbptTable: (...args) => opened.store.importIbptTable(...args),
        ibptTables: (uf) => opened.store.ibptTables(uf),
        ibptStamp: (uf) => opened.store.ibptStamp(uf),
        listIbptTables: () => opened.store.listIbptTables(),
      },
    };
    const { company } = await updateCompany(racing, id, { nome: 'NOME NOVO' });
    expect(interleaved).toBe(true);
    expect(company).toMatchObject({ nome: 'NOME NOVO', address: { telefone: '1144445555' }, version: 3 });
  });

  it('keeps every new secret out of the database file in clear', async () => {
    const id = await register();
    const renewed = renewal();
    const csc = 'CSC-SECRETO-ATUALIZADO-42';
    await updateCompany(opened, id, { cscId: '000003', csc, certificate: { pfx: renewed.pfx, password: renewed.password } });
    const file = serviceDbPath(dir);
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.includes(Buffer.from(csc))).toBe(false);
    expect(bytes.includes(Buffer.from(renewed.password))).toBe(false);
    const middle = Math.floor(renewed.pfx.length / 2);
    expect(bytes.includes(renewed.pfx.subarray(middle, middle + 64))).toBe(false);
    // The check can fail: the public fingerprint, stored in clear by design, is found.
    expect(bytes.includes(Buffer.from(renewed.certificate.fingerprint256))).toBe(true);
  });
});

describe('Companies.issuer after an update made by another process', () => {
  let dir: string;
  let service: OpenedService;
  let cli: OpenedService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-company-cache-'));
    // Two connections to one data directory: the running service and `balcao company update`.
    service = await openService(dir, {});
    cli = await openService(dir, {});
  });

  afterAll(async () => {
    await service?.store.close();
    await cli?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reloads the credentials on the next use, and only when the settings changed', async () => {
    const { companyId } = await createCompany(cli, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'LOJA LEGADA LTDA' });
    const other = (await createCompany(cli, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'OUTRA LOJA', cscId: '000001', csc: 'CSC-OUTRA' })).companyId;
    const companies = new Companies(service);
    const now = new Date();
    const first = (await companies.issuer(companyId, now))!;
    const otherFirst = (await companies.issuer(other, now))!;
    expect(first.emitter.csc).toBeUndefined();

    await updateCompany(cli, companyId, { cscId: '000002', csc: 'CSC-NOVO', certificate: { pfx: legacyPfx, password: 'senha-antiga' } });
    const second = (await companies.issuer(companyId, now))!;
    expect(second).not.toBe(first);
    expect(second.emitter.csc).toEqual({ id: '000002', token: 'CSC-NOVO' });
    expect(second.certificate.fingerprint256).not.toBe(first.certificate.fingerprint256);
    expect(second.certificate.subject).toContain('LOJA LEGADA LTDA:11222333000181');
    // The certificate it replaced comes with it, so a contingency receipt signed before still counts.
    expect(first.replacedCertificates).toEqual([]);
    expect(second.replacedCertificates).toEqual([expect.objectContaining({ sha256: first.certificate.fingerprint256 })]);

    expect(await companies.issuer(companyId, now)).toBe(second); // unchanged since: parsed once
    expect(await companies.issuer(other, now)).toBe(otherFirst); // another company's update: untouched
  });
});

describe('replaceToken', () => {
  let dir: string;
  let opened: OpenedService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'balcao-company-token-'));
    opened = await openService(dir, {});
  });

  afterAll(async () => {
    await opened?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('revokes the old token at once and resolves only the new one, of that company alone', async () => {
    const a = await createCompany(opened, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja A' });
    const b = await createCompany(opened, { cnpj: LEGACY_CNPJ, uf: 'SP', nome: 'Loja B' });
    const renewed = await replaceToken(opened, a.companyId);
    expect(renewed.companyId).toBe(a.companyId);
    expect(isWellFormedToken(renewed.token)).toBe(true);
    expect(renewed.token).not.toBe(a.token);
    expect(await opened.store.findTokenOwner(hashToken(a.token))).toBeUndefined();
    expect((await opened.store.findTokenOwner(hashToken(renewed.token)))?.company.id).toBe(a.companyId);
    expect((await opened.store.findTokenOwner(hashToken(b.token)))?.company.id).toBe(b.companyId);

    const file = serviceDbPath(dir);
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.includes(Buffer.from(renewed.token.slice(4)))).toBe(false);
    expect(bytes.includes(hashToken(renewed.token))).toBe(true);
  });

  it('an unknown company is reported against --empresa, and no token is created', async () => {
    const err = await replaceToken(opened, '00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FieldError);
    expect((err as FieldError).issues[0]!.field).toBe('empresa');
  });
});
