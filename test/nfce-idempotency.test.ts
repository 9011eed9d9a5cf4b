// Idempotency of NFC-e issuance over real HTTP against the real service (docs/api.md, "Idempotency"),
// every row of its table, with the sandbox authority (section 5) holding documents in
// `processando` (latency, unavailability) so the "still processing" rows can be seen.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { cardWithoutGroup, nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { jsonPost, rawRequest } from './helpers/raw-http.ts';
import { startService, type ServiceProcess } from './helpers/service-process.ts';
import { SETUPS, testStorage, type TestStorage } from './helpers/stores.ts';

// On SQLite in-process and over the wire (SEFAZ connector → SEFAZ simulator, mutual TLS on
// loopback), and on PostgreSQL (helpers/stores.ts SETUPS).
describe.each(SETUPS)('on $store, over the $transport authority', ({ store, transport }) => {
  let service: ServiceProcess;
  let storage: TestStorage;

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database, transport });
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  const company = () => registerCompany(service.url, storage);
  // In the order they were stored (created_at, then the id for receipts of the same millisecond).
  const documentsOf = (c: TestCompany) =>
    storage.db.rows<{ id: string; numero: number; status: string }>(
      'SELECT id, numero, status FROM nfce_documents WHERE company_id = ? ORDER BY created_at, id',
      c.companyId,
    );
  const keysOf = (c: TestCompany) =>
    storage.db.rows<{ doc_type: string; state: string }>('SELECT doc_type, state FROM idempotency_keys WHERE company_id = ?', c.companyId);
  /** POST /api/v1/nfce over a bare socket: the header's bytes go out as given (fetch sends only Latin-1). */
  const rawNfce = (c: TestCompany, body: unknown, key: string | Buffer) =>
    rawRequest(service.url, jsonPost(service.url, '/api/v1/nfce', { token: c.token, headers: [['Idempotency-Key', key]], body }));
  const authorityRows = () => storage.authority.value<number>('SELECT count(*) FROM nfe');

  describe('same key', () => {
    it('after an authorization → 200 with the same document, idempotent_replay and Idempotent-Replayed; nothing new is issued', async () => {
      const c = await company();
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'pedido-1' } });
      expect(first.status).toBe(202);
      const doc = await waitFor(c.client, first.body.id);
      expect(doc.status).toBe('autorizado');
      const before = await authorityRows();

      const again = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'pedido-1' } });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual({ ...doc, idempotent_replay: true });
      // The body field is the same key: a replay too.
      const viaBody = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: 'pedido-1' });
      expect(viaBody.status).toBe(200);
      expect(viaBody.body.id).toBe(doc.id);
      // Header and body field together, equal: the same key.
      const both = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: 'pedido-1' }, { headers: { 'idempotency-key': 'pedido-1' } });
      expect(both.status).toBe(200);

      expect(await documentsOf(c)).toHaveLength(1);
      expect(await authorityRows()).toBe(before);
    });

    it('also after a later cancellation: 200 with the document as it is now (cancelado)', async () => {
      const c = await company();
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'pedido-cancelado' } });
      await waitFor(c.client, first.body.id);
      const cancelled = await c.client.post(`/api/v1/nfce/${first.body.id}/cancelar`, { justificativa: 'Cliente desistiu da compra' });
      expect(cancelled.body.status).toBe('cancelado');
      const again = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'pedido-cancelado' } });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...cancelled.body, idempotent_replay: true });
    });

    it('after an authorization, the replay answers even when the same body would now be refused (certificate expired on the company clock)', async () => {
      const c = await company();
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'antes-do-vencimento' } });
      const doc = await waitFor(c.client, first.body.id);
      expect(doc.status).toBe('autorizado');
      // A year and a day later the test certificate (valid 365 days) has expired: a new receipt is refused...
      await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 366 * 24 * 60 });
      const fresh = await c.client.post('/api/v1/nfce', nfceBody(2));
      expect(fresh.status).toBe(422);
      expect(fresh.body.error.details).toEqual([expect.objectContaining({ field: 'certificado' })]);
      // ...but the key of the authorized one still answers with it, and a different body with that key is still a reuse.
      const replay = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'antes-do-vencimento' } });
      expect(replay.status, replay.text).toBe(200);
      expect(replay.body).toEqual({ ...doc, idempotent_replay: true });
      const reuse = await c.client.post('/api/v1/nfce', nfceBody(2), { headers: { 'idempotency-key': 'antes-do-vencimento' } });
      expect(reuse.status).toBe(422);
      expect(reuse.body.error.code).toBe('chave_idempotencia_reutilizada');
      expect(await documentsOf(c)).toHaveLength(1);
    });

    it('while the first is processando → 409 em_processamento with Retry-After and its id; then the replay', async () => {
      const c = await company();
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 2_000 });
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'lento' } });
      expect(first.status).toBe(202);
      const again = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'lento' } });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        error: { code: 'em_processamento', message: expect.any(String), id: first.body.id },
        id: first.body.id,
      });
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      await waitFor(c.client, first.body.id);
      const replay = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'lento' } });
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(first.body.id);
    });

    it('different body → 422 chave_idempotencia_reutilizada, while processing and after the authorization', async () => {
      const c = await company();
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: false });
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'k' } });
      expect(first.status).toBe(202);
      const whileProcessing = await c.client.post('/api/v1/nfce', nfceBody(2), { headers: { 'idempotency-key': 'k' } });
      expect(whileProcessing.status).toBe(422);
      expect(whileProcessing.body.error.code).toBe('chave_idempotencia_reutilizada');
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: true });
      expect((await waitFor(c.client, first.body.id)).status).toBe('autorizado');
      const after = await c.client.post('/api/v1/nfce', nfceBody(2), { headers: { 'idempotency-key': 'k' } });
      expect(after.status).toBe(422);
      expect(after.body.error.code).toBe('chave_idempotencia_reutilizada');
      expect(await documentsOf(c)).toHaveLength(1);
    });

    it('after a rejection → a real new attempt: new id, the same nNF, the corrected body authorized (391 then 100)', async () => {
      const c = await company();
      const first = await c.client.post('/api/v1/nfce', cardWithoutGroup(7), { headers: { 'idempotency-key': 'venda-cartao' } });
      expect(first.status).toBe(202);
      const rejected = await waitFor(c.client, first.body.id);
      expect(rejected).toMatchObject({ status: 'rejeitado', codigo_status: '391', numero: 7 });

      const corrected = cardWithoutGroup(7);
      corrected.card = { tpIntegra: '2', tBand: '01' };
      const retry = await c.client.post('/api/v1/nfce', corrected, { headers: { 'idempotency-key': 'venda-cartao' } });
      expect(retry.status).toBe(202);
      expect(retry.body.id).not.toBe(first.body.id);
      const authorized = await waitFor(c.client, retry.body.id);
      expect(authorized).toMatchObject({ status: 'autorizado', codigo_status: '100', numero: 7, referencia_externa: 'venda-cartao' });
      expect((await c.client.get(`/api/v1/nfce/${first.body.id}`)).body.status).toBe('rejeitado');
      // From now on the key replays the authorized attempt.
      const replay = await c.client.post('/api/v1/nfce', corrected, { headers: { 'idempotency-key': 'venda-cartao' } });
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(retry.body.id);
    });
  });

  describe('the key itself', () => {
    it('1 to 200 characters, header or referencia_externa; 201 characters, empty, or two different keys → 400', async () => {
      const c = await company();
      const long = 'k'.repeat(201);
      const headerTooLong = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': long } });
      expect(headerTooLong.status).toBe(400);
      expect(headerTooLong.body.error.code).toBe('requisicao_invalida');
      const bodyTooLong = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: long });
      expect(bodyTooLong.status).toBe(400);
      expect(bodyTooLong.body.error.details).toEqual([expect.objectContaining({ field: 'referencia_externa' })]);
      const empty = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': '' } });
      expect(empty.status).toBe(400);
      const different = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: 'a' }, { headers: { 'idempotency-key': 'b' } });
      expect(different.status).toBe(400);
      expect(await documentsOf(c)).toHaveLength(0);

      const max = 'é'.repeat(200); // 200 characters, 400 bytes
      const ok = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: max });
      expect(ok.status).toBe(202);
      expect((await waitFor(c.client, ok.body.id)).referencia_externa).toBe(max);
    });

    it('not well-formed Unicode (a lone surrogate in referencia_externa, header bytes that are not UTF-8) → 400 naming the field; nothing stored', async () => {
      const c = await company();
      // The key of the report: an RTL mark, a lone surrogate and an emoji.
      for (const key of ['k\u200f\ud800😀', '\udc00', 'pedido-\ud83d']) {
        const res = await c.client.post('/api/v1/nfce', { ...nfceBody(1), referencia_externa: key });
        expect(res.status, JSON.stringify(key)).toBe(400);
        expect(res.body.error).toMatchObject({
          code: 'requisicao_invalida',
          details: [{ field: 'referencia_externa', message: expect.stringContaining('Unicode') }],
        });
      }
      // The same through the MDF-e's claim (and, being the same code, the NF-e's).
      const mdfe = await c.client.post('/api/v1/mdfe/emitir', { ...sampleMdfeRequest({ nMDF: 1 }), referencia_externa: 'viagem-\ud800' });
      expect(mdfe.status).toBe(400);
      expect(mdfe.body.error.details).toEqual([{ field: 'referencia_externa', message: expect.stringContaining('Unicode') }]);
      // The header is read as UTF-8: bytes that are not (a lone 0xE9, an encoded surrogate) are refused.
      for (const bytes of [Buffer.from('pedido-\xe9', 'latin1'), Buffer.from([0x6b, 0xed, 0xa0, 0x80]), Buffer.from([0x6b, 0xff, 0xfe])]) {
        const res = await rawNfce(c, nfceBody(1), bytes);
        expect(res.status, bytes.toString('hex')).toBe(400);
        expect(res.body.error).toMatchObject({
          code: 'requisicao_invalida',
          details: [{ field: 'Idempotency-Key', message: expect.stringContaining('UTF-8') }],
        });
      }
      expect(await documentsOf(c)).toHaveLength(0);
      expect(await keysOf(c)).toEqual([]);
    });

    it('keys at the edges (control characters, RTL marks, emoji, 200 four-byte characters), in the body or the header: replayed with the same id, never left locked', async () => {
      const c = await company();
      const fourBytes = '𝔸'.repeat(200); // U+1D538: 4 bytes in UTF-8, 2 UTF-16 units, 1 character
      const inBody = [
        'nul-\u0000-fim',
        'ctl-\u0001\u0007\u001b\u007f\u0085',
        'tab\tand\nnewline',
        'rtl-\u200f\u202eabc\u202c\u061c',
        'emoji-😀👍🏽🇧🇷‍👩‍👧',
        fourBytes,
        '😀'.repeat(200),
      ];
      let nNF = 0;
      for (const key of inBody) {
        const body = { ...nfceBody(++nNF), referencia_externa: key };
        const first = await c.client.post('/api/v1/nfce', body);
        expect(first.status, JSON.stringify(key)).toBe(202);
        const doc = await waitFor(c.client, first.body.id);
        expect(doc).toMatchObject({ status: 'autorizado', referencia_externa: key });
        const again = await c.client.post('/api/v1/nfce', body);
        expect(again.status, JSON.stringify(key)).toBe(200);
        expect(again.body.id).toBe(first.body.id);
      }
      // In the header, as UTF-8 bytes (the HTTP parser itself refuses control characters there):
      // the same key as in the body.
      for (const key of ['rtl-\u200f\u202eabc\u202c', 'emoji-😀👍🏽🇧🇷', '𝕂'.repeat(200)]) {
        const body = nfceBody(++nNF);
        const first = await rawNfce(c, body, key);
        expect(first.status, first.text).toBe(202);
        expect(await waitFor(c.client, first.body.id)).toMatchObject({ status: 'autorizado', referencia_externa: key });
        const viaHeader = await rawNfce(c, body, key);
        expect(viaHeader.status, viaHeader.text).toBe(200);
        expect(viaHeader.body.id).toBe(first.body.id);
        const viaBody = await c.client.post('/api/v1/nfce', { ...body, referencia_externa: key });
        expect(viaBody.status, viaBody.text).toBe(200);
        expect(viaBody.body.id).toBe(first.body.id);
      }
      // 201 four-byte characters: one too many, in either place.
      expect((await c.client.post('/api/v1/nfce', { ...nfceBody(++nNF), referencia_externa: '𝔸'.repeat(201) })).status).toBe(400);
      expect((await rawNfce(c, nfceBody(nNF), '𝔸'.repeat(201))).status).toBe(400);

      expect(await documentsOf(c)).toHaveLength(inBody.length + 3);
      expect((await keysOf(c)).every((k) => k.state === 'authorized')).toBe(true);
      expect(await keysOf(c)).toHaveLength(inBody.length + 3);
    });

    it('two Idempotency-Key headers → 400 naming the header (not taken as the one key "k1, k2"); one header with a comma is one key', async () => {
      const c = await company();
      const twice = (path: string, body: unknown, keys: string[]) =>
        rawRequest(service.url, jsonPost(service.url, path, { token: c.token, headers: keys.map((k) => ['Idempotency-Key', k] as [string, string]), body }));
      for (const keys of [
        ['k1', 'k2'],
        ['mesma', 'mesma'],
      ]) {
        const res = await twice('/api/v1/nfce', nfceBody(1), keys);
        expect(res.status, res.text).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'requisicao_invalida', details: [{ field: 'Idempotency-Key', message: 'enviado mais de uma vez' }] });
      }
      const mdfe = await twice('/api/v1/mdfe/emitir', sampleMdfeRequest({ nMDF: 1 }), ['v1', 'v2']);
      expect(mdfe.status).toBe(400);
      expect(mdfe.body.error.details).toEqual([{ field: 'Idempotency-Key', message: 'enviado mais de uma vez' }]);
      expect(await documentsOf(c)).toHaveLength(0);
      expect(await keysOf(c)).toEqual([]);

      const single = await twice('/api/v1/nfce', nfceBody(1), ['k1, k2']);
      expect(single.status).toBe(202);
      expect(await waitFor(c.client, single.body.id)).toMatchObject({ status: 'autorizado', referencia_externa: 'k1, k2' });
    });

    it('is scoped per company', async () => {
      const c = await company();
      const d = await company();
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'compartilhada' } });
      const other = await d.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'compartilhada' } });
      expect(first.status).toBe(202);
      expect(other.status).toBe(202);
      expect(other.body.id).not.toBe(first.body.id);
    });

    it('is scoped per document type: one key, an MDF-e and an NFC-e of the same company, two independent documents', async () => {
      const c = await company();
      // Slow enough that the NFC-e is still processando while the MDF-e is issued.
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 1_500 });
      const key = 'mesma-chave';
      const nfce = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': key } });
      expect(nfce.status).toBe(202);
      // The key is held for the NFC-e (a second NFC-e with it waits)...
      const held = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': key } });
      expect(held.status).toBe(409);
      expect(held.body.id).toBe(nfce.body.id);
      // ...and means nothing to an MDF-e: a first call, issued and authorized (not 409, not 422 for the other body).
      const manifest = sampleMdfeRequest({ nMDF: 1 });
      const mdfe = await c.client.post('/api/v1/mdfe/emitir', manifest, { headers: { 'idempotency-key': key } });
      expect(mdfe.status, mdfe.text).toBe(201);
      expect(mdfe.body).toMatchObject({ autorizado: true, numero: 1, referencia_externa: key });
      expect(mdfe.body.idempotent_replay).toBeUndefined();
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      const doc = await waitFor(c.client, nfce.body.id);
      expect(doc).toMatchObject({ status: 'autorizado', referencia_externa: key });

      // Each type's replay answers its own document.
      const nfceReplay = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': key } });
      expect(nfceReplay.status).toBe(200);
      expect(nfceReplay.body).toEqual({ ...doc, idempotent_replay: true });
      const mdfeReplay = await c.client.post('/api/v1/mdfe/emitir', manifest, { headers: { 'idempotency-key': key } });
      expect(mdfeReplay.status).toBe(200);
      expect(mdfeReplay.body).toEqual({ ...mdfe.body, idempotent_replay: true });
      expect(await documentsOf(c)).toEqual([{ id: nfce.body.id, numero: 1, status: 'autorizado' }]);
      expect((await c.client.get('/api/v1/mdfe')).body.data.map((m: { mdfe_id: string }) => m.mdfe_id)).toEqual([mdfe.body.mdfe_id]);
    });
  });

  describe('at the same instant', () => {
    it('50 identical concurrent POSTs give exactly one document; the others get 409 or the replay', async () => {
      const c = await company();
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 300 });
      const results = await Promise.all(
        Array.from({ length: 50 }, () => c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'rajada' } })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 202)).toHaveLength(1);
      expect(statuses.every((s) => s === 202 || s === 409 || s === 200)).toBe(true);
      const id = results.find((r) => r.status === 202)!.body.id;
      for (const r of results) if (r.status !== 202) expect(r.body.id).toBe(id);
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      expect((await waitFor(c.client, id)).status).toBe('autorizado');
      expect(await documentsOf(c)).toEqual([{ id, numero: 1, status: 'autorizado' }]);
    });

    it('without a key every call is a new attempt: the repeated number is refused by the authority (539)', async () => {
      const c = await company();
      const one = await c.client.post('/api/v1/nfce', nfceBody(1));
      const first = await waitFor(c.client, one.body.id);
      const two = await c.client.post('/api/v1/nfce', nfceBody(1));
      expect(two.status).toBe(202);
      expect(two.body.id).not.toBe(one.body.id);
      const second = await waitFor(c.client, two.body.id);
      expect(first.status).toBe('autorizado');
      expect(second).toMatchObject({ status: 'rejeitado', codigo_status: '539' });
    });
  });

  describe('an outcome not known yet', () => {
    it('authority unavailable: the document stays processando, its key locked (409), retried until it answers', async () => {
      const c = await company();
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: false });
      const first = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'fora-do-ar' } });
      expect(first.status).toBe(202);
      // Several attempts fail while it is unavailable: seen in the document's attempt count.
      const until = Date.now() + 20_000;
      let attempts = 0;
      while (attempts < 2 && Date.now() < until) {
        attempts = await storage.db.value<number>('SELECT attempts FROM nfce_documents WHERE id = ?', first.body.id);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect((await c.client.get(`/api/v1/nfce/${first.body.id}`)).body.status).toBe('processando');
      const locked = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'fora-do-ar' } });
      expect(locked.status).toBe(409);

      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: true });
      expect((await waitFor(c.client, first.body.id)).status).toBe('autorizado');
      expect((await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'fora-do-ar' } })).status).toBe(200);
    });
  });
});
