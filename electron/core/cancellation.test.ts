import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CANCEL_SAFETY_MARGIN_MS, CANCEL_WINDOW_MS, cancellationInfo, localDeadline, requestCancellation, windowStart } from './cancellation.ts';
import { seedDemoCatalog } from './catalog.ts';
import { TerminalError } from './errors.ts';
import { authorizeManager, createManager, MAX_FAILED_PINS, PIN_LOCK_MS, verifyPin, hashPin } from './managers.ts';
import { PosStore } from './pos-store.ts';
import type { ReceiptRow } from './store/receipts.ts';
import * as sales from './sales.ts';
import { iso } from '../../base/common/clock.ts';

const MIN = 60_000;
let dir: string;
let store: PosStore;
let now: number;
const clock = () => now;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-pos-cancel-'));
  store = PosStore.open(dir);
  now = Date.parse('2026-11-22T15:00:00.000Z');
  store.series.ensureSeries(1);
  seedDemoCatalog(store, iso(now));
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A finished sale whose receipt the service reported authorized at `autorizadoEm`, seen by us at `seenAt`. */
function authorizedReceipt(autorizadoEm: string, seenAt: number): ReceiptRow {
  const ctx = { store, clock, serie: 1 };
  const sale = sales.openSale(ctx);
  sales.addItem(ctx, sale.id, { code: '1001' });
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 1890 });
  const { receipt } = sales.finishSale(ctx, sale.id);
  store.receipts.updateReceipt(
    receipt.id,
    { state: 'authorized', service_id: 'svc-1', autorizado_em: autorizadoEm, authorized_seen_at: iso(seenAt) },
    iso(now),
  );
  return store.receipts.receipt(receipt.id)!;
}

describe('the cancellation window, as the terminal measures it', () => {
  it('starts at the earlier of autorizado_em and the moment the terminal learned it; ends 60 s early', () => {
    const seen = Date.parse('2026-11-22T15:00:02.000Z');
    // Service clock behind ours by 10 min: its autorizado_em is the earlier, so the bound.
    expect(windowStart({ autorizado_em: '2026-11-22T11:50:01-03:00', authorized_seen_at: iso(seen) })).toBe(Date.parse('2026-11-22T14:50:01Z'));
    // Service clock ahead by 31 min: our own observation bounds it.
    expect(windowStart({ autorizado_em: '2026-11-22T12:31:00-03:00', authorized_seen_at: iso(seen) })).toBe(seen);
    expect(localDeadline({ autorizado_em: null, authorized_seen_at: iso(seen) })).toBe(seen + CANCEL_WINDOW_MS - CANCEL_SAFETY_MARGIN_MS);
    expect(windowStart({ autorizado_em: null, authorized_seen_at: null })).toBeUndefined();
    expect(CANCEL_WINDOW_MS - CANCEL_SAFETY_MARGIN_MS).toBe(29 * MIN);
  });

  it("with the service's clock known (offset), counts from autorizado_em on that clock and gives the deadline in local time", () => {
    const seen = Date.parse('2026-11-22T15:00:02.000Z');
    // The service's clock runs 31 minutes ahead of ours and said so in its answers' Date.
    const ahead = { autorizado_em: '2026-11-22T12:31:00-03:00', authorized_seen_at: iso(seen) };
    expect(windowStart(ahead, 31 * MIN - 2000)).toBe(Date.parse('2026-11-22T15:31:00Z'));
    expect(localDeadline(ahead, 31 * MIN - 2000)).toBe(seen + 29 * MIN);
    // The service's clock moved forward 31 minutes after the authorization was seen: the window,
    // which counts on that clock, is over although the terminal's own clock barely moved.
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    expect(cancellationInfo(r, now + 5000, 31 * MIN)).toEqual({ allowed: false, deadline: '2026-11-22T14:58:00.000Z', secondsLeft: 0, remedy: 'devolucao' });
    expect(cancellationInfo(r, now + 5000, 0)).toMatchObject({ allowed: true, remedy: 'cancelar' });
  });

  it("refuses the request too once the window is over on the service's clock", async () => {
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    const manager = await createManager(store, clock, { name: 'Gerente', pin: '1111' });
    const row = await authorizeManager(store, clock, { managerId: manager.id, pin: '1111' }, 'cancelamento');
    const request = (serviceOffsetMs: number) => () =>
      requestCancellation(store, clock, { receipt: r, manager: row, justification: 'Cliente desistiu da compra', serviceOffsetMs });
    expect(request(31 * MIN)).toThrow(expect.objectContaining({ code: 'prazo_expirado', remedy: 'devolucao' }));
    expect(store.receipts.receipt(r.id)!.state).toBe('authorized');
    expect(request(0)()).toBeGreaterThan(0);
  });

  it('shows the time left, and the return once it is over', () => {
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    expect(cancellationInfo(r, now)).toEqual({ allowed: true, deadline: '2026-11-22T15:29:00.000Z', secondsLeft: 29 * 60, remedy: 'cancelar' });
    expect(cancellationInfo(r, now + 28 * MIN + 59_500)).toMatchObject({ allowed: true, secondsLeft: 0 });
    expect(cancellationInfo(r, now + 29 * MIN)).toEqual({ allowed: false, deadline: '2026-11-22T15:29:00.000Z', secondsLeft: 0, remedy: 'devolucao' });
    expect(cancellationInfo({ ...r, state: 'rejected' }, now)).toEqual({ allowed: false, deadline: null, secondsLeft: null, remedy: null });
  });
});

