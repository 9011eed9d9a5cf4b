// Bad input to the operations on documents never gets a 500 and never changes anything: fast-check
// breaks valid bodies of POST /api/v1/nfce/{id}/cancelar, POST /api/v1/nfce/inutilizar and
// POST /api/v1/nfe/devolucao (a leaf of another JSON type, a required field removed, an unknown
// field added, not such a body at all) and also gives them well-typed values their rules refuse
// (justifications out of bounds or blank, malformed or foreign access keys, numbers out of range,
// inverted ranges, quantities beyond what was sold, items the NFC-e does not have, another
// consumer). Each answer must be a 4xx with the contract's error body; afterwards the cancelled
// receipt is as it was, nothing was voided or returned, at the service or at the authority. A
// valid body at the end shows that what was broken was only what the generators broke. On both
// stores (helpers/stores.ts).

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidAccessKey } from '../fiscal/access-key.ts';
import { asJson, brokenBodies, expectClientError, type Json } from './helpers/broken-json.ts';
import { nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { startService, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';
import { ACCESS_KEY } from '../base/common/access-key.ts';

const RUNS = 120;
const JUSTIFICATIVA = 'Cliente desistiu da compra no caixa';
/** The consumer the returned NFC-e names. */
const CPF = '52998224725';

// Well-typed values the rules refuse.
const blank = fc.array(fc.constantFrom(' ', '\t', '\n'), { minLength: 15, maxLength: 40 }).map((c) => c.join(''));
const badJustification = fc.oneof(
  fc.string({ maxLength: 14 }),
  fc.string({ minLength: 256, maxLength: 300 }),
  blank,
  // Trimmed, fewer than 15 characters are left.
  fc.constantFrom('  curta  demais  ', '\n\tcurta demais\t\n'),
  // Outside what the fiscal layout's text fields accept.
  fc.constantFrom('Cliente desistiu 😀 da compra', 'Justificativa com \u0000 controle'),
);
/** An event's justification (xJust) has its inner blanks folded too: then fewer than 15 are left. */
const badEventJustification = fc.oneof(badJustification, fc.constantFrom('a              b', 'curta    demais     x'));
const keyDigits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 44, maxLength: 44 }).map((d) => d.join(''));
const malformedKey = fc.string({ maxLength: 50 }).filter((s) => !ACCESS_KEY.test(s));
const nonInteger = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x));
const decimalOf = (n: number) => String(n);

