// The accountant's export, end to end over real HTTP against the real `balcao service`:
// GET /api/v1/nfce/exportacao and /api/v1/mdfe/exportacao stream a ZIP that holds each fiscal
// document of the period once, named by its key and valid against its official schema, with its
// events and the inutilizações, and a summary (resumo.csv) read from the documents themselves.
// Then a day at a real terminal (online sales, a cancellation, a sale stalled at the authority and
// issued again in offline contingency, its online attempt cancelled by substitution later): the
// ZIP the manager exports from the checkout against the manager's report of the same day and its
// CSV, total by total and cancellation by cancellation. On both stores (helpers/stores.ts): the
// period is a Brasília day read from dhEmi with its offset, by each engine its own way. The
// service-only exports are of companies whose CNPJ has letters (alphanumeric, drawn by the
// generator): every document, event and inutilização of theirs validates and its signature verifies.

import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { expectValidAndSigned } from './helpers/documents.ts';
import { contingencyXml, nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { api, startService, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';
import { readZip, type ZipEntries } from './helpers/zip.ts';
import { eventually, setUpContingency, storeCompanyWithCertificate, testTerminal } from './terminal-fixtures.ts';
import type { Terminal } from '../electron/core/terminal.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { salesReportCsv } from '../electron/core/reports.ts';
import { csvMoney } from '../service/export/summary-csv.ts';

const JUSTIFICATIVA = 'Cliente desistiu da compra no caixa';

describe.each(STORES)('on %s', (store) => {
  let service: ServiceProcess;
  let storage: TestStorage;
  const terminals: Terminal[] = [];

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database });
  });

  afterAll(async () => {
    for (const t of terminals) await t.close();
    await service?.stop();
    await storage?.close();
  });

  /** The export of one day, read whole; also what the response said about itself. */
  async function exportOf(company: TestCompany, kind: 'nfce' | 'mdfe', de: string, ate = de) {
    const res = await fetch(`${service.url}/api/v1/${kind}/exportacao?de=${de}&ate=${ate}`, { headers: { authorization: `Bearer ${company.token}` } });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { res, entries: res.status === 200 ? await readZip(bytes) : new Map<string, Buffer>(), bytes };
  }

  /** resumo.csv as records (header → value); the BOM and the separator as a spreadsheet wants them. */
  function summaryOf(entries: ZipEntries): Record<string, string>[] {
    const raw = entries.get('resumo.csv')!.toString('utf8');
    expect(raw.startsWith('\uFEFF')).toBe(true);
    return parse(raw.slice(1), { delimiter: ';', columns: true }) as Record<string, string>[];
  }

  const expectValid = expectValidAndSigned;

  const cents = (value: string) => Math.round(Number(value.replace(',', '.')) * 100);

  describe('GET /api/v1/nfce/exportacao (service only)', () => {
    it('holds each authorized, cancelled and pending-contingency NFC-e once, its event, the inutilização and a summary of them', async () => {
      const company = await registerCompany(service.url, storage, { cnpj: generateCnpj({ version: 2 }) });
      const c = company.client;
      const today = brasiliaDay(new Date());
      const authorized = [];
      for (const nNF of [1, 2, 3]) {
        const accepted = await c.post('/api/v1/nfce', nfceBody(nNF));
        expect(accepted.status, accepted.text).toBe(202);
        authorized.push(await waitFor(c, accepted.body.id));
      }
      expect((await c.post(`/api/v1/nfce/${authorized[1].id}/cancelar`, { justificativa: JUSTIFICATIVA })).status).toBe(200);
      expect(
        (await c.post('/api/v1/nfce/inutilizar', { serie: 1, numero_inicial: 4, numero_final: 5, justificativa: 'Numeros pulados por falha no sistema' }))
          .status,
      ).toBe(200);
      // A rejected receipt is no fiscal document: left out.
      const rejected = await c.post('/api/v1/nfce', { ...nfceBody(7), pag: [{ tPag: '03', vPag: nfceBody(7).pag[0]!.vPag }] });
      expect((await waitFor(c, rejected.body.id)).status).toBe('rejeitado');
      // Offline contingency while the authority is away: accepted, still awaiting it when the
      // export is made (the authority stays away until then, so the queue cannot send it first).
      await c.post('/api/v1/sandbox/autoridade', { disponivel: false });
      const offline = contingencyXml(company, 6);
      const pending = await c.post('/api/v1/nfce', { xml: offline.xml });
      expect(pending.status, pending.text).toBe(202);

      const { res, entries } = await exportOf(company, 'nfce', today);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="nfce-${company.cnpj}-${today}-a-${today}.zip"`);
      // Streamed as it is written: no length known in advance.
      expect(res.headers.get('content-length')).toBeNull();
      expect(res.headers.get('transfer-encoding')).toBe('chunked');

      const keys = [...authorized.map((d) => d.chave as string), offline.key];
      expect([...entries.keys()].sort()).toEqual(
        [...keys.map((k) => `${k}-nfce.xml`), `${authorized[1].chave}-evento-110111.xml`, 'inutilizacao-serie-1-numeros-4-a-5.xml', 'resumo.csv'].sort(),
      );
      for (const d of authorized) expectValid(entries.get(`${d.chave}-nfce.xml`), 'procNFe', d.chave);
      expectValid(entries.get(`${offline.key}-nfce.xml`), 'nfe', offline.key);
      expectValid(entries.get(`${authorized[1].chave}-evento-110111.xml`), 'procEventoCancNFe', 'evento');
      expectValid(entries.get('inutilizacao-serie-1-numeros-4-a-5.xml'), 'procInutNFe', 'inutilização');

      const rows = summaryOf(entries);
      const nfce = rows.filter((r) => r.documento === 'nfce');
      expect(nfce.map((r) => [r.numero, r.situacao, r.contingencia])).toEqual([
        ['1', 'autorizada', 'nao'],
        ['2', 'cancelada', 'nao'],
        ['3', 'autorizada', 'nao'],
        ['6', 'contingencia_pendente', 'sim'],
      ]);
      // Each value is the document's own vNF, and its payments add up to it with the change.
      for (const r of nfce) {
        const doc = authorized.find((d) => d.chave === r.chave);
        if (doc) expect(cents(r.valor_total!)).toBe(cents(doc.valor_total));
        const paid = Object.entries(r)
          .filter(([k]) => k.startsWith('pagamento_'))
          .reduce((s, [, v]) => s + cents(v), 0);
        expect(paid - cents(r.troco!)).toBe(cents(r.valor_total!));
      }
      expect(rows.find((r) => r.documento === 'inutilizacao')).toMatchObject({ serie: '1', numero: '4 a 5', situacao: 'inutilizada' });
      expect(rows.find((r) => r.documento === 'evento_110111')).toMatchObject({ chave: authorized[1].chave, situacao: 'cancelada' });
    });

    it('counts days in Brasília, knows nothing of another company, and refuses a malformed period naming the field', async () => {
      const company = await registerCompany(service.url, storage);
      const other = await registerCompany(service.url, storage);
      await waitFor(company.client, (await company.client.post('/api/v1/nfce', nfceBody(1))).body.id);
      const today = brasiliaDay(new Date());
      const yesterday = brasiliaDay(new Date(Date.now() - 24 * 3600_000));
      expect([...(await exportOf(company, 'nfce', yesterday)).entries.keys()]).toEqual(['resumo.csv']);
      expect([...(await exportOf(other, 'nfce', today)).entries.keys()]).toEqual(['resumo.csv']);
      expect((await exportOf(company, 'nfce', yesterday, today)).entries.size).toBe(2);

      for (const [query, field] of [
        ['de=2026-02-30&ate=2026-03-01', 'de'],
        ['de=2026-03-02&ate=2026-03-01', 'de'],
        ['de=2025-01-01&ate=2026-03-01', 'ate'],
        ['de=2026-03-01', 'ate'],
      ] as const) {
        const res = await company.client.get(`/api/v1/nfce/exportacao?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.body.error.code).toBe('requisicao_invalida');
        expect(
          res.body.error.details.map((d: { field: string }) => d.field),
          query,
        ).toContain(field);
      }
    });
  });

  describe('the OpenAPI document', () => {
    it('describes both exports (the period, the ZIP) and the terminals registry', async () => {
      const doc = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const kind of ['nfce', 'mdfe']) {
        const op = doc.paths[`/api/v1/${kind}/exportacao`]!.get;
        expect(op.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required])).toEqual([
          ['de', 'query', true],
          ['ate', 'query', true],
        ]);
        expect(Object.keys(op.responses['200'].content)).toEqual(['application/zip']);
        expect(op.responses['400']).toBeDefined();
      }
      expect(Object.keys(doc.paths['/api/v1/terminais/{terminal}']!)).toEqual(expect.arrayContaining(['put', 'get', 'delete']));
      expect(doc.paths['/api/v1/terminais/{terminal}']!.put.responses['409']).toBeDefined();
    });
  });

  describe('GET /api/v1/mdfe/exportacao', () => {
    it('holds each authorized manifest once with its closing or cancellation event, and a summary', async () => {
      const company = await registerCompany(service.url, storage, { cnpj: generateCnpj({ version: 2 }) });
      const c = company.client;
      // The parties (contratante, pagamento, seguro, proprietário) with letters in their CNPJ too.
      const party = generateCnpj({ version: 2 });
      const manifest = (nMDF: number, placa: string) => {
        const r = sampleMdfeRequest({ nMDF, placa });
        r.tpTransp = '2';
        r.rodo.veicTracao.prop = { CNPJ: party, RNTRC: '87654321', xNome: 'Frota Terceira Ltda', UF: 'MG', tpProp: '2' };
        r.rodo.infContratante = [{ xNome: 'Contratante Ltda', CNPJ: party }];
        r.rodo.infPag![0]!.CNPJ = party;
        r.seg = { ...(r.seg as object), respSeg: '2', CNPJ: party, seg_CNPJ: party } as typeof r.seg;
        return r;
      };
      const issued = [];
      for (const [nMDF, placa] of [
        [1, 'ABC1D23'],
        [2, 'DEF4G56'],
        [3, 'HIJ7K89'],
      ] as const) {
        const res = await c.post('/api/v1/mdfe/emitir', manifest(nMDF, placa));
        expect(res.status, res.text).toBe(201);
        issued.push(res.body);
      }
      expect((await c.post(`/api/v1/mdfe/${issued[0].mdfe_id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' })).status).toBe(200);
      expect((await c.post(`/api/v1/mdfe/${issued[1].mdfe_id}/cancelar`, { justificativa: 'Viagem desistida pelo contratante' })).status).toBe(200);

      const today = brasiliaDay(new Date());
      const { res, entries } = await exportOf(company, 'mdfe', today);
      expect(res.status).toBe(200);
      expect([...entries.keys()].sort()).toEqual(
        [...issued.map((m) => `${m.chave}-mdfe.xml`), `${issued[0].chave}-evento-110112.xml`, `${issued[1].chave}-evento-110111.xml`, 'resumo.csv'].sort(),
      );
      for (const m of issued) expectValid(entries.get(`${m.chave}-mdfe.xml`), 'procMDFe', m.chave);
      expectValid(entries.get(`${issued[0].chave}-evento-110112.xml`), 'procEventoMDFe', 'encerramento');
      expectValid(entries.get(`${issued[1].chave}-evento-110111.xml`), 'procEventoMDFe', 'cancelamento');
      const rows = summaryOf(entries).filter((r) => r.documento === 'mdfe');
      expect(rows.map((r) => [r.numero, r.situacao, r.placa])).toEqual([
        ['1', 'encerrado', 'ABC1D23'],
        ['2', 'cancelado', 'DEF4G56'],
        ['3', 'autorizado', 'HIJ7K89'],
      ]);
    });
  });

  describe('a day at the checkout: the ZIP the manager exports against the manager’s report', () => {
    it('holds each authorized, cancelled and contingency receipt once, valid, with its event, and a summary whose totals and cancellations equal the report’s and its CSV’s, line by line', async () => {
      const company = await storeCompanyWithCertificate(storage);
      const terminal = await testTerminal({ serviceUrl: service.url, token: company.token, series: 1, printerTransport: new MemoryPrinter() });
      terminals.push(terminal);
      const manager = await terminal.createManager({ name: 'Gerente Ana', pin: '2580' });
      const auth = { managerId: manager.id, pin: '2580' };
      await setUpContingency(terminal, company, auth);
      const sandbox = api(service.url, company.token);

      const sell = async (codes: string[], pay: (total: number) => { tPag: string; amountCents: number; card?: { tpIntegra: '2'; tBand: string } }[]) => {
        let sale = await terminal.openSale();
        for (const code of codes) sale = await terminal.addItem(sale.id, { code });
        for (const p of pay(sale.totalCents)) sale = await terminal.addPayment(sale.id, p);
        return (await terminal.finishSale(sale.id)).receipt;
      };
      const cash = (total: number) => [{ tPag: '01', amountCents: Math.ceil(total / 1000) * 1000 + 1000 }];
      const card = (total: number) => [{ tPag: '03', amountCents: total, card: { tpIntegra: '2' as const, tBand: '01' } }];
      // PIX without its card group (the terminal writes it: tpIntegra 2) and PIX Automático (2026).
      const split = (total: number) => [
        { tPag: '17', amountCents: 500 },
        { tPag: '23', amountCents: 300 },
        { tPag: '01', amountCents: total },
      ];

      const online = [await sell(['1001', '1002'], cash), await sell(['1003'], card), await sell(['1004', '1001'], split), await sell(['1005'], cash)];
      const authorized = async (ids: string[]) =>
        eventually('NFC-e autorizadas', async () => {
          const views = await Promise.all(ids.map((id) => terminal.getReceipt(id)));
          return views.every((v) => v.state === 'authorized') && views;
        });
      await authorized(online.map((r) => r.id));
      const cancelled = await terminal.cancelReceipt(online[1]!.id, { ...auth, justification: JUSTIFICATIVA });
      expect(cancelled.state).toBe('cancelled');

      // The authority stops answering: a sale sent online stalls there, the terminal goes into
      // contingency by itself (the service says so when asked about that sale) and issues it
      // again offline with a new number; another sale is
      // issued offline. Once the authority answers again, everything is authorized, the stalled
      // attempt too, and the terminal cancels that one by substitution (110112).
      expect((await sandbox.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
      const stalled = await sell(['1007'], cash);
      expect(stalled.contingency).toBe(false);
      await eventually('contingência pela SEFAZ sem resposta', async () => (await terminal.contingencyStatus()).active);
      const offline = [await terminal.getReceipt(stalled.id), await sell(['1008', '1002'], card)];
      expect(offline.map((r) => [r.contingency, r.nNF])).toEqual([
        [true, stalled.nNF + 1],
        [true, stalled.nNF + 2],
      ]);
      expect((await sandbox.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
      await authorized(offline.map((r) => r.id));
      const [attempt] = await eventually('a primeira tentativa cancelada por substituição', async () => {
        const view = await terminal.getReceipt(stalled.id);
        return view.superseded.every((a) => a.state === 'cancelled_by_substitution') && view.superseded;
      });
      expect(attempt).toMatchObject({ serie: 1, nNF: stalled.nNF, chave: expect.stringMatching(/^\d{44}$/), state: 'cancelled_by_substitution' });

      const today = brasiliaDay(new Date());
      const report = await terminal.salesReport({ ...auth, de: today, ate: today });
      // The same report from receipts written before the daily totals existed (their migration
      // marks them pending): each read from its XML once, when a report first covers it.
      terminal.store.db.exec(`UPDATE report_receipts SET bucket = 'pending', day = NULL, dh_emi = NULL, tp_emis = NULL, vnf_cents = NULL, facts = NULL;
        DELETE FROM report_days; DELETE FROM report_day_payments; DELETE FROM report_day_hours; DELETE FROM report_day_products;`);
      expect({ ...(await terminal.salesReport({ ...auth, de: today, ate: today })), generatedAt: report.generatedAt }).toEqual(report);
      expect(terminal.store.db.prepare(`SELECT count(*) FROM report_receipts WHERE bucket = 'pending'`).pluck().get()).toBe(0);
      const reportCsv = parse(salesReportCsv(report).csv.slice(1), { delimiter: ';', columns: true }) as Record<string, string>[];
      const exported = await terminal.exportDocuments({ ...auth, kind: 'nfce', de: today, ate: today });
      expect(exported).toMatchObject({ fileName: `nfce-${company.cnpj}-${today}-a-${today}.zip`, notTransmitted: 0 });
      const entries = await readZip(readFileSync(exported.path));
      expect(exported.bytes).toBe(readFileSync(exported.path).length);

      // Each receipt once, by key, valid against procNFe; each cancellation's event beside it.
      const receipts = await Promise.all([...online, ...offline].map((r) => terminal.getReceipt(r.id)));
      const keys = [...receipts.map((r) => r.chave!), attempt!.chave!];
      expect([...entries.keys()].sort()).toEqual(
        [...keys.map((k) => `${k}-nfce.xml`), `${cancelled.chave}-evento-110111.xml`, `${attempt!.chave}-evento-110112.xml`, 'resumo.csv'].sort(),
      );
      for (const k of keys) expectValid(entries.get(`${k}-nfce.xml`), 'procNFe', k);
      expectValid(entries.get(`${cancelled.chave}-evento-110111.xml`), 'procEventoCancNFe', 'evento');

      // The summary against the report: count, total, change, each payment method, the
      // cancellations and the contingency receipts.
      const summary = summaryOf(entries);
      const rows = summary.filter((r) => r.documento === 'nfce');
      const sales = rows.filter((r) => r.situacao === 'autorizada' || r.situacao === 'contingencia_pendente');
      const sum = (list: Record<string, string>[], column: string) => list.reduce((t, r) => t + cents(r[column] ?? '0'), 0);
      expect(report.totals).toEqual({ count: sales.length, totalCents: sum(sales, 'valor_total'), changeCents: sum(sales, 'troco') });
      expect(report.byPayment.map((p) => [p.tPag, p.description])).toEqual([
        ['01', 'Dinheiro'],
        ['03', 'Cartão de Crédito'],
        ['17', 'PIX Dinâmico'],
        ['23', 'PIX Automático'],
      ]);
      expect(report.byPayment.map((p) => [p.tPag, p.amountCents])).toEqual(
        Object.keys(rows[0]!)
          .filter((c) => c.startsWith('pagamento_'))
          .map((c) => [c.slice('pagamento_'.length), sum(sales, c)] as const)
          .filter(([, v]) => v > 0),
      );
      expect(report.contingency.map((c) => c.chave).sort()).toEqual(
        rows
          .filter((r) => r.contingencia === 'sim')
          .map((r) => r.chave)
          .sort(),
      );
      expect(report.contingency.every((c) => c.authorized)).toBe(true);

      // The cancellations, line by line: every cancelled NFC-e of the file, with the kind its
      // event says (110111 by the manager, 110112 by substitution), in the report and its CSV.
      const eventOf = new Map(summary.filter((r) => r.documento!.startsWith('evento_')).map((r) => [r.chave, r.documento!.slice('evento_'.length)]));
      const inFile = rows
        .filter((r) => r.situacao === 'cancelada')
        .sort((a, b) => Number(a.serie) - Number(b.serie) || Number(a.numero) - Number(b.numero))
        .map((r) => [`${r.serie}-${r.numero}`, eventOf.get(r.chave!) === '110112' ? 'substituicao' : 'cancelamento', r.chave, r.valor_total]);
      expect(inFile).toEqual([
        [`1-${cancelled.nNF}`, 'cancelamento', cancelled.chave, csvMoney(BigInt(cancelled.totalCents))],
        [`1-${stalled.nNF}`, 'substituicao', attempt!.chave, csvMoney(BigInt(stalled.totalCents))],
      ]);
      expect(report.cancelled.map((c) => [`${c.serie}-${c.nNF}`, c.kind, c.chave, csvMoney(BigInt(c.totalCents))])).toEqual(inFile);
      expect(report.cancelled[1]).toMatchObject({ substitute: { serie: 1, nNF: stalled.nNF + 1 }, receiptId: stalled.id });
      expect(
        reportCsv
          .filter((r) => r.secao!.startsWith('cancelada'))
          .map((r) => [r.item, r.secao === 'cancelada_substituicao' ? 'substituicao' : 'cancelamento', r.descricao, r.valor]),
      ).toEqual(inFile);

      // And both are the sales' own amounts: five sales stand (the stalled one on its
      // contingency receipt), one was cancelled.
      const standing = [...online, ...offline].filter((r) => r.id !== online[1]!.id);
      expect(report.totals).toMatchObject({ count: 5, totalCents: standing.reduce((t, r) => t + r.totalCents, 0) });
      expect(report.byHour.reduce((t, h) => t + h.totalCents, 0)).toBe(report.totals.totalCents);
      expect(report.byProduct.reduce((t, p) => t + p.totalCents, 0)).toBe(report.totals.totalCents);
      expect(report.byProduct.find((p) => p.code === '1001')).toMatchObject({ quantity: '2' });
      // In homologação each receipt's first xProd is the mandatory text: the report names the
      // products as the catalog does.
      for (const p of report.byProduct) expect(p.description, p.code).toBe((await terminal.findProducts(p.code, 1))[0]!.description);
    });
  });
});
