// Lint: typescript-eslint's recommended rules plus the layering of ARCHITECTURE.md, which is the
// part that matters most: dependencies point one way
// (renderer -> typed API <- electron core -> fiscal, native; service -> fiscal).
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import { layerRules } from './eslint.layers.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'out/**', 'test-output/**', 'renderer/dist/**', 'dist-electron/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  { files: ['renderer/**/*.ts', 'renderer/**/*.tsx'], ...reactHooks.configs.flat.recommended },
  // A function a newcomer can read in one go: the fiscal builders and the service's routes were
  // split into named parts (one per XML group, receipt division, group of routes) to get here.
  {
    files: ['base/**/*.ts', 'fiscal/**/*.ts', 'service/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  ...layerRules,
);
