import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts', '**/*.test.tsx'],
    exclude: ['node_modules/**', 'dist/**'],
    globalSetup: ['test/global-setup.ts'],
    // Real processes, real SQLite files and RSA signing: generous but bounded.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // expect.poll waits for something real (a process, a browser, a queue) to move on: on a
    // shared 2-core machine running other test files, one second is too tight to mean "never".
    expect: { poll: { timeout: 10_000 } },
  },
});
