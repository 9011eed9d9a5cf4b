// The company profile's checks (the same Brazilian reference data the service uses) and the
// emitter built from it.

import { describe, expect, it } from 'vitest';
import { DEMO_CSC, demoEmitter } from '../../fiscal/samples.ts';
import type { CompanyProfile } from '../api/terminal-api.ts';
import { emitterOf, profileOfEmitter, validateCompanyProfile, validateCscToken } from './company-profile.ts';
import type { TerminalError } from './errors.ts';

const demo = profileOfEmitter(demoEmitter());

function refusal(over: Record<string, unknown>, address: Record<string, unknown> = {}): { field?: string; message: string; code: string } {
  try {
    validateCompanyProfile({ ...demo, ...over, address: { ...demo.address, ...address } });
  } catch (err) {
    const e = err as TerminalError;
    return { field: e.field, message: e.message, code: e.code };
  }
  throw new Error('aceito');
}

describe('validateCompanyProfile', () => {
  it('accepts the demo company and gives back the emitter of fiscal/samples.ts', () => {
    const profile = validateCompanyProfile(demo);
    expect(profile).toEqual(demo);
    expect(emitterOf(profile, DEMO_CSC)).toEqual(demoEmitter());
    expect(emitterOf(profile, undefined).csc).toBeUndefined();
  });

  it('IBS/CBS: the Simples opt-in, the default classification and the rates per period reach the contingency emitter; problems name their field', () => {
    const ibsCbs = { optIn: true, defaultClassification: { CST: '200', cClassTrib: '200034' }, rates: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.8' }] };
    const profile = validateCompanyProfile({ ...demo, ibsCbs });
    expect(profile.ibsCbs).toEqual({ ...ibsCbs, rates: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.80' }] });
    expect(emitterOf(profile, DEMO_CSC).ibsCbs).toEqual(profile.ibsCbs);
    const refused = (() => {
      try {
        validateCompanyProfile({
          ...demo,
          ibsCbs: { optIn: true, defaultClassification: { CST: '000', cClassTrib: '200003' }, rates: [{ from: '2027-01-01', pCBS: 'oito' }] },
        });
      } catch (err) {
        return err as TerminalError;
      }
      throw new Error('aceito');
    })();
    expect(refused.field).toBe('company.ibsCbs.defaultClassification.cClassTrib');
    expect(refused.message).toMatch(/^Classificação tributária \(cClassTrib\) padrão: .*rejeição 1024.*; Alíquotas do IBS\/CBS por período, período 1, CBS: /);
  });

  it('takes the municipality name from the IBGE table', () => {
    expect(validateCompanyProfile({ ...demo, address: { ...demo.address, xMun: 'sao paulo' } }).address.xMun).toBe('São Paulo');
  });

  it.each([
    [{ cnpj: '11222333000180' }, {}, 'company.cnpj', /CNPJ: .*dígito verificador/],
    [{ cnpj: '11.222.333/0001-81' }, {}, 'company.cnpj', /sem pontuação/],
    [{ ie: '12.345' }, {}, 'company.ie', /Inscrição estadual/],
    [{ xNome: ' Loja' }, {}, 'company.xNome', /Razão social: .*espaços/],
    [{}, { UF: 'XX' }, 'company.address.UF', /UF/],
    [{}, { CEP: '20040002' }, 'company.address.CEP', /CEP: o CEP 20040002 não pertence à UF SP/],
    [{}, { CEP: '01001-000' }, 'company.address.CEP', /CEP/],
    [{}, { cMun: '3304557' }, 'company.address.cMun', /não pertence à UF SP/],
    [{}, { cMun: '9999999' }, 'company.address.cMun', /inexistente/],
    [{}, { fone: '(11) 3333-4444' }, 'company.address.fone', /Telefone/],
    [{ crt: 5 }, {}, 'company.crt', /CRT/],
    [{ environment: 'teste' }, {}, 'company.environment', /Ambiente/],
    [{ qrCodeVersion: 1 }, {}, 'company.qrCodeVersion', /QR Code/],
    [{ cscId: 'abc' }, {}, 'company.cscId', /CSC/],
  ])('refuses %j %j naming %s', (over, address, field, message) => {
    const r = refusal(over, address);
    expect(r).toMatchObject({ code: 'configuracao_invalida', field });
    expect(r.message).toMatch(message);
  });

  it('reports every problem at once, the first field named', () => {
    const r = refusal({ cnpj: '1', ie: '' }, { CEP: '1' });
    expect(r.field).toBe('company.cnpj');
    expect(r.message.split('; ')).toHaveLength(3);
  });

  it('refuses what is not a profile', () => {
    expect(() => validateCompanyProfile(null)).toThrow(/Dados da empresa/);
    expect(() => validateCompanyProfile({ ...demo, address: undefined } as unknown as CompanyProfile)).toThrow(/Logradouro/);
  });
});

describe('validateCscToken', () => {
  it('accepts 1 to 36 printable characters', () => {
    expect(validateCscToken(DEMO_CSC.token)).toBe(DEMO_CSC.token);
    expect(() => validateCscToken('com espaço')).toThrow(/CSC/);
    expect(() => validateCscToken('x'.repeat(37))).toThrow(/CSC/);
  });
});
