import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyNetworkError, parseRetryAfter, ServiceHttpError, ServiceNetworkError, type NfceDocument } from './api-client.ts';
import { backoffMs, decideCancel, decideEmit, decidePoll, decideVoid, DEFAULT_RETRY, documentOutcome, retryAfterMs } from './outbox-rules.ts';
import { failureOf, type Failure, type Result } from './failures.ts';

const policy = DEFAULT_RETRY;
const half = () => 0.5;
const fail = (f: Failure): Result<never> => ({ ok: false, failure: f });
const http = (status: number, code: string, message = 'mensagem do serviço', extra: Partial<Extract<Failure, { kind: 'http' }>> = {}): Failure => ({
  kind: 'http',
  status,
  code,
  message,
  details: [],
  ...extra,
});
const net = (failure: 'refused' | 'timeout' | 'reset' | 'other'): Failure => ({ kind: 'network', failure, message: `rede: ${failure}` });

function doc(status: NfceDocument['status'], over: Partial<NfceDocument> = {}): NfceDocument {
  return {
    id: 'd1',
    chave: '35261111222333000181650010000000011000000011',
    numero: 1,
    serie: 1,
    status,
    codigo_status: status === 'processando' ? null : status === 'rejeitado' ? '391' : '100',
    motivo: status === 'rejeitado' ? 'Não informados os dados do cartão' : 'Autorizado o uso da NF-e',
    protocolo: status === 'autorizado' || status === 'cancelado' ? '135260000000001' : null,
    autorizado_em: status === 'autorizado' || status === 'cancelado' ? '2026-11-22T12:00:00-03:00' : null,
    cancelado_em: status === 'cancelado' ? '2026-11-22T12:05:00-03:00' : null,
    valor_total: '18.90',
    qrcode: 'https://qr',
    url_consulta: 'https://consulta',
    contingencia: false,
    protocolo_cancelamento: status === 'cancelado' ? '135260000000002' : null,
    codigo_status_cancelamento: status === 'cancelado' ? '135' : null,
    motivo_cancelamento: status === 'cancelado' ? 'Evento registrado e vinculado a NF-e' : null,
    emitido_em: '2026-11-22T11:59:00-03:00',
    ambiente: 'homologacao',
    referencia_externa: 'k1',
    criado_em: '2026-11-22T11:59:00-03:00',
    ...over,
  };
}

