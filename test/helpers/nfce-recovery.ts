// What the crash and shutdown tests of the NFC-e queue check: the state of the queue when the
// process went away (read from its database, so it is the state at that instant), and after
// the restart that every document the service acknowledged with a 202 still exists under the
// key the 202 gave, reaches its verdict, was authorized by the sandbox authority exactly once,
// raised one verdict event, and that its idempotency key replays that very document.

import { expect } from 'vitest';
import { nfceBody, waitFor, type TestCompany } from './nfce.ts';
import type { Sql } from './stores.ts';

/** Where to look: the service's database and the sandbox authority's (helpers/stores.ts TestStorage). */
export type Databases = { db: Sql; authority: Sql };

export type Posted = { key: string; nNF: number };
/** What a 202 promised: this document, with this access key. */
export type Acknowledged = { id: string; chave: string };

export type QueueRow = { id: string; numero: number; chave: string; status: string; protocolo: string | null; attempts: number };

export const queueRows = (where: Databases, c: TestCompany): Promise<QueueRow[]> =>
  where.db.rows<QueueRow>('SELECT id, numero, chave, status, protocolo, attempts FROM nfce_documents WHERE company_id = ? ORDER BY numero', c.companyId);

/** Sent to the authority (the attempt is committed before the call) and not answered yet. */
export const inFlight = (rows: QueueRow[]) => rows.filter((d) => d.status === 'processando' && d.attempts > 0);
/** Queued and never sent. */
export const unsent = (rows: QueueRow[]) => rows.filter((d) => d.status === 'processando' && d.attempts === 0);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it gives a value, or fails naming `what`. */
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`esperando: ${what}`);
    await sleep(20);
  }
}

/** POSTs with the key until it replays a settled document; an acknowledged key must never start a second one. */
async function settledReplay(c: TestCompany, { key, nNF }: Posted, acknowledged: Acknowledged | undefined) {
  const end = Date.now() + 60_000;
  for (;;) {
    const res = await c.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'idempotency-key': key } });
    if (acknowledged) {
      expect([200, 409], `${key}: ${res.text}`).toContain(res.status);
      expect(res.body.id, key).toBe(acknowledged.id);
    } else {
      // Its 202 was lost with the process: committed (409, 200) or not (a first call now, 202).
      expect([200, 202, 409], `${key}: ${res.text}`).toContain(res.status);
    }
    if (res.status === 200) return res;
    if (Date.now() > end) throw new Error(`a chave ${key} não se resolveu: ${res.text}`);
    await sleep(100);
  }
}

/**
 * After the restart: every posted key settles to one authorized document, the acknowledged ones
 * to the very document and access key of their 202, each authorized once by the authority.
 */
export async function expectEachSettledOnce(where: Databases, c: TestCompany, posted: Posted[], acknowledged: Map<string, Acknowledged>) {
  for (const [key, { id, chave }] of acknowledged) {
    const res = await c.client.get(`/api/v1/nfce/${id}`);
    expect(res.status, `${key}: ${res.text}`).toBe(200);
    expect(res.body.chave, key).toBe(chave);
    expect((await waitFor(c.client, id)).status, key).toBe('autorizado');
  }

  const settled = new Map<string, { id: string; protocolo: string }>();
  for (const p of posted) {
    const res = await settledReplay(c, p, acknowledged.get(p.key));
    expect(res.body).toMatchObject({ numero: p.nNF, status: 'autorizado', idempotent_replay: true });
    settled.set(p.key, { id: res.body.id, protocolo: res.body.protocolo });
  }
  // Asked again, each key answers the very same document.
  for (const p of posted) {
    const res = await c.client.post('/api/v1/nfce', nfceBody(p.nNF), { headers: { 'idempotency-key': p.key } });
    expect(res.status).toBe(200);
    expect({ id: res.body.id, protocolo: res.body.protocolo }).toEqual(settled.get(p.key));
  }

  // Ours: one document per key, all authorized, none left processando.
  const docs = await queueRows(where, c);
  expect(docs.map((d) => d.id).sort()).toEqual([...settled.values()].map((s) => s.id).sort());
  expect(docs.every((d) => d.status === 'autorizado')).toBe(true);
  expect(new Set(docs.map((d) => d.numero)).size).toBe(posted.length);

  // The authority's: one authorization per number, under the access key the 202 gave (a document
  // signed again with another key, or sent again under a new number, would show here).
  const authorized = await where.authority.rows<{ access_key: string; number: number; n_prot: string }>(
    'SELECT access_key, number, n_prot FROM nfe WHERE cnpj = ?',
    c.cnpj,
  );
  expect(authorized).toHaveLength(posted.length);
  expect(new Set(authorized.map((r) => r.number)).size).toBe(posted.length);
  const protocolOf = new Map(authorized.map((r) => [r.access_key, r.n_prot]));
  for (const d of docs) expect(protocolOf.get(d.chave), `NFC-e ${d.numero}`).toBe(d.protocolo);
  for (const [key, { chave }] of acknowledged) expect(protocolOf.has(chave), key).toBe(true);

  // One verdict each: exactly one nfce.autorizada event per document.
  const events = await where.db.rows<{ tipo: string; payload: string }>('SELECT tipo, payload FROM webhook_deliveries WHERE company_id = ?', c.companyId);
  expect(events.every((e) => e.tipo === 'nfce.autorizada')).toBe(true);
  const eventIds = events.map((e) => (JSON.parse(e.payload) as { dados: { id: string } }).dados.id).sort();
  expect(eventIds).toEqual(docs.map((d) => d.id).sort());

  // And every key settled as authorized.
  const keys = await where.db.rows(`SELECT state, count(*) AS n FROM idempotency_keys WHERE company_id = ? AND doc_type = 'nfce' GROUP BY state`, c.companyId);
  expect(keys).toEqual([{ state: 'authorized', n: posted.length }]);

  // Sent once: the authority received each access key exactly once (no 204 of a second send).
  const receptions = await where.authority.rows<{ access_key: string; n: number }>(
    'SELECT access_key, count(*) AS n FROM nfe_recepcao WHERE cnpj = ? GROUP BY access_key',
    c.cnpj,
  );
  expect(
    receptions.filter((r) => r.n !== 1),
    'recebidas mais de uma vez pela autoridade',
  ).toEqual([]);
  expect(receptions).toHaveLength(posted.length);
}
