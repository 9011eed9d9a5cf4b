// What the service tells of the tax authority (docs/api.md, "NFC-e"), over real HTTP against the
// real `balcao service` process: unknown before any call; "indisponivel" once a call went
// unanswered, in GET /healthz (with the company's token), in the 202 of the next NFC-e and in
// the GET of a receipt that waits; "disponivel" again once the authority answers, found by the
// status-service probe when nothing else calls it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nfceBody, registerCompany, waitFor, type TestCompany } from './helpers/nfce.ts';
import { startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  // The status service is probed every second here (a minute in production).
  service = await startService({ dataDir, env: { BALCAO_SONDA_AUTORIDADE_MS: '1000' } });
});

afterAll(async () => {
  await service?.stop();
});

const situation = async (company: TestCompany): Promise<string> => {
  const res = await company.client.get('/healthz');
  expect(res.status).toBe(200);
  return res.body.autoridade.situacao;
};

const authority = (company: TestCompany, disponivel: boolean) => company.client.post('/api/v1/sandbox/autoridade', { disponivel, latencia_ms: 0 });

describe("the tax authority's availability, as the service last saw it", () => {
  it('is unknown before any call, and told only to the company that asks', async () => {
    const company = await registerCompany(service.url, dataDir);
    expect((await company.client.get('/healthz')).body).toEqual({ status: 'ok', autoridade: { situacao: 'desconhecida', desde: null } });
    expect((await company.client.get('/healthz', { token: null })).body).toEqual({ status: 'ok' });
  });

  it('goes indisponivel when a queued NFC-e finds no answer: in /healthz, in the next 202 and in the GET of a receipt that waits; disponivel once it is authorized', async () => {
    const company = await registerCompany(service.url, dataDir);
    expect((await authority(company, false)).status).toBe(200);
    const first = await company.client.post('/api/v1/nfce', nfceBody(1));
    expect(first.status).toBe(202);
    const waiting = await waitFor(company.client, first.body.id, (d) => d.autoridade?.situacao === 'indisponivel');
    expect(waiting).toMatchObject({ status: 'processando', autoridade: { situacao: 'indisponivel', desde: expect.stringMatching(/-03:00$/) } });
    expect(await situation(company)).toBe('indisponivel');
    const second = await company.client.post('/api/v1/nfce', nfceBody(2));
    expect(second.body).toMatchObject({ status: 'processando', autoridade: { situacao: 'indisponivel' } });

    expect((await authority(company, true)).status).toBe(200);
    const authorized = await waitFor(company.client, first.body.id);
    expect(authorized.status).toBe('autorizado');
    expect(authorized).not.toHaveProperty('autoridade'); // only while it waits
    expect(await situation(company)).toBe('disponivel');
  });

  it('with nothing left to send, the status service finds the authority back', async () => {
    const company = await registerCompany(service.url, dataDir);
    const issued = await company.client.post('/api/v1/nfce', nfceBody(1));
    await waitFor(company.client, issued.body.id);
    expect(await situation(company)).toBe('disponivel');
    // A cancellation that goes unanswered: nothing is queued after it.
    expect((await authority(company, false)).status).toBe(200);
    const cancel = await company.client.post(`/api/v1/nfce/${issued.body.id}/cancelar`, { justificativa: 'Cliente desistiu da compra no caixa' });
    expect(cancel.status).toBe(503);
    expect(await situation(company)).toBe('indisponivel');
    expect((await authority(company, true)).status).toBe(200);
    await expect.poll(() => situation(company)).toBe('disponivel');
  });
});