describe('backoff', () => {
  it('grows exponentially from the base, is capped, and keeps half of it fixed', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 500, 30_000, () => 1))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(40, 500, 30_000, () => 1)).toBe(30_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
        const d = backoffMs(n, 500, 30_000, () => r);
        const full = Math.min(30_000, 500 * 2 ** (n - 1));
        expect(d).toBeGreaterThanOrEqual(full / 2);
        expect(d).toBeLessThanOrEqual(full);
      }),
    );
  });

  it('never comes back before Retry-After', () => {
    expect(retryAfterMs(2, 1000, () => 0)).toBe(2000);
    expect(retryAfterMs(2, 1000, () => 0.999)).toBeLessThanOrEqual(2200);
    expect(retryAfterMs(undefined, 1000, () => 0)).toBe(1000);
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('emission: POST /api/v1/nfce', () => {
  it('202: accepted, poll soon', () => {
    const accepted = { id: 'd1', chave: 'k', status: 'processando', message: 'ok', autoridade: { situacao: 'disponivel', desde: null } } as const;
    const d = decideEmit({ ok: true, value: { status: 202, replay: false, body: accepted } }, policy, half);
    expect(d).toEqual({ action: 'accepted', accepted, pollInMs: policy.pollFirstMs });
  });

  it('200 replay: the document as it is now is recorded', () => {
    const replay = doc('autorizado', { idempotent_replay: true });
    expect(decideEmit({ ok: true, value: { status: 200, replay: true, body: replay } }, policy, half)).toEqual({ action: 'settled', document: replay });
  });

  it('409 naming the document in flight: follow it after Retry-After', () => {
    const d = decideEmit(fail(http(409, 'em_processamento', 'em processamento', { retryAfterSeconds: 2, documentId: 'd9' })), policy, () => 0);
    expect(d).toEqual({ action: 'poll', serviceId: 'd9', inMs: 2000, note: expect.stringMatching(/ainda está em andamento/) });
  });

  it('409 without an id: the same POST again after Retry-After', () => {
    expect(decideEmit(fail(http(409, 'em_processamento', 'x', { retryAfterSeconds: 1 })), policy, () => 0)).toEqual({
      action: 'retry',
      inMs: 1000,
      transport: false,
      note: expect.stringMatching(/ainda está em andamento/),
    });
  });

  it('5xx, refused, reset, timeout: retry through the queue backoff, never a new key', () => {
    for (const f of [http(500, 'erro_interno'), http(503, 'indisponivel'), net('refused'), net('reset'), net('timeout')]) {
      const d = decideEmit(fail(f), policy, half);
      expect(d.action).toBe('retry');
      expect(d).toMatchObject({ transport: true });
      expect(d).not.toHaveProperty('inMs');
      expect(JSON.stringify(d)).not.toMatch(/key|chave_idem/i);
    }
  });

  it('401, 408, 429: not about the receipt, retried', () => {
    expect(decideEmit(fail(http(401, 'nao_autorizado')), policy, half)).toMatchObject({
      action: 'retry',
      transport: true,
      note: expect.stringMatching(/token/),
    });
    expect(decideEmit(fail(http(429, 'muitas', 'devagar', { retryAfterSeconds: 5 })), policy, () => 0)).toMatchObject({ action: 'retry', inMs: 5000 });
  });

  it("other 4xx: refused, in the terminal's words, with the fields the fiscal checks name", () => {
    const d = decideEmit(
      fail(http(422, 'validacao', 'A NFC-e tem problemas', { details: [{ field: 'det[0].prod.NCM', message: 'NCM inexistente' }] })),
      policy,
      half,
    );
    expect(d).toEqual({
      action: 'refused',
      message: 'O serviço de emissão recusou a NFC-e: a SEFAZ não aceitaria os dados do documento (item 1, NCM: NCM inexistente).',
    });
    for (const [status, code] of [
      [400, 'requisicao_invalida'],
      [413, 'payload_muito_grande'],
      [422, 'chave_idempotencia_reutilizada'],
      [422, 'csc_nao_configurado'],
    ] as const) {
      expect(decideEmit(fail(http(status, code)), policy, half).action).toBe('refused');
    }
  });
});

describe('polling: GET /api/v1/nfce/{id}', () => {
  it('processando: poll again, slower each time, capped', () => {
    const delays = [0, 1, 2, 3, 10, 30].map((n) => {
      const d = decidePoll({ ok: true, value: doc('processando') }, n, policy, () => 1);
      expect(d.action).toBe('poll');
      return (d as { inMs: number }).inMs;
    });
    expect(delays).toEqual([200, 400, 800, 1000, 1000, 1000]);
  });

  it('autorizado, rejeitado, cancelado: final', () => {
    for (const s of ['autorizado', 'rejeitado', 'cancelado'] as const) {
      expect(decidePoll({ ok: true, value: doc(s) }, 0, policy, half)).toEqual({ action: 'final', document: doc(s) });
    }
  });

  it('404: the service does not know the id; send again with the same key', () => {
    expect(decidePoll(fail(http(404, 'nao_encontrado')), 3, policy, half)).toMatchObject({ action: 'resend' });
  });

  it('transport failures: retry', () => {
    expect(decidePoll(fail(net('timeout')), 0, policy, half)).toMatchObject({ action: 'retry', transport: true });
  });

  it('another 4xx: refused, naming the consultation', () => {
    expect(decidePoll(fail(http(403, 'proibido', 'sem acesso')), 0, policy, half)).toEqual({
      action: 'refused',
      message: expect.stringMatching(/^O serviço de emissão recusou a consulta da NFC-e: .*HTTP 403, proibido/),
    });
  });
});

describe('what a document means for the receipt', () => {
  it('autorizado: authorized, with every fact the receipt shows; entry done', () => {
    expect(documentOutcome(doc('autorizado'))).toEqual({
      receipt: {
        service_id: 'd1',
        chave: '35261111222333000181650010000000011000000011',
        codigo_status: '100',
        motivo: 'Autorizado o uso da NF-e',
        state: 'authorized',
        protocolo: '135260000000001',
        autorizado_em: '2026-11-22T12:00:00-03:00',
        cancelado_em: null,
        qrcode: 'https://qr',
        url_consulta: 'https://consulta',
        attention: null,
      },
      entry: 'done',
    });
  });

  it('autorizado com alerta (cStat 120, NT 2026.002): authorized like 100, nothing for the operator to do', () => {
    const o = documentOutcome(doc('autorizado', { codigo_status: '120', motivo: 'Autorizado o uso da NF-e com alerta' }));
    expect(o.entry).toBe('done');
    expect(o.receipt).toMatchObject({ state: 'authorized', codigo_status: '120', protocolo: '135260000000001', attention: null });
  });

  it('rejeitado: waits for a correction, with the cStat and the reason, same number', () => {
    const o = documentOutcome(doc('rejeitado'));
    expect(o.entry).toBe('blocked');
    expect(o.receipt.state).toBe('rejected');
    expect(o.receipt.attention).toMatch(/rejeitada pela SEFAZ \(391\): Não informados os dados do cartão.*mesmo/);
  });

  it('processando: keep polling', () => {
    expect(documentOutcome(doc('processando'))).toMatchObject({ entry: 'sent', receipt: { state: 'processing' } });
  });

  it('539, or a 204 naming another key: the number is taken, the sale takes the next one (never "correct and resend the same number")', () => {
    const other = '35261111222333000181650010000000011999999990';
    const taken = (codigo: string, motivo: string) => documentOutcome(doc('rejeitado', { codigo_status: codigo, motivo }));
    expect(taken('539', `Rejeição: Duplicidade de NF-e, com diferença na Chave de Acesso [chNFe:${other}][nProt:135260000000009]`).entry).toBe('renumber');
    expect(taken('204', `Rejeição: Duplicidade de NF-e [chNFe:${other}]`).entry).toBe('renumber');
    // A 204 of this very key is the receipt itself (the service settles it); a 204 naming no key is not known to be another's.
    expect(taken('204', `Rejeição: Duplicidade de NF-e [chNFe:${doc('rejeitado').chave}]`).entry).toBe('blocked');
    expect(taken('204', 'Rejeição: Duplicidade de NF-e [nRec:351000000000001]').entry).toBe('blocked');
  });
});

describe('cancellation and void', () => {
  it('cancel: 200 cancelado done; prazo_expirado refused with the return as remedy; estado_invalido verified; network retried', () => {
    expect(decideCancel({ ok: true, value: doc('cancelado') }, policy, half)).toMatchObject({ action: 'cancelled' });
    expect(decideCancel(fail(http(422, 'prazo_expirado', 'Prazo encerrado; use POST /api/v1/nfe/devolucao')), policy, half)).toEqual({
      action: 'refused',
      message:
        'O serviço de emissão recusou o cancelamento: o prazo de cancelamento (30 minutos após a autorização) terminou: para desfazer a venda, faça a devolução.',
      remedy: 'devolucao',
    });
    expect(decideCancel(fail(http(422, 'estado_invalido')), policy, half)).toMatchObject({ action: 'verify' });
    expect(decideCancel(fail(net('reset')), policy, half)).toMatchObject({ action: 'retry', transport: true });
    expect(decideCancel(fail(http(400, 'requisicao_invalida')), policy, half)).toMatchObject({ action: 'refused' });
  });

  it('void: a repeat that meets its own earlier success (563 / 206) is a success; a first refusal is not', () => {
    const ok = { protocolo: '1', codigo_status: '102', motivo: 'Inutilização de número homologado' };
    expect(decideVoid({ ok: true, value: ok }, 0, policy, half)).toEqual({ action: 'voided', result: ok });
    const dup = fail(http(422, 'validacao', 'Rejeição 563: Já existe pedido de inutilização com a mesma faixa'));
    expect(decideVoid(dup, 1, policy, half)).toEqual({ action: 'voided', result: null });
    expect(decideVoid(dup, 0, policy, half)).toMatchObject({ action: 'refused' });
    expect(decideVoid(fail(http(422, 'validacao', 'Rejeição 241: Um número da faixa já foi utilizado')), 2, policy, half)).toMatchObject({ action: 'refused' });
    expect(decideVoid(fail(net('refused')), 0, policy, half)).toMatchObject({ action: 'retry' });
  });
});

describe('failures from the client', () => {
  it('tells an HTTP answer from a network failure', () => {
    const e409 = new ServiceHttpError(409, { error: { code: 'em_processamento', message: 'aguarde' }, id: 'd7' }, 1);
    expect(failureOf(e409)).toEqual({
      kind: 'http',
      status: 409,
      code: 'em_processamento',
      message: 'aguarde',
      details: [],
      retryAfterSeconds: 1,
      documentId: 'd7',
    });
    const garbled = new ServiceHttpError(502, '<html>bad gateway</html>', undefined);
    expect(failureOf(garbled)).toMatchObject({ kind: 'http', status: 502, code: 'http_502' });
    expect(failureOf(new ServiceNetworkError('refused', 'ECONNREFUSED'))).toMatchObject({ kind: 'network', failure: 'refused' });
    expect(() => failureOf(new TypeError('bug'))).toThrow('bug');
  });

  it('classifies what fetch throws', () => {
    const fetchError = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
    expect(classifyNetworkError(fetchError('ECONNREFUSED')).kind).toBe('refused');
    expect(classifyNetworkError(fetchError('ECONNREFUSED')).mayHaveReachedService).toBe(false);
    expect(classifyNetworkError(fetchError('UND_ERR_SOCKET')).kind).toBe('reset');
    expect(classifyNetworkError(fetchError('UND_ERR_SOCKET')).mayHaveReachedService).toBe(true);
    expect(classifyNetworkError(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' })).kind).toBe('timeout');
    expect(classifyNetworkError(new TypeError('terminated')).kind).toBe('reset');
  });
});
