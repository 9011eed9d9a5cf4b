// docs/api.md, run as written: every `sh example` block is run by bash, in the document's order,
// against one fresh `balcao service` (sandbox) and one company, and its output is compared with
// the `http answer` / `json answer` block after it (the convention is in test/helpers/doc-examples.ts
// and in docs/api.md, "Trying the examples"). The commands see the variables a reader sets
// (BALCAO, TOKEN, HOJE) and those the answers before them kept ($NFCE_ID, $CHAVE...). A command
// that only reads is repeated, for up to a minute, until its answer matches: the NFC-e's verdict
// comes from a queue, as a reader who repeats the GET would see.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { compareAnswer, examplesOf, onlyReads, type DocExample } from './helpers/doc-examples.ts';
import { registerCompany } from './helpers/nfce.ts';
import { repoRoot, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

const run = promisify(execFile);
const DOCUMENT = 'docs/api.md';
const REPEAT_FOR_MS = 60_000;

describe(`${DOCUMENT}: every example, run as written`, () => {
  const examples = examplesOf(readFileSync(join(repoRoot, DOCUMENT), 'utf8'));
  let service: ServiceProcess;
  const vars: Record<string, string> = {};
  let cwd: string;

  beforeAll(async () => {
    const dataDir = tempDataDir('balcao-docs-');
    service = await startService({ dataDir });
    const company = await registerCompany(service.url, dataDir);
    cwd = tempDataDir('balcao-docs-cwd-');
    Object.assign(vars, { BALCAO: service.url, TOKEN: company.token, HOJE: brasiliaDay(new Date()) });
  });

  afterAll(async () => {
    await service?.stop();
  });

  /** Runs the example once: curl's output and the differences from the documented answer. */
  async function attempt(example: DocExample): Promise<{ output: string; problems: string[]; kept: Record<string, string> }> {
    const kept = { ...vars };
    const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', example.command], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8', ...kept },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { output: stdout, problems: compareAnswer(stdout, example.answer, kept), kept };
  }

  it('has examples, each followed by its answer', () => {
    expect(examples.length).toBeGreaterThan(20);
  });

  it('answers each example as the document shows it, in order', async () => {
    for (const example of examples) {
      const until = Date.now() + REPEAT_FOR_MS;
      let result = await attempt(example);
      while (result.problems.length > 0 && onlyReads(example.command) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        result = await attempt(example);
      }
      expect(result.problems, `${DOCUMENT}, linha ${example.line}:\n${example.command}\nsaída:\n${result.output.slice(0, 3000)}`).toEqual([]);
      Object.assign(vars, result.kept);
    }
  });
});
