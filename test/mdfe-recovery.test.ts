// An MDF-e issuance interrupted by the process dying: the restart settles it by consulting the
// tax authority, never by issuing twice. Real processes, real SQLite files, SIGKILL.
//
// Two cases: the process dies while the authority is still deciding (a 5 s sandbox latency keeps
// the call open; nothing was decided), and the process dies after the authority decided but
// before the verdict was recorded (reconstructed by putting the recorded manifest back to
// `processando` in the stopped service's database, which is exactly what such a crash leaves).

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MdfeRequest } from '../fiscal/mdfe/types.ts';
import { sampleMdfeRequest } from '../fiscal/samples.ts';
import { untilProcessing } from './helpers/mdfe.ts';
import { api, createCompany, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  const dataDir = tempDataDir();
  const { token } = await createCompany(dataDir, { cnpj: '11222333000181', uf: 'SP', nome: 'Transportadora Recuperação' });
  service = await startService({ dataDir });
  client = api(service.url, token);
});

afterAll(async () => {
  await service?.stop();
});

const manifest = (nMDF: number): MdfeRequest => structuredClone(sampleMdfeRequest({ nMDF, placa: `REC${String(nMDF).padStart(4, '0')}` }));

describe('restart recovery', () => {
  it('killed while the authority was deciding: the attempt is discarded, the key freed, nothing issued twice', async () => {
    const body = manifest(1);
    const key = 'morreu-no-meio';
    await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 5000 });
    const inFlight = client.post('/api/v1/mdfe/emitir', body, { headers: { 'Idempotency-Key': key } }).catch((err: unknown) => err);
    await untilProcessing(client, 1);
    const conflict = await client.post('/api/v1/mdfe/emitir', body, { headers: { 'Idempotency-Key': key } });
    expect(conflict.status).toBe(409);
    const inFlightId = conflict.body.id as string;
    // The call is open at the authority (its latency); the process dies now.
    await client.post('/api/v1/sandbox/autoridade', { latencia_ms: 0 });
    await service.restart({ hard: true });
    expect(await inFlight).toBeInstanceOf(Error);

    // The restart consulted the authority (which never decided) and freed the key.
    const gone = await client.get(`/api/v1/mdfe/${inFlightId}`);
    expect(gone.status).toBe(404);
    const retry = await client.post('/api/v1/mdfe/emitir', body, { headers: { 'Idempotency-Key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ status: '100', numero: 1, situacao: 'autorizado' });
    const list = await client.get('/api/v1/mdfe?limit=200');
    expect(list.body.data.filter((m: { numero: number }) => m.numero === 1)).toHaveLength(1);
    expect(list.body.data.some((m: { situacao: string }) => m.situacao === 'processando')).toBe(false);
  });

  it('killed after the authority authorized: the restart records the authorization and the key replays it', async () => {
    const body = manifest(2);
    const key = 'autorizado-sem-registro';
    const first = await client.post('/api/v1/mdfe/emitir', body, { headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const { mdfe_id: id, protocolo, chave } = first.body;

    await service.stop();
    const db = new Database(join(service.dataDir, 'service.sqlite'));
    try {
      db.prepare(
        `UPDATE mdfe SET situacao = 'processando', status = NULL, motivo = NULL, protocolo = NULL, autorizado_em = NULL, prot_xml = NULL
          WHERE id = ?`,
      ).run(id);
      db.prepare(`UPDATE idempotency_keys SET state = 'processing' WHERE doc_type = 'mdfe' AND key = ?`).run(key);
    } finally {
      db.close();
    }
    await service.restart();

    const recovered = await client.get(`/api/v1/mdfe/${id}`);
    expect(recovered.status).toBe(200);
    expect(recovered.body).toMatchObject({ situacao: 'autorizado', status: '100', protocolo, chave });
    const replay = await client.post('/api/v1/mdfe/emitir', body, { headers: { 'Idempotency-Key': key } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ mdfe_id: id, idempotent_replay: true, protocolo });
    const xml = await client.get(`/api/v1/mdfe/${id}/xml`);
    expect(xml.text).toContain(`<nProt>${protocolo}</nProt>`);
  });
});
