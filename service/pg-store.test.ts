// The PostgreSQL store as several processes see it: two stores opened on one database stand for
// two service processes (each with its lease, pg-db.ts). What one holds the other does not take,
// until the holder is gone (lease expired) or lets go (graceful stop); concurrent claims of one
// key yield one new attempt; webhook deliveries are never leased twice; a document's change turn
// is one process's at a time; a dead process's row is cleaned; readiness knows a schema behind
// the code; the driver's errors of an unreachable database are told from the others. Against a
// real PostgreSQL server (test/helpers/postgres.ts).

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../test/helpers/service-process.ts';
import { openTestService, storedNfce, testStorage, type TestStorage } from '../test/helpers/stores.ts';
import { createCompany } from './companies.ts';
import { isDatabaseUnavailable } from './database-faults.ts';
import type { OpenedService } from './open-service.ts';
import type { PgStore } from './pg-store.ts';
import type { NewNfceDocument } from './nfce/store.ts';

let storage: TestStorage;
let a: OpenedService;
let b: OpenedService;
let companyId: string;
let numero = 0;

const store = (opened: OpenedService) => opened.store as PgStore;

beforeAll(async () => {
  storage = await testStorage('postgres');
  // Opened together on a new database: both migrate it at once (one does, under its lock).
  [a, b] = await Promise.all([openTestService(storage), openTestService(storage)]);
  companyId = (await createCompany(a, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja Compartilhada' })).companyId;
});

afterAll(async () => {
  await a?.store.close();
  await b?.store.close();
  await storage?.close();
});

function document(over: Partial<NewNfceDocument> = {}): NewNfceDocument {
  numero += 1;
  return storedNfce(companyId, numero, over);
}

/** Makes a process look dead to the others: its heartbeat older than its lease. */
const expire = (opened: OpenedService) =>
  storage.db.rows(`UPDATE service_processes SET heartbeat_at = now() - interval '1 hour' WHERE id = ? RETURNING id`, store(opened).processId);

describe('two processes on one database', () => {
  it('both opened and registered; the schema is current for both', async () => {
    const processes = await storage.db.rows<{ id: string }>('SELECT id FROM service_processes ORDER BY id');
    expect(processes.map((p) => p.id).sort()).toEqual([store(a).processId, store(b).processId].sort());
    await expect(a.store.checkReady()).resolves.toBeUndefined();
    await expect(b.store.checkReady()).resolves.toBeUndefined();
  });

  it('concurrent claims of one key from both processes: exactly one new attempt', async () => {
    const claims = Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? a : b).store.claimIdempotencyKey({ companyId, docType: 'mdfe', key: 'disputada', fingerprint: 'f', documentId: randomUUID() }),
    );
    const results = await Promise.all(claims);
    expect(results.filter((r) => r.kind === 'new')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_progress')).toHaveLength(19);
  });

  it('a queued document is taken by one process only, until its holder dies; then the other takes it', async () => {
    const docs = Array.from({ length: 6 }, () => document());
    for (const d of docs) await a.store.nfce.insertDocument(d);
    const later = new Date(Date.now() + 1_000);
    const [byA, byB] = await Promise.all([a.store.nfce.dueDocuments(later, 3, new Set()), b.store.nfce.dueDocuments(later, 3, new Set())]);
    const ids = (list: { id: string }[]) => list.map((w) => w.id);
    expect(new Set([...ids(byA), ...ids(byB)]).size).toBe(6);
    // Held: the other process does not take them, whatever it asks for.
    expect(await b.store.nfce.dueDocuments(later, 100, new Set(ids(byB)))).toEqual([]);
    // A postponement frees one for whoever comes when it is due.
    await a.store.nfce.postpone(byA[0]!.id, new Date(Date.now() - 1), 'autoridade indisponível');
    expect(ids(await b.store.nfce.dueDocuments(later, 100, new Set(ids(byB))))).toEqual([byA[0]!.id]);
    // A's lease runs out: B takes what A still held.
    await expire(a);
    expect(ids(await b.store.nfce.dueDocuments(later, 100, new Set([...ids(byB), byA[0]!.id]))).sort()).toEqual(ids(byA).slice(1).sort());
  });

  it('keys and manifests of a process still alive are not recovered by another; once it is gone they are', async () => {
    const key = { companyId, docType: 'nfe' as const, key: 'devolucao-em-voo', fingerprint: 'f', documentId: randomUUID() };
    expect(await b.store.claimIdempotencyKey(key)).toEqual({ kind: 'new' });
    expect((await a.store.pendingIdempotencyKeys('nfe')).map((k) => k.key)).not.toContain('devolucao-em-voo');
    await expire(b);
    expect((await a.store.pendingIdempotencyKeys('nfe')).map((k) => k.key)).toContain('devolucao-em-voo');
    await store(b).renewLease();
    expect((await a.store.pendingIdempotencyKeys('nfe')).map((k) => k.key)).not.toContain('devolucao-em-voo');
  });

  it('webhook deliveries leased by one process are not leased by the other', async () => {
    await Promise.all([store(a).renewLease(), store(b).renewLease()]);
    await a.store.putWebhook(companyId, { url: 'http://127.0.0.1:9/', secretSealed: Buffer.from('x') });
    for (let i = 0; i < 10; i++) {
      await a.store.enqueueWebhookEvent({ eventId: randomUUID(), companyId, tipo: 'teste', payload: `{"n":${i}}`, createdAt: new Date() });
    }
    const now = new Date(Date.now() + 1_000);
    const [byA, byB] = await Promise.all([a.store.leaseDueWebhookDeliveries(now, 6, 60_000), b.store.leaseDueWebhookDeliveries(now, 6, 60_000)]);
    const all = [...byA, ...byB].map((d) => d.eventId);
    expect(all).toHaveLength(10);
    expect(new Set(all).size).toBe(10);
    expect(await b.store.leaseDueWebhookDeliveries(now, 100, 60_000)).toEqual([]);
    // Leased to the process, not for a fixed time: once A's lease runs out, B takes what A held.
    await expire(a);
    expect((await b.store.leaseDueWebhookDeliveries(now, 100, 60_000)).map((d) => d.eventId).sort()).toEqual(byA.map((d) => d.eventId).sort());
    await store(a).renewLease();
  });

  it("a document's change turn is one process's at a time, and ends with its holder's connection", async () => {
    const id = randomUUID();
    const steps: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = a.store.nfce.changeTurn(id, async () => {
      steps.push('a começa');
      await held;
      steps.push('a termina');
    });
    await expect.poll(() => steps).toEqual(['a começa']);
    const second = b.store.nfce.changeTurn(id, async () => void steps.push('b'));
    // Another document's turn, and the same id's MDF-e turn, do not wait for it.
    await b.store.nfce.changeTurn(randomUUID(), async () => void steps.push('outro documento'));
    await b.store.mdfe.changeTurn(id, async () => void steps.push('outro tipo'));
    release();
    await Promise.all([first, second]);
    expect(steps).toEqual(['a começa', 'outro documento', 'outro tipo', 'a termina', 'b']);

    // A process whose connection ends in its turn (the process died, the server cut it): the turn is free.
    const dying = await openTestService(storage);
    let entered!: () => void;
    let abandon!: (err: Error) => void;
    const inTurn = new Promise<void>((resolve) => (entered = resolve));
    const stuck = dying.store.nfce.changeTurn(id, () => (entered(), new Promise<never>((_resolve, reject) => (abandon = reject))));
    await inTurn;
    await storage.db.rows(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'balcao-turns' AND state = 'idle' AND query LIKE 'SELECT pg_advisory_lock%'`,
    );
    await expect(b.store.nfce.changeTurn(id, async () => 'livre')).resolves.toBe('livre');
    abandon(new Error('fim do teste'));
    await expect(stuck).rejects.toThrow('fim do teste');
    await dying.store.close();
  });

  it("a dead process's row is removed by the living ones' heartbeat; one that was only frozen registers again", async () => {
    await expire(b);
    await store(a).renewLease();
    expect(await storage.db.value<number>('SELECT count(*) FROM service_processes WHERE id = ?', store(b).processId)).toBe(0);
    expect(await storage.db.value<number>('SELECT count(*) FROM service_processes WHERE id = ?', store(a).processId)).toBe(1);
    await store(b).renewLease();
    expect(await storage.db.value<number>('SELECT count(*) FROM service_processes WHERE id = ?', store(b).processId)).toBe(1);
  });

  it("tells the driver's errors of a database that cannot answer from the others", async () => {
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => new Error('deveria ter falhado'),
        (err: unknown) => err,
      );
    const client = new pg.Client({ connectionString: storage.database, statement_timeout: 50 });
    client.on('error', () => undefined);
    await client.connect();
    // Cannot answer: nobody listens; a statement waited out; its connection ended by the server, and then used.
    const cannot = [
      await errorOf(new pg.Client({ host: '127.0.0.1', port: await closedPort() }).connect()),
      await errorOf(client.query('SELECT pg_sleep(1)')),
      await errorOf(client.query('SELECT pg_terminate_backend(pg_backend_pid())')),
      await errorOf(client.query('SELECT 1')),
    ];
    expect(cannot.map(isDatabaseUnavailable), cannot.map(String).join('\n')).toEqual([true, true, true, true]);
    // Answered, with a refusal a retry would not change.
    const refused = [await errorOf(storage.db.rows(`SELECT 'não é número'::integer`)), await errorOf(storage.db.rows('SELEC 1'))];
    expect(refused.map((e) => (e as { code?: string }).code)).toEqual(['22P02', '42601']);
    expect(refused.map(isDatabaseUnavailable)).toEqual([false, false]);
    await client.end().catch(() => undefined);
  });

  it('sandbox settings: partial updates keep the other field, per company; values out of the contract are refused', async () => {
    expect(await a.store.getSandboxAuthority(companyId)).toEqual({ latencyMs: 0, disponivel: true });
    expect(await a.store.updateSandboxAuthority(companyId, { disponivel: false, latencyMs: undefined })).toEqual({ latencyMs: 0, disponivel: false });
    expect(await b.store.updateSandboxAuthority(companyId, { latencyMs: 1500 })).toEqual({ latencyMs: 1500, disponivel: false });
    expect(await a.store.getSandboxAuthority(companyId)).toEqual({ latencyMs: 1500, disponivel: false });
    await expect(a.store.updateSandboxAuthority(companyId, { latencyMs: 60_001 })).rejects.toThrow(/check constraint/);
  });

  it('readiness fails, naming it, when the database lacks a migration the code ships', async () => {
    const [row] = await storage.db.rows<{ id: string; checksum: string }>(
      `DELETE FROM schema_migrations WHERE id = '20261128T0910_sandbox_authority' RETURNING id, checksum`,
    );
    try {
      await expect(a.store.checkReady()).rejects.toThrow(/migrações pendentes no banco: 20261128T0910_sandbox_authority/);
    } finally {
      await storage.db.rows(`INSERT INTO schema_migrations (id, checksum, applied_at) VALUES (?, ?, ?)`, row!.id, row!.checksum, new Date().toISOString());
    }
    await expect(a.store.checkReady()).resolves.toBeUndefined();
  });

  it('a graceful close frees what the process held at once', async () => {
    const extra = await openTestService(storage);
    const d = document();
    await a.store.nfce.insertDocument(d);
    const later = new Date(Date.now() + 1_000);
    expect((await extra.store.nfce.dueDocuments(later, 100, new Set())).map((w) => w.id)).toContain(d.id);
    expect((await b.store.nfce.dueDocuments(later, 100, new Set())).map((w) => w.id)).not.toContain(d.id);
    await extra.store.close();
    expect((await b.store.nfce.dueDocuments(later, 100, new Set())).map((w) => w.id)).toContain(d.id);
  });
});
