// Managers (their PIN hash and lock-out) and the append-only audit log of what each person did.

import { StorePart } from './database.ts';

export type ManagerRow = {
  id: string;
  name: string;
  pin_hash: string;
  active: number;
  failed_attempts: number;
  locked_until: number | null;
  created_at: string;
};

export type AuditRow = {
  id: number;
  at: string;
  actor_kind: 'manager' | 'operator' | 'system';
  actor_id: string;
  actor_name: string;
  action: string;
  receipt_id: string | null;
  reason: string | null;
  details: string | null;
};

export class ManagerAuditStore extends StorePart {
  insertManager(m: Omit<ManagerRow, 'active' | 'failed_attempts' | 'locked_until'>): void {
    this.st('INSERT INTO managers (id, name, pin_hash, created_at) VALUES (@id, @name, @pin_hash, @created_at)').run(m);
  }

  manager(id: string): ManagerRow | undefined {
    return this.st('SELECT * FROM managers WHERE id = ?').get(id) as ManagerRow | undefined;
  }

  activeManagers(): ManagerRow[] {
    return this.st('SELECT * FROM managers WHERE active = 1 ORDER BY name, id').all() as ManagerRow[];
  }

  setManagerPinState(id: string, failedAttempts: number, lockedUntil: number | null): void {
    this.st('UPDATE managers SET failed_attempts = ?, locked_until = ? WHERE id = ?').run(failedAttempts, lockedUntil, id);
  }

  appendAudit(a: Omit<AuditRow, 'id'>): void {
    this.st(
      `INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, action, receipt_id, reason, details)
       VALUES (@at, @actor_kind, @actor_id, @actor_name, @action, @receipt_id, @reason, @details)`,
    ).run(a);
  }

  auditLog(receiptId?: string): AuditRow[] {
    return (
      receiptId === undefined
        ? this.st('SELECT * FROM audit_log ORDER BY id').all()
        : this.st('SELECT * FROM audit_log WHERE receipt_id = ? ORDER BY id').all(receiptId)
    ) as AuditRow[];
  }
}
