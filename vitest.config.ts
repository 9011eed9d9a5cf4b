import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts', '**/*.test.tsx'],
    exclude: ['node_modules/**', 'dist/**'],
    // Real processes, real SQLite files and RSA signing: generous but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
