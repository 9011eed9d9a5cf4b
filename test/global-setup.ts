// Before any test file runs: the compiled command (dist/node) and the checkout screen
// (renderer/dist) are brought up to date once, so the many `balcao` processes the tests start
// in parallel run the code under test without each finding it stale and building it; and one
// PostgreSQL server is started for the whole run (test/helpers/postgres.ts: a throwaway cluster,
// or BALCAO_TEST_DATABASE_URL), where each suite on PostgreSQL creates its own database. It is
// stopped when the run ends. Should it not start (PostgreSQL not installed), the run goes on and
// every suite on PostgreSQL fails with the reason (helpers/stores.ts): the others still run.

import type { TestProject } from 'vitest/node';
import { ensureNodeBuild, ensureRendererBuilt } from '../bin/build.ts';
import { startPostgres } from './helpers/postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's PostgreSQL server (a maintenance database URL): test/helpers/stores.ts. */
    postgresUrl: string;
    /** Why it could not be started, when it could not. */
    postgresError: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres] = await Promise.all([startPostgres().catch((err: Error) => err), ensureNodeBuild().then(() => ensureRendererBuilt())]);
  if (postgres instanceof Error) {
    project.provide('postgresUrl', '');
    project.provide('postgresError', postgres.message);
    return async () => undefined;
  }
  project.provide('postgresUrl', postgres.url);
  project.provide('postgresError', '');
  return () => postgres.stop();
}
