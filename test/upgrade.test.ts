// An update of Balcão in the middle of a day's work. The data folders are the ones commit 942c2fe
// wrote (test/fixtures/upgrade/: made by make.ts with that commit's own code, in a temporary git
// worktree; committed, so CI needs neither the history nor an old build): a receipt authorized,
// one rejected and awaiting the manager's correction, one waiting at the service for an authority
// that stopped answering, re-issued offline when the terminal went into contingency, and one more
// issued offline. The current code starts on them (the real `balcao service`, the terminal core):
// each database is copied before its first migration, each migration prints its time as it runs,
// and once the authority answers and the manager corrects the rejected one, every sale has one
// authorized NFC-e, every receipt kept its number, and the abandoned online attempt's number is
// settled (voided, or cancelled by substitution), never issued twice.

import { chmodSync, cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { migrationSetDir, shippedMigrations } from '../migrations/migrate.ts';
import { api, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/upgrade/942c2fe', import.meta.url));

type Day = { companyId: string; token: string; cnpj: string; manager: { name: string; pin: string }; vendas: string[] };

let service: ServiceProcess | undefined;
let terminal: Terminal | undefined;
afterAll(async () => {
  await terminal?.close();
  await service?.stop();
});

function rows<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The fixture in a fresh folder, its keys owner-only (git keeps no modes). */
function copyOfTheDay(): { dir: string; day: Day } {
  const dir = tempDataDir('balcao-upgrade-');
  cpSync(FIXTURE, dir, { recursive: true });
  for (const key of ['service/master.key', 'terminal/segredos.key']) chmodSync(join(dir, key), 0o600);
  for (const folder of ['service', 'terminal']) chmodSync(join(dir, folder), 0o700);
  return { dir, day: JSON.parse(readFileSync(join(dir, 'dia.json'), 'utf8')) as Day };
}

describe('an update in the middle of the day', () => {
  it('the folders of 942c2fe, with receipts queued, in contingency and awaiting correction: every sale issued once, every number kept', async () => {
    const { dir, day } = copyOfTheDay();
    const posFile = join(dir, 'terminal', 'pos.sqlite');
    const serviceFile = join(dir, 'service', 'service.sqlite');
    // Written by an older code: its migrations are a part of this code's.
    for (const [file, set] of [
      [posFile, 'pos'],
      [serviceFile, 'service'],
    ] as const) {
      const recorded = rows<{ id: string }>(file, 'SELECT id FROM schema_migrations ORDER BY id').map((r) => r.id);
      const shipped = shippedMigrations(migrationSetDir(set)).map((m) => m.id);
      expect(recorded.every((id) => shipped.includes(id))).toBe(true);
      expect(shipped.length).toBeGreaterThan(recorded.length);
    }
    const before = rows<{ id: string; sale_id: string; nnf: number; state: string; tp_emis: number }>(
      posFile,
      'SELECT id, sale_id, nnf, state, tp_emis FROM receipts ORDER BY nnf',
    );
    expect(before.map((r) => [r.nnf, r.state, r.tp_emis])).toEqual([
      [1, 'authorized', 1],
      [2, 'rejected', 1],
      [4, 'processing', 9],
      [5, 'processing', 9],
    ]);
    expect(rows(posFile, "SELECT nnf FROM reconciliation_tasks WHERE state = 'open'")).toEqual([{ nnf: 3 }]);

    // The service updated: its copy first, each migration's time printed.
    service = await startService({ dataDir: join(dir, 'service') });
    const printed = service.output.join('\n');
    expect(printed).toMatch(new RegExp(`Migração 20261130T1000_i24_nfce_numbers aplicada em \\d+\\.\\d s \\(${serviceFile}\\)`));
    expect(readdirSync(join(dir, 'service', 'copias')).some((f) => /^service-.*-antes-da-atualizacao\.sqlite$/.test(f))).toBe(true);
    const http = api(service.url, day.token);
    expect((await http.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);

    // The terminal updated: the same.
    const stderr = vi.spyOn(process.stderr, 'write');
    terminal = await createTerminal({
      dataDir: join(dir, 'terminal'),
      startWorker: false,
      retry: { baseMs: 50, capMs: 500, pollFirstMs: 20, pollBaseMs: 50, pollCapMs: 300 },
    });
    const lines = stderr.mock.calls.map((c) => String(c[0])).join('');
    stderr.mockRestore();
    expect(lines).toMatch(new RegExp(`Migração 20261130T1000_i24_contingency_service_time aplicada em \\d+\\.\\d s \\(${posFile}\\)`));
    expect(readdirSync(join(dir, 'terminal', 'copias')).some((f) => /^pos-.*-antes-da-atualizacao\.sqlite$/.test(f))).toBe(true);
    terminal.configure({ serviceUrl: service.url }, 'o serviço depois da atualização');
    terminal.start();

    // The manager corrects the rejected one (the card's data), as the screen would.
    const manager = (await terminal.listManagers()).find((m) => m.name === day.manager.name)!;
    const rejected = before.find((r) => r.state === 'rejected')!;
    await terminal.correctAndResubmit(
      rejected.id,
      { payments: [{ tPag: '03', amountCents: 3780, card: { tpIntegra: '2', tBand: '01' } }] },
      { managerId: manager.id, pin: day.manager.pin, reason: 'Dados do cartão informados depois da atualização' },
    );

    // Everything settles: the queue empty, contingency over, nothing left to reconcile.
    await expect
      .poll(
        async () => {
          const s = await terminal!.queueStatus();
          return s.pending === 0 && s.needsAttention === 0 && !s.contingency.active && s.contingency.openTasks.length === 0;
        },
        { timeout: 90_000, interval: 250 },
      )
      .toBe(true);

    const after = terminal.store.receipts.allReceipts();
    // Every receipt kept its number, and every one is authorized.
    expect(after.map((r) => [r.id, r.nnf, r.state])).toEqual(before.map((r) => [r.id, r.nnf, 'authorized']));
    // The online attempt abandoned for contingency (nº 3): settled at the authority, not issued twice.
    const task = terminal.store.contingency.reconciliationTasks()[0]!;
    expect(task).toMatchObject({ nnf: 3, state: 'done' });
    expect(['inutilizada', 'cancelada_substituicao']).toContain(task.outcome);

    // At the authority: each sale's receipt authorized once, not cancelled; no number twice.
    const authority = join(dir, 'service', 'sandbox-authority.sqlite');
    const nfe = rows<{ access_key: string; number: number; cancelled_at: string | null }>(
      authority,
      "SELECT access_key, number, cancelled_at FROM nfe WHERE cnpj = ? AND model = '65' AND serie = 1 ORDER BY number",
      day.cnpj,
    );
    for (const r of after)
      expect(
        nfe.filter((n) => n.access_key === r.chave && n.cancelled_at === null),
        `nº ${r.nnf}`,
      ).toHaveLength(1);
    expect(new Set(nfe.map((n) => n.number)).size).toBe(nfe.length);
    expect(day.vendas.sort()).toEqual(after.map((r) => r.sale_id).sort());
  });
});
