// The NF-e part of the store (NfeStore), on a real SQLite file (sqlite-store.ts) and on a real
// PostgreSQL database (pg-store.ts): the numbering of the returns (a rejected number is given
// again, an unknown outcome never is), what is still returnable of an NFC-e, and a verdict that
// settles its key and queues its webhook event with it.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestService, STORES, storedNfce, testStorage, type TestStorage } from '../../test/helpers/stores.ts';
import { createCompany } from '../companies.ts';
import type { OpenedService } from '../open-service.ts';
import type { NewNfeDocument } from './store.ts';
import { nfeWebhookEvent } from './view.ts';

describe.each(STORES)('on %s', (store) => {
  let storage: TestStorage;
  let opened: OpenedService;
  let companyId: string;
  let nfceId: string;
  const CHAVE_NFCE = '35261111222333000181650010000000011000000010';

  beforeAll(async () => {
    storage = await testStorage(store);
    opened = await openTestService(storage);
    companyId = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja NF-e' })).companyId;
    nfceId = randomUUID();
    await opened.store.nfce.insertDocument(storedNfce(companyId, 1, { id: nfceId }));
  });

  afterAll(async () => {
    await opened?.store.close();
    await storage?.close();
  });

  const nfe = () => opened.store.nfe;

  function document(numero: number, over: Partial<NewNfeDocument> = {}): NewNfeDocument {
    return {
      id: randomUUID(),
      companyId,
      tipo: 'devolucao',
      idempotencyKey: null,
      serie: 1,
      numero,
      chave: `3526111122233300018155001${String(numero).padStart(9, '0')}1${String(numero).padStart(8, '0')}0`,
      nfceId,
      chaveNfce: CHAVE_NFCE,
      dhEmi: '2026-11-23T10:00:00-03:00',
      ambiente: 'homologacao',
      justificativa: 'Produto com defeito de fabricação',
      valorTotal: '5.00',
      itens: [{ numeroItem: 1, codigo: '1001', descricao: 'Café', unidade: 'UN', quantidadeUnits: 10_000n, valor: '5.00' }],
      requestJson: '{}',
      signedXml: '<NFe/>',
      createdAt: new Date(),
      ...over,
    };
  }

  const rejected = { status: 'rejeitado', codigoStatus: '539', motivo: 'Rejeição' } as const;
  const authorized = {
    status: 'autorizado',
    codigoStatus: '100',
    motivo: 'Autorizado',
    protocolo: '135260000000001',
    autorizadoEm: '2026-11-23T10:00:01-03:00',
    nfeProc: '<nfeProc/>',
  } as const;

  describe('numbering and what is left to return', () => {
    it('gives the next number; a rejected number goes to the next return, a processing one never', async () => {
      expect(await nfe().nextNumber(companyId, 1)).toBe(1);
      const one = document(1);
      await nfe().insertDocument(one);
      expect(await nfe().nextNumber(companyId, 1)).toBe(2);
      const two = document(2, { itens: [{ numeroItem: 2, codigo: '1002', descricao: 'Açúcar', unidade: 'UN', quantidadeUnits: 3_500n, valor: '1.00' }] });
      await nfe().insertDocument(two);
      expect(await nfe().returnedQuantities(companyId, CHAVE_NFCE)).toEqual(
        new Map([
          [1, 10_000n],
          [2, 3_500n],
        ]),
      );

      await nfe().recordVerdict(one.id, rejected, nfeWebhookEvent('nfe.rejeitada'));
      // Number 1 was not consumed: the next return gets it, and the rejected one no longer counts.
      expect(await nfe().nextNumber(companyId, 1)).toBe(1);
      expect(await nfe().returnedQuantities(companyId, CHAVE_NFCE)).toEqual(new Map([[2, 3_500n]]));
      const again = document(1);
      await nfe().insertDocument(again);
      expect(await nfe().nextNumber(companyId, 1)).toBe(3);
      // A live number cannot be taken twice, whatever the caller believes.
      await expect(nfe().insertDocument(document(2))).rejects.toThrow(/UNIQUE|unique/); // each engine's words
      // Another series has its own sequence.
      expect(await nfe().nextNumber(companyId, 2)).toBe(1);
    });

    it('records the verdict once, settles the key and queues the webhook event in the same transaction', async () => {
      await opened.store.putWebhook(companyId, { url: 'http://127.0.0.1:9/', secretSealed: Buffer.from('x') });
      const id = randomUUID();
      expect(await opened.store.claimIdempotencyKey({ companyId, docType: 'nfe', key: 'k-nfe', fingerprint: 'f', documentId: id })).toEqual({ kind: 'new' });
      const d = document(await nfe().nextNumber(companyId, 1), { id, idempotencyKey: 'k-nfe' });
      await nfe().insertDocument(d);
      expect((await nfe().dueDocuments(new Date(Date.now() + 1000), 10, new Set())).map((w) => w.id)).toContain(id);
      await nfe().beginSends([id]);
      expect(await nfe().recordVerdict(id, authorized, nfeWebhookEvent('nfe.autorizada'))).toBe(true);
      expect(await nfe().recordVerdict(id, rejected, nfeWebhookEvent('nfe.rejeitada'))).toBe(false);
      expect(await nfe().getDocument(companyId, id)).toMatchObject({
        status: 'autorizado',
        protocolo: '135260000000001',
        attempts: 1,
        itens: [{ numeroItem: 1, quantidadeUnits: 10_000n }],
      });
      expect(await opened.store.claimIdempotencyKey({ companyId, docType: 'nfe', key: 'k-nfe', fingerprint: 'f', documentId: randomUUID() })).toEqual({
        kind: 'replay',
        documentId: id,
      });
      // The same key for an NFC-e is another scope.
      expect(await opened.store.claimIdempotencyKey({ companyId, docType: 'nfce', key: 'k-nfe', fingerprint: 'f', documentId: randomUUID() })).toEqual({
        kind: 'new',
      });
      const deliveries = (await opened.store.leaseDueWebhookDeliveries(new Date(Date.now() + 1000), 100, 1000)).filter((e) => e.payload.includes(id));
      expect(deliveries.map((e) => e.tipo)).toEqual(['nfe.autorizada']);
      expect(JSON.parse(deliveries[0]!.payload).dados).toMatchObject({
        id,
        situacao: 'autorizado',
        itens: [{ numero_item: 1, quantidade: '1', valor: '5.00' }],
      });
      expect(await nfe().getDocument(randomUUID(), id)).toBeUndefined();
    });

    it('finds only the company’s live NFC-e by key', async () => {
      expect(await nfe().findNfce(companyId, CHAVE_NFCE)).toEqual({ id: nfceId, status: 'processando', nfeProc: null });
      expect(await nfe().findNfce(randomUUID(), CHAVE_NFCE)).toBeUndefined();
    });
  });
});
