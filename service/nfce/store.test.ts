// The NFC-e part of the store (NfceStore), on a real SQLite file (sqlite-store.ts) and on a real
// PostgreSQL database (pg-store.ts): a claim and its document are one transaction, writes asked
// for together (SQLite shares their commit) do not share their fate, and a verdict settles its
// key and queues its webhook event with it.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestService, STORES, storedNfce, testStorage, type TestStorage } from '../../test/helpers/stores.ts';
import { createCompany } from '../companies.ts';
import type { ClaimRequest } from '../idempotency-rules.ts';
import type { OpenedService } from '../open-service.ts';
import type { NewNfceDocument } from './store.ts';
import { nfceWebhookEvent } from './view.ts';

describe.each(STORES)('on %s', (store) => {
  let storage: TestStorage;
  let opened: OpenedService;
  let companyId: string;
  let numero = 0;

  beforeAll(async () => {
    storage = await testStorage(store);
    opened = await openTestService(storage);
    companyId = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja NFC-e' })).companyId;
  });

  afterAll(async () => {
    await opened?.store.close();
    await storage?.close();
  });

  function document(over: Partial<NewNfceDocument> = {}): NewNfceDocument {
    numero += 1;
    return storedNfce(companyId, numero, over);
  }

  const claim = (key: string, documentId: string, fingerprint = 'f1'): ClaimRequest => ({ companyId, docType: 'nfce', key, fingerprint, documentId });

  const nfce = () => opened.store.nfce;

  describe('insertDocument', () => {
    it('claims the key and inserts the document together; the key then refers to it', async () => {
      const d = document({ idempotencyKey: 'k1' });
      expect(await nfce().insertDocument(d, claim('k1', d.id))).toEqual({ kind: 'new' });
      const again = document({ idempotencyKey: 'k1' });
      expect(await nfce().insertDocument(again, claim('k1', again.id))).toEqual({ kind: 'in_progress', documentId: d.id });
      expect(await nfce().insertDocument(again, claim('k1', again.id, 'f2'))).toEqual({ kind: 'mismatch', documentId: d.id });
      expect(await nfce().getDocument(companyId, again.id)).toBeUndefined();
      expect(await nfce().getDocument(companyId, d.id)).toMatchObject({ status: 'processando', idempotencyKey: 'k1', signed: false, attempts: 0 });
    });

    it('identical claims at once yield exactly one document (sharing one commit, on SQLite)', async () => {
      const docs = Array.from({ length: 5 }, () => document({ idempotencyKey: 'rajada', numero: 900 }));
      const results = await Promise.all(docs.map((d) => nfce().insertDocument(d, claim('rajada', d.id))));
      expect(results.filter((r) => r.kind === 'new')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'in_progress')).toHaveLength(4);
    });

    it('a write that fails rolls back alone (even in a shared commit, on SQLite)', async () => {
      const good = document();
      const bad = document({ serie: 5000 }); // breaks the CHECK
      const [ok, failed] = await Promise.allSettled([nfce().insertDocument(good), nfce().insertDocument(bad)]);
      expect(ok).toEqual({ status: 'fulfilled', value: { kind: 'new' } });
      expect(failed.status).toBe('rejected');
      expect(await nfce().getDocument(companyId, good.id)).toBeDefined();
      expect(await nfce().getDocument(companyId, bad.id)).toBeUndefined();
    });

    it('a live document with the same access key is reported, and the claim made for the copy is undone', async () => {
      const first = document({ contingencia: true, tpEmis: 9, requestJson: undefined, receivedXml: '<NFe/>' });
      await nfce().insertDocument(first);
      const copy = { ...first, id: randomUUID(), idempotencyKey: 'copia' };
      expect(await nfce().insertDocument(copy, claim('copia', copy.id))).toEqual({ kind: 'same_key', documentId: first.id, status: 'processando' });
      // The key was not left bound to a document that does not exist.
      const later = document({ idempotencyKey: 'copia' });
      expect(await nfce().insertDocument(later, claim('copia', later.id))).toEqual({ kind: 'new' });
    });
  });

  describe('the queue side', () => {
    it('stores the signed XML before the send, then records the verdict with the key settled and the event queued', async () => {
      await opened.store.putWebhook(companyId, { url: 'http://127.0.0.1:9/', secretSealed: Buffer.from('x') });
      const d = document({ idempotencyKey: 'veredito' });
      await nfce().insertDocument(d, claim('veredito', d.id));
      const due = await nfce().dueDocuments(new Date(Date.now() + 1000), 100, new Set());
      expect(due.map((w) => w.id)).toContain(d.id);
      await nfce().beginSends([{ id: d.id, signed: { xml: '<NFe>assinada</NFe>', qrcode: 'qr' } }]);
      expect(await nfce().getDocument(companyId, d.id)).toMatchObject({ signed: true, attempts: 1, qrcode: 'qr' });
      // In flight here: skipped.
      expect((await nfce().dueDocuments(new Date(Date.now() + 1000), 100, new Set([d.id]))).map((w) => w.id)).not.toContain(d.id);

      const verdict = {
        status: 'autorizado',
        codigoStatus: '100',
        motivo: 'Autorizado',
        protocolo: '135260000000001',
        autorizadoEm: '2026-11-22T10:00:01-03:00',
        nfeProc: '<nfeProc/>',
      } as const;
      expect(await nfce().recordVerdict(d.id, verdict, nfceWebhookEvent('nfce.autorizada'))).toBe(true);
      expect(await nfce().recordVerdict(d.id, verdict, nfceWebhookEvent('nfce.autorizada'))).toBe(false);
      expect(await opened.store.claimIdempotencyKey(claim('veredito', randomUUID()))).toEqual({ kind: 'replay', documentId: d.id });
      const [delivery] = (await opened.store.leaseDueWebhookDeliveries(new Date(Date.now() + 1000), 100, 1000)).filter((e) => e.payload.includes(d.id));
      expect(delivery).toMatchObject({ tipo: 'nfce.autorizada' });
      expect(JSON.parse(delivery!.payload).dados).toMatchObject({ id: d.id, status: 'autorizado', protocolo: '135260000000001' });
      expect(await nfce().getXml(companyId, d.id)).toEqual({ signedXml: '<NFe>assinada</NFe>', nfeProc: '<nfeProc/>', eventoXml: null });
    });

    it('a rejection frees the key for a real new attempt', async () => {
      const d = document({ idempotencyKey: 'rejeitada' });
      await nfce().insertDocument(d, claim('rejeitada', d.id));
      await nfce().recordVerdict(d.id, { status: 'rejeitado', codigoStatus: '391', motivo: 'Rejeição' }, nfceWebhookEvent('nfce.rejeitada'));
      const retry = document({ idempotencyKey: 'rejeitada', numero: d.numero });
      expect(await nfce().insertDocument(retry, claim('rejeitada', retry.id, 'corrigido'))).toEqual({ kind: 'new' });
    });

    it('postpones a document: not due until then', async () => {
      const d = document();
      await nfce().insertDocument(d);
      await nfce().postpone(d.id, new Date(Date.now() + 60_000), 'autoridade indisponível');
      expect((await nfce().dueDocuments(new Date(), 1000, new Set())).map((w) => w.id)).not.toContain(d.id);
      expect((await nfce().dueDocuments(new Date(Date.now() + 61_000), 1000, new Set())).map((w) => w.id)).toContain(d.id);
    });
  });

  describe('highestNumbers', () => {
    it("each series' highest number that is or may be authorized, or voided; a rejected one does not count", async () => {
      const at = (serie: number, numero: number) => storedNfce(companyId, numero, { serie, chave: storedNfce(companyId, serie * 1000 + numero).chave });
      await nfce().insertDocument(at(7, 5));
      const rejected = at(7, 9);
      await nfce().insertDocument(rejected);
      await nfce().recordVerdict(rejected.id, { status: 'rejeitado', codigoStatus: '539', motivo: 'Rejeição' }, nfceWebhookEvent('nfce.rejeitada'));
      await nfce().insertInutilizacao({
        id: randomUUID(),
        companyId,
        serie: 7,
        numeroInicial: 6,
        numeroFinal: 7,
        justificativa: 'Números pulados por falha no sistema do caixa',
        protocolo: '135260000000009',
        codigoStatus: '102',
        motivo: 'Inutilização de número homologado',
        xml: '<procInutNFe/>',
        createdAt: new Date(),
      });
      await nfce().insertDocument(at(8, 3));
      expect(await nfce().highestNumbers(companyId, [7, 8, 9])).toEqual(
        new Map([
          [7, 7],
          [8, 3],
          [9, 0],
        ]),
      );
    });
  });
});
