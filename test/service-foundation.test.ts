// The service's foundation over real HTTP against the real `balcao service` process: the
// error contract, authentication, the sandbox and webhook settings, the OpenAPI document,
// tokens at rest, tenant isolation, restart and graceful stop.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { api, createCompany, runCli, startService, tempDataDir, type ServiceProcess } from './helpers/service-process.ts';

let service: ServiceProcess;
let tokenA: string;
let tokenB: string;
let companyA: string;
let a: ReturnType<typeof api>;
let b: ReturnType<typeof api>;
let anonymous: ReturnType<typeof api>;

beforeAll(async () => {
  const dataDir = tempDataDir();
  // Company A is registered before the service starts, company B while it runs.
  ({ companyId: companyA, token: tokenA } = await createCompany(dataDir, { nome: 'Loja A', 'csc-id': '000001', csc: 'CSC-DE-TESTE-123456' }));
  service = await startService({ dataDir });
  ({ token: tokenB } = await createCompany(dataDir, { cnpj: '11444777000161', uf: 'BA', nome: 'Loja B' }));
  a = api(service.url, tokenA);
  b = api(service.url, tokenB);
  anonymous = api(service.url);
});

afterAll(async () => {
  await service?.stop();
});

const contractError = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

describe('authentication', () => {
  it('answers 401 nao_autorizado without a token, with a malformed one and with an unknown one', async () => {
    const unknown = 'blc_' + 'A'.repeat(43);
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${tokenA}x` },
      { authorization: `Bearer ${unknown}` },
    ];
    for (const headers of attempts) {
      const res = await anonymous.get('/api/v1/webhook', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toEqual(contractError('nao_autorizado'));
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('accepts a valid token, whatever the case of the scheme', async () => {
    expect((await a.get('/api/v1/webhook', { headers: { authorization: `bearer ${tokenA}` } })).status).toBe(404);
  });

  it('stores only the SHA-256 of the token', async () => {
    const file = join(service.dataDir, 'service.sqlite');
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT token_sha256, company_id FROM api_tokens').all() as { token_sha256: Buffer; company_id: string }[];
      const expected = createHash('sha256').update(tokenA).digest();
      expect(rows.find((r) => r.token_sha256.equals(expected))?.company_id).toBe(companyA);
    } finally {
      db.close();
    }
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    for (const token of [tokenA, tokenB]) expect(bytes.includes(Buffer.from(token.slice(4)))).toBe(false);
  });
});

describe('the error contract', () => {
  it('415 tipo_de_conteudo_invalido for a body that is not JSON', async () => {
    const res = await a.post('/api/v1/sandbox/relogio', 'avancar_minutos=5', { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual(contractError('tipo_de_conteudo_invalido'));
    const text = await a.post('/api/v1/sandbox/relogio', '{"avancar_minutos": 5}', { headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('413 payload_muito_grande over 1 MiB, and exactly 1 MiB still accepted', async () => {
    const json = '{"avancar_minutos": 0}';
    const exactly = json.slice(0, -1) + ' '.repeat(1024 * 1024 - json.length) + '}';
    expect(Buffer.byteLength(exactly)).toBe(1024 * 1024);
    expect((await a.post('/api/v1/sandbox/relogio', exactly)).status).toBe(200);
    const over = await a.post('/api/v1/sandbox/relogio', exactly.slice(0, -1) + ' }');
    expect(over.status).toBe(413);
    expect(over.body).toEqual(contractError('payload_muito_grande'));
  });

  it('400 requisicao_invalida for malformed JSON', async () => {
    const res = await a.post('/api/v1/sandbox/relogio', '{"avancar_minutos": 5,');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'requisicao_invalida', message: expect.stringContaining('JSON') } });
  });

  it('400 with the fields named for a body that breaks the schema', async () => {
    const res = await a.post('/api/v1/sandbox/autoridade', { latencia_ms: 60_001, disponivel: 'sim', outro: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('requisicao_invalida');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'latencia_ms', message: 'deve ser no máximo 60000' },
        { field: 'disponivel', message: expect.stringContaining('booleano') },
        { field: 'outro', message: 'campo não permitido' },
      ]),
    );
  });

  it('404 nao_encontrado for an unknown route, with or without a token', async () => {
    for (const client of [a, anonymous]) {
      const res = await client.get('/api/v1/nao-existe');
      expect(res.status).toBe(404);
      expect(res.body).toEqual(contractError('nao_encontrado'));
    }
    expect((await anonymous.get('/fora-da-api')).status).toBe(404);
  });

  it('tags every response with a request id', async () => {
    const res = await anonymous.get('/api/v1/webhook');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('sandbox controls', () => {
  it('sets the simulated authority, field by field', async () => {
    expect((await a.post('/api/v1/sandbox/autoridade', {})).body).toEqual({ latencia_ms: 0, disponivel: true });
    expect((await a.post('/api/v1/sandbox/autoridade', { latencia_ms: 2500 })).body).toEqual({ latencia_ms: 2500, disponivel: true });
    const res = await a.post('/api/v1/sandbox/autoridade', { disponivel: false });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ latencia_ms: 2500, disponivel: false });
  });

  it('moves the company clock forward and shows it in Brasília time', async () => {
    const before = Date.now();
    const res = await a.post('/api/v1/sandbox/relogio', { avancar_minutos: 31 });
    expect(res.status).toBe(200);
    expect(res.body.deslocamento_minutos).toBe(31);
    expect(res.body.agora).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/);
    const shown = Date.parse(res.body.agora);
    expect(shown).toBeGreaterThanOrEqual(before + 31 * 60_000 - 1000);
    expect((await a.post('/api/v1/sandbox/relogio', { avancar_minutos: -1 })).status).toBe(400);
    expect((await a.post('/api/v1/sandbox/relogio', { avancar_minutos: 1.5 })).status).toBe(400);
    expect((await a.post('/api/v1/sandbox/relogio', {})).body.error.details).toEqual([{ field: 'avancar_minutos', message: 'obrigatório' }]);
  });

  it("dates every answer to a company's token by that company's clock (HTTP Date), the open /healthz included", async () => {
    // Company A's clock runs at least 31 minutes ahead (the test above); B's is real time.
    const dated = (res: { headers: Headers }) => Date.parse(res.headers.get('date') ?? '') - Date.now();
    const ahead = 30 * 60_000;
    expect(dated(await a.get('/api/v1/nfce/00000000-0000-0000-0000-000000000000'))).toBeGreaterThan(ahead); // even a 404
    expect(dated(await a.get('/healthz'))).toBeGreaterThan(ahead);
    for (const res of [await b.get('/healthz'), await anonymous.get('/healthz'), await a.get('/healthz', { token: 'blc_desconhecido' })]) {
      expect(res.status).toBe(200);
      expect(Math.abs(dated(res))).toBeLessThan(5 * 60_000);
    }
  });

  it('keeps each company apart', async () => {
    expect((await b.post('/api/v1/sandbox/autoridade', {})).body).toEqual({ latencia_ms: 0, disponivel: true });
    expect((await b.post('/api/v1/sandbox/relogio', { avancar_minutos: 0 })).body.deslocamento_minutos).toBe(0);
  });
});

describe('webhook settings', () => {
  it('round-trips PUT, GET and DELETE, generating the secret when absent', async () => {
    expect((await a.get('/api/v1/webhook')).status).toBe(404);

    const generated = await a.put('/api/v1/webhook', { url: 'http://127.0.0.1:9/eventos' });
    expect(generated.status).toBe(200);
    expect(generated.body).toEqual({ url: 'http://127.0.0.1:9/eventos', segredo: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect((await a.get('/api/v1/webhook')).body).toEqual(generated.body);

    const chosen = await a.put('/api/v1/webhook', { url: 'https://loja-a.example/webhook', segredo: 'meu-segredo-de-assinatura' });
    expect(chosen.body).toEqual({ url: 'https://loja-a.example/webhook', segredo: 'meu-segredo-de-assinatura' });
    expect((await a.get('/api/v1/webhook')).body).toEqual(chosen.body);

    // Company B sees none of it.
    expect((await b.get('/api/v1/webhook')).status).toBe(404);

    expect((await a.put('/api/v1/webhook', { url: 'ftp://loja-a.example' })).status).toBe(400);
    expect((await a.put('/api/v1/webhook', { segredo: 'x' })).body.error.details).toEqual([{ field: 'url', message: 'obrigatório' }]);

    const removed = await a.delete('/api/v1/webhook');
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await a.get('/api/v1/webhook')).status).toBe(404);
    expect((await a.delete('/api/v1/webhook')).status).toBe(204);
  });

  it('keeps the secret sealed at rest', async () => {
    await a.put('/api/v1/webhook', { url: 'https://loja-a.example/webhook', segredo: 'segredo-que-nao-pode-vazar' });
    const file = join(service.dataDir, 'service.sqlite');
    const bytes = Buffer.concat([file, `${file}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(bytes.includes(Buffer.from('segredo-que-nao-pode-vazar'))).toBe(false);
    expect(bytes.includes(Buffer.from('CSC-DE-TESTE-123456'))).toBe(false);
  });
});

