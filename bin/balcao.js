#!/usr/bin/env node
// Entry point of the `balcao` command: runs the compiled command (dist/node, see bin/build.ts),
// rebuilt first when a source changed since it was built.
import { compiledCli } from './compiled.js';

let cli;
try {
  cli = await compiledCli();
} catch (err) {
  process.stderr.write(`balcao: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const { main } = await import(cli);
process.exitCode = await main(process.argv.slice(2));
