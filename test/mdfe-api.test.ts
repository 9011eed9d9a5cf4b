// MDF-e over real HTTP against the real `balcao service` process (sandbox mode, its simulated tax
// authority in its own memory): issuance and its validation, every rejection code in the
// contract's order, idempotency, closing and cancellation with their refusals, the 503 of an
// unavailable authority, tenant isolation and the percurso utility.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MDFE_REJECTIONS } from '../fiscal/mdfe/build.ts';
import type { MdfeRequest } from '../fiscal/mdfe/types.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { untilProcessing } from './helpers/mdfe.ts';
import { api, createCompany, startService, type ServiceProcess } from './helpers/service-process.ts';
import { SETUPS, testStorage, type TestStorage } from './helpers/stores.ts';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { ACCESS_KEY, ACCESS_KEY_PATTERN } from '../base/common/access-key.ts';
import { CNPJ_PATTERN } from '../base/common/tax-ids.ts';
import { validateXml } from '../fiscal/schema.ts';

// On SQLite in-process and over the wire (SEFAZ connector → SEFAZ simulator, mutual TLS on
// loopback), and on PostgreSQL (helpers/stores.ts SETUPS).
describe.each(SETUPS)('on $store, over the $transport authority', ({ store, transport }) => {
  type Client = ReturnType<typeof api>;

  let service: ServiceProcess;
  let storage: TestStorage;
  /** One company per concern, so clocks, plates and numbers never interfere. */
  let main: Client;
  let other: Client;
  let windowCo: Client;
  let flaky: Client;
  let chain: Client;
  let road: Client;

  /** A CNPJ with valid check digits from 12 digits. */
  function cnpj(base12: string): string {
    const dv = (s: string) => {
      const weights = s.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
      const r = [...s].reduce((a, c, i) => a + Number(c) * weights[i]!, 0) % 11;
      return r < 2 ? 0 : 11 - r;
    };
    const d1 = dv(base12);
    return `${base12}${d1}${dv(base12 + d1)}`;
  }

  beforeAll(async () => {
    storage = await testStorage(store);
    // Different CNPJs: the authority keeps numbers and plates per CNPJ, as SEFAZ does.
    const companies = await Promise.all(
      [
        ['123456780001', 'SP'],
        ['223456780001', 'BA'],
        ['323456780001', 'SP'],
        ['423456780001', 'SP'],
        ['523456780001', 'SP'],
        ['623456780001', 'SP'],
      ].map(([base, uf]) => createCompany(storage, { cnpj: cnpj(base!), uf: uf!, nome: `Transportadora ${base}` })),
    );
    service = await startService({ dataDir: storage.dataDir, database: storage.database, transport });
    [main, other, windowCo, flaky, chain, road] = companies.map((c) => api(service.url, c.token)) as [Client, Client, Client, Client, Client, Client];
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  let counter = 0;
  const plate = () => `TST${String(++counter).padStart(4, '0')}`;
  const nextNumber = () => 1000 + ++counter;

  /** The shared sample (SP → BA through MG, every authority rule met), a fresh number and plate. */
  function manifest(edit: (r: MdfeRequest) => void = () => {}, nMDF = nextNumber(), placa = plate()): MdfeRequest {
    const r = structuredClone(sampleMdfeRequest({ nMDF, placa }));
    edit(r);
    return r;
  }

  const emit = (client: Client, body: unknown, headers: Record<string, string> = {}) => client.post('/api/v1/mdfe/emitir', body, { headers });

  async function authorized(client: Client, body: MdfeRequest = manifest()) {
    const res = await emit(client, body);
    expect(res.status, res.text).toBe(201);
    expect(res.body.situacao, res.text).toBe('autorizado');
    return res.body;
  }

  const contractError = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

  describe('POST /api/v1/mdfe/emitir: authorization', () => {
    it('201 with the documented fields, situacao autorizado, the number consumed', async () => {
      const body = manifest();
      const res = await emit(main, body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        mdfe_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        chave: expect.stringMatching(ACCESS_KEY),
        numero: body.ide.nMDF,
        serie: 1,
        status: '100',
        motivo: 'Autorizado o uso do MDF-e',
        protocolo: expect.stringMatching(/^[0-9]{15}$/),
        autorizado: true,
        situacao: 'autorizado',
        placa: body.rodo.veicTracao.placa,
        uf_inicio: 'SP',
        uf_fim: 'BA',
        emitido_em: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/),
      });
      expect(res.body.idempotent_replay).toBeUndefined();
      // The key: model 58, the series and number of the request.
      expect(res.body.chave.slice(20, 22)).toBe('58');
      expect(Number(res.body.chave.slice(22, 25))).toBe(1);
      expect(Number(res.body.chave.slice(25, 34))).toBe(body.ide.nMDF);

      // Consumed: the same number again (another plate) is the authority's duplicate, 204.
      const again = await emit(
        main,
        manifest(() => {}, body.ide.nMDF),
      );
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ status: '204', autorizado: false, situacao: 'rejeitado', protocolo: null });
    });

    it('the detail lists the linked CT-e and NF-e keys with their unloading municipality, and the events', async () => {
      const body = manifest();
      const issued = await authorized(main, body);
      const res = await main.get(`/api/v1/mdfe/${issued.mdfe_id}`);
      expect(res.status).toBe(200);
      const [salvador, feira] = body.infDoc.infMunDescarga;
      expect(res.body.documentos).toEqual([
        { tipo: 'CTe', chave: salvador!.infCTe![0]!.chCTe, codigo_municipio_descarga: '2927408' },
        { tipo: 'NFe', chave: feira!.infNFe![0]!.chNFe, codigo_municipio_descarga: '2910800' },
      ]);
      expect(res.body.eventos).toEqual([]);
      expect(res.body).toMatchObject({ mdfe_id: issued.mdfe_id, chave: issued.chave, situacao: 'autorizado', protocolo: issued.protocolo });
    });
  });

  describe('POST /api/v1/mdfe/emitir: validation before the authority', () => {
    const fieldsOf = (res: { body: { error: { details?: { field: string }[] } } }) => (res.body.error.details ?? []).map((d) => d.field);

    it('400 for wrong types, missing groups and malformed codes, naming the fields', async () => {
      const res = await emit(
        main,
        manifest((r) => {
          (r.ide as unknown as Record<string, unknown>).nMDF = '12';
          r.prodPred!.infLotacao!.cepCarrega = '0131010'; // 7 digits
          r.rodo.veicTracao.condutor = { xNome: 'João', CPF: '5299822472' }; // 10 digits
          r.rodo.infContratante = [{ CNPJ: '1144477700016' }]; // 13 digits
          r.rodo.infPag![0]!.CNPJ = '12abc34501de35'; // alphanumeric, in lower case
          r.ide.infMunCarrega[0]!.cMunCarrega = '355030'; // 6 digits
          r.ide.UFFim = 'ba';
          delete (r as Partial<MdfeRequest>).tot;
        }),
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual(contractError('requisicao_invalida'));
      expect(fieldsOf(res)).toEqual(
        expect.arrayContaining([
          'ide.nMDF',
          'prodPred.infLotacao.cepCarrega',
          'rodo.veicTracao.condutor',
          'rodo.infContratante[0].CNPJ',
          'rodo.infPag[0].CNPJ',
          'ide.infMunCarrega[0].cMunCarrega',
          'ide.UFFim',
          'tot',
        ]),
      );
      expect(res.body.error.details).toContainEqual({
        field: 'rodo.infPag[0].CNPJ',
        message: expect.stringMatching(/^formato inválido \(esperado CNPJ de 14 caracteres: dígitos ou letras maiúsculas/),
      });
    });

    it('422 validacao for a municipality that does not exist or is not in the stated UF, and check digits', async () => {
      const body = manifest((r) => {
        r.ide.infMunCarrega[0]!.cMunCarrega = '3599999'; // no such municipality
        r.infDoc.infMunDescarga[0]!.cMunDescarga = '3550308'; // São Paulo, not in UFFim BA
        r.rodo.veicTracao.condutor = { xNome: 'João da Silva', CPF: '52998224724' };
        r.rodo.infContratante = [{ xNome: 'Contratante', CNPJ: '11444777000162' }];
        r.rodo.infPag![0]!.CNPJ = '12ABC34501DE36'; // alphanumeric, wrong check digit
      });
      const res = await emit(main, body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(contractError('validacao'));
      expect(res.body.error.details.filter((d: { message: string }) => /dígito verificador/.test(d.message)).map((d: { field: string }) => d.field)).toEqual(
        expect.arrayContaining([expect.stringMatching(/infContratante\[0\]\.CNPJ$/), expect.stringMatching(/infPag\[0\]\.CNPJ$/)]),
      );
      expect(fieldsOf(res)).toEqual(
        expect.arrayContaining([
          'ide.infMunCarrega[0].cMunCarrega',
          'infDoc.infMunDescarga[0].cMunDescarga',
          'rodo.veicTracao.condutor.CPF',
          'rodo.infContratante[0].CNPJ',
        ]),
      );
      // Nothing was created and nothing consumed: the number and the plate are still free.
      const list = await main.get('/api/v1/mdfe?limit=200');
      expect(list.body.data.some((m: { numero: number }) => m.numero === body.ide.nMDF)).toBe(false);
      await authorized(
        main,
        manifest(() => {}, body.ide.nMDF, body.rodo.veicTracao.placa),
      );
    });

    it('422 for the loading municipality of another UF than UFIni', async () => {
      const res = await emit(
        main,
        manifest((r) => (r.ide.infMunCarrega[0]!.cMunCarrega = '2927408')),
      );
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'ide.infMunCarrega[0].cMunCarrega', message: expect.stringContaining('SP') }]);
    });
  });

  describe('POST /api/v1/mdfe/emitir: the tax authority rejects (201, autorizado false)', () => {
    const rejection = (status: string, motivo: string | RegExp) => ({
      status,
      motivo: typeof motivo === 'string' ? motivo : expect.stringMatching(motivo),
      autorizado: false,
      situacao: 'rejeitado',
      protocolo: null,
    });

    const cases: [string, (r: MdfeRequest) => void, string, string][] = [
      ['tpTransp without veicTracao.prop', (r) => (r.tpTransp = '1'), '745', MDFE_REJECTIONS.tpTranspSemProp.xMotivo],
      [
        'veicTracao.prop without tpTransp',
        (r) => (r.rodo.veicTracao.prop = { CPF: '52998224725', RNTRC: '87654321', xNome: 'José Proprietário', UF: 'SP', tpProp: '1' }),
        '745',
        MDFE_REJECTIONS.propSemTpTransp.xMotivo,
      ],
      ['insurance without nAver', (r) => delete (r.seg as { nAver?: string }).nAver, '699', MDFE_REJECTIONS.seguroIncompleto.xMotivo],
      ['no insurance group', (r) => delete r.seg, '698', MDFE_REJECTIONS.seguroObrigatorio.xMotivo],
      ['no predominant product', (r) => delete r.prodPred, '725', MDFE_REJECTIONS.produtoPredominante.xMotivo],
      ['no contracting parties', (r) => delete r.rodo.infContratante, '578', MDFE_REJECTIONS.tomadores.xMotivo],
      ['a percurso that is not a chain of bordering states', (r) => (r.ide.infPercurso = [{ UFPer: 'RJ' }]), '663', MDFE_REJECTIONS.percurso.xMotivo],
      ['no percurso between states that do not border', (r) => delete r.ide.infPercurso, '663', MDFE_REJECTIONS.percurso.xMotivo],
    ];

    for (const [name, edit, status, motivo] of cases) {
      it(`${status}: ${name}`, async () => {
        const res = await emit(main, manifest(edit));
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject(rejection(status, motivo));
      });
    }

    it('third-party freight: prop and tpTransp together are authorized', async () => {
      await authorized(
        main,
        manifest((r) => {
          r.tpTransp = '2';
          r.rodo.veicTracao.prop = { CPF: '52998224725', RNTRC: '87654321', xNome: 'José Proprietário', UF: 'SP', tpProp: '1' };
        }),
      );
    });

    it('611: the next manifest of a vehicle not closed; accepted after closing', async () => {
      const placa = plate();
      const first = await authorized(
        main,
        manifest(() => {}, nextNumber(), placa),
      );
      const second = manifest(() => {}, nextNumber(), placa);
      const blocked = await emit(main, second);
      expect(blocked.status).toBe(201);
      expect(blocked.body).toMatchObject(rejection('611', /^Rejeição: Existe MDF-e não encerrado para esta placa/));
      expect(blocked.body.motivo).toContain(first.chave);

      const closed = await main.post(`/api/v1/mdfe/${first.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
      expect(closed.status).toBe(200);
      const retried = await emit(main, second);
      expect(retried.body).toMatchObject({ status: '100', autorizado: true, situacao: 'autorizado' });
      // The rejected attempt lent its cMDF: the corrected re-issue has the same access key.
      expect(retried.body.chave).toBe(blocked.body.chave);
    });

    it('611 also frees after a cancellation', async () => {
      const placa = plate();
      const first = await authorized(
        main,
        manifest(() => {}, nextNumber(), placa),
      );
      const blocked = await emit(
        main,
        manifest(() => {}, nextNumber(), placa),
      );
      expect(blocked.body.status).toBe('611');
      expect((await main.post(`/api/v1/mdfe/${first.mdfe_id}/cancelar`, { justificativa: 'Viagem desistida pelo contratante' })).status).toBe(200);
      await authorized(
        main,
        manifest(() => {}, nextNumber(), placa),
      );
    });

    it('611 before 204: the number of the open manifest of that very plate, sent again, is 611 (close it first); 204 once it is closed', async () => {
      // The plate's open manifest is the one holding the number: both rules are broken, and 611
      // comes first in the authority's order.
      const placa = plate();
      const first = await authorized(
        main,
        manifest(() => {}, nextNumber(), placa),
      );
      const again = manifest(() => {}, first.numero, placa);
      const blocked = await emit(main, again);
      expect(blocked.status).toBe(201);
      expect(blocked.body).toMatchObject(rejection('611', /^Rejeição: Existe MDF-e não encerrado para esta placa/));
      expect(blocked.body.motivo).toContain(first.chave);

      expect((await main.post(`/api/v1/mdfe/${first.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' })).status).toBe(200);
      const duplicate = await emit(main, again);
      expect(duplicate.body).toMatchObject(rejection('204', 'Rejeição: Duplicidade de MDF-e'));
    });

    it('the rules are checked in the order 745, 699, 698, 725, 578, 663, 611, 204', async () => {
      // Two authorized manifests hold a plate (611) and a number (204); then a request breaking
      // every rule is corrected one rule at a time, each correction revealing the next code.
      const plateHolder = await authorized(
        chain,
        manifest(() => {}, 76, 'ORD0001'),
      );
      const numberHolder = await authorized(
        chain,
        manifest(() => {}, 77, 'ORD0009'),
      );
      const body = manifest(
        (r) => {
          r.tpTransp = '1'; // 745
          delete (r.seg as { nAver?: string }).nAver; // 699 (and 698 once seg goes)
          delete r.prodPred; // 725
          delete r.rodo.infContratante; // 578
          r.ide.infPercurso = [{ UFPer: 'PR' }]; // 663
        },
        77, // 204
        'ORD0001', // 611
      );
      const seen: string[] = [];
      const send = async () => {
        const res = await emit(chain, body);
        expect(res.status).toBe(201);
        seen.push(res.body.status);
      };
      const full = manifest();
      await send();
      delete body.tpTransp;
      await send();
      delete body.seg;
      await send();
      body.seg = full.seg;
      await send();
      body.prodPred = full.prodPred;
      await send();
      body.rodo.infContratante = full.rodo.infContratante;
      await send();
      body.ide.infPercurso = [{ UFPer: 'MG' }];
      await send();
      body.rodo.veicTracao.placa = 'ORD0002';
      await send();
      body.ide.nMDF = 78;
      await send();
      expect(seen).toEqual(['745', '699', '698', '725', '578', '663', '611', '204', '100']);
      expect([plateHolder.situacao, numberHolder.situacao]).toEqual(['autorizado', 'autorizado']);
    });
  });

  describe('idempotency (doc type mdfe)', () => {
    it('replays an authorized manifest: 200, idempotent_replay, same document, no new number', async () => {
      const body = manifest();
      const key = `viagem-${body.ide.nMDF}`;
      const first = await emit(main, body, { 'Idempotency-Key': key });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ autorizado: true, referencia_externa: key });
      const replay = await emit(main, body, { 'Idempotency-Key': key });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual({ ...first.body, idempotent_replay: true });
      // Also in its current state after closing.
      await main.post(`/api/v1/mdfe/${first.body.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
      const later = await emit(main, body, { 'Idempotency-Key': key });
      expect(later.status).toBe(200);
      expect(later.body).toMatchObject({ mdfe_id: first.body.mdfe_id, situacao: 'encerrado', idempotent_replay: true });
      // The same key with another body is refused.
      const other = await emit(main, { ...body, ide: { ...body.ide, nMDF: body.ide.nMDF + 1 } }, { 'Idempotency-Key': key });
      expect(other.status).toBe(422);
      expect(other.body).toEqual(contractError('chave_idempotencia_reutilizada'));
      const all = await main.get('/api/v1/mdfe?limit=200');
      expect(all.body.data.filter((m: { numero: number }) => m.numero === body.ide.nMDF)).toHaveLength(1);
    });

    it('referencia_externa in the body has the same effect as the header', async () => {
      const body = { ...manifest(), referencia_externa: `ref-${counter}` };
      const first = await emit(main, body);
      expect(first.status).toBe(201);
      const replay = await emit(main, body);
      expect(replay.status).toBe(200);
      expect(replay.body.mdfe_id).toBe(first.body.mdfe_id);
      expect(replay.body.referencia_externa).toBe(body.referencia_externa);
    });

    it('a rejection frees the key: the corrected retry is a real new attempt with the same access key', async () => {
      const key = `corrigir-${counter}`;
      const broken = manifest((r) => delete r.prodPred);
      const rejected = await emit(main, broken, { 'Idempotency-Key': key });
      expect(rejected.status).toBe(201);
      expect(rejected.body).toMatchObject({ status: '725', autorizado: false, situacao: 'rejeitado' });
      // The same rejected body again: not a replay, a new attempt (rejected again).
      const again = await emit(main, broken, { 'Idempotency-Key': key });
      expect(again.status).toBe(201);
      expect(again.body.mdfe_id).not.toBe(rejected.body.mdfe_id);
      expect(again.body.status).toBe('725');
      const fixed = await emit(main, { ...broken, prodPred: manifest().prodPred }, { 'Idempotency-Key': key });
      expect(fixed.status).toBe(201);
      expect(fixed.body).toMatchObject({ status: '100', autorizado: true, numero: broken.ide.nMDF });
      expect(fixed.body.mdfe_id).not.toBe(again.body.mdfe_id);
      expect(fixed.body.chave).toBe(rejected.body.chave);
      // Both attempts stay on record as rejected; the key now replays the authorization.
      expect((await main.get(`/api/v1/mdfe/${rejected.body.mdfe_id}`)).body.situacao).toBe('rejeitado');
      const replay = await emit(main, { ...broken, prodPred: manifest().prodPred }, { 'Idempotency-Key': key });
      expect(replay.body).toMatchObject({ mdfe_id: fixed.body.mdfe_id, idempotent_replay: true });
    });

    it('a request refused before the authority is asked (422 validacao) stores nothing, not even its key', async () => {
      const key = `recusada-${counter}`;
      const broken = manifest((r) => (r.ide.infMunCarrega[0]!.cMunCarrega = '3599999')); // no such municipality
      const refused = await emit(main, broken, { 'Idempotency-Key': key });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual(contractError('validacao'));
      const stored = {
        keys: await storage.db.value("SELECT count(*) FROM idempotency_keys WHERE doc_type = 'mdfe' AND key = ?", key),
        manifests: await storage.db.value('SELECT count(*) FROM mdfe WHERE referencia_externa = ?', key),
      };
      expect(stored).toEqual({ keys: 0, manifests: 0 });
      // The key is as free as one never used: the corrected request is a first call.
      const fixed = await emit(
        main,
        manifest(() => {}, broken.ide.nMDF, broken.rodo.veicTracao.placa),
        { 'Idempotency-Key': key },
      );
      expect(fixed.status).toBe(201);
      expect(fixed.body).toMatchObject({ autorizado: true, referencia_externa: key });
    });

    it('409 em_processamento while the same key is still running, then the replay', async () => {
      await flaky.post('/api/v1/sandbox/autoridade', { latencia_ms: 3000 });
      try {
        const body = manifest();
        const key = `lento-${counter}`;
        const first = emit(flaky, body, { 'Idempotency-Key': key });
        await untilProcessing(flaky, body.ide.nMDF);
        const conflict = await emit(flaky, body, { 'Idempotency-Key': key });
        expect(conflict.status).toBe(409);
        expect(conflict.body).toMatchObject({ error: { code: 'em_processamento' }, id: expect.any(String) });
        expect(conflict.headers.get('retry-after')).toMatch(/^[0-9]+$/);
        const done = await first;
        expect(done.status).toBe(201);
        expect(done.body.mdfe_id).toBe(conflict.body.id);
        const replay = await emit(flaky, body, { 'Idempotency-Key': key });
        expect(replay.status).toBe(200);
        expect(replay.body.mdfe_id).toBe(done.body.mdfe_id);
      } finally {
        await flaky.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      }
    });

    it('N identical calls at the same instant: exactly one manifest; the others get 409 or the replay', async () => {
      const body = manifest();
      const key = `rajada-${counter}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => emit(main, body, { 'Idempotency-Key': key })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.every((s) => s === 201 || s === 200 || s === 409)).toBe(true);
      const created = results.find((r) => r.status === 201)!;
      for (const r of results.filter((x) => x.status !== 201)) {
        expect(r.status === 200 ? r.body.mdfe_id : r.body.id).toBe(created.body.mdfe_id);
      }
      const all = await main.get('/api/v1/mdfe?limit=200');
      expect(all.body.data.filter((m: { numero: number }) => m.numero === body.ide.nMDF)).toHaveLength(1);
    });

    it('keys are per company', async () => {
      const key = `compartilhada-${counter}`;
      const a = await emit(main, manifest(), { 'Idempotency-Key': key });
      const b = await emit(
        other,
        manifest((r) => (r.rodo.veicTracao.UF = 'BA')),
        { 'Idempotency-Key': key },
      );
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.body.mdfe_id).not.toBe(a.body.mdfe_id);
    });
  });

  describe('authority unavailable', () => {
    it('503 autoridade_indisponivel, nothing issued, and the key and the number freed', async () => {
      const body = manifest();
      const key = `indisponivel-${counter}`;
      await flaky.post('/api/v1/sandbox/autoridade', { disponivel: false });
      let res;
      try {
        res = await emit(flaky, body, { 'Idempotency-Key': key });
      } finally {
        await flaky.post('/api/v1/sandbox/autoridade', { disponivel: true });
      }
      expect(res.status).toBe(503);
      expect(res.body).toEqual(contractError('autoridade_indisponivel'));
      expect((await flaky.get('/api/v1/mdfe?limit=200')).body.data.some((m: { numero: number }) => m.numero === body.ide.nMDF)).toBe(false);
      const retry = await emit(flaky, body, { 'Idempotency-Key': key });
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ status: '100', numero: body.ide.nMDF });
    });

    it('503 for closing and cancelling, the manifest unchanged', async () => {
      const issued = await authorized(flaky);
      await flaky.post('/api/v1/sandbox/autoridade', { disponivel: false });
      try {
        const close = await flaky.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
        expect(close.status).toBe(503);
        const cancel = await flaky.post(`/api/v1/mdfe/${issued.mdfe_id}/cancelar`, { justificativa: 'Carga não embarcada a tempo' });
        expect(cancel.status).toBe(503);
      } finally {
        await flaky.post('/api/v1/sandbox/autoridade', { disponivel: true });
      }
      expect((await flaky.get(`/api/v1/mdfe/${issued.mdfe_id}`)).body.situacao).toBe('autorizado');
    });
  });

  describe('encerrar (event 110112)', () => {
    it('200 encerrado with the event; data defaults to today in Brasília', async () => {
      const issued = await authorized(main);
      const res = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
      expect(res.status).toBe(200);
      const today = brasiliaDay(new Date());
      expect(res.body).toMatchObject({ mdfe_id: issued.mdfe_id, situacao: 'encerrado', status: '100', autorizado: true, encerrado_em: expect.any(String) });
      expect(res.body.eventos).toEqual([
        {
          tipo: '110112',
          descricao: 'Encerramento',
          sequencia: 1,
          status: '135',
          motivo: 'Evento registrado e vinculado a MDF-e',
          protocolo: expect.stringMatching(/^[0-9]{15}$/),
          registrado_em: expect.any(String),
          dados: { uf: 'BA', codigo_municipio: '2927408', data: today },
        },
      ]);
      expect((await main.get(`/api/v1/mdfe/${issued.mdfe_id}`)).body).toEqual(res.body);
    });

    it('closing twice → 422 estado_invalido; cancelling after closing → 422 estado_invalido', async () => {
      const issued = await authorized(main);
      expect((await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2910800' })).status).toBe(200);
      const twice = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2910800' });
      expect(twice.status).toBe(422);
      expect(twice.body).toEqual(contractError('estado_invalido'));
      const cancel = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/cancelar`, { justificativa: 'Tentativa após encerramento' });
      expect(cancel.status).toBe(422);
      expect(cancel.body).toEqual(contractError('estado_invalido'));
      expect((await main.get(`/api/v1/mdfe/${issued.mdfe_id}`)).body.eventos).toHaveLength(1);
    });

    it('refuses a municipality outside the UF, a malformed body, a date in the future or before the authorization', async () => {
      const issued = await authorized(main);
      const outside = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '3550308' });
      expect(outside.status).toBe(422);
      expect(outside.body.error).toMatchObject({ code: 'validacao', details: [{ field: 'codigo_municipio', message: expect.any(String) }] });
      const malformed = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'Bahia', codigo_municipio: 2927408 });
      expect(malformed.status).toBe(400);
      const future = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408', data: '2999-01-01' });
      expect(future.status).toBe(422);
      expect(future.body.error.details).toEqual([{ field: 'data', message: expect.any(String) }]);
      const before = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408', data: '2020-01-01' });
      expect(before.status).toBe(422);
      expect(before.body.error).toMatchObject({ code: 'validacao', message: expect.stringContaining('615') });
      expect((await main.get(`/api/v1/mdfe/${issued.mdfe_id}`)).body.situacao).toBe('autorizado');
    });
  });

  describe('cancelar (event 110111, 24 hours)', () => {
    it('200 cancelado with the event; then closing or cancelling again → 422 estado_invalido', async () => {
      const issued = await authorized(main);
      const res = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/cancelar`, { justificativa: 'Viagem cancelada pelo contratante' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ situacao: 'cancelado', cancelado_em: expect.any(String) });
      expect(res.body.eventos).toEqual([
        expect.objectContaining({ tipo: '110111', descricao: 'Cancelamento', status: '135', dados: { justificativa: 'Viagem cancelada pelo contratante' } }),
      ]);
      for (const [path, body] of [
        ['cancelar', { justificativa: 'Viagem cancelada pelo contratante' }],
        ['encerrar', { uf: 'BA', codigo_municipio: '2927408' }],
      ] as const) {
        const again = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/${path}`, body);
        expect(again.status, path).toBe(422);
        expect(again.body).toEqual(contractError('estado_invalido'));
      }
    });

    it('a justification out of 15..255 characters → 400', async () => {
      const issued = await authorized(main);
      for (const justificativa of ['curta demais', 'x'.repeat(256)]) {
        const res = await main.post(`/api/v1/mdfe/${issued.mdfe_id}/cancelar`, { justificativa });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(contractError('requisicao_invalida'));
      }
    });

    it('a rejected manifest cannot be cancelled or closed: 422 estado_invalido', async () => {
      const rejected = await emit(
        main,
        manifest((r) => delete r.seg),
      );
      expect(rejected.body.situacao).toBe('rejeitado');
      const cancel = await main.post(`/api/v1/mdfe/${rejected.body.mdfe_id}/cancelar`, { justificativa: 'Tentativa sobre rejeitado' });
      expect(cancel.status).toBe(422);
      expect(cancel.body).toEqual(contractError('estado_invalido'));
      const close = await main.post(`/api/v1/mdfe/${rejected.body.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
      expect(close.status).toBe(422);
    });

    it('within 24 h (sandbox clock) → 200; after 24 h → 422 prazo_expirado, and closing is still possible', async () => {
      const early = await authorized(windowCo);
      const late = await authorized(windowCo);
      const moved = await windowCo.post('/api/v1/sandbox/relogio', { avancar_minutos: 24 * 60 - 2 });
      expect(moved.status).toBe(200);
      const inTime = await windowCo.post(`/api/v1/mdfe/${early.mdfe_id}/cancelar`, { justificativa: 'Cancelado antes do prazo final' });
      expect(inTime.status).toBe(200);
      await windowCo.post('/api/v1/sandbox/relogio', { avancar_minutos: 3 });
      const expired = await windowCo.post(`/api/v1/mdfe/${late.mdfe_id}/cancelar`, { justificativa: 'Cancelado depois do prazo' });
      expect(expired.status).toBe(422);
      expect(expired.body).toEqual(contractError('prazo_expirado'));
      expect(expired.body.error.message).toContain('encerrar');
      const closed = await windowCo.post(`/api/v1/mdfe/${late.mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
      expect(closed.status).toBe(200);
      expect(closed.body.situacao).toBe('encerrado');
    });
  });

  describe('tenant isolation and unknown ids', () => {
    it('another company’s manifest is 404 on every route, as an unknown id', async () => {
      const issued = await authorized(main);
      for (const id of [issued.mdfe_id, '00000000-0000-4000-8000-000000000000', 'nao-e-uuid']) {
        expect((await other.get(`/api/v1/mdfe/${id}`)).status).toBe(404);
        expect((await other.get(`/api/v1/mdfe/${id}/xml`)).status).toBe(404);
        expect((await other.get(`/api/v1/mdfe/${id}/damdfe`)).status).toBe(404);
        const close = await other.post(`/api/v1/mdfe/${id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
        expect(close.status).toBe(404);
        expect(close.body).toEqual(contractError('nao_encontrado'));
        expect((await other.post(`/api/v1/mdfe/${id}/cancelar`, { justificativa: 'Tentativa de outra empresa' })).status).toBe(404);
      }
      expect((await other.get('/api/v1/mdfe?limit=200')).body.data.some((m: { mdfe_id: string }) => m.mdfe_id === issued.mdfe_id)).toBe(false);
      expect((await main.get(`/api/v1/mdfe/${issued.mdfe_id}`)).body.situacao).toBe('autorizado');
    });

    it('the routes are in the OpenAPI document', async () => {
      const res = await main.get('/api/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.paths)).toEqual(
        expect.arrayContaining([
          '/api/v1/mdfe/emitir',
          '/api/v1/mdfe',
          '/api/v1/mdfe/percurso',
          '/api/v1/mdfe/{id}',
          '/api/v1/mdfe/{id}/xml',
          '/api/v1/mdfe/{id}/damdfe',
          '/api/v1/mdfe/{id}/encerrar',
          '/api/v1/mdfe/{id}/cancelar',
        ]),
      );
      // The CNPJ and access-key fields publish base/common's patterns: letters allowed.
      const published = JSON.stringify(res.body);
      expect(published).toContain(JSON.stringify({ pattern: `^${CNPJ_PATTERN}$` }).slice(1, -1));
      expect(published).toContain(JSON.stringify({ pattern: `^${ACCESS_KEY_PATTERN}$` }).slice(1, -1));
    });

    it('401 without a token', async () => {
      const res = await main.post('/api/v1/mdfe/emitir', manifest(), { token: null });
      expect(res.status).toBe(401);
    });
  });

  describe('POST /api/v1/mdfe/percurso', () => {
    const route = (body: unknown) => main.post('/api/v1/mdfe/percurso', body);
    const ufs = (list: string) => (list ? list.split(',').map((UFPer) => ({ UFPer })) : []);

    it('suggests a shortest chain of bordering states (alphabetical tie-break)', async () => {
      for (const [from, to, expected] of [
        ['SP', 'BA', 'MG'],
        ['RS', 'RJ', 'SC,PR,SP'],
        ['GO', 'RS', 'MS,PR,SC'],
        ['RS', 'SC', ''],
        ['SP', 'SP', ''],
        ['DF', 'MG', ''],
        ['PE', 'RN', 'CE'],
        ['BA', 'PR', 'GO,MS'],
      ] as const) {
        const res = await route({ UFIni: from, UFFim: to });
        expect(res.status, `${from}→${to}`).toBe(200);
        expect(res.body, `${from}→${to}`).toEqual({ infPercurso: ufs(expected) });
      }
    });

    it('validates a given route: 200 valido, or 422 validacao naming the broken link', async () => {
      expect((await route({ UFIni: 'PE', UFFim: 'RN', infPercurso: ufs('PB') })).body).toEqual({ valido: true });
      expect((await route({ UFIni: 'RS', UFFim: 'SC', infPercurso: [] })).body).toEqual({ valido: true });
      const broken = await route({ UFIni: 'GO', UFFim: 'RS', infPercurso: ufs('MS,SC,PR') });
      expect(broken.status).toBe(422);
      expect(broken.body.error).toMatchObject({
        code: 'validacao',
        message: expect.stringContaining('MS e SC não fazem divisa'),
        details: [{ field: 'infPercurso[1].UFPer', message: 'MS e SC não fazem divisa' }],
      });
      const bordering = await route({ UFIni: 'RS', UFFim: 'SC', infPercurso: ufs('RS,SC') });
      expect(bordering.status).toBe(422);
      expect(bordering.body.error.details[0].field).toBe('infPercurso[0].UFPer');
    });

    it('400 naming the field for a UF that is not one of the 27, which the document lists', async () => {
      for (const UFIni of ['sp', 'XX']) {
        const res = await route({ UFIni, UFFim: 'BA' });
        expect(res.status).toBe(400);
        expect(res.body.error.details).toEqual([{ field: 'UFIni', message: expect.stringMatching(/^deve ser um destes valores: "AC", .*"TO"$/) }]);
      }
    });
  });

  describe('on the road: inclusão de condutor (110114), inclusão de DF-e (110115), não encerrados', () => {
    const NFE_KEY = '35180834128745000152550010000474281920007498';

    it('a driver and NF-e join an open manifest, each an event with its XML; the authority lists it open until it is closed', async () => {
      const issued = await authorized(road);
      const id = issued.mdfe_id as string;
      expect((await road.get('/api/v1/mdfe/nao-encerrados')).body).toMatchObject({ status: '111', data: [{ chave: issued.chave, mdfe_id: id }] });

      const driver = await road.post(`/api/v1/mdfe/${id}/incluir-condutor`, { nome: 'Maria  Souza', cpf: '11144477735' });
      expect(driver.status, driver.text).toBe(200);
      expect(driver.body).toMatchObject({
        situacao: 'autorizado',
        eventos: [{ tipo: '110114', descricao: 'Inclusão de condutor', sequencia: 1, status: '135' }],
      });
      expect(driver.body.eventos[0].dados).toEqual({ nome: 'Maria Souza', cpf: '11144477735' });
      expect((await road.post(`/api/v1/mdfe/${id}/incluir-condutor`, { nome: 'João Lima', cpf: '52998224725' })).body.eventos[1]).toMatchObject({
        tipo: '110114',
        sequencia: 2,
      });
      const badCpf = await road.post(`/api/v1/mdfe/${id}/incluir-condutor`, { nome: 'Maria Souza', cpf: '11144477736' });
      expect(badCpf.status).toBe(422);
      expect(badCpf.body.error.details).toEqual([{ field: 'cpf', message: expect.any(String) }]);

      const added = await road.post(`/api/v1/mdfe/${id}/incluir-dfe`, {
        codigo_municipio_carregamento: '3106200',
        municipio_carregamento: 'Belo Horizonte',
        documentos: [{ chave: NFE_KEY, codigo_municipio_descarga: '2927408', municipio_descarga: 'Salvador' }],
      });
      expect(added.status, added.text).toBe(200);
      expect(added.body.documentos.at(-1)).toEqual({ tipo: 'NFe', chave: NFE_KEY, codigo_municipio_descarga: '2927408' });
      expect(added.body.eventos.at(-1)).toMatchObject({ tipo: '110115', sequencia: 1, dados: { chaves: NFE_KEY, codigo_municipio_carregamento: '3106200' } });
      const foreignKey = await road.post(`/api/v1/mdfe/${id}/incluir-dfe`, {
        codigo_municipio_carregamento: '3106200',
        municipio_carregamento: 'Belo Horizonte',
        documentos: [{ chave: '35261111222333000181650010000000011000000011', codigo_municipio_descarga: '2927408', municipio_descarga: 'Salvador' }],
      });
      expect(foreignKey.status).toBe(422);
      expect(foreignKey.body.error.details[0].field).toBe('documentos[0].chave');

      // The fiscal record: each event's XML, valid against procEventoMDFe (its content against its own schema).
      const events = await road.get(`/api/v1/mdfe/${id}/eventos`);
      expect(events.body.data.map((e: { tipo: string }) => e.tipo)).toEqual(['110114', '110114', '110115']);
      for (const e of events.body.data as { xml: string; protocolo: string }[]) {
        expect(validateXml(e.xml, 'procEventoMDFe')).toEqual({ valid: true, errors: [] });
        expect(e.xml).toContain(`<nProt>${e.protocolo}</nProt>`);
      }

      expect((await road.get(`/api/v1/mdfe/chave/${issued.chave}`)).body.mdfe_id).toBe(id);
      expect((await road.get(`/api/v1/mdfe/chave/${issued.chave.replace(/\d{9}(?=\d{10}$)/, '000000999')}`)).status).toBe(404);
      expect((await road.get('/api/v1/mdfe/chave/123')).status).toBe(400);

      expect((await road.post(`/api/v1/mdfe/${id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' })).status).toBe(200);
      expect((await road.get('/api/v1/mdfe/nao-encerrados')).body).toEqual({ status: '112', motivo: expect.any(String), data: [] });
      const closed = await road.post(`/api/v1/mdfe/${id}/incluir-condutor`, { nome: 'Ana Reis', cpf: '52998224725' });
      expect(closed.status).toBe(422);
      expect(closed.body.error.code).toBe('estado_invalido');
    });
  });
});