describe('requesting a cancellation', () => {
  it('queues a command with its own key, moves the receipt to cancelling and audits the manager and the reason', async () => {
    const manager = await createManager(store, clock, { name: 'Gerente Ana', pin: '4321' });
    const row = await authorizeManager(store, clock, { managerId: manager.id, pin: '4321' }, 'cancelamento');
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    now += 10 * MIN;
    const seq = requestCancellation(store, clock, { receipt: r, manager: row, justification: 'Cliente desistiu da compra no caixa' });
    const entry = store.outbox.outboxEntry(seq)!;
    expect(entry).toMatchObject({ kind: 'cancel', state: 'pending', receipt_id: r.id });
    expect(entry.idempotency_key).not.toBe(r.idempotency_key);
    expect(JSON.parse(entry.payload)).toEqual({ justificativa: 'Cliente desistiu da compra no caixa' });
    expect(store.receipts.receipt(r.id)!.state).toBe('cancelling');
    expect(store.managers.auditLog(r.id)).toEqual([
      expect.objectContaining({
        actor_kind: 'manager',
        actor_id: manager.id,
        actor_name: 'Gerente Ana',
        action: 'cancelamento_solicitado',
        reason: 'Cliente desistiu da compra no caixa',
      }),
    ]);
    // A second request while the first is live.
    expect(() => requestCancellation(store, clock, { receipt: r, manager: row, justification: 'Cliente desistiu da compra no caixa' })).toThrow(
      /já foi cancelada/,
    );
  });

  it('refuses locally from 29 minutes after authorization, offering the return; a test may force it', async () => {
    const manager = await createManager(store, clock, { name: 'Gerente', pin: '1111' });
    const row = store.managers.manager(manager.id)!;
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    now += 29 * MIN;
    let error: unknown;
    try {
      requestCancellation(store, clock, { receipt: r, manager: row, justification: 'Cliente desistiu da compra' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TerminalError);
    expect(error).toMatchObject({ code: 'prazo_expirado', remedy: 'devolucao', message: expect.stringMatching(/devolução/) });
    expect(store.outbox.allOutbox().filter((e) => e.kind === 'cancel')).toEqual([]);
    requestCancellation(store, clock, { receipt: r, manager: row, justification: 'Cliente desistiu da compra', skipLocalWindowCheck: true });
    expect(store.receipts.receipt(r.id)!.state).toBe('cancelling');
  });

  it('checks the justification: 15 to 255 characters', async () => {
    const manager = await createManager(store, clock, { name: 'Gerente', pin: '1111' });
    const r = authorizedReceipt('2026-11-22T12:00:00-03:00', now);
    for (const justification of ['curta demais', 'x'.repeat(256), '']) {
      expect(() => requestCancellation(store, clock, { receipt: r, manager: store.managers.manager(manager.id)!, justification })).toThrow(
        expect.objectContaining({ code: 'justificativa_invalida' }),
      );
    }
  });
});

describe('managers', () => {
  it('stores only a scrypt hash of the PIN', async () => {
    const hash = await hashPin('123456');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(hash).not.toContain('123456');
    expect(await verifyPin('123456', hash)).toBe(true);
    expect(await verifyPin('123457', hash)).toBe(false);
    expect(await hashPin('123456')).not.toBe(hash); // salted
    await expect(hashPin('12a4')).rejects.toThrow(/4 a 12 dígitos/);
  });

  it('locks a manager after five wrong PINs in a row, audits each, and lets the right PIN in after the lock', async () => {
    const m = await createManager(store, clock, { name: 'Gerente', pin: '2468' });
    for (let i = 0; i < MAX_FAILED_PINS; i++) {
      await expect(authorizeManager(store, clock, { managerId: m.id, pin: '0000' }, 'cancelamento')).rejects.toMatchObject({ code: 'pin_invalido' });
    }
    await expect(authorizeManager(store, clock, { managerId: m.id, pin: '2468' }, 'cancelamento')).rejects.toMatchObject({ code: 'gerente_bloqueado' });
    expect(store.managers.auditLog().filter((a) => a.action === 'pin_recusado')).toHaveLength(MAX_FAILED_PINS);
    now += PIN_LOCK_MS;
    await expect(authorizeManager(store, clock, { managerId: m.id, pin: '2468' }, 'cancelamento')).resolves.toMatchObject({ id: m.id });
    expect(store.managers.manager(m.id)).toMatchObject({ failed_attempts: 0, locked_until: null });
  });
});
