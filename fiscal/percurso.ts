// MDF-e percurso (`infPercurso/UFPer`): the states a road trip crosses between UFIni and UFFim.
// SEFAZ rejects with 663 "Percurso informado inválido" any list that is not a chain of bordering
// states in travel order (docs/fiscal.md, "MDF-e percurso"). It does not require the shortest chain, so this module
// both suggests one and validates whatever chain the caller supplies.
//
// The border table is data kept apart (br/uf-borders.ts): whether SEFAZ treats DF–MG as
// bordering is unsettled (docs/fiscal.md), and a correction must touch one line of data.

import { UF_BORDERS } from './br/uf-borders.ts';
import { isUF, UFS, type UF } from './br/uf.ts';
import { FieldError } from './errors.ts';

/** Schema limit: `infPercurso` maxOccurs 25. */
export const MAX_PERCURSO = 25;

export type RouteCheck = { valid: true } | { valid: false; field: string; message: string };

let adjacency: ReadonlyMap<UF, ReadonlySet<UF>> | undefined;

// Checked on load because BFS and the validation silently give wrong answers on an asymmetric or
// misspelt table, and this file is edited by hand.
function neighbours(): ReadonlyMap<UF, ReadonlySet<UF>> {
  if (adjacency) return adjacency;
  const table = new Map<UF, Set<UF>>(UFS.map((uf) => [uf, new Set<UF>()]));
  for (const [uf, list] of Object.entries(UF_BORDERS)) {
    if (!isUF(uf) || !list.every(isUF) || list.includes(uf)) {
      throw new Error(`br/uf-borders.ts: entrada inválida para "${uf}"`);
    }
    for (const n of list) table.get(uf)?.add(n);
  }
  for (const [uf, set] of table) {
    for (const n of set) {
      if (!table.get(n)?.has(uf)) throw new Error(`br/uf-borders.ts: divisa ${uf}–${n} não é simétrica`);
    }
  }
  adjacency = table;
  return table;
}

export function areNeighbours(a: string, b: string): boolean {
  return isUF(a) && isUF(b) && (neighbours().get(a)?.has(b) ?? false);
}

/**
 * A shortest chain of intermediate states from `ufIni` to `ufFim` (neither included); empty when
 * they are equal or border each other.
 *
 * Tie-break (374 of the 702 ordered pairs have several shortest chains): breadth-first search
 * from `ufIni` expanding each state's neighbours in alphabetical order, a state keeping the first
 * parent that reaches it. That yields, among all shortest chains, the lexicographically smallest
 * sequence of UF codes (compared element by element, codes by plain string order): the queue of
 * each BFS level is in lexicographic order of the chains that reach it, by induction. So PE→RN is
 * CE (not PB), MT→BA is GO (not TO), BA→PR is GO,MS. The rule is arbitrary but stable; it
 * suggests, it does not decide: the caller may send any valid chain (e.g. PB for PE→RN, the
 * BR-101 route).
 */
export function suggestRoute(ufIni: string, ufFim: string): UF[] {
  if (!isUF(ufIni)) throw new FieldError('UFIni', `UF inexistente: "${ufIni}"`);
  if (!isUF(ufFim)) throw new FieldError('UFFim', `UF inexistente: "${ufFim}"`);
  if (ufIni === ufFim) return [];
  const graph = neighbours();
  const parent = new Map<UF, UF | null>([[ufIni, null]]);
  const queue: UF[] = [ufIni];
  for (let head = 0; head < queue.length && !parent.has(ufFim); head++) {
    const current = queue[head]!;
    for (const next of [...(graph.get(current) ?? [])].sort()) {
      if (parent.has(next)) continue;
      parent.set(next, current);
      queue.push(next);
    }
  }
  if (!parent.has(ufFim)) throw new Error(`Tabela de divisas não liga ${ufIni} a ${ufFim}`);
  const route: UF[] = [];
  for (let uf = parent.get(ufFim); uf && uf !== ufIni; uf = parent.get(uf)) route.unshift(uf);
  return route;
}

/**
 * Applies SEFAZ's percurso rules (docs/fiscal.md, "MDF-e percurso") to a caller's chain and reports the first broken
 * one, naming the `infPercurso[i].UFPer` to fix. Travel order matters: the same states reversed
 * are rejected.
 */
export function validateRoute(ufIni: string, ufFim: string, route: readonly string[]): RouteCheck {
  const fail = (field: string, message: string): RouteCheck => ({ valid: false, field, message });
  const at = (i: number) => `infPercurso[${i}].UFPer`;

  if (!isUF(ufIni)) return fail('UFIni', `UF inexistente: "${ufIni}"`);
  if (!isUF(ufFim)) return fail('UFFim', `UF inexistente: "${ufFim}"`);
  if (ufIni === ufFim) {
    return route.length === 0 ? { valid: true } : fail(at(0), `UF de início e de fim são a mesma (${ufIni}): não informe percurso`);
  }
  if (areNeighbours(ufIni, ufFim)) {
    return route.length === 0 ? { valid: true } : fail(at(0), `${ufIni} e ${ufFim} fazem divisa: não informe percurso`);
  }
  if (route.length === 0) {
    return fail('infPercurso', `percurso obrigatório: ${ufIni} e ${ufFim} não fazem divisa (sugestão: ${suggestRoute(ufIni, ufFim).join(', ')})`);
  }
  if (route.length > MAX_PERCURSO) {
    return fail('infPercurso', `percurso com ${route.length} UFs; o máximo é ${MAX_PERCURSO}`);
  }

  let previous: UF = ufIni;
  for (const [i, uf] of route.entries()) {
    if (!isUF(uf)) return fail(at(i), `UF inexistente: "${uf}"`);
    if (uf === ufIni) return fail(at(i), `não repita no percurso a UF de início (${ufIni})`);
    if (uf === ufFim) return fail(at(i), `não repita no percurso a UF de fim (${ufFim})`);
    if (uf === previous) return fail(at(i), `${uf} repetida em sequência no percurso`);
    if (!areNeighbours(previous, uf)) return fail(at(i), `${previous} e ${uf} não fazem divisa`);
    previous = uf;
  }
  if (!areNeighbours(previous, ufFim)) {
    return fail(at(route.length - 1), `${previous} e ${ufFim} não fazem divisa`);
  }
  return { valid: true };
}
