// Webhook delivery end to end, over the real `balcao service` process: a company configures
// its webhook (PUT /api/v1/webhook), issues an NFC-e, and its receiver, which answers 500 the
// first time, gets the `nfce.autorizada` event twice: same event id, same body, each signed.
// BALCAO_WEBHOOK_BACKOFF_MS shortens the retry delay to keep the test fast. On both stores
// (helpers/stores.ts): on PostgreSQL the outbox is leased with FOR UPDATE SKIP LOCKED.

import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleNfceRequest } from '../fiscal/samples.ts';
import { verifyWebhookSignature } from '../service/webhooks/signature.ts';
import { api, createCompany, startService, type ServiceProcess } from './helpers/service-process.ts';
import { STORES, testStorage, type TestStorage } from './helpers/stores.ts';

type Received = { at: number; headers: IncomingMessage['headers']; raw: Buffer };

describe.each(STORES)('webhook delivery of an NFC-e outcome, on %s', (store) => {
  const received: Received[] = [];
  // The status the receiver answers to its n-th request (1-based).
  let answer = (n: number): number => (n === 1 ? 500 : 200);
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ at: Date.now(), headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(answer(received.length)).end();
    });
  });

  let storage: TestStorage;
  let service: ServiceProcess;
  let client: ReturnType<typeof api>;

  beforeAll(async () => {
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    storage = await testStorage(store);
    const { token } = await createCompany(storage, { nome: 'Loja Webhook', 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
    service = await startService({ dataDir: storage.dataDir, database: storage.database, env: { BALCAO_WEBHOOK_BACKOFF_MS: '300' } });
    client = api(service.url, token);
  });

  afterAll(async () => {
    await service?.stop();
    await storage?.close();
    receiver.closeAllConnections();
    receiver.close();
  });

  async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`esperando: ${what}\n--- saída do serviço ---\n${service.output.join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('retries a 500 with the same event id and valid signatures, and stops after a 2xx', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const put = await client.put<{ url: string; segredo: string }>('/api/v1/webhook', { url: `http://127.0.0.1:${port}/eventos` });
    expect(put.status).toBe(200);
    const { segredo } = put.body;

    const issued = await client.post<{ id: string; status: string }>('/api/v1/nfce', sampleNfceRequest({ nNF: 1 }), {
      headers: { 'idempotency-key': 'webhook-e2e-1' },
    });
    expect(issued.status).toBe(202);
    const documentId = issued.body.id;

    await until('duas entregas do evento', () => received.length >= 2);
    const events = received.map(
      (r) => JSON.parse(r.raw.toString('utf8')) as { id: string; tipo: string; criado_em: string; dados: { id: string; status: string } },
    );
    const [first, second] = events as [(typeof events)[0], (typeof events)[0]];
    expect(first).toMatchObject({ tipo: 'nfce.autorizada', dados: { id: documentId, status: 'autorizado' } });
    expect(typeof first.id).toBe('string');
    expect(second.id).toBe(first.id);
    expect(received[1]!.raw.equals(received[0]!.raw)).toBe(true); // the same bytes, not just the same id
    for (const r of received) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Balcao-Webhooks/1');
      expect(verifyWebhookSignature(segredo, r.headers['x-assinatura'] as string, r.raw, { toleranceSeconds: 60 })).toBe(true);
    }
    // `dados` is the document as GET returns it.
    const doc = await client.get(`/api/v1/nfce/${documentId}`);
    expect(doc.status).toBe(200);
    expect(first.dados).toEqual(doc.body);

    // Delivered on the second attempt: nothing more comes, even after several backoff periods.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(received).toHaveLength(2);
  });

  it('keeps retrying an undelivered event across a service restart, with the same id', async () => {
    const before = received.length;
    answer = () => 503;
    const issued = await client.post<{ id: string }>('/api/v1/nfce', sampleNfceRequest({ nNF: 2 }), {
      headers: { 'idempotency-key': 'webhook-e2e-2' },
    });
    expect(issued.status).toBe(202);
    await until('primeira tentativa', () => received.length > before);
    const eventOf = (r: Received) => JSON.parse(r.raw.toString('utf8')) as { id: string; dados: { id: string } };
    const event = eventOf(received[before]!);
    expect(event.dados.id).toBe(issued.body.id);

    await service.restart();
    answer = () => 200;
    const deliveredAt = received.length;
    await until('entrega após o reinício', () => received.length > deliveredAt);
    const again = received.slice(before).map(eventOf);
    expect(new Set(again.map((e) => e.id))).toEqual(new Set([event.id]));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(received).toHaveLength(deliveredAt + 1);
  });
});
