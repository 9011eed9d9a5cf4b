// The charge's decisions (charge-rules.ts), one PSP answer at a time, no PSP needed.
import { describe, expect, it } from 'vitest';
import { decide, NEVER, nextCall, pixCents, secondPayments, secondRefund, WATCH_AFTER_MS } from './charge-rules.ts';
import type { PixChargeRow } from './pix-store.ts';

const NOW = Date.parse('2026-11-27T23:30:00Z');
const charge = (patch: Partial<PixChargeRow> = {}): PixChargeRow => ({
  txid: '0123456789abcdef0123456789abcdef01',
  sale_id: '01234567-89ab-cdef-0123-456789abcdef',
  seq: 1,
  amount_cents: 1890,
  state: 'active',
  location: 'psp.example/qr/v2/abc',
  br_code: null,
  expires_at: '2026-11-27T23:35:00.000Z',
  e2eid: null,
  paid_cents: null,
  paid_at: null,
  refund_id: null,
  refund_state: null,
  attempts: 0,
  next_try_at: '2026-11-27T23:30:00.000Z',
  last_error: null,
  created_at: '2026-11-27T23:30:00.000Z',
  updated_at: '2026-11-27T23:30:00.000Z',
  qr_slip_at: null,
  qr_slip_error: null,
  ...patch,
});
const answer = (status: number, body?: unknown) => ({ kind: 'answer' as const, status, body });
const paidBody = (horario: string) => ({ status: 'CONCLUIDA', pix: [{ endToEndId: 'E99990001202611272331abcdefghijk', valor: '18.90', horario }] });
const fixed = () => 0.5;

