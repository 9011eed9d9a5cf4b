// Land borders between the 27 UFs (51 undirected edges), the data behind the MDF-e percurso rules
// (rejection 663; docs/fiscal.md, "MDF-e percurso"). Listed both ways so a reader can check any
// state at a glance; `percurso.ts` refuses the table at first use if an edge is one-sided or a
// code is misspelt. DF–MG is listed: they share a short land border (road DF-285); whether
// SEFAZ's own table has it is not published, which is why the table is data kept apart.

import type { UF } from './uf.ts';

export const UF_BORDERS: Readonly<Record<UF, readonly UF[]>> = {
  AC: ['AM', 'RO'],
  AL: ['BA', 'PE', 'SE'],
  AM: ['AC', 'MT', 'PA', 'RO', 'RR'],
  AP: ['PA'],
  BA: ['AL', 'ES', 'GO', 'MG', 'PE', 'PI', 'SE', 'TO'],
  CE: ['PB', 'PE', 'PI', 'RN'],
  DF: ['GO', 'MG'],
  ES: ['BA', 'MG', 'RJ'],
  GO: ['BA', 'DF', 'MG', 'MS', 'MT', 'TO'],
  MA: ['PA', 'PI', 'TO'],
  MG: ['BA', 'DF', 'ES', 'GO', 'MS', 'RJ', 'SP'],
  MS: ['GO', 'MG', 'MT', 'PR', 'SP'],
  MT: ['AM', 'GO', 'MS', 'PA', 'RO', 'TO'],
  PA: ['AM', 'AP', 'MA', 'MT', 'RR', 'TO'],
  PB: ['CE', 'PE', 'RN'],
  PE: ['AL', 'BA', 'CE', 'PB', 'PI'],
  PI: ['BA', 'CE', 'MA', 'PE', 'TO'],
  PR: ['MS', 'SC', 'SP'],
  RJ: ['ES', 'MG', 'SP'],
  RN: ['CE', 'PB'],
  RO: ['AC', 'AM', 'MT'],
  RR: ['AM', 'PA'],
  RS: ['SC'],
  SC: ['PR', 'RS'],
  SE: ['AL', 'BA'],
  SP: ['MG', 'MS', 'PR', 'RJ'],
  TO: ['BA', 'GO', 'MA', 'MT', 'PA', 'PI'],
};
