import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { ApiError, apiFieldPath, toApiError, validationDetails } from './errors.ts';

describe('apiFieldPath', () => {
  it('turns JSON pointers into the API path style', () => {
    expect(apiFieldPath('')).toBe('');
    expect(apiFieldPath('/ide/nNF')).toBe('ide.nNF');
    expect(apiFieldPath('/det/0/prod/NCM')).toBe('det[0].prod.NCM');
    expect(apiFieldPath('/pag/12/card/tpIntegra')).toBe('pag[12].card.tpIntegra');
    expect(apiFieldPath('/det/0/imposto/ICMS/ICMS40/orig')).toBe('det[0].imposto.ICMS.ICMS40.orig');
    expect(apiFieldPath('/a~1b/c~0d')).toBe('a/b.c~d');
  });
});

describe('validationDetails', () => {
  it('names a missing or unexpected property by its own path, and caps the list', () => {
    const errors = [
      { keyword: 'required', instancePath: '/det/1/prod', schemaPath: '#/x', params: { missingProperty: 'cProd' } },
      { keyword: 'additionalProperties', instancePath: '', schemaPath: '#/y', params: { additionalProperty: 'foo' } },
      { keyword: 'required', instancePath: '/det/1/prod', schemaPath: '#/x', params: { missingProperty: 'cProd' } },
    ];
    expect(validationDetails(errors, 'body')).toEqual([
      { field: 'det[1].prod.cProd', message: 'obrigatório' },
      { field: 'foo', message: 'campo não permitido' },
    ]);
    const many = Array.from({ length: 80 }, (_, i) => ({ keyword: 'type', instancePath: `/det/${i}`, schemaPath: '#/t', params: { type: 'object' } }));
    expect(validationDetails(many, 'body')).toHaveLength(50);
  });

  it('names the query parameter of a query-string error', () => {
    expect(validationDetails([{ keyword: 'maximum', instancePath: '/limit', schemaPath: '#/m', params: { limit: 200 } }], 'querystring')).toEqual([
      { field: 'limit', message: 'deve ser no máximo 200' },
    ]);
  });
});

describe('ApiError', () => {
  it('takes its status from the code and renders the contract body', () => {
    const e = new ApiError('em_processamento', 'aguarde', { id: 'doc-1', headers: { 'retry-after': '1' } });
    expect(e.status).toBe(409);
    expect(e.toBody()).toEqual({ error: { code: 'em_processamento', message: 'aguarde', id: 'doc-1' }, id: 'doc-1' });
    expect(new ApiError('validacao', 'x', { details: [] }).toBody()).toEqual({ error: { code: 'validacao', message: 'x' } });
  });
});

describe('toApiError', () => {
  it('a full disk (SQLite or the system) is a retryable 503 whose message says what to do, not an internal error', () => {
    const request = { routeOptions: { config: {} } } as unknown as FastifyRequest;
    for (const code of ['SQLITE_FULL', 'ENOSPC']) {
      const e = toApiError(Object.assign(new Error('database or disk is full'), { code }), request);
      expect(e.status).toBe(503);
      expect(e.code).toBe('servico_indisponivel');
      expect(e.message).toMatch(/^O serviço de emissão não pôde gravar: O disco está cheio.*libere espaço/);
      expect(e.options.headers).toEqual({ 'retry-after': '30' });
    }
    expect(toApiError(new TypeError('bug'), request).code).toBe('erro_interno');
  });
});
