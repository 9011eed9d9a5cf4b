import { describe, expect, it } from 'vitest';
import { DEFAULT_REQUEST_TIMEOUT_MS, httpTimeouts, requestTimeoutFromEnv } from './timeouts.ts';

describe('request timeouts', () => {
  it('BALCAO_REQUEST_TIMEOUT_MS: default 30 s; an integer of 100 to 600000, else an error naming the variable', () => {
    expect(requestTimeoutFromEnv({})).toBe(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(requestTimeoutFromEnv({ BALCAO_REQUEST_TIMEOUT_MS: ' 1500 ' })).toBe(1500);
    for (const bad of ['99', '600001', '1.5', '-1', '1e3', 'abc']) {
      expect(() => requestTimeoutFromEnv({ BALCAO_REQUEST_TIMEOUT_MS: bad }), bad).toThrow(/BALCAO_REQUEST_TIMEOUT_MS inválido/);
    }
  });

  it('headers within the request timeout and at most 10 s; the check runs often enough to hold the bound', () => {
    expect(httpTimeouts(30_000)).toEqual({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 10_000, connectionsCheckingInterval: 1_000 });
    expect(httpTimeouts(1_500)).toEqual({ requestTimeout: 1_500, headersTimeout: 1_500, keepAliveTimeout: 10_000, connectionsCheckingInterval: 150 });
  });
});
