// PixStore on PostgreSQL (migrations/service-postgres/20261206T0900_i26f_pix_webhook.sql), as the
// SQLite part beside it. Two service processes receiving the same redelivery at once both insert
// with ON CONFLICT DO NOTHING: the primary key keeps one.

import type { PgBlocks } from '../pg-db.ts';
import { receivedOf } from './sqlite-store.ts';
import type { PixStore, ReceivedPix } from './store.ts';

export class PgPixStore implements PixStore {
  constructor(private readonly b: Pick<PgBlocks, 'pool' | 'transaction'>) {}

  async setWebhookSecret(companyId: string, secretSha256: Buffer, at: Date): Promise<void> {
    await this.b.pool.query(
      `INSERT INTO pix_webhook_secrets (company_id, secret_sha256, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (company_id) DO UPDATE SET secret_sha256 = excluded.secret_sha256, created_at = excluded.created_at`,
      [companyId, secretSha256, at.toISOString()],
    );
  }

  async companyOfWebhookSecret(secretSha256: Buffer): Promise<string | undefined> {
    return (await this.b.pool.query<{ company_id: string }>('SELECT company_id FROM pix_webhook_secrets WHERE secret_sha256 = $1', [secretSha256])).rows[0]
      ?.company_id;
  }

  async hasWebhookSecret(companyId: string): Promise<boolean> {
    return ((await this.b.pool.query('SELECT 1 FROM pix_webhook_secrets WHERE company_id = $1', [companyId])).rowCount ?? 0) > 0;
  }

  async recordReceived(companyId: string, pix: readonly Omit<ReceivedPix, 'receivedAt'>[], at: Date): Promise<number> {
    return this.b.transaction(async (client) => {
      let added = 0;
      for (const p of pix) {
        const r = await client.query(
          `INSERT INTO pix_received (company_id, end_to_end_id, txid, valor, horario, received_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (company_id, end_to_end_id) DO NOTHING`,
          [companyId, p.endToEndId, p.txid, p.valor, p.horario, at.toISOString()],
        );
        added += r.rowCount ?? 0;
      }
      return added;
    });
  }

  async receivedOfTxid(companyId: string, txid: string): Promise<ReceivedPix[]> {
    const rows = await this.b.pool.query(
      'SELECT end_to_end_id, txid, valor, horario, received_at FROM pix_received WHERE company_id = $1 AND txid = $2 ORDER BY received_at, end_to_end_id',
      [companyId, txid],
    );
    return rows.rows.map(receivedOf);
  }
}
