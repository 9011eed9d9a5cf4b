// The NF-e de devolução over real HTTP against the real `balcao service` process (docs/api.md,
// "Idempotency" and "NF-e de devolução"): an NFC-e is issued and authorized, two of its three items come back with an
// inbound model 55 NF-e that references it; the XML is the procNFe the official schema accepts;
// the idempotency rules are the NFC-e's (replay, 409 while processing, 422 on another body,
// scope per document type); over-quantities, foreign and cancelled NFC-e are refused; a return
// left processing by a stopped service is settled after the restart, never issued twice. The
// company that returns has an alphanumeric CNPJ (drawn by the generator), and so may the consumer.

import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCnpj } from '@brazilian-utils/brazilian-utils/generate-cnpj';
import { ACCESS_KEY_PATTERN } from '../base/common/access-key.ts';
import { parseAccessKey } from '../fiscal/access-key.ts';
import { validateXml } from '../fiscal/schema.ts';
import { verifyXmlSignature } from '../fiscal/signature.ts';
import { nfceBody, readDb, registerCompany, waitFor, type Client, type TestCompany } from './helpers/nfce.ts';
import { startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';
import { readZip } from './helpers/zip.ts';

let service: ServiceProcess;
let dataDir: string;
let a: TestCompany;
let b: TestCompany;

const JUSTIFICATIVA = 'Cliente devolveu: produto com defeito';
const NS = 'http://www.portalfiscal.inf.br/nfe';
const contractError = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

beforeAll(async () => {
  dataDir = tempDataDir();
  service = await startService({ dataDir });
  a = await registerCompany(service.url, dataDir, { cnpj: generateCnpj({ version: 2 }) });
  b = await registerCompany(service.url, dataDir);
});

afterAll(async () => {
  await service?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An authorized NFC-e of the demo catalog (items 1 × 18.90, 2 × 4.79, 3 × 27.45), to a named consumer unless told. */
async function soldNfce(company: TestCompany, nNF: number, consumer = true) {
  const res = await company.client.post('/api/v1/nfce', nfceBody(nNF, consumer ? { dest: { cpf: '52998224725' } } : {}));
  expect(res.status, res.text).toBe(202);
  const doc = await waitFor(company.client, res.body.id);
  expect(doc.status).toBe('autorizado');
  return doc as { id: string; chave: string };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function waitForReturn(client: Client, id: string, done: (doc: any) => boolean = (d) => d.situacao !== 'processando', timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.get(`/api/v1/nfe/${id}`);
    if (res.status !== 200) throw new Error(`GET /nfe/${id}: ${res.status} ${res.text}`);
    if (done(res.body)) return res.body;
    if (Date.now() > until) throw new Error(`NF-e ${id} não chegou ao estado esperado: ${res.text}`);
    await sleep(50);
  }
}

const texts = (xml: string, name: string): string[] =>
  Array.from((new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document).getElementsByTagNameNS(NS, name)).map((e) => e.textContent ?? '');

describe('POST /api/v1/nfe/devolucao', () => {
  it('returns two of the three items of an authorized NFC-e: 202, then autorizado, with a procNFe of model 55 that references it', async () => {
    const nfce = await soldNfce(a, 1);
    const body = {
      chave_nfce: nfce.chave,
      itens: [
        { numero_item: 1, quantidade: '1' },
        { numero_item: 3, quantidade: '2' },
      ],
      justificativa: JUSTIFICATIVA,
    };
    const res = await a.client.post('/api/v1/nfe/devolucao', body, { headers: { 'idempotency-key': 'devolucao-1' } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      tipo: 'devolucao',
      situacao: 'processando',
      serie: 1,
      numero: 1,
      chave: expect.stringMatching(new RegExp(`^(?=35)${ACCESS_KEY_PATTERN}$`)),
      message: expect.any(String),
    });
    expect(parseAccessKey(res.body.chave)).toMatchObject({ model: '55', serie: 1, number: 1, cnpj: a.cnpj });
    expect(res.headers.get('location')).toBe(`/api/v1/nfe/${res.body.id}`);

    const doc = await waitForReturn(a.client, res.body.id);
    expect(doc).toMatchObject({
      id: res.body.id,
      tipo: 'devolucao',
      situacao: 'autorizado',
      status: '100',
      motivo: 'Autorizado o uso da NF-e',
      serie: 1,
      numero: 1,
      chave: res.body.chave,
      chave_nfce: nfce.chave,
      nfce_id: nfce.id,
      protocolo: expect.stringMatching(/^\d{15}$/),
      autorizado_em: expect.stringMatching(/-03:00$/),
      valor_total: '73.80', // 18.90 + 2 × 27.45
      justificativa: JUSTIFICATIVA,
      ambiente: 'homologacao',
      referencia_externa: 'devolucao-1',
    });
    expect(doc.itens).toEqual([
      { numero_item: 1, codigo: '1001', descricao: expect.any(String), unidade: 'UN', quantidade: '1', valor: '18.90' },
      { numero_item: 3, codigo: '1003', descricao: 'Arroz branco tipo 1 5kg', unidade: 'UN', quantidade: '2', valor: '54.90' },
    ]);

    const xml = await a.client.get(`/api/v1/nfe/${res.body.id}/xml`);
    expect(xml.status).toBe(200);
    expect(xml.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(validateXml(xml.text, 'procNFe')).toEqual({ valid: true, errors: [] });
    expect(verifyXmlSignature(xml.text)).toMatchObject({ valid: true });
    expect(texts(xml.text, 'CNPJ')[0]).toBe(a.cnpj);
    expect({
      mod: texts(xml.text, 'mod'),
      tpNF: texts(xml.text, 'tpNF'),
      finNFe: texts(xml.text, 'finNFe'),
      refNFe: texts(xml.text, 'refNFe'),
      CFOP: texts(xml.text, 'CFOP'),
      chNFe: texts(xml.text, 'chNFe'),
      tPag: texts(xml.text, 'tPag'),
    }).toEqual({ mod: ['55'], tpNF: ['0'], finNFe: ['4'], refNFe: [nfce.chave], CFOP: ['1202', '1202'], chNFe: [res.body.chave], tPag: ['90'] });

    // The accountant's export of its day has it in its own folder, the same nfeProc, with its summary line.
    const day = (doc.emitido_em as string).slice(0, 10);
    const zip = await fetch(`${service.url}/api/v1/nfce/exportacao?de=${day}&ate=${day}`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(zip.status).toBe(200);
    const entries = await readZip(Buffer.from(await zip.arrayBuffer()));
    const exported = entries.get(`devolucoes/${res.body.chave}-nfe.xml`)?.toString('utf8') ?? '';
    expect(validateXml(exported, 'procNFe').valid).toBe(true);
    expect(texts(exported, 'chNFe')).toEqual([res.body.chave]);
    expect(entries.get('resumo.csv')?.toString('utf8')).toContain(`devolucoes/${res.body.chave}-nfe.xml`);

    // Replay: the same document, no new number, no new call.
    const replay = await a.client.post('/api/v1/nfe/devolucao', body, { headers: { 'idempotency-key': 'devolucao-1' } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toMatchObject({ id: res.body.id, situacao: 'autorizado', numero: 1, idempotent_replay: true });
    // The same key with another body.
    const other = await a.client.post(
      '/api/v1/nfe/devolucao',
      { ...body, itens: [{ numero_item: 2, quantidade: '1' }] },
      { headers: { 'idempotency-key': 'devolucao-1' } },
    );
    expect(other.status).toBe(422);
    expect(other.body).toEqual(contractError('chave_idempotencia_reutilizada'));

    // What is left: item 1 is all back (1 of 1), item 3 has 1 of 3 left.
    const over = await a.client.post('/api/v1/nfe/devolucao', {
      ...body,
      itens: [
        { numero_item: 3, quantidade: '1' },
        { numero_item: 1, quantidade: '1' },
      ],
    });
    expect(over.status).toBe(422);
    expect(over.body).toEqual(contractError('validacao'));
    expect(over.body.error.details).toEqual([{ field: 'itens[1].quantidade', message: expect.stringMatching(/vendido 1 UN, já devolvido 1, disponível 0/) }]);
    const rest = await a.client.post('/api/v1/nfe/devolucao', {
      ...body,
      itens: [
        { numero_item: 3, quantidade: '1' },
        { numero_item: 2, quantidade: '2' },
      ],
    });
    expect(rest.status, rest.text).toBe(202);
    expect(rest.body.numero).toBe(2);
    expect((await waitForReturn(a.client, rest.body.id)).situacao).toBe('autorizado');
    const none = await a.client.post('/api/v1/nfe/devolucao', { ...body, itens: [{ numero_item: 2, quantidade: '0.0001' }] });
    expect(none.status).toBe(422);
    expect(none.body.error.details).toEqual([{ field: 'itens[0].quantidade', message: expect.stringMatching(/disponível 0/) }]);
  });

  it('refuses what the schema cannot accept (400), items the NFC-e does not have and a missing consumer (422), naming the field', async () => {
    const nfce = await soldNfce(a, 2, false);
    const base = { chave_nfce: nfce.chave, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: JUSTIFICATIVA };
    const bad = await a.client.post('/api/v1/nfe/devolucao', { ...base, itens: [], extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(contractError('requisicao_invalida'));
    const unknown = await a.client.post('/api/v1/nfe/devolucao', { ...base, itens: [{ numero_item: 4, quantidade: '1' }] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { field: 'destinatario', message: expect.stringMatching(/não identificou o consumidor/) },
      { field: 'itens[0].numero_item', message: expect.stringMatching(/não tem o item 4/) },
    ]);
    // The NFC-e named no consumer: the one the request names is the NF-e's dest.
    const named = await a.client.post('/api/v1/nfe/devolucao', { ...base, destinatario: { cpf: '11144477735', nome: 'Maria Souza' } });
    expect(named.status, named.text).toBe(202);
    expect((await waitForReturn(a.client, named.body.id)).situacao).toBe('autorizado');
    const xml = (await a.client.get(`/api/v1/nfe/${named.body.id}/xml`)).text;
    expect(texts(xml, 'CPF')).toEqual(['11144477735']);
  });

  it('a consumer with an alphanumeric CNPJ returns: named with or without the mask it is the same one, another CNPJ is refused naming the field', async () => {
    const res = await a.client.post('/api/v1/nfce', nfceBody(5, { dest: { cnpj: '12ABC34501DE35', xNome: 'Distribuidora Alfa Ltda' } }));
    const nfce = await waitFor(a.client, res.body.id);
    expect(nfce.status).toBe('autorizado');
    const body = (cnpj: string) => ({
      chave_nfce: nfce.chave,
      itens: [{ numero_item: 1, quantidade: '1' }],
      justificativa: JUSTIFICATIVA,
      destinatario: { cnpj },
    });
    const other = await a.client.post('/api/v1/nfe/devolucao', body('11222333000181'));
    expect(other.status).toBe(422);
    expect(other.body.error.details).toEqual([{ field: 'destinatario.cnpj', message: expect.stringContaining('(CNPJ 12.ABC.345/01DE-35)') }]);
    const masked = await a.client.post('/api/v1/nfe/devolucao', body('12.ABC.345/01DE-35'));
    expect(masked.status, masked.text).toBe(202);
    expect((await waitForReturn(a.client, masked.body.id)).situacao).toBe('autorizado');
    const xml = (await a.client.get(`/api/v1/nfe/${masked.body.id}/xml`)).text;
    expect(texts(xml, 'CNPJ')).toEqual([a.cnpj, '12ABC34501DE35']);
  });

  it("another company's NFC-e is 404; a cancelled NFC-e is 422 estado_invalido; a return is 404 to other companies", async () => {
    const mine = await soldNfce(a, 3);
    const theirs = await soldNfce(b, 1);
    const body = (chave: string) => ({ chave_nfce: chave, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: JUSTIFICATIVA });

    const foreign = await a.client.post('/api/v1/nfe/devolucao', body(theirs.chave));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(contractError('nao_encontrado'));

    const cancel = await a.client.post(`/api/v1/nfce/${mine.id}/cancelar`, { justificativa: 'Cliente desistiu da compra no caixa' });
    expect(cancel.status, cancel.text).toBe(200);
    const cancelled = await a.client.post('/api/v1/nfe/devolucao', body(mine.chave), { headers: { 'idempotency-key': 'devolucao-cancelada' } });
    expect(cancelled.status).toBe(422);
    expect(cancelled.body).toEqual(contractError('estado_invalido'));
    expect(cancelled.body.error.details).toEqual([{ field: 'chave_nfce', message: 'NFC-e cancelada' }]);

    // The refused request freed its key: the same key serves a correct return.
    const ok = await a.client.post('/api/v1/nfe/devolucao', body((await soldNfce(a, 4)).chave), { headers: { 'idempotency-key': 'devolucao-cancelada' } });
    expect(ok.status, ok.text).toBe(202);
    await waitForReturn(a.client, ok.body.id);
    for (const path of [`/api/v1/nfe/${ok.body.id}`, `/api/v1/nfe/${ok.body.id}/xml`]) {
      const res = await b.client.get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(contractError('nao_encontrado'));
    }
    expect((await a.client.get('/api/v1/nfe/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('while the authority is away: 409 with the id under the same key; the key of an NFC-e is another scope', async () => {
    const nfce = await soldNfce(b, 2);
    expect((await b.client.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
    try {
      const key = { headers: { 'idempotency-key': 'mesma-chave' } };
      const body = { chave_nfce: nfce.chave, itens: [{ numero_item: 2, quantidade: '1' }], justificativa: JUSTIFICATIVA };
      const first = await b.client.post('/api/v1/nfe/devolucao', body, key);
      expect(first.status, first.text).toBe(202);
      const again = await b.client.post('/api/v1/nfe/devolucao', body, key);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ id: first.body.id, error: { code: 'em_processamento', id: first.body.id } });
      expect(again.headers.get('retry-after')).toBeTruthy();
      // The same key for an NFC-e is independent.
      const receipt = await b.client.post('/api/v1/nfce', nfceBody(3), key);
      expect(receipt.status, receipt.text).toBe(202);
      expect((await b.client.get(`/api/v1/nfe/${first.body.id}`)).body.situacao).toBe('processando');
      expect((await b.client.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
      expect((await waitForReturn(b.client, first.body.id)).situacao).toBe('autorizado');
      expect((await waitFor(b.client, receipt.body.id)).status).toBe('autorizado');
    } finally {
      await b.client.post('/api/v1/sandbox/autoridade', { disponivel: true });
    }
  });

  it('a return left processing by a stopped service is settled after the restart, sent once; webhook events are queued', async () => {
    const webhook = await b.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nao-escuta' });
    expect(webhook.status, webhook.text).toBe(200);
    const nfce = await soldNfce(b, 4);
    expect((await b.client.post('/api/v1/sandbox/autoridade', { disponivel: false })).status).toBe(200);
    const res = await b.client.post('/api/v1/nfe/devolucao', {
      chave_nfce: nfce.chave,
      itens: [{ numero_item: 1, quantidade: '1' }],
      justificativa: JUSTIFICATIVA,
    });
    expect(res.status, res.text).toBe(202);
    await service.restart({ hard: true });
    expect((await b.client.get(`/api/v1/nfe/${res.body.id}`)).body.situacao).toBe('processando');
    expect((await b.client.post('/api/v1/sandbox/autoridade', { disponivel: true })).status).toBe(200);
    const doc = await waitForReturn(b.client, res.body.id);
    expect(doc.situacao).toBe('autorizado');
    const atAuthority = readDb(dataDir, (db) => db.prepare('SELECT access_key FROM nfe WHERE access_key = ?').all(res.body.chave), 'sandbox-authority.sqlite');
    expect(atAuthority).toHaveLength(1);
    const events = readDb(dataDir, (db) =>
      db.prepare("SELECT tipo, payload FROM webhook_deliveries WHERE company_id = ? AND tipo LIKE 'nfe.%'").all(b.companyId),
    ) as {
      tipo: string;
      payload: string;
    }[];
    expect(events.map((e) => e.tipo)).toEqual(['nfe.autorizada']);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({ tipo: 'nfe.autorizada', dados: { id: res.body.id, situacao: 'autorizado', chave: res.body.chave } });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await a.client.get('/api/v1/openapi.json');
    const post = doc.body.paths['/api/v1/nfe/devolucao'].post;
    expect(Object.keys(post.requestBody.content['application/json'].schema.properties).sort()).toEqual([
      'chave_nfce',
      'destinatario',
      'itens',
      'justificativa',
      'referencia_externa',
    ]);
    expect(
      Object.keys(doc.body.paths)
        .filter((p) => p.startsWith('/api/v1/nfe/'))
        .sort(),
    ).toEqual(['/api/v1/nfe/chave/{chave}', '/api/v1/nfe/devolucao', '/api/v1/nfe/{id}', '/api/v1/nfe/{id}/danfe', '/api/v1/nfe/{id}/xml']);
  });
});
