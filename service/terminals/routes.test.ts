// The terminals registry over real HTTP (in-process app, on real SQLite and real PostgreSQL): a
// series has one holder per company, a claim is idempotent, moving to another series frees the
// old one, and another company's terminals are another world.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestService, STORES, testStorage, type TestStorage } from '../../test/helpers/stores.ts';
import { buildApp, type ServiceApp } from '../app.ts';
import { createCompany } from '../companies.ts';
import type { OpenedService } from '../open-service.ts';
import { setTechnicalResponsible } from '../resp-tec.ts';
import { terminalRoutes } from './routes.ts';

describe.each(STORES)('on %s', (store) => {
  let storage: TestStorage;
  let opened: OpenedService;
  let app: ServiceApp;
  let url: string;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    storage = await testStorage(store);
    opened = await openTestService(storage);
    tokenA = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A' })).token;
    tokenB = (await createCompany(opened, { cnpj: '11444777000161', uf: 'SP', nome: 'Loja B' })).token;
    await setTechnicalResponsible(opened, {
      cnpj: '12ABC34501DE35',
      contact: 'Suporte Fiscal',
      email: 'fiscal@balcao.dev',
      phone: '4133334444',
      csrt: { id: 1, token: 'CSRT-DE-TESTE' },
    });
    app = buildApp({ ...opened, mode: 'sandbox', routes: [terminalRoutes] });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await opened?.store.close();
    await storage?.close();
  });

  async function put(token: string, terminal: string, body: unknown) {
    const res = await fetch(`${url}/api/v1/terminais/${terminal}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string; details?: { field: string; message: string }[] } },
    };
  }

  describe('PUT /api/v1/terminais/{terminal}', () => {
    it('registers a terminal with its series, and the same claim again changes nothing', async () => {
      const first = await put(tokenA, 'caixa-1', { nome: 'Caixa 1', series: [1] });
      expect(first.status).toBe(200);
      // Where each series stands at the service: nothing issued in it yet.
      expect(first.body).toMatchObject({ terminal: 'caixa-1', nome: 'Caixa 1', series: [1], numeracao: [{ serie: 1, ultimo_numero: 0 }] });
      // Instants as every answer of the API gives them: Brasília time with its offset, to the second.
      const BRASILIA = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/;
      expect(first.body).toMatchObject({ criado_em: expect.stringMatching(BRASILIA), atualizado_em: expect.stringMatching(BRASILIA) });
      const again = await put(tokenA, 'caixa-1', { nome: 'Caixa 1', series: [1] });
      expect(again).toEqual(first);
    });

    it('answers the deployment’s technical responsible, CSRT included, for the checkout’s contingency receipts', async () => {
      const claimed = await put(tokenB, 'caixa-rt', { nome: 'Caixa RT', series: [7] });
      expect(claimed.body.responsavel_tecnico).toEqual({
        cnpj: '12ABC34501DE35',
        contato: 'Suporte Fiscal',
        email: 'fiscal@balcao.dev',
        telefone: '4133334444',
        csrt: { id: 1, token: 'CSRT-DE-TESTE' },
      });
    });

    it('refuses a series another terminal of the company holds, naming it, and changes nothing', async () => {
      await put(tokenA, 'caixa-2', { nome: 'Caixa 2', series: [2] });
      const clash = await put(tokenA, 'caixa-2', { nome: 'Caixa 2', series: [1, 2] });
      expect(clash.status).toBe(409);
      expect(clash.body.error).toMatchObject({ code: 'serie_em_uso', message: expect.stringMatching(/série 1 .*Caixa 1/) });
      expect(clash.body.error!.details).toEqual([{ field: 'series', message: expect.stringContaining('caixa-1') }]);
      const list = await fetch(`${url}/api/v1/terminais`, { headers: { authorization: `Bearer ${tokenA}` } }).then((r) => r.json());
      expect(list.data.map((t: { terminal: string; series: number[] }) => [t.terminal, t.series])).toEqual([
        ['caixa-1', [1]],
        ['caixa-2', [2]],
      ]);
    });

    it('frees the old series when a terminal moves, so another may take it', async () => {
      expect((await put(tokenA, 'caixa-1', { nome: 'Caixa 1', series: [3, 901] })).body.series).toEqual([3, 901]);
      expect((await put(tokenA, 'caixa-2', { nome: 'Caixa 2', series: [1] })).status).toBe(200);
    });

    it('keeps companies apart: the same series and terminal id under another company are free', async () => {
      const other = await put(tokenB, 'caixa-1', { nome: 'Caixa da outra loja', series: [1, 3] });
      expect(other.status).toBe(200);
      expect((await fetch(`${url}/api/v1/terminais/caixa-1`, { headers: { authorization: `Bearer ${tokenA}` } }).then((r) => r.json())).nome).toBe('Caixa 1');
    });

    it('names the field of a malformed claim', async () => {
      const bad = await put(tokenA, 'caixa-3', { nome: 'Caixa 3', series: [1000] });
      expect(bad.status).toBe(400);
      expect(bad.body.error!.details![0]!.field).toMatch(/^series/);
      expect((await put(tokenA, 'caixa-3', { nome: 'Caixa 3', series: [] })).status).toBe(400);
    });

    it('DELETE frees the series and is idempotent', async () => {
      const del = () => fetch(`${url}/api/v1/terminais/caixa-2`, { method: 'DELETE', headers: { authorization: `Bearer ${tokenA}` } });
      expect((await del()).status).toBe(204);
      expect((await del()).status).toBe(204);
      expect((await put(tokenA, 'caixa-4', { nome: 'Caixa 4', series: [1] })).status).toBe(200);
    });
  });
});
