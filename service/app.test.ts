// The HTTP application in-process, over real HTTP on 127.0.0.1, with a real SQLite file, plus
// a few fixture routes (a stand-in document type) that exercise the seams the NFC-e and MDF-e
// routes will use: schema validation, FieldError, unexpected errors, query coercion, idempotency.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FieldError } from '../fiscal/errors.ts';
import { buildApp, type ServiceApp } from './app.ts';
import { createCompany } from './companies.ts';
import { companyOf } from './http/auth.ts';
import { errorResponses } from './http/errors.ts';
import type { ApiRoutes } from './http/type-provider.ts';
import { IdempotencyHeaders, sendReplay } from './idempotency.ts';
import { createLogger } from './logger.ts';
import { openService, type OpenedService } from './open-service.ts';

const NfceLike = Type.Object(
  {
    ide: Type.Object({ nNF: Type.Integer({ minimum: 1 }), serie: Type.Integer() }),
    det: Type.Array(Type.Object({ prod: Type.Object({ NCM: Type.String({ pattern: '^[0-9]{8}$' }), vProd: Type.String() }) }), { minItems: 1 }),
    tpAmb: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('2')])),
    referencia_externa: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const DocView = Type.Object({
  id: Type.String(),
  companyId: Type.String(),
  status: Type.String(),
  nNF: Type.Integer(),
  key: Type.Optional(Type.String()),
  // A replay is the document plus this flag: the 200 schema must declare it or it is dropped.
  idempotent_replay: Type.Optional(Type.Boolean()),
});

// A stand-in document type: enqueues in memory and settles when told, like NFC-e will.
const documents = new Map<string, { id: string; companyId: string; status: string; nNF: number; key?: string }>();

const fixtureRoutes: ApiRoutes = async (app, { deps }) => {
  app.post(
    '/teste/documentos',
    { schema: { body: NfceLike, headers: IdempotencyHeaders, response: { 200: DocView, 202: DocView, ...errorResponses(400, 401, 409, 422) } } },
    async (request, reply) => {
      const company = companyOf(request);
      const id = randomUUID();
      const claim = await deps.idempotency.begin(request, 'nfce', id, { retryAfterSeconds: 2 });
      if (claim.kind === 'replay') return sendReplay(reply, documents.get(claim.documentId)!);
      const doc = { id, companyId: company.id, status: 'processando', nNF: request.body.ide.nNF, ...(claim.kind === 'new' && { key: claim.key }) };
      documents.set(id, doc);
      return reply.code(202).send(doc);
    },
  );
  app.post<{ Params: { id: string } }>('/teste/documentos/:id/autorizar', async (request) => {
    const company = companyOf(request);
    const doc = documents.get(request.params.id);
    if (!doc || doc.companyId !== company.id) throw new FieldError('id', 'desconhecido');
    doc.status = 'autorizado';
    if (doc.key) await deps.idempotency.settle({ companyId: company.id, docType: 'nfce', key: doc.key, documentId: doc.id }, 'authorized');
    return doc;
  });
  app.get('/teste/regra', async () => {
    throw new FieldError([
      { field: 'det[1].prod.CFOP', message: 'CFOP inexistente: 9999' },
      { field: 'pag[0].tPag', message: 'forma de pagamento inválida' },
    ]);
  });
  app.get('/teste/regra-400', { config: { fieldErrorStatus: 400 } }, async () => {
    throw new FieldError('de', 'data malformada');
  });
  app.get('/teste/falha', async () => {
    throw new Error('falha interna: SELECT * FROM segredo');
  });
  app.get(
    '/teste/lista',
    { schema: { querystring: Type.Object({ limit: Type.Optional(Type.Integer({ maximum: 200 })), ativo: Type.Optional(Type.Boolean()) }) } },
    async (request) => request.query,
  );
};

