import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FieldError } from '../errors.ts';
import {
  assertCep,
  assertCfop,
  assertMunicipality,
  assertNcm,
  isValidCep,
  isValidCfop,
  isValidNcm,
  municipalitiesOf,
  municipality,
  ufOfCep,
} from './catalogs.ts';
import { cUFOf, UFS } from './uf.ts';

function fieldErrorOf(fn: () => unknown): FieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FieldError) return err;
    throw err;
  }
  throw new Error('expected a FieldError');
}

describe('NCM', () => {
  it('accepts a code of the current table', () => {
    expect(isValidNcm('84713012')).toBe(true);
    expect(isValidNcm('01012100')).toBe(true);
    expect(assertNcm('84713012', 'det[0].prod.NCM')).toBe('84713012');
  });

  it.each([
    ['99999999', 'inexistente'],
    ['00000000', 'inexistente'],
    ['8471.30.12', '8 dígitos'],
    ['1012100', '8 dígitos'], // the library would left-pad this into 01012100
    ['847130120', '8 dígitos'],
    ['', 'obrigatório'],
  ])('rejects %j (%s)', (ncm, message) => {
    expect(isValidNcm(ncm)).toBe(false);
    const err = fieldErrorOf(() => assertNcm(ncm, 'det[3].prod.NCM'));
    expect(err.field).toBe('det[3].prod.NCM');
    expect(err.message).toContain(message);
  });
});

describe('CFOP', () => {
  it.each(['5102', '5405', '1202', '6102'])('accepts %s', (cfop) => {
    expect(isValidCfop(cfop)).toBe(true);
    expect(assertCfop(cfop, 'det[0].prod.CFOP')).toBe(cfop);
  });

  it.each([
    ['5350', 'inexistente'], // subgroup heading, not an operable code
    ['0000', 'inexistente'],
    ['9999', 'inexistente'],
    ['5.102', '4 dígitos'],
    ['510', '4 dígitos'],
    ['', 'obrigatório'],
  ])('rejects %j (%s)', (cfop, message) => {
    expect(isValidCfop(cfop)).toBe(false);
    const err = fieldErrorOf(() => assertCfop(cfop, 'det[1].prod.CFOP'));
    expect(err.field).toBe('det[1].prod.CFOP');
    expect(err.message).toContain(message);
  });
});

describe('CEP', () => {
  it('takes 8 digits, nothing else', () => {
    expect(isValidCep('01310100')).toBe(true);
    expect(assertCep('01310100', 'dest.enderDest.CEP')).toBe('01310100');
    for (const [cep, message] of [
      ['01310-100', 'somente dígitos'],
      ['0131010', '8 dígitos'],
      ['013101000', '8 dígitos'],
      ['', 'obrigatório'],
    ] as const) {
      expect(isValidCep(cep)).toBe(false);
      const err = fieldErrorOf(() => assertCep(cep, 'dest.enderDest.CEP'));
      expect(err.field).toBe('dest.enderDest.CEP');
      expect(err.message).toContain(message);
    }
  });

  it.each([
    ['01000000', 'SP'],
    ['01310100', 'SP'],
    ['19999999', 'SP'],
    ['20000000', 'RJ'],
    ['29999999', 'ES'],
    ['40010000', 'BA'],
    ['68899999', 'PA'],
    ['68900000', 'AP'],
    // AM's two ranges around RR
    ['69000000', 'AM'],
    ['69299999', 'AM'],
    ['69300000', 'RR'],
    ['69399999', 'RR'],
    ['69400000', 'AM'],
    ['69899999', 'AM'],
    ['69900000', 'AC'],
    // DF and GO interleave twice
    ['70000000', 'DF'],
    ['72799999', 'DF'],
    ['72800000', 'GO'],
    ['72999999', 'GO'],
    ['73000000', 'DF'],
    ['73699999', 'DF'],
    ['73700000', 'GO'],
    ['76799999', 'GO'],
    ['76800000', 'RO'],
    ['76999999', 'RO'],
    ['77000000', 'TO'],
    ['78000000', 'MT'],
    ['78899999', 'MT'],
    ['79000000', 'MS'],
    ['80000000', 'PR'],
    ['88000000', 'SC'],
    ['89999999', 'SC'],
    ['90000000', 'RS'],
    ['99999999', 'RS'],
  ])('ufOfCep(%s) = %s', (cep, uf) => {
    expect(ufOfCep(cep)).toBe(uf);
  });

  it('has no state for the gaps (00…, old RO block 789…) nor for malformed input', () => {
    for (const cep of ['00000000', '00999999', '78900000', '78950000', '78999999', '0100000', '01310-100', '']) {
      expect(ufOfCep(cep)).toBeUndefined();
    }
  });

  it('covers every UF', () => {
    const seen = new Set<string>();
    for (let block = 0; block < 1000; block++) {
      const uf = ufOfCep(`${String(block).padStart(3, '0')}00000`);
      if (uf) seen.add(uf);
    }
    expect([...seen].sort()).toEqual([...UFS]);
  });
});

