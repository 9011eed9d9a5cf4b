#!/usr/bin/env node
// Entry point of the `balcao` command. The project ships TypeScript sources and runs them
// through tsx, so the command works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
