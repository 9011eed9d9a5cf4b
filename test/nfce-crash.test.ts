// Crash recovery of the NFC-e queue over the real service process: SIGKILL while documents are
// queued (never sent) and in flight (at the authority, answer pending), restart, and check that
// every document a 202 acknowledged still exists under its id and access key, reaches its verdict
// exactly once (one authorization at the authority, one webhook event), and that its idempotency
// key replays that very document. Also the case a crash can only rarely hit by chance: the
// authority decided and the answer was lost; the restart must find it by consultation. And the
// duplicate answer (204) of a key the authority already authorized. On both stores: on
// PostgreSQL the restarted process is a new one, which takes the dead one's documents when its
// lease runs out (BALCAO_LEASE_MS, shortened here).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxAuthority } from '../service/authority/sandbox.ts';
import { DEMO_CSC } from '../fiscal/samples.ts';
import { contingencyXml, nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { expectEachSettledOnce, inFlight, queueRows, unsent, until, type Acknowledged, type Posted } from './helpers/nfce-recovery.ts';
import { startService, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';

describe.each(STORES)('on %s', (store) => {
  let service: ServiceProcess;
  let storage: TestStorage;

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database, env: { BALCAO_LEASE_MS: '2000' } });
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  type Row = { id: string; numero: number; chave: string; status: string; protocolo: string | null; attempts: number; signed: number | boolean };

  const documentsOf = (c: TestCompany): Promise<Row[]> =>
    storage.db.rows<Row>(
      'SELECT id, numero, chave, status, protocolo, attempts, signed_xml IS NOT NULL AS signed FROM nfce_documents WHERE company_id = ?',
      c.companyId,
    );

  const authorityRows = (c: TestCompany) =>
    storage.authority.rows<{ access_key: string; number: number; n_prot: string }>('SELECT access_key, number, n_prot FROM nfe WHERE cnpj = ?', c.cnpj);

  const eventsOf = (c: TestCompany) =>
    storage.db.rows<{ tipo: string; payload: string }>('SELECT tipo, payload FROM webhook_deliveries WHERE company_id = ?', c.companyId);

  /** The sandbox authority's own memory, used directly: a decision the service never hears of. */
  async function authorizeBehindTheServicesBack(c: TestCompany, signedXml: string) {
    const authority = new SandboxAuthority({
      memory: storage.openAuthorityMemory(),
      settings: () => ({ latencyMs: 0, available: true }),
      clock: () => new Date(),
    });
    try {
      return await authority.authorizeNfe(
        {
          id: c.companyId,
          cnpj: c.cnpj,
          uf: 'SP',
          environment: 'homologacao',
          csc: DEMO_CSC,
          credentials: { privateKeyPem: c.certificate.privateKeyPem, certificatePem: c.certificate.certificatePem },
        },
        signedXml,
      );
    } finally {
      await authority.close();
    }
  }

  // The authority's answer time while documents pile up: a document sent is still waiting for it
  // when the process dies (the kill comes well within one latency of the last sends).
  const LATENCY_MS = 2_000;

  describe('SIGKILL with documents queued and in flight', () => {
    it('every acknowledged document survives with its id and key, reaches its verdict exactly once, and its key replays it', async () => {
      const c = await registerCompany(service.url, storage);
      // A webhook that never answers: the outbox then records one event per verdict.
      await c.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: LATENCY_MS });

      const posted: Posted[] = Array.from({ length: 30 }, (_, i) => ({ key: `crash-${i + 1}`, nNF: i + 1 }));
      const acknowledged = new Map<string, Acknowledged>();
      const post = async ({ key, nNF }: Posted) => {
        const res = await c.client.post('/api/v1/nfce', nfceBody(nNF), { headers: { 'idempotency-key': key } });
        if (res.status === 202) acknowledged.set(key, { id: res.body.id, chave: res.body.chave });
        return res;
      };

      // The first ones reach their verdict before the crash...
      for (const p of posted.slice(0, 10)) expect((await post(p)).status).toBe(202);
      await until('autorizadas', async () => (await queueRows(storage, c)).some((d) => d.status === 'autorizado'));
      // ...then more than the queue sends at once: some go out, the rest wait their turn...
      for (const p of posted.slice(10, 26)) expect((await post(p)).status).toBe(202);
      // ...and the last ones are being answered when the process dies: their 202 may be lost.
      const late = posted.slice(26).map((p) => post(p).catch((err: unknown) => err));
      await until('uma das últimas gravada', async () => (await queueRows(storage, c)).length > 26);
      await service.kill();
      await Promise.all(late);

      // The state at the kill, as the database holds it.
      const atCrash = await queueRows(storage, c);
      expect(atCrash.some((d) => d.status === 'autorizado')).toBe(true);
      expect(inFlight(atCrash).length, 'em voo na autoridade').toBeGreaterThan(0);
      expect(unsent(atCrash).length, 'na fila, nunca enviadas').toBeGreaterThan(0);
      // A 202 is only answered once its document is committed.
      expect(acknowledged.size).toBeGreaterThanOrEqual(26);
      for (const { id, chave } of acknowledged.values()) expect(atCrash).toContainEqual(expect.objectContaining({ id, chave }));

      await service.restart({ hard: true });
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      await expectEachSettledOnce(storage, c, posted, acknowledged);
    });
  });

  describe('the authority decided, the answer was lost', () => {
    it('on restart the document is consulted, its authorization recorded, and it is never sent again', async () => {
      const c = await registerCompany(service.url, storage);
      await c.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 5_000 });
      const posted = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'resposta-perdida' } });
      expect(posted.status).toBe(202);
      // Signed, committed and on its way: the authority is "thinking" (latency) when we crash.
      const sent = await until('enviada', async () => (await documentsOf(c)).find((d) => d.id === posted.body.id && d.attempts > 0 && d.signed));
      expect(sent.status).toBe('processando');
      await service.kill();

      // Meanwhile the authority authorizes what it received; the service never heard the answer.
      const signedXml = await storage.db.value<string>('SELECT signed_xml FROM nfce_documents WHERE id = ?', posted.body.id);
      const verdict = await authorizeBehindTheServicesBack(c, signedXml);
      expect(verdict.cStat).toBe('100');

      await service.restart({ hard: true });
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      const doc = await waitFor(c.client, posted.body.id);
      expect(doc).toMatchObject({ status: 'autorizado', protocolo: verdict.nProt, chave: sent.chave });
      expect(await authorityRows(c)).toEqual([{ access_key: sent.chave, number: 1, n_prot: verdict.nProt }]);
      expect((await eventsOf(c)).map((e) => e.tipo)).toEqual(['nfce.autorizada']);
      const replay = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'resposta-perdida' } });
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ id: posted.body.id, protocolo: verdict.nProt });
    });
  });

  describe('a receipt the authority already authorized', () => {
    it('a contingency NFC-e the terminal already transmitted: the authority answers 204, the service consults and records that authorization', async () => {
      const c = await registerCompany(service.url, storage);
      const offline = contingencyXml(c, 1);
      const earlier = await authorizeBehindTheServicesBack(c, offline.xml);
      expect(earlier.cStat).toBe('100');

      const posted = await c.client.post('/api/v1/nfce', { xml: offline.xml });
      expect(posted.status).toBe(202);
      const doc = await waitFor(c.client, posted.body.id);
      expect(doc).toMatchObject({ status: 'autorizado', chave: offline.key, protocolo: earlier.nProt, codigo_status: '100' });
      expect(await authorityRows(c)).toEqual([{ access_key: offline.key, number: 1, n_prot: earlier.nProt }]);
    });
  });
});
