// Where the project's reference material lives: `../shared` beside the repository (official
// XSDs, fixtures, adjacency table). Never copied into the repository; BALCAO_SHARED_DIR
// overrides the location for installs that keep it elsewhere.

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export function sharedDir(): string {
  const dir = process.env.BALCAO_SHARED_DIR ?? join(repoRoot, '..', 'shared');
  if (!existsSync(dir)) {
    throw new Error(`Material de referência não encontrado em ${dir} (defina BALCAO_SHARED_DIR).`);
  }
  return dir;
}

export const sharedPath = (...parts: string[]): string => join(sharedDir(), ...parts);

export const xsdDir = { nfe: () => sharedPath('xsd', 'nfe', 'PL_009_V4'), mdfe: () => sharedPath('xsd', 'mdfe', 'PL_MDFe_300a') };

export const fixturePath = (name: string): string => sharedPath('fixtures', 'xml', name);
