// Dynamic PIX survives a crash (issue 26): the terminal core, in its own process, is SIGKILLed
// (1) after the charge was created at the PSP and before it was paid, and (2) after the PSP's
// PIX was on disk and before the sale's NFC-e; started again on the same folder, it finishes the
// sale: one charge at the PSP, one PIX, one NFC-e, one payment line.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POS_DB_FILE } from '../electron/core/db.ts';
import { SIMULATED_PSP, startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';
import { repoRoot, tempDataDir } from './helpers/service-process.ts';

type Line = { event: string; state?: string; txid?: string; saleId?: string };

let psp: PixPspSimulator;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  psp = await startPixPspSimulator();
  const files = tempDataDir('balcao-pix-crash-files-');
  writeFileSync(join(files, 'cliente.pem'), psp.client.certPem + psp.client.keyPem, { mode: 0o600 });
  writeFileSync(join(files, 'psp-ca.pem'), psp.caPem);
  env = {
    ...process.env,
    BALCAO_PIX_URL: psp.url,
    BALCAO_PIX_TOKEN_URL: psp.tokenUrl,
    BALCAO_PIX_CLIENT_ID: psp.clientId,
    BALCAO_PIX_CLIENT_SECRET: psp.clientSecret,
    BALCAO_PIX_CERT: join(files, 'cliente.pem'),
    BALCAO_PIX_CA: join(files, 'psp-ca.pem'),
    BALCAO_PIX_PSP_CNPJ: SIMULATED_PSP.cnpj,
  };
});

afterAll(async () => {
  await psp?.close();
});

/** Runs the helper; `onLine` sees each line; resolves with the lines and how the process ended. */
function run(
  extra: Record<string, string>,
  onLine: (line: Line) => void = () => {},
): Promise<{ lines: Line[]; signal: NodeJS.Signals | null; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test', 'helpers', 'pix-terminal.ts')], {
    cwd: repoRoot,
    env: { ...env, ...extra },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Line[] = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const line = JSON.parse(text) as Line;
    lines.push(line);
    onLine(line);
  });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ lines, signal, code })));
}

function facts(dataDir: string, saleId: string) {
  const db = new Database(join(dataDir, POS_DB_FILE), { readonly: true });
  try {
    return {
      charges: db.prepare('SELECT txid, state, e2eid FROM pix_charges WHERE sale_id = ?').all(saleId) as {
        txid: string;
        state: string;
        e2eid: string | null;
      }[],
      receipts: (db.prepare('SELECT count(*) AS n FROM receipts WHERE sale_id = ?').get(saleId) as { n: number }).n,
      payments: db.prepare('SELECT tpag, card_caut FROM sale_payments WHERE sale_id = ?').all(saleId) as { tpag: string; card_caut: string | null }[],
    };
  } finally {
    db.close();
  }
}

const atPsp = (saleId: string) => psp.requests.filter((r) => r.startsWith(`PUT /cob/${saleId.replace(/-/g, '')}`));

describe('dynamic PIX across a SIGKILL of the terminal', () => {
  it('killed after the charge was created, before it was paid: after restart one charge, one NFC-e', async () => {
    const dataDir = tempDataDir('balcao-pix-crash-1-');
    const first = await run({ PIX_DATA: dataDir, PIX_MODE: 'charge', PIX_KILL_AT: 'active' });
    expect(first.signal).toBe('SIGKILL');
    const { txid, saleId } = first.lines.find((l) => l.state === 'active')!;
    expect(facts(dataDir, saleId!).charges).toEqual([{ txid, state: 'active', e2eid: null }]);

    const paid = psp.pay(txid!);
    const second = await run({ PIX_DATA: dataDir, PIX_MODE: 'resume', PIX_TXID: txid! });
    expect(second.lines.at(-1)).toEqual({ event: 'settled', state: 'finished' });
    const after = facts(dataDir, saleId!);
    expect(after.charges).toEqual([{ txid, state: 'finished', e2eid: paid.endToEndId }]);
    expect(after.receipts).toBe(1);
    expect(after.payments).toEqual([{ tpag: '17', card_caut: paid.endToEndId }]);
    expect(atPsp(saleId!)).toEqual([`PUT /cob/${txid}`]);
    expect(psp.charge(txid!)?.pix).toHaveLength(1);
  });

  it('killed after the PIX was on disk, before the NFC-e: after restart one NFC-e, one payment line, no second charge', async () => {
    const dataDir = tempDataDir('balcao-pix-crash-2-');
    let txid = '';
    const first = await run({ PIX_DATA: dataDir, PIX_MODE: 'charge', PIX_KILL_AT: 'paid' }, (line) => {
      if (line.state === 'active' && !txid) psp.pay((txid = line.txid!));
    });
    expect(first.signal).toBe('SIGKILL');
    const saleId = first.lines.find((l) => l.state === 'paid')!.saleId!;
    const before = facts(dataDir, saleId);
    expect(before.charges).toMatchObject([{ txid, state: 'paid' }]);
    expect(before.receipts).toBe(0);

    const second = await run({ PIX_DATA: dataDir, PIX_MODE: 'resume', PIX_TXID: txid });
    expect(second.lines.at(-1)).toEqual({ event: 'settled', state: 'finished' });
    const after = facts(dataDir, saleId);
    expect(after.receipts).toBe(1);
    expect(after.payments).toEqual([{ tpag: '17', card_caut: before.charges[0]!.e2eid }]);
    expect(atPsp(saleId)).toEqual([`PUT /cob/${txid}`]);
    expect(psp.charge(txid)?.pix).toHaveLength(1);
    expect(psp.problems).toEqual([]);
  });
});