let dir: string;
let opened: OpenedService;
let app: ServiceApp;
let url: string;
let token: string;
let otherToken: string;
const logLines: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-app-'));
  opened = await openService(dir, {});
  token = (await createCompany(opened, { cnpj: '11222333000181', uf: 'SP', nome: 'Loja A', cscId: '1', csc: 'CSC-SECRETO-123' })).token;
  otherToken = (await createCompany(opened, { cnpj: '11444777000161', uf: 'SP', nome: 'Loja B' })).token;
  const destination = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  app = buildApp({ ...opened, mode: 'sandbox', logger: createLogger({ level: 'debug', destination }), routes: [fixtureRoutes] });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await opened?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Sent = { status: number; headers: Headers; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, as = token): Promise<Sent> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${as}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const validBody = (nNF = 1) => ({ ide: { nNF, serie: 1 }, det: [{ prod: { NCM: '22030000', vProd: '10.00' } }] });

describe('schema validation', () => {
  it('names each bad field in the API path style, all at once', async () => {
    const res = await call('POST', '/api/v1/teste/documentos', {
      ide: { serie: 'um' },
      det: [{ prod: { NCM: '2203', vProd: '1.00' } }, { prod: { vProd: 2 } }],
      tpAmb: '3',
      extra: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('requisicao_invalida');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'ide.nNF', message: 'obrigatório' },
        { field: 'ide.serie', message: 'deve ser número inteiro' },
        { field: 'det[0].prod.NCM', message: expect.stringContaining('formato inválido') },
        { field: 'det[1].prod.NCM', message: 'obrigatório' },
        { field: 'det[1].prod.vProd', message: 'deve ser texto' },
        { field: 'tpAmb', message: 'deve ser um destes valores: "1", "2"' },
        { field: 'extra', message: 'campo não permitido' },
      ]),
    );
  });

  it('never coerces a body value: "12" is not an integer', async () => {
    const res = await call('POST', '/api/v1/teste/documentos', { ...validBody(), ide: { nNF: '12', serie: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'ide.nNF', message: 'deve ser número inteiro' }]);
  });

  it('converts query-string values to the declared types, and refuses what does not convert', async () => {
    expect((await call('GET', '/api/v1/teste/lista?limit=10&ativo=true')).body).toEqual({ limit: 10, ativo: true });
    const bad = await call('GET', '/api/v1/teste/lista?limit=dez');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'limit', message: 'deve ser número inteiro' }]);
    expect((await call('GET', '/api/v1/teste/lista?limit=201')).body.error.details).toEqual([{ field: 'limit', message: 'deve ser no máximo 200' }]);
  });
});

describe('business errors and failures', () => {
  it('a FieldError is 422 validacao with its issues as details', async () => {
    const res = await call('GET', '/api/v1/teste/regra');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: {
        code: 'validacao',
        message: expect.any(String),
        details: [
          { field: 'det[1].prod.CFOP', message: 'CFOP inexistente: 9999' },
          { field: 'pag[0].tPag', message: 'forma de pagamento inválida' },
        ],
      },
    });
  });

  it('a FieldError is 400 on a route that says so', async () => {
    const res = await call('GET', '/api/v1/teste/regra-400');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'requisicao_invalida', details: [{ field: 'de', message: 'data malformada' }] });
  });

  it('an unexpected error is 500 with a generic message; the details go to the log only', async () => {
    const res = await call('GET', '/api/v1/teste/falha');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'erro_interno', message: expect.stringMatching(/^Erro interno/) } });
    expect(JSON.stringify(res.body)).not.toMatch(/segredo|SELECT|at .*\.ts/);
    const logged = logLines.map((l) => JSON.parse(l)).find((l) => l.reqId === res.headers.get('x-request-id') && l.level === 50);
    expect(logged?.err?.message).toContain('SELECT * FROM segredo');
    expect(logged?.err?.stack).toBeDefined();
  });
});

