// Before any test file runs: the compiled command (dist/node) and the checkout screen
// (renderer/dist) are brought up to date once, so the many `balcao` processes the tests start
// in parallel run the code under test without each finding it stale and building it.

import { ensureNodeBuild, ensureRendererBuilt } from '../bin/build.ts';

export default async function setup(): Promise<void> {
  await ensureNodeBuild();
  await ensureRendererBuilt();
}