describe('charge rules', () => {
  it('creates first, and reads before creating again once an attempt had no clear answer', () => {
    expect(nextCall(charge({ state: 'creating' }))).toBe('create');
    expect(nextCall(charge({ state: 'creating', attempts: 1 }))).toBe('read');
    expect(decide('create', charge({ state: 'creating' }), { kind: 'no-answer', error: 'ECONNRESET' }, NOW, undefined, fixed).patch).toMatchObject({
      attempts: 1,
      last_error: 'PSP sem resposta (ECONNRESET)',
    });
    expect(decide('read', charge({ state: 'creating', attempts: 1 }), answer(404), NOW)).toEqual({
      patch: { state: 'creating', attempts: 0 },
      follow: 'create',
    });
    expect(decide('create', charge({ state: 'creating' }), answer(400, { type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida' }), NOW).follow).toBe(
      'read',
    );
    expect(decide('create', charge({ state: 'creating' }), answer(201, { location: 'x/qr/v2/1' }), NOW).patch).toMatchObject({
      state: 'active',
      location: 'x/qr/v2/1',
    });
  });

  it('paid before it expired while the cashier waits: paid; after giving up or after expiry: paid late', () => {
    expect(decide('read', charge(), answer(200, paidBody('2026-11-27T23:31:00Z')), NOW).patch).toMatchObject({
      state: 'paid',
      paid_cents: 1890,
      e2eid: 'E99990001202611272331abcdefghijk',
    });
    expect(decide('read', charge({ state: 'cancelling' }), answer(200, paidBody('2026-11-27T23:31:00Z')), NOW).patch.state).toBe('paid_late');
    expect(decide('read', charge(), answer(200, paidBody('2026-11-27T23:36:00Z')), NOW).patch.state).toBe('paid_late');
  });

  it('polls an unpaid charge with a growing interval, until it expires; removes it when the cashier gave up', () => {
    const first = decide('read', charge(), answer(200, { status: 'ATIVA' }), NOW).patch;
    const later = decide('read', charge({ attempts: 6 }), answer(200, { status: 'ATIVA' }), NOW).patch;
    expect(Date.parse(later.next_try_at!) - NOW).toBeGreaterThan(Date.parse(first.next_try_at!) - NOW);
    expect(Date.parse(later.next_try_at!) - NOW).toBeLessThanOrEqual(5_000);
    expect(decide('read', charge(), answer(200, { status: 'ATIVA' }), Date.parse('2026-11-27T23:35:00Z')).patch.state).toBe('expired');
    expect(decide('read', charge({ state: 'cancelling' }), answer(200, { status: 'ATIVA' }), NOW).follow).toBe('remove');
    expect(decide('remove', charge({ state: 'cancelling' }), answer(200, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }), NOW).patch.state).toBe('cancelled');
  });

  it('5xx, 429 and 401 are transient; another 4xx ends the charge with the PSP words', () => {
    for (const status of [500, 503, 429, 401]) expect(decide('read', charge(), answer(status), NOW, undefined, fixed).patch).toMatchObject({ attempts: 1 });
    expect(decide('create', charge({ state: 'creating' }), answer(403, { detail: 'Escopo insuficiente' }), NOW).patch).toMatchObject({
      state: 'cancelled',
      last_error: 'PSP respondeu HTTP 403: Escopo insuficiente',
    });
  });

  it('records the refund until the PSP says DEVOLVIDO', () => {
    expect(nextCall(charge({ state: 'refunding' }))).toBe('refund');
    expect(decide('refund', charge({ state: 'refunding' }), answer(201, { status: 'EM_PROCESSAMENTO' }), NOW).patch).toMatchObject({
      refund_state: 'EM_PROCESSAMENTO',
    });
    expect(nextCall(charge({ state: 'refunding', refund_state: 'EM_PROCESSAMENTO' }))).toBe('read-refund');
    expect(decide('read-refund', charge({ state: 'refunding' }), answer(200, { status: 'DEVOLVIDO' }), NOW).patch).toMatchObject({
      state: 'refunded',
      refund_state: 'DEVOLVIDO',
    });
    expect(pixCents('18.90')).toBe(1890);
  });

  it('watches a charge given up on for an hour: a PIX the PSP still reports goes to the manager; then it stops', () => {
    const removed = charge({ state: 'cancelled', attempts: 3 });
    expect(nextCall(removed)).toBe('read');
    expect(decide('read', removed, answer(200, paidBody('2026-11-27T23:31:00Z')), NOW).patch).toMatchObject({
      state: 'paid_late',
      e2eid: 'E99990001202611272331abcdefghijk',
      paid_cents: 1890,
      next_try_at: NEVER,
    });
    const quiet = decide('read', removed, answer(200, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }), NOW).patch;
    expect(quiet.state).toBeUndefined();
    expect(Date.parse(quiet.next_try_at!)).toBeGreaterThan(NOW);
    const later = Date.parse(removed.expires_at) + WATCH_AFTER_MS;
    expect(decide('read', charge({ state: 'expired' }), answer(200, { status: 'ATIVA' }), later).patch.next_try_at).toBe(NEVER);
    // Never created at the PSP (404): nothing to watch, and never created again.
    expect(decide('read', removed, answer(404), NOW).patch).toEqual({ attempts: 4, next_try_at: NEVER });
    expect(nextCall(charge({ state: 'cancelled', next_try_at: NEVER }))).toBeUndefined();
  });

  it('paid twice: every PIX beyond the one taken is a second payment, refunded until the PSP ends it', () => {
    const body = paidBody('2026-11-27T23:31:00Z');
    const twice = { ...body, pix: [...body.pix, { endToEndId: 'E99990001202611272332second00000', valor: '18.90', horario: '2026-11-27T23:32:00Z' }] };
    const finished = charge({ state: 'finished', e2eid: 'E99990001202611272331abcdefghijk', next_try_at: '2026-11-27T23:30:00.000Z' });
    expect(nextCall(finished)).toBe('read');
    expect(secondPayments(finished, answer(200, twice))).toEqual([
      { e2eid: 'E99990001202611272332second00000', paidCents: 1890, paidAt: '2026-11-27T23:32:00Z' },
    ]);
    expect(secondPayments(finished, answer(200, body))).toEqual([]);
    // A finished charge read again stays finished (its first PIX is its sale's).
    expect(decide('read', finished, answer(200, twice), NOW).patch.state).toBeUndefined();
    expect(secondRefund(0, answer(201, { status: 'EM_PROCESSAMENTO' }), NOW)).toMatchObject({ refund_state: 'EM_PROCESSAMENTO', attempts: 1 });
    expect(secondRefund(1, answer(200, { status: 'DEVOLVIDO' }), NOW)).toMatchObject({ refund_state: 'DEVOLVIDO', next_try_at: NEVER });
    expect(secondRefund(0, { kind: 'no-answer', error: 'ETIMEDOUT' }, NOW, undefined, fixed)).toMatchObject({
      attempts: 1,
      last_error: 'PSP sem resposta (ETIMEDOUT)',
    });
    expect(secondRefund(0, answer(400, { detail: 'O valor da devolução excede' }), NOW)).toMatchObject({ refund_state: 'NAO_REALIZADO', next_try_at: NEVER });
  });
});