describe('municipalities', () => {
  it.each([
    ['3550308', 'São Paulo', 'SP'],
    ['2927408', 'Salvador', 'BA'],
    ['5300108', 'Brasília', 'DF'],
    ['5101837', 'Boa Esperança do Norte', 'MT'],
  ])('%s is %s/%s', (code, name, uf) => {
    expect(municipality(code)).toEqual({ code, name, uf });
    expect(assertMunicipality(code, uf, 'emit.enderEmit.cMun')).toEqual({ code, name, uf });
    expect(assertMunicipality(code, undefined, 'emit.enderEmit.cMun').uf).toBe(uf);
  });

  it('answers undefined for codes that are not in the IBGE table', () => {
    for (const code of ['3550309', '9999999', '0000000', '355030', '35503080', 'abcdefg', '']) {
      expect(municipality(code)).toBeUndefined();
    }
  });

  it('names the field and the UF when the municipality is in another state', () => {
    const err = fieldErrorOf(() => assertMunicipality('3550308', 'RJ', 'ide.cMunFG'));
    expect(err.field).toBe('ide.cMunFG');
    expect(err.message).toContain('município não pertence à UF RJ');
    expect(err.message).toContain('São Paulo/SP');
  });

  it('tells an unknown code apart from a malformed one', () => {
    const unknown = fieldErrorOf(() => assertMunicipality('3550309', 'SP', 'infMunCarrega[0].cMunCarrega'));
    expect(unknown.field).toBe('infMunCarrega[0].cMunCarrega');
    expect(unknown.message).toContain('município inexistente');
    expect(unknown.message).not.toContain('não pertence');

    const malformed = fieldErrorOf(() => assertMunicipality('355030', 'SP', 'ide.cMunFG'));
    expect(malformed.field).toBe('ide.cMunFG');
    expect(malformed.message).toContain('7 dígitos');
    expect(fieldErrorOf(() => assertMunicipality(undefined, 'SP', 'ide.cMunFG')).message).toContain('obrigatório');
  });

  it('lists 5571 municipalities, each under the UF its cUF prefix names', () => {
    let total = 0;
    for (const uf of UFS) {
      const list = municipalitiesOf(uf);
      expect(list.length).toBeGreaterThan(0);
      for (const m of list) {
        expect(m.uf).toBe(uf);
        expect(m.code.slice(0, 2)).toBe(cUFOf(uf));
        expect(municipality(m.code)).toBe(m);
      }
      total += list.length;
    }
    expect(total).toBe(5571);
    expect(municipalitiesOf('SP')).toHaveLength(645);
    expect(municipalitiesOf('DF').map((m) => m.code)).toEqual(['5300108']);
  });

  it('gives nothing for a non-UF and a list callers cannot corrupt', () => {
    expect(municipalitiesOf('sp')).toEqual([]);
    expect(municipalitiesOf('XX')).toEqual([]);
    const list = municipalitiesOf('AC') as unknown as { name: string }[];
    expect(() => list.push({ name: 'x' })).toThrow(TypeError);
    expect(() => {
      list[0]!.name = 'x';
    }).toThrow(TypeError);
  });

  it('does not load the municipality table until the first lookup', () => {
    // A fresh process, so no earlier test has loaded it already.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = `
      import { createRequire } from 'node:module';
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('get-municipalities'));
      const c = await import('./fiscal/br/catalogs.ts');
      c.isValidNcm('84713012');
      const before = loaded();
      const name = c.municipality('2927408')?.name;
      console.log(JSON.stringify({ before, after: loaded(), name }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ before: false, after: true, name: 'Salvador' });
  });
});
