// The MDF-e part of the store (MdfeStore), on a real, migrated SQLite file (sqlite-store.ts) and
// on a real PostgreSQL database (pg-store.ts): writes issued together all land and one failing
// write fails alone (on SQLite they share a transaction: group commit), verdicts settle the
// idempotency key in the same transaction, the cMDF handed to the next attempt, list order and
// day bounds, events.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestService, STORES, testStorage, type TestStorage } from '../../test/helpers/stores.ts';
import { createCompany } from '../companies.ts';
import type { OpenedService } from '../open-service.ts';
import type { MdfeDocument, NewMdfe } from './store.ts';

describe.each(STORES)('on %s', (store) => {
  let storage: TestStorage;
  let opened: OpenedService;
  let companyId: string;

  beforeAll(async () => {
    storage = await testStorage(store);
    opened = await openTestService(storage);
    ({ companyId } = await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Transportadora Store' }));
  });

  afterAll(async () => {
    await opened?.store.close();
    await storage?.close();
  });

  let seq = 0;
  function fresh(over: Partial<NewMdfe> = {}): NewMdfe {
    seq++;
    const at = new Date(Date.UTC(2026, 10, 22, 12, 0, seq)).toISOString();
    return {
      id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
      companyId,
      chave: `3526111122233300018158001${String(seq).padStart(9, '0')}1123456780`,
      serie: 1,
      numero: seq,
      cMdf: '12345678',
      ambiente: 'homologacao',
      placa: `STO${String(seq).padStart(4, '0')}`,
      ufInicio: 'SP',
      ufFim: 'BA',
      emitidoEm: at,
      referenciaExterna: null,
      qrcode: 'https://dfe-portal.svrs.rs.gov.br/mdfe/qrCode?chMDFe=x&tpAmb=2',
      valorCarga: '10.00',
      createdAt: at,
      xml: '<MDFe/>',
      ...over,
    };
  }

  const docs: MdfeDocument[] = [{ tipo: 'CTe', chave: '35261111222333000181570010000001231123456792', codigoMunicipioDescarga: '2927408' }];
  const verdict = (authorized: boolean) => ({
    authorized,
    status: authorized ? '100' : '578',
    motivo: authorized ? 'Autorizado o uso do MDF-e' : 'Rejeição: Informações dos tomadores é obrigatória para esta operação',
    protocolo: authorized ? '135260000000001' : null,
    at: new Date().toISOString(),
    protXml: '<protMDFe/>',
  });

  describe('SqliteMdfeStore', () => {
    it('writes issued together all land, and a failing one fails alone (group commit, on SQLite)', async () => {
      const store = opened.store.mdfe;
      const a = fresh();
      const b = fresh();
      const duplicate = { ...fresh(), id: a.id }; // same id: the UNIQUE constraint fails
      const results = await Promise.allSettled([store.insertProcessing(a, docs), store.insertProcessing(duplicate, docs), store.insertProcessing(b, docs)]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((await store.get(companyId, a.id))?.situacao).toBe('processando');
      expect((await store.get(companyId, b.id))?.numero).toBe(b.numero);
      // The failed write left nothing behind (its savepoint was rolled back): a's row is a's, and
      // its documents are not doubled.
      expect((await store.get(companyId, a.id))?.numero).toBe(a.numero);
      expect(await store.documents(a.id)).toEqual(docs);
    });

    it('a verdict settles the attempt’s key in the same transaction; only a processing manifest takes one', async () => {
      const store = opened.store.mdfe;
      const m = fresh({ referenciaExterna: 'chave-1' });
      const claim = await opened.store.claimIdempotencyKey({ companyId, docType: 'mdfe', key: 'chave-1', fingerprint: 'f', documentId: m.id });
      expect(claim.kind).toBe('new');
      await store.insertProcessing(m, docs);
      const recorded = await store.recordVerdict(m.id, verdict(true), { companyId, docType: 'mdfe', key: 'chave-1', documentId: m.id });
      expect(recorded).toMatchObject({ situacao: 'autorizado', status: '100', protocolo: '135260000000001' });
      const replay = await opened.store.claimIdempotencyKey({ companyId, docType: 'mdfe', key: 'chave-1', fingerprint: 'f', documentId: 'outro' });
      expect(replay).toEqual({ kind: 'replay', documentId: m.id });
      // A second verdict changes nothing.
      expect((await store.recordVerdict(m.id, verdict(false)))?.situacao).toBe('autorizado');
    });

    it('a discarded attempt disappears and frees its key; a rejection frees it too', async () => {
      const store = opened.store.mdfe;
      const m = fresh({ referenciaExterna: 'chave-2' });
      await opened.store.claimIdempotencyKey({ companyId, docType: 'mdfe', key: 'chave-2', fingerprint: 'f', documentId: m.id });
      await store.insertProcessing(m, docs);
      await store.discardAttempt(m.id, { companyId, docType: 'mdfe', key: 'chave-2', documentId: m.id });
      expect(await store.get(companyId, m.id)).toBeUndefined();
      expect(await store.documents(m.id)).toEqual([]);
      const again = await opened.store.claimIdempotencyKey({ companyId, docType: 'mdfe', key: 'chave-2', fingerprint: 'g', documentId: 'novo' });
      expect(again.kind).toBe('new');
    });

    it('hands the cMDF of the latest attempt at a number to the next one', async () => {
      const store = opened.store.mdfe;
      const first = fresh({ numero: 900, cMdf: '11111111' });
      const second = fresh({ numero: 900, cMdf: '22222222' });
      expect(await store.codeOfLastAttempt(companyId, 1, 900)).toBeUndefined();
      await store.insertProcessing(first, []);
      await store.recordVerdict(first.id, verdict(false));
      expect(await store.codeOfLastAttempt(companyId, 1, 900)).toBe('11111111');
      await store.insertProcessing(second, []);
      expect(await store.codeOfLastAttempt(companyId, 1, 900)).toBe('22222222');
      expect(await store.codeOfLastAttempt(companyId, 2, 900)).toBeUndefined();
    });

    it('lists newest first within [from, until), and records events only on an authorized manifest', async () => {
      const store = opened.store.mdfe;
      const before = fresh({ emitidoEm: '2026-11-23T02:59:59.999Z', ufInicio: 'RJ' }); // 23:59:59.999 in Brasília, 22nd
      const after = fresh({ emitidoEm: '2026-11-23T03:00:00.000Z', ufInicio: 'RJ' }); // 00:00 in Brasília, 23rd
      await store.insertProcessing(before, []);
      await store.insertProcessing(after, []);
      const day22 = await store.list(companyId, { ufInicio: 'RJ', from: '2026-11-22T03:00:00.000Z', until: '2026-11-23T03:00:00.000Z' }, { limit: 50 });
      expect(day22.rows.map((r) => r.id)).toEqual([before.id]);
      const both = await store.list(companyId, { ufInicio: 'RJ' }, { limit: 50 });
      expect(both.rows.map((r) => r.id)).toEqual([after.id, before.id]);
      expect(both.total).toBe(2);

      const event = {
        tpEvento: '110112',
        nSeq: 1,
        status: '135',
        motivo: 'Evento registrado e vinculado a MDF-e',
        protocolo: '135260000000002',
        registradoEm: new Date().toISOString(),
        dados: { uf: 'BA', codigo_municipio: '2927408', data: '2026-11-22' },
        xml: '<procEventoMDFe/>',
      };
      expect(await store.recordEvent(before.id, event, 'encerrado')).toBeUndefined(); // still processando
      await store.recordVerdict(before.id, verdict(true));
      expect((await store.recordEvent(before.id, event, 'encerrado'))?.situacao).toBe('encerrado');
      expect(await store.events(before.id)).toEqual([event]);
      expect(await store.recordEvent(before.id, { ...event, tpEvento: '110111' }, 'cancelado')).toBeUndefined();
    });
  });
});
