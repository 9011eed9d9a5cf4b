// GET /api/v1/mdfe over real HTTP: the envelope, newest first, pagination, every filter, the
// refusals of malformed parameters, and the de/ate days taken in Brasília time (a manifest issued
// at 23:59 -03:00 belongs to that day, although it is already the next day in UTC). The company
// clock is moved with the sandbox control to land an issuance at 23:59 Brasília.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MdfeRequest } from '../fiscal/mdfe/types.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { brasiliaDay } from '../base/common/brasilia.ts';

type Client = ReturnType<typeof api>;

let service: ServiceProcess;
let lister: Client;
let nightOwl: Client;

beforeAll(async () => {
  const dataDir = tempDataDir();
  const [a, b] = await Promise.all([
    createCompany(dataDir, { cnpj: '11222333000181', uf: 'SP', nome: 'Transportadora Lista' }),
    createCompany(dataDir, { cnpj: '11444777000161', uf: 'SP', nome: 'Transportadora Noturna' }),
  ]);
  service = await startService({ dataDir });
  lister = api(service.url, a.token);
  nightOwl = api(service.url, b.token);
});

afterAll(async () => {
  await service?.stop();
});

const CAPITAL: Record<string, [string, string]> = {
  SP: ['3550308', 'São Paulo'],
  RJ: ['3304557', 'Rio de Janeiro'],
  MG: ['3106200', 'Belo Horizonte'],
  BA: ['2927408', 'Salvador'],
};

let n = 0;
/** A manifest from the capital of `from` to the capital of `to` (states that border, or SP→BA via MG). */
function trip(from: string, to: string, edit: (r: MdfeRequest) => void = () => {}): MdfeRequest {
  n++;
  const r = structuredClone(sampleMdfeRequest({ nMDF: n, placa: `LST${String(n).padStart(4, '0')}` }));
  r.ide.UFIni = from;
  r.ide.UFFim = to;
  r.ide.infMunCarrega = [{ cMunCarrega: CAPITAL[from]![0], xMunCarrega: CAPITAL[from]![1] }];
  r.ide.infPercurso = from === 'SP' && to === 'BA' ? [{ UFPer: 'MG' }] : [];
  const cte = r.infDoc.infMunDescarga[0]!.infCTe!;
  r.infDoc.infMunDescarga = [{ cMunDescarga: CAPITAL[to]![0], xMunDescarga: CAPITAL[to]![1], infCTe: cte }];
  edit(r);
  return r;
}

async function issue(client: Client, body: MdfeRequest) {
  const res = await client.post('/api/v1/mdfe/emitir', body);
  expect(res.status, res.text).toBe(201);
  return res.body as { mdfe_id: string; emitido_em: string; situacao: string };
}

