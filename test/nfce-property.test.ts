// Bad input never gets a 500 and never leaves anything behind: fast-check generates broken
// NFC-e bodies (a leaf of a valid body turned into another JSON type, a required field removed,
// an unknown field added, or a body that is not an NFC-e at all) and POSTs them to the real
// service; every answer must be a 4xx with the contract's error body, and afterwards no
// document and no idempotency key may exist. On both stores (helpers/stores.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asJson, brokenBodies, expectClientError, type Json } from './helpers/broken-json.ts';
import { nfceBody, registerCompany, type TestCompany } from './helpers/nfce.ts';
import { startService, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';

// Every key of the sample is required (optional groups are absent from it), except
// ICMSSN102/orig: the layout makes it optional for CSOSN 102, 103, 300 and 400
// (leiauteNFe_v4.00.xsd, minOccurs="0"), so a body without it is a valid NFC-e and gets its 202.
const brokenBody = brokenBodies(nfceBody(1) as unknown as Json, {
  anchor: 'ide',
  optional: (p) => p[p.length - 2] === 'ICMSSN102' && p[p.length - 1] === 'orig',
});

describe.each(STORES)('POST /api/v1/nfce with broken bodies (property), on %s', (store) => {
  let storage: TestStorage;
  let service: ServiceProcess;
  let company: TestCompany;

  beforeAll(async () => {
    storage = await testStorage(store);
    service = await startService({ dataDir: storage.dataDir, database: storage.database });
    company = await registerCompany(service.url, storage);
  });
  afterAll(async () => {
    await service?.stop();
    await storage?.close();
  });

  it('answers 4xx with the contract error body, never 500, and stores nothing', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(brokenBody, async (body) => {
        run += 1;
        const res = await company.client.post('/api/v1/nfce', asJson(body), { headers: { 'idempotency-key': `prop-${run}` } });
        expectClientError(res, body, ['requisicao_invalida', 'validacao']);
      }),
      { numRuns: 200 },
    );
    const stored = {
      documents: await storage.db.value('SELECT count(*) FROM nfce_documents'),
      keys: await storage.db.value("SELECT count(*) FROM idempotency_keys WHERE key LIKE 'prop-%'"),
    };
    expect(stored).toEqual({ documents: 0, keys: 0 });
    // The same service still issues a valid receipt: the broken ones changed nothing.
    expect((await company.client.post('/api/v1/nfce', nfceBody(1))).status).toBe(202);
  });
});
