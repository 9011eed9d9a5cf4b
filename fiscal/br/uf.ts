// The 27 federative units and their IBGE codes (cUF, TCodUfIBGE). Kept as a literal table rather
// than derived from brazilian-utils' getStates(): the key, the QR code and every schema check use
// the two-digit cUF string, and a tiny constant here avoids loading the state list on hot paths.

import { FieldError } from '../errors.ts';

const CUF_BY_UF = {
  RO: '11',
  AC: '12',
  AM: '13',
  RR: '14',
  PA: '15',
  AP: '16',
  TO: '17',
  MA: '21',
  PI: '22',
  CE: '23',
  RN: '24',
  PB: '25',
  PE: '26',
  AL: '27',
  SE: '28',
  BA: '29',
  MG: '31',
  ES: '32',
  RJ: '33',
  SP: '35',
  PR: '41',
  SC: '42',
  RS: '43',
  MS: '50',
  MT: '51',
  GO: '52',
  DF: '53',
} as const;

export type UF = keyof typeof CUF_BY_UF;

/** The two-letter codes in alphabetical order (the order the percurso tie-break relies on). */
export const UFS: readonly UF[] = Object.freeze((Object.keys(CUF_BY_UF) as UF[]).sort());

const UF_BY_CUF: ReadonlyMap<string, UF> = new Map(UFS.map((uf) => [CUF_BY_UF[uf], uf]));

/** Case-sensitive on purpose: TUf in the schemas only accepts upper case. */
export function isUF(x: unknown): x is UF {
  return typeof x === 'string' && Object.hasOwn(CUF_BY_UF, x);
}

export function cUFOf(uf: string, field = 'UF'): string {
  if (!isUF(uf)) throw new FieldError(field, `UF inexistente: "${uf}"`);
  return CUF_BY_UF[uf];
}

export function ufOfCUF(cUF: string): UF | undefined {
  return UF_BY_CUF.get(cUF);
}
