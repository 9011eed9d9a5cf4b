// Managers and the audit log. A manager authorizes cancellations and voids by PIN; the PIN is
// stored only as a scrypt hash (N=2^15, r=8, p=1: about 32 MiB and tens of milliseconds per
// check, which makes an offline guess of a stolen database slow, and a check at the counter
// unnoticeable). A PIN space is small, so guessing at the counter is slowed too: after
// MAX_FAILED_PINS wrong PINs in a row the manager is locked for PIN_LOCK_MS. Every refusal is
// in the audit log.

import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ManagerView } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { AuditRow, ManagerRow } from './store/managers-audit.ts';
import { iso, type Clock } from '../../base/common/clock.ts';

const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// 128 · N · r bytes of working memory: above Node's 32 MiB default, so the limit is raised.
const MAXMEM = 64 * 1024 * 1024;

export const MAX_FAILED_PINS = 5;
export const PIN_LOCK_MS = 5 * 60_000;

function scrypt(pin: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: MAXMEM };
  return new Promise((resolve, reject) => scryptCb(pin.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))));
}

export function assertPinFormat(pin: unknown): string {
  if (typeof pin !== 'string' || !/^[0-9]{4,12}$/.test(pin)) {
    throw new TerminalError('pin_invalido', 'O PIN deve ter de 4 a 12 dígitos', { field: 'pin' });
  }
  return pin;
}

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash, so they can grow later. */
export async function hashPin(pin: string): Promise<string> {
  assertPinFormat(pin);
  const salt = randomBytes(16);
  const key = await scrypt(pin, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(typeof pin === 'string' ? pin : '', Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

export async function createManager(store: PosStore, clock: Clock, input: { name: string; pin: string }): Promise<ManagerView> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length < 1 || name.length > 80) throw new TerminalError('estado_invalido', 'Nome do gerente: de 1 a 80 caracteres', { field: 'name' });
  const pinHash = await hashPin(input.pin);
  const id = randomUUID();
  store.managers.insertManager({ id, name, pin_hash: pinHash, created_at: iso(clock()) });
  return { id, name };
}

export function listManagers(store: PosStore): ManagerView[] {
  return store.managers.activeManagers().map((m) => ({ id: m.id, name: m.name }));
}

export type Actor = { kind: AuditRow['actor_kind']; id: string; name: string };

export const actorOfManager = (m: ManagerRow): Actor => ({ kind: 'manager', id: m.id, name: m.name });

export const SYSTEM_ACTOR: Actor = { kind: 'system', id: 'terminal', name: 'Terminal' };

export function audit(
  store: PosStore,
  clock: Clock,
  entry: { actor: Actor; action: string; receiptId?: string | null; reason?: string | null; details?: unknown },
): void {
  store.managers.appendAudit({
    at: iso(clock()),
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    actor_name: entry.actor.name,
    action: entry.action,
    receipt_id: entry.receiptId ?? null,
    reason: entry.reason ?? null,
    details: entry.details === undefined ? null : JSON.stringify(entry.details),
  });
}

/**
 * Checks a manager's PIN. Wrong PIN: counted, audited, refused; the fifth in a row locks the
 * manager for five minutes. Right PIN: the count starts over.
 */
export async function authorizeManager(
  store: PosStore,
  clock: Clock,
  auth: { managerId: string; pin: string },
  purpose: string,
  receiptId?: string,
): Promise<ManagerRow> {
  const manager = typeof auth?.managerId === 'string' ? store.managers.manager(auth.managerId) : undefined;
  if (!manager || !manager.active) throw new TerminalError('pin_invalido', 'Gerente não encontrado', { field: 'managerId' });
  if (manager.locked_until !== null && manager.locked_until > clock()) {
    const minutes = Math.ceil((manager.locked_until - clock()) / 60_000);
    throw new TerminalError('gerente_bloqueado', `PIN bloqueado por excesso de tentativas; tente de novo em ${minutes} min`, { field: 'pin' });
  }
  const ok = typeof auth.pin === 'string' && /^[0-9]{4,12}$/.test(auth.pin) && (await verifyPin(auth.pin, manager.pin_hash));
  store.transaction(() => {
    const current = store.managers.manager(manager.id)!;
    if (ok) {
      if (current.failed_attempts !== 0 || current.locked_until !== null) store.managers.setManagerPinState(manager.id, 0, null);
      return;
    }
    const failed = current.failed_attempts + 1;
    const lock = failed >= MAX_FAILED_PINS;
    store.managers.setManagerPinState(manager.id, lock ? 0 : failed, lock ? clock() + PIN_LOCK_MS : current.locked_until);
    audit(store, clock, {
      actor: actorOfManager(manager),
      action: 'pin_recusado',
      receiptId: receiptId ?? null,
      reason: purpose,
      details: { bloqueado: lock },
    });
  });
  if (!ok) throw new TerminalError('pin_invalido', 'PIN incorreto', { field: 'pin' });
  return manager;
}

/** The reason a manager gives for a reprint or a correction: 1 to 255 characters. */
export function managerReason(auth: { reason?: unknown } | undefined, what: string): string {
  const reason = typeof auth?.reason === 'string' ? auth.reason.trim() : '';
  if (!reason || reason.length > 255) throw new TerminalError('justificativa_invalida', `Informe o motivo ${what} (até 255 caracteres)`, { field: 'reason' });
  return reason;
}
