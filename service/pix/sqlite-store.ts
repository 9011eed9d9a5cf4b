// PixStore on the service's SQLite database (migrations/service/20261206T0900_i26f_pix_webhook.sql).

import type Database from 'better-sqlite3';
import type { PixStore, ReceivedPix } from './store.ts';

export type PixBlocks = {
  statement(sql: string): Database.Statement;
  transaction<T>(fn: () => T): T;
};

type ReceivedRow = { end_to_end_id: string; txid: string | null; valor: string; horario: string; received_at: string };

export const receivedOf = (r: ReceivedRow): ReceivedPix => ({
  endToEndId: r.end_to_end_id,
  txid: r.txid,
  valor: r.valor,
  horario: r.horario,
  receivedAt: r.received_at,
});

export class SqlitePixStore implements PixStore {
  constructor(private readonly b: PixBlocks) {}

  async setWebhookSecret(companyId: string, secretSha256: Buffer, at: Date): Promise<void> {
    this.b
      .statement(
        `INSERT INTO pix_webhook_secrets (company_id, secret_sha256, created_at) VALUES (?, ?, ?)
         ON CONFLICT (company_id) DO UPDATE SET secret_sha256 = excluded.secret_sha256, created_at = excluded.created_at`,
      )
      .run(companyId, secretSha256, at.toISOString());
  }

  async companyOfWebhookSecret(secretSha256: Buffer): Promise<string | undefined> {
    return this.b.statement('SELECT company_id FROM pix_webhook_secrets WHERE secret_sha256 = ?').pluck().get(secretSha256) as string | undefined;
  }

  async hasWebhookSecret(companyId: string): Promise<boolean> {
    return this.b.statement('SELECT 1 FROM pix_webhook_secrets WHERE company_id = ?').get(companyId) !== undefined;
  }

  async recordReceived(companyId: string, pix: readonly Omit<ReceivedPix, 'receivedAt'>[], at: Date): Promise<number> {
    const insert = this.b.statement(
      `INSERT INTO pix_received (company_id, end_to_end_id, txid, valor, horario, received_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (company_id, end_to_end_id) DO NOTHING`,
    );
    return this.b.transaction(() => pix.reduce((n, p) => n + insert.run(companyId, p.endToEndId, p.txid, p.valor, p.horario, at.toISOString()).changes, 0));
  }

  async receivedOfTxid(companyId: string, txid: string): Promise<ReceivedPix[]> {
    const rows = this.b
      .statement(
        'SELECT end_to_end_id, txid, valor, horario, received_at FROM pix_received WHERE company_id = ? AND txid = ? ORDER BY received_at, end_to_end_id',
      )
      .all(companyId, txid) as ReceivedRow[];
    return rows.map(receivedOf);
  }
}
