// Official code tables: NCM, CFOP, CEP → UF, IBGE municipalities.
//
// NCM and CFOP membership come from brazilian-utils (the tables it embeds, see docs/fiscal.md, "Reference data");
// the strict format check in front of them exists because the library also accepts masks and
// left-pads short NCMs, and the XML must carry the code exactly as the caller sent it.

import type { getMunicipalities as GetMunicipalities } from '@brazilian-utils/brazilian-utils/get-municipalities';
import { isValidCfop as libIsValidCfop } from '@brazilian-utils/brazilian-utils/is-valid-cfop';
import { isValidNcm as libIsValidNcm } from '@brazilian-utils/brazilian-utils/is-valid-ncm';
import { FieldError } from '../errors.ts';
import { lazyModule } from '../lazy-module.ts';
import { isUF, ufOfCUF, type UF } from './uf.ts';

// ---------------------------------------------------------------------------------------------
// NCM, CFOP

export function isValidNcm(value: string): boolean {
  return typeof value === 'string' && /^[0-9]{8}$/.test(value) && libIsValidNcm(value);
}

export function isValidCfop(value: string): boolean {
  return typeof value === 'string' && /^[0-9]{4}$/.test(value) && libIsValidCfop(value);
}

export function assertNcm(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(field, 'NCM obrigatório');
  if (!/^[0-9]{8}$/.test(value)) throw new FieldError(field, 'NCM deve ter 8 dígitos, sem pontuação');
  if (!libIsValidNcm(value)) throw new FieldError(field, `NCM inexistente na tabela vigente: ${value}`);
  return value;
}

export function assertCfop(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(field, 'CFOP obrigatório');
  if (!/^[0-9]{4}$/.test(value)) throw new FieldError(field, 'CFOP deve ter 4 dígitos, sem pontuação');
  if (!libIsValidCfop(value)) throw new FieldError(field, `CFOP inexistente: ${value}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// CEP

export function isValidCep(value: string): boolean {
  return typeof value === 'string' && /^[0-9]{8}$/.test(value);
}

export function assertCep(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(field, 'CEP obrigatório');
  if (!/^[0-9]+$/.test(value)) throw new FieldError(field, 'CEP deve conter somente dígitos, sem hífen');
  if (value.length !== 8) throw new FieldError(field, `CEP deve ter 8 dígitos (recebidos ${value.length})`);
  return value;
}

// Correios "faixa de CEP por UF" (docs/fiscal.md, "Reference data"), ascending so the scan can stop early. AM, DF
// and GO each own two ranges; 00000000–00999999 and 78900000–78999999 (RO's former block, still
// assigned to RO by older tables) belong to no state today.
const CEP_RANGES: ReadonlyArray<readonly [from: number, to: number, uf: UF]> = [
  [1000000, 19999999, 'SP'],
  [20000000, 28999999, 'RJ'],
  [29000000, 29999999, 'ES'],
  [30000000, 39999999, 'MG'],
  [40000000, 48999999, 'BA'],
  [49000000, 49999999, 'SE'],
  [50000000, 56999999, 'PE'],
  [57000000, 57999999, 'AL'],
  [58000000, 58999999, 'PB'],
  [59000000, 59999999, 'RN'],
  [60000000, 63999999, 'CE'],
  [64000000, 64999999, 'PI'],
  [65000000, 65999999, 'MA'],
  [66000000, 68899999, 'PA'],
  [68900000, 68999999, 'AP'],
  [69000000, 69299999, 'AM'],
  [69300000, 69399999, 'RR'],
  [69400000, 69899999, 'AM'],
  [69900000, 69999999, 'AC'],
  [70000000, 72799999, 'DF'],
  [72800000, 72999999, 'GO'],
  [73000000, 73699999, 'DF'],
  [73700000, 76799999, 'GO'],
  [76800000, 76999999, 'RO'],
  [77000000, 77999999, 'TO'],
  [78000000, 78899999, 'MT'],
  [79000000, 79999999, 'MS'],
  [80000000, 87999999, 'PR'],
  [88000000, 89999999, 'SC'],
  [90000000, 99999999, 'RS'],
];

/** The UF whose Correios range holds the CEP; undefined for a malformed CEP or one in a gap. */
export function ufOfCep(cep: string): UF | undefined {
  if (!isValidCep(cep)) return undefined;
  const n = Number(cep);
  for (const [from, to, uf] of CEP_RANGES) {
    if (n < from) return undefined;
    if (n <= to) return uf;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// IBGE municipalities

export type Municipality = { readonly code: string; readonly name: string; readonly uf: UF };

// The municipality table costs ~15 ms to import plus ~4 ms to index (measured on Node 20),
// and most processes (a till validating items) never look a municipality up.
const municipalities = lazyModule<{ getMunicipalities: typeof GetMunicipalities }>('@brazilian-utils/brazilian-utils/get-municipalities');
const byUf = new Map<UF, { list: readonly Municipality[]; byCode: ReadonlyMap<string, Municipality> }>();

function stateTable(uf: UF) {
  let table = byUf.get(uf);
  if (!table) {
    const list = Object.freeze(
      municipalities()
        .getMunicipalities(uf)
        .map((m) => Object.freeze({ code: m.code, name: m.name, uf })),
    );
    table = { list, byCode: new Map(list.map((m) => [m.code, m])) };
    byUf.set(uf, table);
  }
  return table;
}

/** Looks a 7-digit IBGE code up. The first two digits are the cUF, so only that state's list is indexed. */
export function municipality(code: string): Municipality | undefined {
  if (typeof code !== 'string' || !/^[0-9]{7}$/.test(code)) return undefined;
  const uf = ufOfCUF(code.slice(0, 2));
  return uf ? stateTable(uf).byCode.get(code) : undefined;
}

/** The state's municipalities in IBGE code order; empty for anything that is not a UF (case-sensitive). */
export function municipalitiesOf(uf: string): readonly Municipality[] {
  return isUF(uf) ? stateTable(uf).list : [];
}

/**
 * cMun / cMunFG / cMunCarrega…: 7 digits, present in the IBGE table and, when `uf` is given,
 * inside that UF (MDF-e rejections 407/456/612/614 check the pair).
 */
export function assertMunicipality(code: unknown, uf: string | undefined, field: string): Municipality {
  if (typeof code !== 'string' || code === '') throw new FieldError(field, 'código do município obrigatório');
  if (!/^[0-9]{7}$/.test(code)) {
    throw new FieldError(field, 'código do município deve ter 7 dígitos (tabela IBGE), sem pontuação');
  }
  const found = municipality(code);
  if (!found) throw new FieldError(field, `município inexistente: ${code} não consta da tabela IBGE`);
  if (uf !== undefined && found.uf !== uf) {
    throw new FieldError(field, `município não pertence à UF ${uf}: ${code} é ${found.name}/${found.uf}`);
  }
  return found;
}