describe('OpenAPI document', () => {
  it('is served without a token, is OpenAPI 3, and describes the sandbox and webhook paths', async () => {
    const res = await anonymous.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/api/v1/sandbox/autoridade', '/api/v1/sandbox/relogio', '/api/v1/webhook']));
    expect(Object.keys(res.body.paths['/api/v1/webhook'])).toEqual(expect.arrayContaining(['put', 'get', 'delete']));
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(res.body.paths['/api/v1/openapi.json']).toBeUndefined();
  });
});

describe('process', () => {
  it('answers the health check without a token', async () => {
    expect((await anonymous.get('/healthz')).body).toEqual({ status: 'ok' });
  });

  it('keeps companies and settings across a restart, and after a crash', async () => {
    await a.put('/api/v1/webhook', { url: 'https://loja-a.example/depois', segredo: 'persistente' });
    await service.restart();
    expect((await api(service.url, tokenA).get('/api/v1/webhook')).body).toEqual({ url: 'https://loja-a.example/depois', segredo: 'persistente' });
    await service.restart({ hard: true });
    expect((await api(service.url, tokenA).post('/api/v1/sandbox/relogio', { avancar_minutos: 0 })).body.deslocamento_minutos).toBe(31);
    expect((await api(service.url, tokenB).get('/api/v1/webhook')).status).toBe(404);
  });

  it('on SIGTERM lets the request in flight finish, then exits 0 with the database closed cleanly', async () => {
    const own = await startService();
    const { token } = await createCompany(own.dataDir);
    const waitForLine = async (fragment: string) => {
      for (let i = 0; i < 1000 && !own.output.some((l) => l.includes(fragment)); i++) await new Promise((r) => setTimeout(r, 10));
      expect(
        own.output.some((l) => l.includes(fragment)),
        fragment,
      ).toBe(true);
    };

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ avancar_minutos: 5 });
    const target = new URL('/api/v1/sandbox/relogio', own.url);
    const request = httpRequest(target, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(body.length) },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      request.on('response', (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      request.on('error', reject);
    });
    request.write(body.slice(0, 5));
    await waitForLine('"url":"/api/v1/sandbox/relogio"');

    const exited = own.stop(10_000);
    await waitForLine('"msg":"stopping"');
    request.end(body.slice(5));
    expect(await response).toEqual({ status: 200, body: expect.stringContaining('"deslocamento_minutos":5') });

    expect(await exited).toEqual({ code: 0, signal: null });
    expect(own.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    // The last connection closed checkpoints the WAL and removes it.
    expect(existsSync(join(own.dataDir, 'service.sqlite-wal'))).toBe(false);
    await expect(fetch(own.url + '/healthz')).rejects.toThrow();
  });
});

