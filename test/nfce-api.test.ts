// NFC-e over real HTTP against the real `balcao service` process (docs/api.md, "Errors" and "NFC-e",
// section 5 where the NFC-e uses it): issuance, the detail query, the XML and the DANFE,
// cancellation (plain and by substitution) in and out of its windows, inutilização, the offline
// contingency upload, the webhook events, and the OpenAPI description.

import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { danfeModel } from '../fiscal/danfe/model.ts';
import { buildNfce, REJECTION_TEXTS, signBuiltNfce } from '../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { validateXml } from '../fiscal/schema.ts';
import { decodeEscPos } from './escpos-decoder.ts';
import { cardWithoutGroup, cardWithoutIntegrationData, contingencyXml, nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { api, runCli, startService, storageArgs, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { SETUPS, testStorage, type TestStorage } from './helpers/stores.ts';

// The whole suite runs on SQLite with the sandbox authority in-process and over the wire (the
// SEFAZ connector against the SEFAZ simulator, HTTPS with mutual TLS on loopback), and on
// PostgreSQL (helpers/stores.ts SETUPS).
describe.each(SETUPS)('on $store, over the $transport authority', ({ store, transport }) => {
  let service: ServiceProcess;
  let storage: TestStorage;
  let a: TestCompany;
  let b: TestCompany;

  const BRASILIA = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/;
  const contractError = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  const JUSTIFICATIVA = 'Cliente desistiu da compra no caixa';

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database, transport });
    a = await registerCompany(service.url, storage);
    b = await registerCompany(service.url, storage);
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  /** POSTs a JSON NFC-e and waits for its verdict. */
  async function issue(company: TestCompany, nNF: number, headers: Record<string, string> = {}) {
    const res = await company.client.post('/api/v1/nfce', nfceBody(nNF), { headers });
    expect(res.status, res.text).toBe(202);
    return waitFor(company.client, res.body.id);
  }

  describe('POST /api/v1/nfce and GET /api/v1/nfce/{id}', () => {
    it('accepts with 202 { id, chave, status: processando, message }, then shows the authorized receipt with every field', async () => {
      const res = await a.client.post('/api/v1/nfce', nfceBody(1), { headers: { 'idempotency-key': 'venda-1' } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        id: expect.any(String),
        chave: expect.stringMatching(/^35\d{42}$/),
        status: 'processando',
        message: expect.any(String),
        autoridade: expect.objectContaining({ situacao: expect.stringMatching(/^(desconhecida|disponivel)$/) }),
      });
      expect(Object.keys(res.body).sort()).toEqual(['autoridade', 'chave', 'id', 'message', 'status']);

      const doc = await waitFor(a.client, res.body.id);
      expect(doc).toMatchObject({
        id: res.body.id,
        chave: res.body.chave, // the key of the 202 is final
        numero: 1,
        serie: 1,
        status: 'autorizado',
        codigo_status: '100',
        motivo: 'Autorizado o uso da NF-e',
        protocolo: expect.stringMatching(/^\d{15}$/),
        cancelado_em: null,
        valor_total: '110.83',
        qrcode: expect.stringContaining(`?p=${res.body.chave}|2|2|`),
        url_consulta: expect.stringMatching(/^https:\/\//),
        contingencia: false,
        ambiente: 'homologacao',
        referencia_externa: 'venda-1',
      });
      expect(doc.autorizado_em).toMatch(BRASILIA);
      expect(doc.emitido_em).toMatch(BRASILIA);
      expect(doc.criado_em).toMatch(BRASILIA);

      // A lost 202 is found again by its idempotency key, and by its access key.
      const found = await a.client.get('/api/v1/nfce?referencia_externa=venda-1');
      expect(found.body).toMatchObject({ total: 1, proximo_cursor: null });
      expect(found.body.data).toEqual([doc]);
      expect((await a.client.get(`/api/v1/nfce/chave/${doc.chave}`)).body).toEqual(doc);
    });

    it('Prefer: wait answers the usual 202, with Location and Preference-Applied, when the authority is later than the wait', async () => {
      const c = await registerCompany(service.url, storage);
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 4000 });
      const res = await c.client.post('/api/v1/nfce', nfceBody(1), { headers: { prefer: 'wait=1' } });
      expect(res.status, res.text).toBe(202);
      expect(res.body).toMatchObject({ id: expect.any(String), status: 'processando' });
      expect(res.headers.get('location')).toBe(`/api/v1/nfce/${res.body.id}`);
      expect(res.headers.get('preference-applied')).toBe('wait=1');
      await c.client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
      expect((await waitFor(c.client, res.body.id)).status).toBe('autorizado');
    });

    it('computes vTotTrib when absent and defaults card.tpIntegra to 2', async () => {
      const body = nfceBody(2);
      body.pag = [{ tPag: '03', vPag: body.total.vNF, card: { tBand: '01' } }];
      const res = await a.client.post('/api/v1/nfce', body);
      expect(res.status).toBe(202);
      const doc = await waitFor(a.client, res.body.id);
      expect(doc.status).toBe('autorizado');
      const xml = (await a.client.get(`/api/v1/nfce/${res.body.id}/xml`)).text;
      expect(xml).toMatch(/<card><tpIntegra>2<\/tpIntegra>/);
      expect(xml).toMatch(/<ICMSTot>.*<vTotTrib>\d+\.\d{2}<\/vTotTrib>/);
    });

    it('401 without a valid token', async () => {
      const anonymous = api(service.url);
      for (const [method, path] of [
        ['POST', '/api/v1/nfce'],
        ['GET', '/api/v1/nfce/x'],
        ['POST', '/api/v1/nfce/inutilizar'],
      ] as const) {
        const res = await anonymous.request(method, path, { body: method === 'POST' ? nfceBody(3) : undefined });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(contractError('nao_autorizado'));
      }
    });

    it('415 for a body that is not JSON, 413 over 1 MiB, 400 for malformed JSON', async () => {
      const text = await a.client.post('/api/v1/nfce', JSON.stringify(nfceBody(3)), { headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      expect(text.body).toEqual(contractError('tipo_de_conteudo_invalido'));
      const big = nfceBody(3, { infCpl: 'x'.repeat(1024 * 1024) });
      const large = await a.client.post('/api/v1/nfce', big);
      expect(large.status).toBe(413);
      expect(large.body).toEqual(contractError('payload_muito_grande'));
      const malformed = await a.client.post('/api/v1/nfce', '{"ide": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual(contractError('requisicao_invalida'));
    });

    it('400 requisicao_invalida naming every field with a wrong type, missing or not allowed', async () => {
      const body = { ...nfceBody(3), ide: { serie: 1, nNF: '3' }, campo: 1 } as Record<string, unknown>;
      delete body.pag;
      const res = await a.client.post('/api/v1/nfce', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('requisicao_invalida');
      expect(res.body.error.details).toEqual(
        expect.arrayContaining([
          { field: 'ide.nNF', message: 'deve ser número inteiro' },
          { field: 'pag', message: 'obrigatório' },
          { field: 'campo', message: 'campo não permitido' },
        ]),
      );
      const noNumber = nfceBody(3) as { ide: Record<string, unknown> };
      delete noNumber.ide.nNF;
      const missing = await a.client.post('/api/v1/nfce', noNumber);
      expect(missing.status).toBe(400);
      expect(missing.body.error.details).toEqual([{ field: 'ide.nNF', message: 'obrigatório' }]);
      const xmlWrongType = await a.client.post('/api/v1/nfce', { xml: 5 });
      expect(xmlWrongType.status).toBe(400);
      expect(xmlWrongType.body.error.details).toEqual([{ field: 'xml', message: 'deve ser texto' }]);
    });

    it('422 validacao with the fields the fiscal rules refuse, and nothing is created', async () => {
      const body = nfceBody(4);
      body.det[0]!.prod.NCM = '1234';
      body.pag[0]!.tPag = '77';
      body.dest = { cpf: '123' };
      const res = await a.client.post('/api/v1/nfce', body, { headers: { 'idempotency-key': 'invalida-4' } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validacao');
      const fields = (res.body.error.details as { field: string }[]).map((d) => d.field);
      expect(fields).toEqual(['dest.cpf', 'det[0].prod.NCM', 'pag[0].tPag']);
      // The key was never claimed: the corrected body under the same key is a first call.
      const fixed = await a.client.post('/api/v1/nfce', nfceBody(4), { headers: { 'idempotency-key': 'invalida-4' } });
      expect(fixed.status).toBe(202);
    });

    it('400 names the value problems of the well-shaped parts beside the shape’s, all at once; the key stays free', async () => {
      const body = nfceBody(7) as unknown as { ide: Record<string, unknown>; det: { prod: Record<string, unknown> }[]; pag: Record<string, unknown>[] };
      delete body.ide.nNF;
      body.det[0]!.prod.NCM = '1234';
      body.pag[0]!.vPag = 5.29;
      const res = await a.client.post('/api/v1/nfce', body, { headers: { 'idempotency-key': 'forma-e-valor-7' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('requisicao_invalida');
      // The shape's first; the NCM's value beside them; nothing about pag[0].vPag's value, whose shape is wrong.
      expect(res.body.error.details).toEqual([
        { field: 'ide.nNF', message: 'obrigatório' },
        { field: 'pag[0].vPag', message: 'deve ser texto' },
        { field: 'det[0].prod.NCM', message: expect.stringContaining('8 dígitos') },
      ]);
      const fixed = await a.client.post('/api/v1/nfce', nfceBody(7), { headers: { 'idempotency-key': 'forma-e-valor-7' } });
      expect(fixed.status).toBe(202);
    });

    it('422 csc_nao_configurado for a company without a CSC', async () => {
      const noCsc = await registerCompany(service.url, storage, { csc: false });
      const res = await noCsc.client.post('/api/v1/nfce', nfceBody(1));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(contractError('csc_nao_configurado'));
      const xml = await noCsc.client.post('/api/v1/nfce', { xml: contingencyXml(noCsc, 1).xml });
      expect(xml.status).toBe(422);
      expect(xml.body.error.code).toBe('csc_nao_configurado');
    });

    it('404 nao_encontrado for an unknown id and for another company’s document, on every route', async () => {
      const doc = await issue(a, 5);
      for (const [method, path] of [
        ['GET', ''],
        ['GET', '/xml'],
        ['GET', '/danfe'],
        ['POST', '/cancelar'],
      ] as const) {
        const body = method === 'POST' ? { justificativa: JUSTIFICATIVA } : undefined;
        const foreign = await b.client.request(method, `/api/v1/nfce/${doc.id}${path}`, { body });
        expect(foreign.status, path).toBe(404);
        expect(foreign.body).toEqual(contractError('nao_encontrado'));
        const unknown = await a.client.request(method, `/api/v1/nfce/00000000-0000-4000-8000-000000000000${path}`, { body });
        expect(unknown.status, path).toBe(404);
        expect(unknown.body).toEqual(foreign.body);
      }
      expect((await a.client.get(`/api/v1/nfce/${doc.id}`)).body.status).toBe('autorizado');
    });
  });

  describe('XML and DANFE', () => {
    it('GET /xml: the nfeProc of an authorized receipt, valid against procNFe_v4.00.xsd', async () => {
      const doc = await issue(a, 10);
      const res = await a.client.get(`/api/v1/nfce/${doc.id}/xml`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(res.text).toMatch(/^<nfeProc /);
      expect(res.text).toContain(`<chNFe>${doc.chave}</chNFe>`);
      expect(res.text).toContain(`<nProt>${doc.protocolo}</nProt>`);
      expect(validateXml(res.text, 'procNFe')).toEqual({ valid: true, errors: [] });
    });

    it('GET /danfe: the 80 mm receipt as PDF by default and as ESC/POS for 48 columns', async () => {
      const doc = await issue(a, 11);
      const pdf = await a.client.request('GET', `/api/v1/nfce/${doc.id}/danfe`);
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      expect(pdf.text.startsWith('%PDF-')).toBe(true);

      const res = await fetch(`${service.url}/api/v1/nfce/${doc.id}/danfe?formato=escpos`, { headers: { authorization: `Bearer ${a.token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      const printed = decodeEscPos(new Uint8Array(await res.arrayBuffer()));
      expect(Math.max(...printed.lines.map((l) => l.columns))).toBeLessThanOrEqual(48);
      expect(printed.lines.some((l) => l.columns === 48)).toBe(true);
      expect(printed.qrCodes.map((q) => q.payload)).toEqual([doc.qrcode]);
      expect(printed.toString()).not.toContain('CANCELADA');

      const bad = await a.client.get(`/api/v1/nfce/${doc.id}/danfe?formato=zpl`);
      expect(bad.status).toBe(400);
    });

    it('a numeric store names a consumer and a card acquirer with alphanumeric CNPJs: lower case or a wrong check digit is 422 naming the field; then authorized, in the XML and on the DANFE with the letters', async () => {
      const acquirer = generateCnpj({ version: 2 }); // letters wherever the generator drew them
      const wrongDigit = acquirer.slice(0, 13) + ((Number(acquirer[13]) + 1) % 10);
      const body = (dest: string, card: string) => {
        const b = sampleNfceRequest({ nNF: 14, payment: 'card' });
        b.dest = { cnpj: dest, xNome: 'Distribuidora Alfa Ltda' };
        b.pag[0]!.card = { tpIntegra: '1', CNPJ: card, cAut: 'AUT123', CNPJReceb: acquirer, tBand: '01' };
        return b;
      };
      const refused = await a.client.post('/api/v1/nfce', body('12abc34501de35', wrongDigit));
      expect(refused.status).toBe(422);
      expect(refused.body.error.details).toEqual([
        { field: 'dest.cnpj', message: expect.stringContaining('letras maiúsculas') },
        { field: 'pag[0].card.CNPJ', message: 'CNPJ inválido (dígito verificador não confere)' },
      ]);

      const accepted = await a.client.post('/api/v1/nfce', body('12ABC34501DE35', acquirer));
      expect(accepted.status, accepted.text).toBe(202);
      const doc = await waitFor(a.client, accepted.body.id);
      expect(doc.status, doc.motivo).toBe('autorizado');
      const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      expect(validateXml(xml, 'procNFe')).toEqual({ valid: true, errors: [] });
      expect(xml).toContain('<dest><CNPJ>12ABC34501DE35</CNPJ>');
      expect(xml).toContain(`<card><tpIntegra>1</tpIntegra><CNPJ>${acquirer}</CNPJ>`);
      expect(xml).toContain(`<CNPJReceb>${acquirer}</CNPJReceb>`);
      const res = await fetch(`${service.url}/api/v1/nfce/${doc.id}/danfe?formato=escpos`, { headers: { authorization: `Bearer ${a.token}` } });
      expect(decodeEscPos(new Uint8Array(await res.arrayBuffer())).toString()).toContain('CONSUMIDOR - CNPJ 12.ABC.345/01DE-35');
    });

    it('rejected receipt: its XML is the signed NFe, it has no DANFE (422 estado_invalido) and cannot be cancelled', async () => {
      const res = await a.client.post('/api/v1/nfce', cardWithoutGroup(12));
      const doc = await waitFor(a.client, res.body.id);
      expect(doc).toMatchObject({ status: 'rejeitado', codigo_status: '391', protocolo: null, autorizado_em: null });
      expect(doc.motivo).toMatch(/^Rejeição: Não informados os dados do cartão/);
      const xml = await a.client.get(`/api/v1/nfce/${doc.id}/xml`);
      expect(xml.status).toBe(200);
      expect(xml.text).toMatch(/^<NFe /);
      expect(validateXml(xml.text, 'nfe').valid).toBe(true);
      const danfe = await a.client.get(`/api/v1/nfce/${doc.id}/danfe`);
      expect(danfe.status).toBe(422);
      expect(danfe.body).toEqual(contractError('estado_invalido'));
      const cancel = await a.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(cancel.status).toBe(422);
      expect(cancel.body).toEqual(contractError('estado_invalido'));
    });
  });

  describe('payments as of 2026 (docs/fiscal.md, "Payments"; their dates: test/law-by-date.test.ts)', () => {
    it('PIX Automático (23) and TEF Book Transfer (24) are authorized and named on the DANFE', async () => {
      const body = nfceBody(70);
      body.pag = [
        { tPag: '23', vPag: '60.00' },
        { tPag: '24', vPag: '50.83' },
      ];
      const doc = await waitFor(a.client, (await a.client.post('/api/v1/nfce', body)).body.id);
      expect([doc.status, doc.codigo_status]).toEqual(['autorizado', '100']);
      const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      expect(xml.match(/<tPag>[0-9]{2}<\/tPag>/g)).toEqual(['<tPag>23</tPag>', '<tPag>24</tPag>']);
      const payments = danfeModel(xml)
        .divisions.find((d) => d.id === 'pagamentos')!
        .lines.flatMap((l) => (l.kind === 'pair' ? [l.label] : []));
      expect(payments).toEqual(
        expect.arrayContaining(['Pagamento Instantâneo (PIX) – Automático', 'Transferência Eletrônica de Fundos (TEF) – Book Transfer']),
      );
    });

    it('a dynamic PIX (17) without the card group: 422 naming pag[0].card; signed at the checkout without it, the authority rejects it 391', async () => {
      const body = nfceBody(71);
      body.pag = [{ tPag: '17', vPag: body.total.vNF }];
      const refused = await a.client.post('/api/v1/nfce', body);
      expect(refused.status).toBe(422);
      expect(refused.body.error.details).toEqual([{ field: 'pag[0].card', message: expect.stringContaining('rejeição 391') }]);
      // An offline receipt signed without it (as another emitter would): the authority's rule judges it.
      const dhEmi = new Date();
      const ctx = {
        emitter: demoEmitter({ cnpj: a.cnpj }),
        credentials: a.certificate,
        dhEmi,
        tpEmis: 9 as const,
        contingency: { dhCont: new Date(dhEmi.getTime() - 60_000), xJust: 'Sem conexao com a internet no caixa da loja' },
      };
      const built = buildNfce({ ...body, pag: [{ tPag: '17', vPag: body.total.vNF, card: { tpIntegra: '2' } }] }, ctx);
      const withoutCard = built.xml.replace('<card><tpIntegra>2</tpIntegra></card>', '');
      expect(withoutCard).not.toBe(built.xml);
      const sent = await a.client.post('/api/v1/nfce', { xml: signBuiltNfce({ ...built, xml: withoutCard }, ctx).xml });
      expect(sent.status, sent.text).toBe(202);
      const doc = await waitFor(a.client, sent.body.id);
      expect([doc.status, doc.codigo_status, doc.motivo]).toEqual(['rejeitado', '391', `Rejeição: ${REJECTION_TEXTS[391]}`]);
    });
  });

  describe('rejection 392: integrated card payment without its operation data', () => {
    it('tpIntegra 1 without CNPJ and cAut → rejeitado 392 with the authority’s text; the corrected retry under the same key is authorized with the same number', async () => {
      const rejectedBody = cardWithoutIntegrationData(13);
      const first = await a.client.post('/api/v1/nfce', rejectedBody, { headers: { 'idempotency-key': 'cartao-integrado-13' } });
      expect(first.status, first.text).toBe(202);
      const rejected = await waitFor(a.client, first.body.id);
      expect(rejected).toMatchObject({
        id: first.body.id,
        chave: first.body.chave,
        numero: 13,
        status: 'rejeitado',
        codigo_status: '392',
        motivo: 'Rejeição: Não informados os dados da operação de pagamento por cartão de crédito / débito',
        protocolo: null,
        autorizado_em: null,
      });
      // What the authority judged: the integrated card group without CNPJ and cAut.
      const xml = await a.client.get(`/api/v1/nfce/${first.body.id}/xml`);
      expect(xml.text).toMatch(/^<NFe /);
      expect(xml.text).toContain('<card><tpIntegra>1</tpIntegra><tBand>01</tBand></card>');

      // The rejection freed the key and the number: the acquirer's data added, it is a new attempt.
      const corrected = cardWithoutIntegrationData(13);
      corrected.pag[0]!.card = { tpIntegra: '1', CNPJ: '60701190000104', tBand: '01', cAut: 'A1B2C3' };
      const retry = await a.client.post('/api/v1/nfce', corrected, { headers: { 'idempotency-key': 'cartao-integrado-13' } });
      expect(retry.status, retry.text).toBe(202);
      expect(retry.body.id).not.toBe(first.body.id);
      expect(await waitFor(a.client, retry.body.id)).toMatchObject({ status: 'autorizado', codigo_status: '100', numero: 13 });
      expect((await a.client.get(`/api/v1/nfce/${first.body.id}`)).body).toMatchObject({ status: 'rejeitado', codigo_status: '392' });
    });
  });

  describe('cancellation (POST /api/v1/nfce/{id}/cancelar)', () => {
    it('within 30 minutes → 200 cancelado; again → 422 estado_invalido, the document unchanged; the number stays consumed', async () => {
      const c = await registerCompany(service.url, storage);
      const doc = await issue(c, 1);
      await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 29 });
      const res = await c.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: doc.id, status: 'cancelado', protocolo: doc.protocolo, autorizado_em: doc.autorizado_em });
      expect(res.body.cancelado_em).toMatch(BRASILIA);
      expect(res.body.protocolo_cancelamento).toMatch(/^\d{15}$/);
      // Both verdicts side by side: the authorization's cStat and the cancellation's.
      expect(res.body).toMatchObject({
        codigo_status: '100',
        codigo_status_cancelamento: '135',
        motivo_cancelamento: expect.stringContaining('Evento registrado'),
      });
      expect(res.body.protocolo_cancelamento).not.toBe(doc.protocolo);
      expect((await c.client.get(`/api/v1/nfce/${doc.id}`)).body).toEqual(res.body);

      // Cancelled is not authorized: a second cancellation is refused as for any other state
      // (as the MDF-e does); a client whose answer was lost reads the state with GET.
      const again = await c.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(again.status).toBe(422);
      expect(again.body).toEqual(contractError('estado_invalido'));
      expect(again.body.error.message).toContain('cancelada');
      expect((await c.client.get(`/api/v1/nfce/${doc.id}`)).body).toEqual(res.body);

      // Still the authorized nfeProc; the DANFE now carries the cancelled mark.
      const xml = await c.client.get(`/api/v1/nfce/${doc.id}/xml`);
      expect(validateXml(xml.text, 'procNFe').valid).toBe(true);
      const escpos = await fetch(`${service.url}/api/v1/nfce/${doc.id}/danfe?formato=escpos`, { headers: { authorization: `Bearer ${c.token}` } });
      expect(decodeEscPos(new Uint8Array(await escpos.arrayBuffer())).toString()).toContain('CANCELADA');
      const pdf = await c.client.get(`/api/v1/nfce/${doc.id}/danfe`);
      expect(pdf.status).toBe(200);

      // The event is stored as procEventoNFe (110111), valid against its schema.
      const evento = await storage.db.value<string>('SELECT evento_xml FROM nfce_documents WHERE id = ?', doc.id);
      expect(evento).toContain('<tpEvento>110111</tpEvento>');
      expect(validateXml(evento, 'procEventoCancNFe').valid).toBe(true);

      // Number consumed: a new receipt with the same number is refused by the authority.
      const reuse = await c.client.post('/api/v1/nfce', nfceBody(1));
      expect((await waitFor(c.client, reuse.body.id)).codigo_status).toBe('539');
    });

    it('after 30 minutes → 422 prazo_expirado naming POST /api/v1/nfe/devolucao', async () => {
      const c = await registerCompany(service.url, storage);
      const doc = await issue(c, 1);
      await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 31 });
      const res = await c.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(contractError('prazo_expirado'));
      expect(res.body.error.message).toContain('POST /api/v1/nfe/devolucao');
      expect((await c.client.get(`/api/v1/nfce/${doc.id}`)).body.status).toBe('autorizado');
    });

    it('400 for a justification out of 15..255 characters or a malformed substitute key; nothing changes', async () => {
      const doc = await issue(a, 20);
      for (const body of [
        { justificativa: 'curta demais' },
        { justificativa: 'x'.repeat(256) },
        {},
        { justificativa: JUSTIFICATIVA, chave_substituta: '123' },
        { justificativa: JUSTIFICATIVA, chave_substituta: doc.chave.slice(0, 43) + ((Number(doc.chave[43]) + 1) % 10) },
        { justificativa: JUSTIFICATIVA, motivo: 'campo extra' },
      ]) {
        const res = await a.client.post(`/api/v1/nfce/${doc.id}/cancelar`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toEqual(contractError('requisicao_invalida'));
      }
      // A character the layout's text cannot carry is refused by the schema, naming the field
      // and saying which characters it takes; blanks of any kind are folded, not refused.
      const emoji = await a.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: 'Cliente desistiu da compra 😞' });
      expect(emoji.status).toBe(400);
      expect(emoji.body.error.details).toEqual([{ field: 'justificativa', message: expect.stringContaining('sem emoji') }]);
      expect((await a.client.get(`/api/v1/nfce/${doc.id}`)).body.status).toBe('autorizado');
    });

    it('by substitution (110112): allowed after 30 minutes and until 168 hours, with the contingency receipt that replaced it', async () => {
      const c = await registerCompany(service.url, storage);
      const original = await issue(c, 1);
      const offline = contingencyXml(c, 2);
      const posted = await c.client.post('/api/v1/nfce', { xml: offline.xml });
      expect(posted.status).toBe(202);
      const substitute = await waitFor(c.client, posted.body.id);
      expect(substitute).toMatchObject({ status: 'autorizado', contingencia: true, chave: offline.key });

      await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 120 });
      const plain = await c.client.post(`/api/v1/nfce/${original.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(plain.status).toBe(422);
      expect(plain.body.error.code).toBe('prazo_expirado');

      const res = await c.client.post(`/api/v1/nfce/${original.id}/cancelar`, { justificativa: JUSTIFICATIVA, chave_substituta: substitute.chave });
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('cancelado');
      const evento = await storage.db.value<string>('SELECT evento_xml FROM nfce_documents WHERE id = ?', original.id);
      expect(evento).toContain('<tpEvento>110112</tpEvento>');
      expect(evento).toContain(`<chNFeRef>${substitute.chave}</chNFeRef>`);
      expect(validateXml(evento, 'procEventoCancSubst').valid).toBe(true);

      // Beyond 168 hours even the substitution is over.
      const late = await issue(c, 3);
      const lateOffline = await c.client.post('/api/v1/nfce', { xml: contingencyXml(c, 4).xml });
      const lateSubstitute = await waitFor(c.client, lateOffline.body.id);
      await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 168 * 60 + 1 });
      const expired = await c.client.post(`/api/v1/nfce/${late.id}/cancelar`, { justificativa: JUSTIFICATIVA, chave_substituta: lateSubstitute.chave });
      expect(expired.status).toBe(422);
      expect(expired.body.error.code).toBe('prazo_expirado');
      expect(expired.body.error.message).toContain('POST /api/v1/nfe/devolucao');
    });

    it('a substitution the authority refuses → 422 validacao with its reason', async () => {
      const c = await registerCompany(service.url, storage);
      const original = await issue(c, 1);
      const other = await issue(c, 2); // issued normally (tpEmis 1): not a contingency substitute
      const res = await c.client.post(`/api/v1/nfce/${original.id}/cancelar`, { justificativa: JUSTIFICATIVA, chave_substituta: other.chave });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validacao');
      expect(res.body.error.message).toMatch(/cStat 920/);
      expect((await c.client.get(`/api/v1/nfce/${original.id}`)).body.status).toBe('autorizado');
    });

    it('503 autoridade_indisponivel when the authority does not answer, and nothing is recorded', async () => {
      const c = await registerCompany(service.url, storage);
      const doc = await issue(c, 1);
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: false });
      const res = await c.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA });
      expect(res.status).toBe(503);
      expect(res.body).toEqual(contractError('autoridade_indisponivel'));
      expect((await c.client.get(`/api/v1/nfce/${doc.id}`)).body.status).toBe('autorizado');
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: true });
      expect((await c.client.post(`/api/v1/nfce/${doc.id}/cancelar`, { justificativa: JUSTIFICATIVA })).status).toBe(200);
    });
  });

  describe('inutilização (POST /api/v1/nfce/inutilizar)', () => {
    it('102 → 200 { protocolo, codigo_status, motivo }; the same range again → the same answer', async () => {
      const body = { serie: 5, numero_inicial: 10, numero_final: 12, justificativa: 'Numeros pulados por falha no sistema' };
      const res = await a.client.post('/api/v1/nfce/inutilizar', body);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ protocolo: expect.stringMatching(/^\d{15}$/), codigo_status: '102', motivo: 'Inutilização de número homologado' });
      const again = await a.client.post('/api/v1/nfce/inutilizar', body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      const stored = await storage.db.value<string>('SELECT xml FROM nfce_inutilizacoes WHERE protocolo = ?', res.body.protocolo);
      expect(validateXml(stored, 'procInutNFe').valid).toBe(true);
      // A voided number cannot be issued afterwards (206).
      const voided = await a.client.post('/api/v1/nfce', nfceBody(11, {}, 5));
      expect((await waitFor(a.client, voided.body.id)).codigo_status).toBe('206');
    });

    it('a range holding an authorized number → 422 validacao (rejection 241)', async () => {
      const doc = await issue(a, 30);
      const res = await a.client.post('/api/v1/nfce/inutilizar', {
        serie: 1,
        numero_inicial: 29,
        numero_final: 31,
        justificativa: 'Numeros pulados por falha no sistema',
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validacao');
      expect(res.body.error.message).toContain('241');
      expect((await a.client.get(`/api/v1/nfce/${doc.id}`)).body.status).toBe('autorizado');
    });

    it('400 for a bad justification or wrong types; 422 for an inverted range', async () => {
      const bad = await a.client.post('/api/v1/nfce/inutilizar', { serie: 1, numero_inicial: 40, numero_final: 41, justificativa: 'curta' });
      expect(bad.status).toBe(400);
      const types = await a.client.post('/api/v1/nfce/inutilizar', {
        serie: '1',
        numero_inicial: 40,
        numero_final: 41,
        justificativa: 'Numeros pulados por falha',
      });
      expect(types.status).toBe(400);
      expect(types.body.error.details).toEqual([{ field: 'serie', message: 'deve ser número inteiro' }]);
      const inverted = await a.client.post('/api/v1/nfce/inutilizar', {
        serie: 1,
        numero_inicial: 42,
        numero_final: 41,
        justificativa: 'Numeros pulados por falha',
      });
      expect(inverted.status).toBe(422);
      expect(inverted.body.error.details).toEqual([expect.objectContaining({ field: 'numero_final' })]);
    });
  });

  describe('offline contingency: POST /api/v1/nfce { xml }', () => {
    it('transmits the signed receipt unchanged: same key, same digest, the very same NFe inside the nfeProc', async () => {
      const offline = contingencyXml(a, 50);
      const res = await a.client.post('/api/v1/nfce', { xml: offline.xml }, { headers: { 'idempotency-key': 'offline-50' } });
      expect(res.status).toBe(202);
      expect(res.body.chave).toBe(offline.key);
      const doc = await waitFor(a.client, res.body.id);
      expect(doc).toMatchObject({ status: 'autorizado', contingencia: true, numero: 50, chave: offline.key, referencia_externa: 'offline-50' });
      const proc = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      expect(proc).toContain(offline.xml);
      expect(proc).toContain(`<digVal>${offline.digestValue}</digVal>`);
      expect(validateXml(proc, 'procNFe').valid).toBe(true);
    });

    it('the same receipt sent again is the same document: 200 replay once it ended, never a second transmission', async () => {
      const offline = contingencyXml(a, 51);
      const first = await a.client.post('/api/v1/nfce', { xml: offline.xml });
      await waitFor(a.client, first.body.id);
      const again = await a.client.post('/api/v1/nfce', { xml: offline.xml });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: first.body.id, idempotent_replay: true, status: 'autorizado' });
      const rows = await storage.db.value('SELECT count(*) FROM nfce_documents WHERE chave = ?', offline.key);
      expect(rows).toBe(1);
    });

    it('prints the DANFE of a contingency receipt still waiting for its authorization', async () => {
      const c = await registerCompany(service.url, storage);
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: false });
      const posted = await c.client.post('/api/v1/nfce', { xml: contingencyXml(c, 1).xml });
      const escpos = await fetch(`${service.url}/api/v1/nfce/${posted.body.id}/danfe?formato=escpos`, { headers: { authorization: `Bearer ${c.token}` } });
      expect(escpos.status).toBe(200);
      expect(decodeEscPos(new Uint8Array(await escpos.arrayBuffer())).toString()).toContain('EMITIDA EM CONTINGÊNCIA');
      const normal = await c.client.post('/api/v1/nfce', nfceBody(2));
      const pending = await c.client.get(`/api/v1/nfce/${normal.body.id}/danfe`);
      expect(pending.status).toBe(409);
      expect(pending.headers.get('retry-after')).toBe('1');
      await c.client.post('/api/v1/sandbox/autoridade', { disponivel: true });
      expect((await waitFor(c.client, posted.body.id)).status).toBe('autorizado');
    });

    it('422 validacao naming xml: schema, signature, tpEmis, certificate and emitter are checked', async () => {
      const good = contingencyXml(a, 52);
      const otherCertificate = generateTestCertificate({ cnpj: a.cnpj, xNome: 'OUTRO CERTIFICADO' }).certificate;
      const foreign = await registerCompany(service.url, storage);
      const normal = (await a.client.get(`/api/v1/nfce/${(await issue(a, 53)).id}/xml`)).text.match(/<NFe .*<\/NFe>/)![0];
      const cases: [string, string, RegExp][] = [
        ['not XML', 'isto não é xml', /schema/],
        ['schema', good.xml.replace(/<nNF>52<\/nNF>/, '<nNF>x</nNF>'), /schema/],
        ['tampered', good.xml.replace(/<vPag>([0-9.]+)<\/vPag>/, '<vPag>999.99</vPag>'), /assinatura/],
        ['tpEmis 1', normal, /tpEmis/],
        ['other certificate', contingencyXml(a, 54, otherCertificate).xml, /certificado/],
        ['other emitter', contingencyXml(foreign, 55).xml, /emitente/],
      ];
      for (const [name, xml, message] of cases) {
        const res = await a.client.post('/api/v1/nfce', { xml });
        expect(res.status, name).toBe(422);
        expect(res.body.error.code, name).toBe('validacao');
        expect(res.body.error.details, name).toEqual([{ field: 'xml', message: expect.stringMatching(message) }]);
      }
    });
  });

  describe('webhook', () => {
    let receiver: Server;
    const received: { body: string; signature: string }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => {
          received.push({ body, signature: String(req.headers['x-assinatura'] ?? '') });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    });

    afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

    it('delivers nfce.autorizada, nfce.rejeitada and nfce.cancelada with the document as GET shows it, signed', async () => {
      const c = await registerCompany(service.url, storage);
      const { port } = receiver.address() as AddressInfo;
      const { body: webhook } = await c.client.put('/api/v1/webhook', { url: `http://127.0.0.1:${port}/eventos`, segredo: 'segredo-do-teste' });
      const authorized = await issue(c, 1);
      const rejected = await waitFor(c.client, (await c.client.post('/api/v1/nfce', cardWithoutGroup(2))).body.id);
      const cancelled = (await c.client.post(`/api/v1/nfce/${authorized.id}/cancelar`, { justificativa: JUSTIFICATIVA })).body;

      const until = Date.now() + 30_000;
      const mine = () => received.map((r) => ({ ...r, event: JSON.parse(r.body) })).filter((r) => [authorized.id, rejected.id].includes(r.event.dados.id));
      while (mine().length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      const events = mine();
      const byType = Object.fromEntries(events.map((e) => [e.event.tipo, e.event]));
      expect(Object.keys(byType).sort()).toEqual(['nfce.autorizada', 'nfce.cancelada', 'nfce.rejeitada']);
      expect(byType['nfce.autorizada'].dados).toEqual(authorized);
      expect(byType['nfce.rejeitada'].dados).toEqual(rejected);
      expect(byType['nfce.cancelada'].dados).toEqual(cancelled);
      for (const e of events) {
        expect(e.event).toEqual({ id: expect.any(String), tipo: expect.any(String), criado_em: expect.stringMatching(BRASILIA), dados: expect.any(Object) });
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(e.signature)!;
        expect(v1).toBe(createHmac('sha256', webhook.segredo).update(`${t}.${e.body}`).digest('hex'));
      }
    });
  });

  describe('the pieces a client builds on', () => {
    it('describes every NFC-e route in the OpenAPI document, with the replay flag of 200 and the 422 of a second cancellation', async () => {
      const doc = (await api(service.url).get('/api/v1/openapi.json')).body;
      for (const path of [
        '/api/v1/nfce',
        '/api/v1/nfce/{id}',
        '/api/v1/nfce/{id}/xml',
        '/api/v1/nfce/{id}/danfe',
        '/api/v1/nfce/{id}/cancelar',
        '/api/v1/nfce/inutilizar',
      ]) {
        expect(doc.paths[path], path).toBeDefined();
      }
      const post = doc.paths['/api/v1/nfce'].post;
      expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '409', '422']));
      expect(post.responses['200'].content['application/json'].schema.properties.idempotent_replay).toBeDefined();
      expect(post.parameters.some((p: { name: string; in: string }) => p.name === 'idempotency-key' && p.in === 'header')).toBe(true);
      expect(Object.keys(doc.paths['/api/v1/nfce/{id}/danfe'].get.responses['200'].content)).toEqual(['application/pdf', 'application/octet-stream']);
      // A second cancellation is a 422 estado_invalido, and the route says so.
      const cancel = doc.paths['/api/v1/nfce/{id}/cancelar'].post;
      expect(cancel.description).toMatch(/já cancelada[^.]*422 estado_invalido/);
      expect(cancel.description).not.toMatch(/responde 200/);
    });

    it('the DANFE model reads the receipt the service stored', async () => {
      const doc = await issue(a, 60);
      const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      const model = danfeModel(xml);
      expect(model).toMatchObject({ key: doc.chave, total: expect.stringContaining('110,83'), qrCode: doc.qrcode });
      expect(model.authorization?.protocol).toBe(doc.protocolo);
    });
  });

  // Last in this block: from here on the service has an IBPT table for SP, its companies' UF.
  describe('the IBPT table (Lei 12.741)', () => {
    it('imported by `balcao ibpt import --servico` into the running service: each item’s vTotTrib is its NCM’s rates in the company’s UF, an NCM outside falls back to the flat rate, infCpl names the source', async () => {
      const where = storageArgs(storage);
      const table = fileURLToPath(new URL('../fiscal/ibpt/testdata/TabelaIBPTaxSP26.2.A.csv', import.meta.url));
      const done = await runCli(['ibpt', 'import', table, '--servico', ...where.args], where.env);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toMatch(
        /^Tabela do IBPT importada no serviço: UF SP, versão 26\.2\.A, chave B1A2C3, vigência de 01\/11\/2026 a 31\/01\/2027, 3 NCMs\./,
      );

      const doc = await issue(a, 80);
      expect(doc.status).toBe('autorizado');
      const xml = (await a.client.get(`/api/v1/nfce/${doc.id}/xml`)).text;
      // Café 18.90 × 31.45 % = 5.94; Açúcar 9.58 × 17.15 % = 1.64; Arroz (10063021, not in the table) 82.35 × 4 % (CRT 1's flat rate) = 3.29.
      expect([...xml.matchAll(/<imposto><vTotTrib>([0-9.]+)<\/vTotTrib>/g)].map((m) => m[1])).toEqual(['5.94', '1.64', '3.29']);
      expect(/<ICMSTot>.*<vTotTrib>([0-9.]+)<\/vTotTrib>/.exec(xml)?.[1]).toBe('10.87');
      expect(xml).toContain('Fonte: IBPT, chave B1A2C3, versão 26.2.A</infCpl>');
    });
  });
});

describe('production mode', () => {
  it('has no sandbox controls (404) and keeps an NFC-e processando while SEFAZ cannot be reached', async () => {
    const dir = tempDataDir();
    // The real connector, its endpoints sent to a closed loopback port: connection refused.
    const prod = await startService({ dataDir: dir, mode: 'producao', env: { BALCAO_SEFAZ_URL: 'https://127.0.0.1:9' } });
    try {
      const c = await registerCompany(prod.url, dir);
      expect((await c.client.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(404);
      expect((await c.client.post('/api/v1/sandbox/relogio', { avancar_minutos: 1 })).status).toBe(404);
      const res = await c.client.post('/api/v1/nfce', nfceBody(1));
      expect(res.status).toBe(202);
      await new Promise((r) => setTimeout(r, 1_000));
      const doc = await c.client.get(`/api/v1/nfce/${res.body.id}`);
      expect(doc.body.status).toBe('processando');
    } finally {
      await prod.stop();
    }
  });
});