describe.each(STORES)('broken bodies of the operations on documents (property), on %s', (store) => {
  let service: ServiceProcess;
  let storage: TestStorage;
  let a: TestCompany;
  let b: TestCompany;

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database });
    [a, b] = [await registerCompany(service.url, storage), await registerCompany(service.url, storage)];
    // Every verdict and cancellation becomes an outbox row: a change would show there too.
    await a.client.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/nada' });
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  async function authorized(company: TestCompany, nNF: number, consumer = false): Promise<{ id: string; chave: string }> {
    const res = await company.client.post('/api/v1/nfce', nfceBody(nNF, consumer ? { dest: { cpf: CPF } } : {}));
    expect(res.status, res.text).toBe(202);
    const doc = await waitFor(company.client, res.body.id);
    expect(doc.status).toBe('autorizado');
    return doc;
  }

  const count = (sql: string, ...params: unknown[]) => storage.db.value<number>(sql, ...params);
  const countAtAuthority = (sql: string, ...params: unknown[]) => storage.authority.value<number>(sql, ...params);

  it('POST /api/v1/nfce/{id}/cancelar: 4xx with the contract error body, never 500; the receipt stays authorized', async () => {
    const doc = await authorized(a, 1);
    const before = (await a.client.get(`/api/v1/nfce/${doc.id}`)).body;
    const events = () => count('SELECT count(*) FROM webhook_deliveries WHERE company_id = ?', a.companyId);
    const eventsBefore = await events();

    const valid = { justificativa: JUSTIFICATIVA };
    const bodies = fc.oneof(
      brokenBodies(valid, { anchor: 'justificativa' }),
      badEventJustification.map((justificativa) => ({ justificativa })),
      fc
        .oneof(
          malformedKey,
          // 44 digits that are no NFC-e key: a wrong check digit or another model.
          keyDigits.filter((k) => !isValidAccessKey(k) || k.slice(20, 22) !== '65'),
        )
        .map((chave_substituta) => ({ justificativa: JUSTIFICATIVA, chave_substituta })),
    );
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        expectClientError(await a.client.post(`/api/v1/nfce/${doc.id}/cancelar`, asJson(body)), body);
      }),
      { numRuns: RUNS },
    );

    expect((await a.client.get(`/api/v1/nfce/${doc.id}`)).body).toEqual(before);
    expect(await countAtAuthority('SELECT count(*) FROM nfe_event WHERE access_key = ?', doc.chave)).toBe(0);
    expect(await events()).toBe(eventsBefore);
    const cancelled = await a.client.post(`/api/v1/nfce/${doc.id}/cancelar`, valid);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe('cancelado');
  });

  it('POST /api/v1/nfce/inutilizar: 4xx with the contract error body, never 500; nothing is voided', async () => {
    const valid = { serie: 1, numero_inicial: 900, numero_final: 905, justificativa: 'Numeracao pulada por falha no sistema' };
    const outOfRange = (field: 'serie' | 'numero_inicial' | 'numero_final', values: fc.Arbitrary<number>) => values.map((v) => ({ ...valid, [field]: v }));
    const bodies = fc.oneof(
      brokenBodies(valid, { anchor: 'serie' }),
      badEventJustification.map((justificativa) => ({ ...valid, justificativa })),
      outOfRange('serie', fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 1000 }), nonInteger)),
      outOfRange('numero_inicial', fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 1_000_000_000 }), nonInteger)),
      outOfRange('numero_final', fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 1_000_000_000 }), nonInteger)),
      // An inverted range.
      fc
        .tuple(fc.integer({ min: 1, max: 999_999_999 }), fc.integer({ min: 1, max: 999_999_999 }))
        .filter(([x, y]) => x !== y)
        .map(([x, y]) => ({ ...valid, numero_inicial: Math.max(x, y), numero_final: Math.min(x, y) })),
    );
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        expectClientError(await a.client.post('/api/v1/nfce/inutilizar', asJson(body)), body);
      }),
      { numRuns: RUNS },
    );

    expect(await count('SELECT count(*) FROM nfce_inutilizacoes WHERE company_id = ?', a.companyId)).toBe(0);
    expect(await countAtAuthority('SELECT count(*) FROM voided_range WHERE cnpj = ?', a.cnpj)).toBe(0);
    const voided = await a.client.post('/api/v1/nfce/inutilizar', valid);
    expect(voided.status, voided.text).toBe(200);
    expect(voided.body.codigo_status).toBe('102');
  });

  it('POST /api/v1/nfe/devolucao: 4xx with the contract error body, never 500; no return is stored or sent, no key held', async () => {
    // Items sold: 1 × item 1, 2 × item 2, 3 × item 3, to a named consumer.
    const sold = await authorized(a, 2, true);
    const foreign = await authorized(b, 1, true);
    const valid = { chave_nfce: sold.chave, itens: [{ numero_item: 1, quantidade: '1' }], justificativa: 'Cliente devolveu: produto com defeito' };
    const withItems = (itens: Json) => ({ ...valid, itens });
    const bodies = fc.oneof(
      brokenBodies(valid, { anchor: 'chave_nfce' }),
      badJustification.map((justificativa) => ({ ...valid, justificativa })),
      // Not a key, a key of no NFC-e here, another company's NFC-e.
      fc.oneof(malformedKey, keyDigits, fc.constant(foreign.chave)).map((chave_nfce) => ({ ...valid, chave_nfce })),
      fc.constant(withItems([])),
      // An item the NFC-e does not have, or out of the layout's range.
      fc
        .oneof(fc.integer({ min: 4, max: 990 }), fc.integer({ max: 0 }), fc.integer({ min: 991 }), nonInteger)
        .map((numero_item) => withItems([{ numero_item, quantidade: '1' }])),
      // More than was sold of the item.
      fc
        .tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 1_000_000 }))
        .map(([item, extra]) => withItems([{ numero_item: item, quantidade: decimalOf(item + extra) }])),
      // Not a positive quantity with at most 4 decimals.
      fc
        .oneof(
          fc.string({ maxLength: 12 }).filter((s) => !/^\s*[0-9]+(\.[0-9]+)?\s*$/.test(s)),
          fc.constantFrom('0', '0.0000', '-1', '0.00001', '1.12345', '1,5', 'NaN'),
        )
        .map((quantidade) => withItems([{ numero_item: 1, quantidade }])),
      // The same item twice.
      fc.constant(
        withItems([
          { numero_item: 3, quantidade: '1' },
          { numero_item: 3, quantidade: '1' },
        ]),
      ),
      // Someone other than the consumer the NFC-e names, or a document that is no CPF/CNPJ.
      fc
        .constantFrom<Json>({ cpf: '11144477735' }, { cnpj: '11222333000181' }, { cpf: '12345678900' }, { cpf: CPF, cnpj: '11222333000181' }, { nome: 'X' })
        .map((destinatario) => ({ ...valid, destinatario })),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        run += 1;
        expectClientError(await a.client.post('/api/v1/nfe/devolucao', asJson(body), { headers: { 'idempotency-key': `prop-devolucao-${run}` } }), body);
      }),
      { numRuns: RUNS },
    );

    expect(await count('SELECT count(*) FROM nfe_documents WHERE company_id = ?', a.companyId)).toBe(0);
    // The route claims the key before it checks the body; a refusal takes the claim back, so no
    // key stays on record, and the first key takes a valid return below.
    expect(await count("SELECT count(*) FROM idempotency_keys WHERE company_id = ? AND doc_type = 'nfe'", a.companyId)).toBe(0);
    expect(await countAtAuthority("SELECT count(*) FROM nfe WHERE cnpj = ? AND model = '55'", a.cnpj)).toBe(0);
    const returned = await a.client.post('/api/v1/nfe/devolucao', valid, { headers: { 'idempotency-key': 'prop-devolucao-1' } });
    expect(returned.status, returned.text).toBe(202);
    // No number was spent on the refused ones.
    expect(returned.body.numero).toBe(1);
  });
});
