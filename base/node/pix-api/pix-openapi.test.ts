import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PIX_API_RELEASE, pixRequestProblems, pixResponseProblems, pixRoute } from './pix-openapi.ts';

const TXID = 'BALCAO0123456789abcdef012345';

describe('the API Pix document (base/node/pix-api/openapi.yaml)', () => {
  it('is the central bank release 2.9.0, byte for byte (README.md records its source and hash)', () => {
    const bytes = readFileSync(new URL('./openapi.yaml', import.meta.url));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe('4047ae07a639dea4c13cdb60f79e2b849b4825aa6ebebbe96938b9a22d9f1ca8');
    expect((parse(bytes.toString('utf8')) as { info: { version: string } }).info.version).toBe(PIX_API_RELEASE);
  });

  it('accepts an immediate charge and a refund as the document declares them', () => {
    expect(
      pixRequestProblems({
        method: 'PUT',
        path: `/cob/${TXID}`,
        body: { calendario: { expiracao: 300 }, valor: { original: '10.00' }, chave: '12ABC34501DE35' },
      }),
    ).toEqual([]);
    expect(pixRequestProblems({ method: 'PATCH', path: `/cob/${TXID}`, body: { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' } })).toEqual([]);
    expect(pixRequestProblems({ method: 'PUT', path: '/pix/E99990001202611272300abcdef12345/devolucao/D1', body: { valor: '1.50' } })).toEqual([]);
  });

  it('names what is out of the document: the txid, the amount, a missing field, an unknown operation, a stray body', () => {
    const problems = pixRequestProblems({ method: 'PUT', path: '/cob/curto', body: { valor: { original: '10' }, chave: 'x' } });
    expect(problems.join('\n')).toMatch(/parâmetro txid \(path\) fora do esquema/);
    expect(problems.join('\n')).toMatch(/\/valor\/original must match pattern/);
    expect(problems.join('\n')).toMatch(/calendario/);
    expect(pixRequestProblems({ method: 'DELETE', path: `/cob/${TXID}` })[0]).toMatch(/operação inexistente/);
    expect(pixRequestProblems({ method: 'GET', path: `/cob/${TXID}`, body: {} })).toEqual(['esta operação não leva corpo']);
    expect(pixRequestProblems({ method: 'GET', path: '/pix', query: { fim: '2026-11-28T00:00:00Z' } })).toEqual([
      'parâmetro inicio (query) obrigatório ausente',
    ]);
  });

  it('checks an answer against the declared status and schema', () => {
    const route = pixRoute('GET', `/cob/${TXID}`)!;
    expect(route).toMatchObject({ template: '/cob/{txid}', params: { txid: TXID } });
    expect(pixResponseProblems(route, 418, {})[0]).toMatch(/418 não declarado/);
    expect(pixResponseProblems(route, 200, { status: 'ATIVA' })[0]).toMatch(/must have required property 'txid'/);
  });
});
