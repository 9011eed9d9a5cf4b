// The layer rules, kept apart so a test can lint sample files against them and prove they bite.
// Each folder lists the folders it must never import from; only electron/main.ts and
// electron/preload.ts may import the `electron` package (the terminal core runs in plain Node).

const electronPkg = { name: 'electron', message: 'Só electron/main.ts e electron/preload.ts importam electron.' };
const folder = (name) => ({
  group: [`**/${name}`, `**/${name}/**`, `${name}/**`],
  message: `Esta camada não importa de ${name}/ (veja ARCHITECTURE.md, camadas).`,
});

const forbidden = {
  // The base every layer may stand on: imports nothing of ours (base/common runs anywhere, the
  // screen included; base/node needs Node).
  base: ['fiscal', 'service', 'electron', 'renderer', 'native'],
  fiscal: ['service', 'electron', 'renderer', 'native'],
  native: ['service', 'electron', 'renderer'],
  service: ['electron', 'renderer', 'native'],
  electron: ['service', 'renderer'],
  renderer: ['service', 'native', 'fiscal'],
};

// The screen reaches the terminal only through the typed API and its carrier protocol: of
// electron/, just electron/api/ (types and the protocol's constants).
const electronButApi = {
  group: ['**/electron/**', '!**/electron/api', '!**/electron/api/**'],
  message: 'A tela só importa de electron/api/ (tipos e protocolo), nunca do núcleo, do host ou do Electron.',
};
// Nor Node's half of the base (keys, files): of base/, just base/common/.
const baseNode = { group: ['**/base/node', '**/base/node/**'], message: 'A tela só importa de base/common/: base/node/ precisa do Node.' };
const extraPatterns = { renderer: [electronButApi, baseNode] };
// base/common/ runs in the screen too: nothing of Node's.
const nodeBuiltins = { group: ['node:*'], message: 'base/common/ roda também na tela: nada do Node (isso vai em base/node/).' };

export const layerRules = [
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs'],
    ignores: ['electron/main.ts', 'electron/preload.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [electronPkg], patterns: [{ group: ['electron/*'], message: electronPkg.message }] }],
    },
  },
  ...Object.entries(forbidden).map(([layer, banned]) => ({
    files: [`${layer}/**/*.ts`, `${layer}/**/*.tsx`],
    ignores: layer === 'electron' ? ['electron/main.ts', 'electron/preload.ts'] : [],
    rules: {
      'no-restricted-imports': ['error', { paths: [electronPkg], patterns: [...banned.map(folder), ...(extraPatterns[layer] ?? [])] }],
    },
  })),
  {
    files: ['base/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [electronPkg], patterns: [...forbidden.base.map(folder), nodeBuiltins] }],
    },
  },
];
