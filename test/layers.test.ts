// The layering of ARCHITECTURE.md is enforced by ESLint (eslint.layers.js). These tests lint small
// sample sources under the real config to prove the rule bites where it must and stays quiet
// where imports are allowed.
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
  ])('%s: %s is allowed', async (file, source) => {
    expect(await restrictedImports(file, source + '\nexport const b = a;')).toEqual([]);
  });
});
