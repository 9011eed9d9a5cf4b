// The layering of ARCHITECTURE.md is enforced by ESLint (eslint.layers.js), and the ban on import
// cycles by dependency-cruiser. These tests check small sample sources under the real configs to
// prove the rules bite where they must and stay quiet where imports are allowed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname });

async function restrictedImports(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer rules', () => {
  it.each([
    ['fiscal/x.ts', "import { a } from '../service/app.ts';"],
    ['fiscal/x.ts', "import { a } from '../electron/core/db.ts';"],
    ['fiscal/nfce/x.ts', "import { a } from '../../renderer/store.ts';"],
    ['fiscal/x.ts', "import { a } from '../native/usb.ts';"],
    ['service/x.ts', "import { a } from '../electron/core/db.ts';"],
    ['renderer/x.ts', "import { a } from '../service/app.ts';"],
    ['electron/core/x.ts', "import { app } from 'electron';"],
    ['service/x.ts', "import { app } from 'electron';"],
    ['native/x.ts', "import { ipcMain } from 'electron/main';"],
    ['renderer/x.ts', "import { a } from '../electron/core/terminal.ts';"],
    ['renderer/api/x.ts', "import { a } from '../../electron/host/server.ts';"],
    ['renderer/x.tsx', "import { a } from '../electron/preload.ts';"],
    ['renderer/app/x.tsx', "import { a } from '../../electron/ipc.ts';"],
    ['renderer/x.tsx', "import { a } from '../fiscal/money.ts';"],
    ['renderer/x.tsx', "import { a } from '../base/node/secret-box.ts';"],
    ['base/common/x.ts', "import { a } from '../../fiscal/money.ts';"],
    ['base/node/x.ts', "import { a } from '../../service/secrets.ts';"],
    ['base/common/x.ts', "import { a } from 'electron';"],
    ['base/common/x.ts', "import { a } from 'node:crypto';"],
  ])('%s: %s is refused', async (file, source) => {
    expect(await restrictedImports(file, source + '\nexport const b = a ?? app ?? ipcMain;')).not.toHaveLength(0);
  });

  it.each([
    ['service/x.ts', "import { a } from '../fiscal/access-key.ts';"],
    ['electron/core/x.ts', "import { a } from '../../fiscal/access-key.ts';"],
    ['electron/core/x.ts', "import { a } from '../../native/printer.ts';"],
    ['electron/main.ts', "import { a } from 'electron';"],
    ['electron/preload.ts', "import { a } from 'electron';"],
    ['fiscal/nfce/x.ts', "import { a } from '../xml.ts';"],
    ['renderer/api/x.ts', "import { a } from '../../electron/api/bridge-protocol.ts';"],
    ['renderer/x.tsx', "import type { a } from '../electron/api/terminal-api.ts';"],
    ['renderer/x.tsx', "import { a } from '../base/common/clock.ts';"],
    ['fiscal/x.ts', "import { a } from '../base/common/brasilia.ts';"],
    ['service/x.ts', "import { a } from '../base/node/secret-box.ts';"],
    ['electron/core/x.ts', "import { a } from '../../base/node/secret-box.ts';"],
    ['base/node/x.ts', "import { a } from '../common/clock.ts';"],
    ['base/node/x.ts', "import { a } from 'node:crypto';"],
    ['base/common/x.ts', "import { a } from '@brazilian-utils/brazilian-utils/is-valid-cpf';"],
    ['electron/api/x.ts', "import type { a } from '../../base/common/api/nfce.ts';"],
    ['service/nfce/x.ts', "import { a } from '../../base/common/api/nfce.ts';"],
  ])('%s: %s is allowed', async (file, source) => {
    expect(await restrictedImports(file, source + '\nexport const b = a;')).toEqual([]);
  });
});

// Import cycles and the direction inside service/ are dependency-cruiser's (.dependency-cruiser.cjs,
// run by `npm run lint`): a few files in a temporary folder, cruised under the real rule set.
describe('dependency-cruiser rules', () => {
  const require = createRequire(import.meta.url);
  const config = require('../.dependency-cruiser.cjs') as IConfiguration;

  async function cycles(files: Record<string, string>): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-cycles-'));
    try {
      for (const [name, source] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), source);
      }
      const { tsConfig: _ignored, ...options } = config.options ?? {};
      const result = await cruise(['.'], { ...options, baseDir: dir, validate: true, ruleSet: { forbidden: config.forbidden } });
      const output = result.output as ICruiseResult;
      // One violation per cycle, named after the module it was found from.
      return output.summary.violations.map((v) => `${v.rule.name}: ${v.from}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('refuses a cycle inside a folder, also when only types go round', async () => {
    expect(
      await cycles({
        'a.ts': "import type { B } from './b.ts';\nexport type A = B[];\n",
        'b.ts': "import type { A } from './a.ts';\nexport type B = { a?: A };\n",
      }),
    ).toEqual([expect.stringMatching(/^no-circular: [ab]\.ts$/)]);
  });

  it('refuses a cycle between folders', async () => {
    const found = await cycles({
      'store.ts': "import { parte } from './nfce/store.ts';\nexport const todas = [parte];\n",
      'nfce/store.ts': "import { todas } from '../store.ts';\nexport const parte = () => todas;\n",
    });
    expect(found).toEqual([expect.stringMatching(/^no-circular: (store|nfce\/store)\.ts$/)]);
  });

  it('lets imports that go one way pass', async () => {
    expect(await cycles({ 'a.ts': "import { b } from './b.ts';\nexport const a = b;\n", 'b.ts': 'export const b = 1;\n' })).toEqual([]);
  });

  const service = (extra: Record<string, string>) => ({
    'service/app.ts': 'export const app = 1;\n',
    'service/clock.ts': 'export const clock = 1;\n',
    'service/nfe/store.ts': 'export const nfe = 1;\n',
    'service/queue/authorization-queue.ts': "import { clock } from '../clock.ts';\nexport const queue = clock;\n",
    ...extra,
  });

  it.each([
    ['service/nfce/issuance.ts', "import { nfe } from '../nfe/store.ts';\nexport const x = nfe;\n", 'service-documents-side-by-side'],
    ['service/queue/x.ts', "import { nfe } from '../nfe/store.ts';\nexport const x = nfe;\n", 'service-machinery-below-documents'],
    ['service/terminals/routes.ts', "import { nfe } from '../nfe/store.ts';\nexport const x = nfe;\n", 'service-documents-side-by-side'],
    ['service/export/x.ts', "import { nfe } from '../nfe/store.ts';\nexport const x = nfe;\n", 'service-machinery-below-documents'],
    ['service/nfce/routes.ts', "import { app } from '../app.ts';\nexport const x = app;\n", 'service-composition-on-top'],
    ['service/authority/sefaz/x.ts', "import { app } from '../../app.ts';\nexport const x = app;\n", 'service-composition-on-top'],
  ])('inside service/, %s importing %s is refused (%s)', async (file, source, rule) => {
    expect(await cycles(service({ [file]: source }))).toEqual([`${rule}: ${file}`]);
  });

  it('inside service/, the way down is allowed, and a test beside the code may reach anything', async () => {
    expect(
      await cycles(
        service({
          'service/nfce/issuance.ts':
            "import { queue } from '../queue/authorization-queue.ts';\nimport { clock } from '../clock.ts';\nexport const x = [queue, clock];\n",
          'service/nfce/issuance.test.ts': "import { app } from '../app.ts';\nimport { nfe } from '../nfe/store.ts';\nexport const t = [app, nfe];\n",
        }),
      ),
    ).toEqual([]);
  });
});
