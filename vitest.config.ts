import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts', '**/*.test.tsx'],
    exclude: ['node_modules/**', 'dist/**'],
    globalSetup: ['test/global-setup.ts'],
    // Real processes, real SQLite files and RSA signing: generous but bounded. These bound a hung
    // test, not a slow one: on a shared 2-core machine under load a service takes tens of seconds
    // to start and a test that walks a scenario several times its idle duration, and a test that
    // passes takes no longer for a larger bound. Speed is the benches' business (npm run bench).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two test files at a time. Most of a file's time is spent waiting on the processes it drives
    // (services, terminals, Chromium, PostgreSQL), so two files keep a 2-core machine busy where
    // Vitest's default (one fewer than the cores: one file here) left it half idle and the suite
    // took longer than CI's 20 minutes.
    maxWorkers: 2,
    // expect.poll waits for something real (a process, a browser, a queue) to move on: on a
    // shared 2-core machine running other test files, under load, one second is too tight to
    // mean "never", and ten seconds can be.
    expect: { poll: { timeout: 30_000 } },
  },
});