describe('production mode', () => {
  let production: ServiceProcess;
  let client: ReturnType<typeof api>;

  beforeAll(async () => {
    // Quiet logs on purpose: the ready line must be written whatever the log level.
    production = await startService({ mode: 'producao', env: { BALCAO_LOG_LEVEL: 'warn' } });
    client = api(production.url, (await createCompany(production.dataDir)).token);
  });

  afterAll(async () => {
    await production?.stop();
  });

  it('has no sandbox routes: 404, and absent from the OpenAPI document', async () => {
    for (const path of ['/api/v1/sandbox/autoridade', '/api/v1/sandbox/relogio']) {
      const res = await client.post(path, { avancar_minutos: 1 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(contractError('nao_encontrado'));
    }
    const doc = (await client.get('/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths)).toContain('/api/v1/webhook');
    expect(Object.keys(doc.paths).filter((p) => p.includes('sandbox'))).toEqual([]);
  });

  it('still serves the webhook settings', async () => {
    expect((await client.put('/api/v1/webhook', { url: 'https://prod.example/hook' })).status).toBe(200);
  });
});

describe('balcao subcommands: help and usage', () => {
  it('--help prints the usage on stdout and exits 0; bad usage prints the error then the usage on stderr and exits 2', async () => {
    for (const command of [['service'], ['company'], ['start'], ['sefaz']]) {
      const help = await runCli([...command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Uso: balcao ${command[0]}`));
      expect(help.stderr).toBe('');
    }
    const bad = await runCli(['service', '--port', '0', '--data', tempDataDir(), '--modo', 'teste']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^--modo: deve ser sandbox ou producao\n\nUso: balcao service/);
  });
});

describe('balcao company create', () => {
  it('prints the company id and token as JSON once', async () => {
    const dataDir = tempDataDir();
    const res = await runCli(['company', 'create', '--data', dataDir, '--cnpj', '11222333000181', '--uf', 'SP', '--nome', 'Loja CLI']);
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toEqual({ company_id: expect.stringMatching(/^[0-9a-f-]{36}$/), token: expect.stringMatching(/^blc_[A-Za-z0-9_-]{43}$/) });
  });

  it('exits 2 naming the bad option, in Portuguese', async () => {
    const dataDir = tempDataDir();
    const base = ['company', 'create', '--data', dataDir, '--uf', 'SP', '--nome', 'Loja CLI'];
    const badCnpj = await runCli([...base, '--cnpj', '11222333000180']);
    expect(badCnpj.code).toBe(2);
    expect(badCnpj.stderr).toContain('--cnpj: CNPJ inválido');
    const unknown = await runCli([...base, '--cnpj', '11222333000181', '--cor', 'azul']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('opção desconhecida: --cor');
    const missing = await runCli(['company', 'create', '--data', dataDir, '--uf', 'SP', '--nome', 'Loja CLI']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--cnpj: obrigatório');
    const badUf = await runCli(['company', 'create', '--data', dataDir, '--uf', 'ZZ', '--nome', 'Loja', '--cnpj', '11222333000181']);
    expect(badUf.code).toBe(2);
    expect(badUf.stderr).toContain('--uf: UF inexistente');
    const dashPassword = await runCli([...base, '--cnpj', '11222333000181', '--certificado', 'loja.pfx', '--senha', '-abc']);
    expect(dashPassword.code).toBe(2);
    expect(dashPassword.stderr).toContain('--senha: o valor começa com "-"; escreva --senha=VALOR');
  });

  it('takes the certificate password from a file (--senha-arquivo), off the command line', async () => {
    const dir = tempDataDir();
    const { pfx } = generateTestCertificate({ cnpj: '11222333000181', xNome: 'LOJA CLI', password: '-senha com espaço' });
    writeFileSync(join(dir, 'loja.pfx'), pfx);
    writeFileSync(join(dir, 'senha.txt'), '-senha com espaço\n', { mode: 0o600 });
    writeFileSync(join(dir, 'errada.txt'), 'outra senha\n', { mode: 0o600 });
    const base = [
      'company',
      'create',
      '--data',
      join(dir, 'servico'),
      '--uf',
      'SP',
      '--nome',
      'Loja CLI',
      '--cnpj',
      '11222333000181',
      '--certificado',
      join(dir, 'loja.pfx'),
    ];

    const wrong = await runCli([...base, '--senha-arquivo', join(dir, 'errada.txt')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--senha-arquivo: senha do certificado incorreta');
    const both = await runCli([...base, '--senha-arquivo', join(dir, 'senha.txt'), '--senha', 'x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--senha-arquivo: use --senha ou --senha-arquivo, não os dois');
    const missingFile = await runCli([...base, '--senha-arquivo', join(dir, 'nao-existe.txt')]);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain('--senha-arquivo: não foi possível ler');

    const created = await runCli([...base, '--senha-arquivo', join(dir, 'senha.txt')]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ company_id: expect.any(String), token: expect.stringMatching(/^blc_/) });
  });
});
