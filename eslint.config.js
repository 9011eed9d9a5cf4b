// Lint: typescript-eslint's recommended rules plus the layering of DEVELOPERS.md, which is the
// part that matters most: dependencies point one way
// (renderer -> typed API <- electron core -> fiscal, native; service -> fiscal).
import tseslint from 'typescript-eslint';
import { layerRules } from './eslint.layers.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'out/**', 'test-output/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...layerRules,
);