describe('idempotency over HTTP (stand-in document type)', () => {
  it('new → 409 while processing → replay after authorization → 422 for another body', async () => {
    const key = `pedido-${randomUUID()}`;
    const first = await call('POST', '/api/v1/teste/documentos', validBody(10), { 'idempotency-key': key });
    expect(first.status).toBe(202);

    const busy = await call('POST', '/api/v1/teste/documentos', validBody(10), { 'idempotency-key': key });
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('2');
    expect(busy.body).toMatchObject({ id: first.body.id, error: { code: 'em_processamento', id: first.body.id } });

    // The body key works like the header (and the fingerprint ignores it).
    const viaBody = await call('POST', '/api/v1/teste/documentos', { ...validBody(10), referencia_externa: key });
    expect(viaBody.status).toBe(409);

    expect((await call('POST', `/api/v1/teste/documentos/${first.body.id}/autorizar`, {})).status).toBe(200);
    const replay = await call('POST', '/api/v1/teste/documentos', validBody(10), { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toMatchObject({ id: first.body.id, status: 'autorizado', idempotent_replay: true });

    const reused = await call('POST', '/api/v1/teste/documentos', validBody(11), { 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('chave_idempotencia_reutilizada');

    // Same key, another company: independent.
    expect((await call('POST', '/api/v1/teste/documentos', validBody(10), { 'idempotency-key': key }, otherToken)).status).toBe(202);
  });

  it('refuses bad keys with 400 and lets calls without a key through every time', async () => {
    const empty = await call('POST', '/api/v1/teste/documentos', { ...validBody(), referencia_externa: '' });
    expect(empty.status).toBe(400);
    const long = await call('POST', '/api/v1/teste/documentos', validBody(), { 'idempotency-key': 'k'.repeat(201) });
    expect(long.status).toBe(400);
    const both = await call('POST', '/api/v1/teste/documentos', { ...validBody(), referencia_externa: 'a' }, { 'idempotency-key': 'b' });
    expect(both.status).toBe(400);
    expect(both.body.error.details.map((d: { field: string }) => d.field)).toEqual(['Idempotency-Key', 'referencia_externa']);

    const a = await call('POST', '/api/v1/teste/documentos', validBody(20));
    const b = await call('POST', '/api/v1/teste/documentos', validBody(20));
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.id).not.toBe(b.body.id);
  });
});

describe('logs', () => {
  it('carry request ids and never a token or the CSC', async () => {
    await call('GET', '/api/v1/webhook');
    const all = logLines.join('\n');
    expect(all).toContain('"reqId"');
    expect(all).not.toContain(token.slice(4));
    expect(all).not.toContain(otherToken.slice(4));
    expect(all).not.toContain('CSC-SECRETO-123');
  });
});

describe('graceful close', () => {
  it('lets an in-flight request finish and takes no new work meanwhile', async () => {
    let started!: () => void;
    const hasStarted = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow: ApiRoutes = async (instance) => {
      instance.get('/teste/lento', async () => {
        started();
        await released;
        return { ok: true };
      });
    };
    const own = buildApp({ ...opened, mode: 'sandbox', routes: [slow] });
    const base = await own.listen({ port: 0, host: '127.0.0.1' });
    try {
      const inFlight = fetch(`${base}/api/v1/teste/lento`, { headers: { authorization: `Bearer ${token}` } });
      await hasStarted;
      const closed = own.close();
      // A newcomer is either refused at the socket or told to come back (503, contract body).
      const late = await fetch(`${base}/healthz`).then(
        async (res) => ({ status: res.status, body: await res.json() }),
        () => 'recusada',
      );
      if (late !== 'recusada') expect(late).toEqual({ status: 503, body: { error: expect.objectContaining({ code: 'servico_indisponivel' }) } });
      release();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      await closed;
    } finally {
      release();
      await own.close();
    }
  });
});

describe('operations', () => {
  it('/readyz: ready while the database answers with every migration; 503 in the contract shape when one is missing', async () => {
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    // From 1 December it may also carry a warning about next year's rates (the next test).
    expect(await ready.json()).toMatchObject({ status: 'ok' });
    const db = new Database(join(dir, 'service.sqlite'));
    const [row] = db.prepare('SELECT id, checksum, applied_at FROM schema_migrations ORDER BY id DESC LIMIT 1').all() as {
      id: string;
      checksum: string;
      applied_at: string;
    }[];
    db.prepare('DELETE FROM schema_migrations WHERE id = ?').run(row!.id);
    try {
      const behind = await fetch(`${url}/readyz`);
      expect(behind.status).toBe(503);
      expect(await behind.json()).toEqual({ error: { code: 'servico_indisponivel', message: expect.stringContaining(row!.id) } });
    } finally {
      db.prepare('INSERT INTO schema_migrations (id, checksum, applied_at) VALUES (?, ?, ?)').run(row!.id, row!.checksum, row!.applied_at);
      db.close();
    }
    // Liveness does not depend on it.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('/metrics: Prometheus text with the queue depth and age per document type, without a token', async () => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const document of ['nfce', 'nfe']) {
      expect(text).toMatch(new RegExp(`^balcao_queue_depth\\{document="${document}"\\} \\d+$`, 'm'));
      expect(text).toMatch(new RegExp(`^balcao_queue_oldest_age_seconds\\{document="${document}"\\} [\\d.]+$`, 'm'));
    }
    expect(text).toContain('# TYPE balcao_authorizations_total counter');
    expect(text).toContain('# TYPE balcao_authority_request_duration_seconds histogram');
  });
});

describe('the operator’s IBS/CBS rates', () => {
  it('/readyz stays ready but says, from 1 December, that next year’s rates are missing; the operator’s API, with its own token only, sets them for all', async () => {
    const operatorToken = 'token-do-operador-com-32-caracteres!';
    const at = (day: string) => buildApp({ ...opened, mode: 'sandbox', realNow: () => Date.parse(`${day}T12:00:00-03:00`), operatorToken });
    const [november, december] = [at('2026-11-30'), at('2026-12-01')];
    try {
      expect((await november.inject({ url: '/readyz' })).json()).toEqual({ status: 'ok' });
      const warned = await december.inject({ url: '/readyz' });
      expect(warned.statusCode).toBe(200);
      expect(warned.json()).toEqual({
        status: 'ok',
        avisos: [expect.stringMatching(/^Alíquotas do IBS\/CBS de 2027: a partir de 01\/01\/2027 as NFC-e levarão/)],
      });

      const path = '/api/v1/operador/aliquotas-ibscbs';
      const put = (authorization?: string) =>
        december.inject({
          method: 'PUT',
          url: path,
          headers: authorization ? { authorization } : {},
          payload: { periodos: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70' }] },
        });
      expect((await put()).statusCode).toBe(401);
      expect((await put(`Bearer ${token}`)).statusCode).toBe(401);
      const done = await put(`Bearer ${operatorToken}`);
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toEqual({
        aliquotas: '2027-01-01..2027-12-31 cbs=8.70',
        periodos: [{ from: '2027-01-01', to: '2027-12-31', pCBS: '8.70' }],
        aviso: null,
        data_referencia: '2026-12-01',
      });
      expect((await december.inject({ url: '/readyz' })).json()).toEqual({ status: 'ok' });
      // Without a token configured, the operator's API is off.
      const off = await buildApp({ ...opened, mode: 'sandbox' }).inject({ url: path, headers: { authorization: `Bearer ${operatorToken}` } });
      expect(off.statusCode).toBe(401);
      expect(off.json().error.message).toMatch(/API do operador desativada/);
    } finally {
      await opened.store.setOperatorRates([]);
      await Promise.all([november.close(), december.close()]);
    }
  });
});

describe('closing', () => {
  it('closes the sandbox authority file after the queues stop, leaving no WAL behind', async () => {
    const closingDir = mkdtempSync(join(tmpdir(), 'balcao-app-close-'));
    const service = await openService(closingDir, {});
    try {
      const closing = buildApp({ ...service, mode: 'sandbox' });
      await closing.ready();
      closing.deps.authority.warmUp();
      const wal = `${service.store.sandboxAuthorityFile()}-wal`;
      expect(existsSync(wal)).toBe(true);
      await closing.close();
      // SQLite checkpoints and deletes the WAL when its last connection closes.
      expect(existsSync(wal)).toBe(false);
    } finally {
      await service.store.close();
      rmSync(closingDir, { recursive: true, force: true });
    }
  });
});
