// The terminal's PSP client (electron/core/pix/psp-client.ts) against the PSP simulator
// (service/pix-psp/simulator.ts) over real HTTPS with mutual TLS and OAuth2: every request the
// client sends is validated by the simulator against the central bank's API Pix document (its
// `problems` stay empty), and every answer the simulator gives is checked against it too.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PixRequestError, PspClient, type PspConfig } from '../electron/core/pix/psp-client.ts';
import { createTlsIdentity } from '../service/authority/sefaz/simulator/tls-identity.ts';
import { startPixPspSimulator, type PixPspSimulator } from '../service/pix-psp/simulator.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const txid = (n: number) => `BALCAOTESTE${String(n).padStart(4, '0')}abcdefghijklmn`;

describe('PSP client ↔ PSP simulator (API Pix over mutual TLS and OAuth2)', () => {
  let psp: PixPspSimulator;
  let config: PspConfig;
  let client: PspClient;

  beforeAll(async () => {
    psp = await startPixPspSimulator({ tokenTtlSeconds: 3600 });
    config = { baseUrl: psp.url, tokenUrl: psp.tokenUrl, clientId: psp.clientId, clientSecret: psp.clientSecret, certificate: psp.client, caPem: psp.caPem };
    client = new PspClient(config);
  });

  afterAll(async () => {
    await client?.close();
    await psp?.close();
  });

  it('creates a charge, reads it paid with its endToEndId, refunds it; every request and answer valid by the API Pix', async () => {
    const created = await client.createCharge({ txid: txid(1), amountCents: 1234, key: '12345678000195', expirySeconds: 300, message: 'Venda 1' });
    expect(created).toMatchObject({ kind: 'answer', status: 201, body: { txid: txid(1), status: 'ATIVA', valor: { original: '12.34' } } });
    expect((created as Json).body.location).toMatch(/^localhost:\d+\/qr\/v2\/[0-9a-f]{32}$/);

    expect(await client.getCharge(txid(1))).toMatchObject({ status: 200, body: { status: 'ATIVA' } });
    const paid = psp.pay(txid(1));
    const read = (await client.getCharge(txid(1))) as Json;
    expect(read.body).toMatchObject({ status: 'CONCLUIDA', pix: [{ endToEndId: paid.endToEndId, valor: '12.34' }] });
    expect(paid.endToEndId).toMatch(/^E99990001\d{12}[0-9a-z]{11}$/);

    expect(await client.refund(paid.endToEndId, 'D1', 1234)).toMatchObject({ status: 201, body: { id: 'D1', status: 'EM_PROCESSAMENTO', valor: '12.34' } });
    // The same refund asked again (a lost answer, a restart) is the same refund, not a second one.
    expect(await client.refund(paid.endToEndId, 'D1', 1234)).toMatchObject({ status: 201, body: { id: 'D1' } });
    expect(await client.getRefund(paid.endToEndId, 'D1')).toMatchObject({ status: 200, body: { status: 'DEVOLVIDO' } });
    expect(await client.refund(paid.endToEndId, 'D2', 1)).toMatchObject({ status: 400, body: { type: expect.stringMatching(/PixDevolucaoInvalida$/) } });

    await client.createCharge({ txid: txid(2), amountCents: 500, key: '12345678000195', expirySeconds: 300 });
    expect(await client.removeCharge(txid(2))).toMatchObject({ status: 200, body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } });
    expect(() => psp.pay(txid(2))).toThrow(/não pode ser paga/);
    expect(await client.getCharge(txid(99))).toMatchObject({ status: 404 });

    expect(psp.requests).toContain(`PUT /cob/${txid(1)}`);
    expect(psp.problems).toEqual([]);
  });

  it('refuses, before sending, a request out of the API Pix (a txid too short, an expiry that is not whole seconds)', async () => {
    const before = psp.requests.length;
    await expect(client.createCharge({ txid: 'curto', amountCents: 100, key: 'k', expirySeconds: 60 })).rejects.toThrow(PixRequestError);
    await expect(client.createCharge({ txid: txid(3), amountCents: 100, key: 'k', expirySeconds: 1.5 })).rejects.toThrow(
      /calendario\/expiracao must be integer/,
    );
    expect(psp.requests.length).toBe(before);
  });

  it('shows the faults a real PSP has: an expired token (401 → a new token), 5xx, a lost answer, an expired charge, paid twice, paid late', async () => {
    psp.expireTokens();
    expect(await client.createCharge({ txid: txid(4), amountCents: 100, key: 'k', expirySeconds: 60 })).toMatchObject({ status: 201 });

    psp.failNext(1, 503);
    expect(await client.getCharge(txid(4))).toMatchObject({ status: 503, body: { type: expect.stringMatching(/ServicoIndisponivel$/) } });

    psp.loseNextAnswer();
    expect(await client.createCharge({ txid: txid(5), amountCents: 100, key: 'k', expirySeconds: 60 })).toMatchObject({ kind: 'no-answer' });
    // The work was done: the charge exists, and creating it again is refused, not doubled.
    expect(psp.charge(txid(5))).toBeDefined();
    expect(await client.createCharge({ txid: txid(5), amountCents: 100, key: 'k', expirySeconds: 60 })).toMatchObject({ status: 400 });

    psp.expire(txid(4));
    expect(() => psp.pay(txid(4))).toThrow(/expirada/);
    psp.pay(txid(4), { late: true });
    expect(await client.getCharge(txid(4))).toMatchObject({ body: { status: 'CONCLUIDA', pix: [{}] } });

    psp.pay(txid(5));
    psp.pay(txid(5), { late: true });
    expect(((await client.getCharge(txid(5))) as Json).body.pix).toHaveLength(2);
    expect(psp.problems).toEqual([]);
  });

  it('talks only over verified TLS with the store certificate: a client certificate of another CA, a server of another CA, a wrong secret all fail', async () => {
    const stranger = createTlsIdentity('outra AC', 'intruso');
    const cases: [string, PspConfig][] = [
      ['certificado de cliente de outra AC', { ...config, certificate: stranger.client! }],
      ['servidor não confiável', { ...config, caPem: stranger.caPem }],
    ];
    for (const [, bad] of cases) {
      const other = new PspClient(bad);
      expect(await other.getCharge(txid(1))).toMatchObject({ kind: 'no-answer', error: expect.not.stringMatching(/credenciais/) });
      await other.close();
    }
    const wrongSecret = new PspClient({ ...config, clientSecret: 'errado' });
    expect(await wrongSecret.getCharge(txid(1))).toMatchObject({ kind: 'no-answer', error: expect.stringMatching(/recusou as credenciais PIX/) });
    await wrongSecret.close();
  });
});