const brasiliaToday = () => brasiliaDay(new Date());
const shiftDay = (day: string, days: number) => new Date(Date.parse(`${day}T12:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe('GET /api/v1/mdfe', () => {
  const ids: Record<string, string> = {};
  const list = async (query = '') => {
    const res = await lister.get(`/api/v1/mdfe${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body as { data: { mdfe_id: string }[]; total: number; limit: number; offset: number };
  };
  const idsOf = async (query: string) => (await list(query)).data.map((m) => m.mdfe_id);

  beforeAll(async () => {
    // Issued in this order: A, B, C, D, E. Newest first is E, D, C, B, A.
    ids.A = (await issue(lister, trip('SP', 'BA'))).mdfe_id;
    ids.B = (await issue(lister, trip('RJ', 'SP'))).mdfe_id;
    ids.C = (await issue(lister, trip('MG', 'BA'))).mdfe_id;
    const rejected = await issue(
      lister,
      trip('SP', 'BA', (r) => delete r.prodPred),
    );
    expect(rejected.situacao).toBe('rejeitado');
    ids.D = rejected.mdfe_id;
    ids.E = (await issue(lister, trip('RJ', 'SP'))).mdfe_id;
    expect((await lister.post(`/api/v1/mdfe/${ids.B}/encerrar`, { uf: 'SP', codigo_municipio: '3550308' })).status).toBe(200);
    expect((await lister.post(`/api/v1/mdfe/${ids.C}/cancelar`, { justificativa: 'Viagem cancelada pelo cliente' })).status).toBe(200);
  });

  const expectIds = async (query: string, letters: string) => expect(await idsOf(query), query).toEqual([...letters].map((l) => ids[l]));

  it('envelope {data,total,limit,offset}, limit 50 by default, newest first', async () => {
    const page = await list();
    expect(page).toMatchObject({ total: 5, limit: 50, offset: 0 });
    expect(page.data.map((m) => m.mdfe_id)).toEqual([ids.E, ids.D, ids.C, ids.B, ids.A]);
    expect(page.data[0]).toMatchObject({ situacao: 'autorizado', status: '100', uf_inicio: 'RJ', uf_fim: 'SP', autorizado: true });
    expect(page.data[0]).not.toHaveProperty('documentos');
  });

  it('limit and offset page through, total counts everything that matches', async () => {
    const page = await list('?limit=2&offset=1');
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.data.map((m) => m.mdfe_id)).toEqual([ids.D, ids.C]);
    expect((await list('?limit=200&offset=5')).data).toEqual([]);
    expect((await list('?limit=200')).data).toHaveLength(5);
  });

  it('filters by status (cStat), situacao, uf_inicio, uf_fim, combined', async () => {
    await expectIds('?status=100', 'ECBA');
    await expectIds('?status=725', 'D');
    await expectIds('?situacao=autorizado', 'EA');
    await expectIds('?situacao=encerrado', 'B');
    await expectIds('?situacao=cancelado', 'C');
    await expectIds('?situacao=rejeitado', 'D');
    await expectIds('?uf_inicio=RJ', 'EB');
    await expectIds('?uf_fim=BA', 'DCA');
    await expectIds('?uf_inicio=SP&uf_fim=BA&status=100', 'A');
    expect((await list('?uf_inicio=SP&situacao=encerrado')).total).toBe(0);
  });

  it('de/ate are Brasília days, inclusive', async () => {
    const today = brasiliaToday();
    await expectIds(`?de=${today}&ate=${today}`, 'EDCBA');
    await expectIds(`?de=${today}`, 'EDCBA');
    await expectIds(`?ate=${today}`, 'EDCBA');
    expect((await list(`?de=${shiftDay(today, 1)}`)).total).toBe(0);
    expect((await list(`?ate=${shiftDay(today, -1)}`)).total).toBe(0);
  });

  it('400 requisicao_invalida for limit=201 and other bad parameters', async () => {
    for (const query of [
      'limit=201',
      'limit=0',
      'limit=abc',
      'offset=-1',
      'de=2026-02-30',
      'de=22/11/2026',
      'ate=ontem',
      'de=2026-11-23&ate=2026-11-22',
      'situacao=perdido',
      'uf_inicio=sp',
      'status=cem',
      'pagina=2',
    ]) {
      const res = await lister.get(`/api/v1/mdfe?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('requisicao_invalida');
    }
  });
});

describe('the Brasília day boundary', () => {
  it('a manifest issued at 23:59 -03:00 is in that day, not in the next UTC day; one at 00:01 is in the next', async () => {
    // Where the company clock is now, in Brasília (moving it by 0 minutes reads it).
    const read = async () => (await nightOwl.post('/api/v1/sandbox/relogio', { avancar_minutos: 0 })).body.agora as string;
    const clock = async () =>
      /T(\d{2}):(\d{2}):(\d{2})/
        .exec(await read())!
        .slice(1)
        .map(Number) as [number, number, number];
    let [hh, mm, ss] = await clock();
    // Moving by whole minutes keeps the seconds: avoid landing at 23:59:59 with the issuance
    // itself spilling into the next minute.
    if (ss >= 55) {
      await new Promise((r) => setTimeout(r, (61 - ss) * 1000));
      [hh, mm, ss] = await clock();
    }
    const minutes = (23 * 60 + 59 - (hh * 60 + mm) + 1440) % 1440;
    const moved = await nightOwl.post('/api/v1/sandbox/relogio', { avancar_minutos: minutes });
    expect(moved.body.agora).toMatch(/T23:59:\d{2}-03:00$/);
    const day = (moved.body.agora as string).slice(0, 10);
    const next = shiftDay(day, 1);

    const late = await issue(nightOwl, trip('SP', 'BA'));
    expect(late.emitido_em).toMatch(new RegExp(`^${day}T23:59:\\d{2}-03:00$`));
    // The same instant is already the next day in UTC (02:59Z).
    expect(new Date(late.emitido_em).toISOString().slice(0, 10)).toBe(next);

    await nightOwl.post('/api/v1/sandbox/relogio', { avancar_minutos: 2 });
    const early = await issue(nightOwl, trip('RJ', 'SP'));
    expect(early.emitido_em).toMatch(new RegExp(`^${next}T00:0[01]:\\d{2}-03:00$`));

    const idsOn = async (query: string) => ((await nightOwl.get(`/api/v1/mdfe${query}`)).body.data as { mdfe_id: string }[]).map((m) => m.mdfe_id);
    expect(await idsOn(`?de=${day}&ate=${day}`)).toEqual([late.mdfe_id]);
    expect(await idsOn(`?de=${next}&ate=${next}`)).toEqual([early.mdfe_id]);
    expect(await idsOn(`?de=${day}&ate=${next}`)).toEqual([early.mdfe_id, late.mdfe_id]);
    expect(await idsOn(`?ate=${day}`)).toEqual([late.mdfe_id]);
    expect(await idsOn(`?de=${next}`)).toEqual([early.mdfe_id]);
  });
});
