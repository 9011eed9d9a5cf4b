import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertMunicipality, ufOfCep } from '../fiscal/br/catalogs.ts';
import { UFS } from '../fiscal/br/uf.ts';
import { FieldError } from '../fiscal/errors.ts';
import { Companies, createCompany, sandboxCapitalOf, validateCompany, type CompanyInput } from './companies.ts';
import { openService, type OpenedService } from './open-service.ts';
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
    });
    expect(issuer.certificate.cnpj).toBe(LEGACY_CNPJ);
    expect(issuer.certificate.privateKeyPem).toContain('PRIVATE KEY');
    expect(await companies.issuer(companyId, now)).toBe(issuer); // parsed once

    const afterExpiry = new Date(issuer.certificate.notAfter.getTime() + 1000);
    await expect(companies.issuer(companyId, afterExpiry)).rejects.toThrow(/certificado vencido/);
    expect(await companies.issuer('00000000-0000-0000-0000-000000000000', now)).toBeUndefined();
  });
});
