// TerminalStore on PostgreSQL (migrations/service-postgres/20261128T0920_exports_terminals.sql),
// as the SQLite part beside it: a claim is one transaction, and the claims of one company take
// turns on an advisory lock, so two terminals asking for the same series at once, through two
// service processes, cannot both get it (the series' primary key would refuse the second anyway).

import type { PgBlocks, Queryable } from '../pg-db.ts';
import type { SeriesClaim, SeriesClaimResult, TerminalRecord, TerminalStore } from './store.ts';

/** Class of the advisory locks of series claims (the second key is the company id's hash). */
const CLAIM_LOCK_CLASS = 0x5345524c; // "SERL"

type TerminalRow = { terminal_id: string; nome: string; created_at: string; updated_at: string; series: number[] };

const RECORD = `SELECT t.terminal_id, t.nome, t.created_at, t.updated_at,
    coalesce((SELECT array_agg(s.serie ORDER BY s.serie) FROM terminal_series s WHERE s.company_id = t.company_id AND s.terminal_id = t.terminal_id), '{}') AS series
  FROM terminals t`;

const recordOf = (r: TerminalRow): TerminalRecord => ({
  terminalId: r.terminal_id,
  nome: r.nome,
  series: r.series.map(Number),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class PgTerminalStore implements TerminalStore {
  constructor(private readonly b: Pick<PgBlocks, 'pool' | 'transaction'>) {}

  async claimSeries(c: SeriesClaim): Promise<SeriesClaimResult> {
    const wanted = [...new Set(c.series)].sort((x, y) => x - y);
    const at = c.at.toISOString();
    return this.b.transaction(async (client): Promise<SeriesClaimResult> => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CLAIM_LOCK_CLASS, c.companyId]);
      const held = (
        await client.query<{ serie: number; terminal_id: string; nome: string }>(
          `SELECT s.serie, t.terminal_id, t.nome FROM terminal_series s JOIN terminals t ON t.company_id = s.company_id AND t.terminal_id = s.terminal_id
            WHERE s.company_id = $1 AND s.serie = ANY($2::int[]) AND s.terminal_id <> $3 ORDER BY s.serie LIMIT 1`,
          [c.companyId, wanted, c.terminalId],
        )
      ).rows[0];
      if (held) return { kind: 'taken', serie: held.serie, holder: { terminalId: held.terminal_id, nome: held.nome } };
      const before = await this.record(client, c.companyId, c.terminalId);
      const changed = !before || before.nome !== c.nome || before.series.join(',') !== wanted.join(',');
      if (changed) {
        await client.query(
          `INSERT INTO terminals (company_id, terminal_id, nome, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (company_id, terminal_id) DO UPDATE SET nome = excluded.nome, updated_at = excluded.updated_at`,
          [c.companyId, c.terminalId, c.nome, at],
        );
        await client.query('DELETE FROM terminal_series WHERE company_id = $1 AND terminal_id = $2 AND NOT (serie = ANY($3::int[]))', [
          c.companyId,
          c.terminalId,
          wanted,
        ]);
        // A series kept keeps the instant it was first claimed.
        await client.query(
          `INSERT INTO terminal_series (company_id, serie, terminal_id, claimed_at)
           SELECT $1, serie, $2, $3 FROM unnest($4::int[]) AS serie ON CONFLICT DO NOTHING`,
          [c.companyId, c.terminalId, at, wanted],
        );
      }
      return { kind: 'ok', terminal: (await this.record(client, c.companyId, c.terminalId))!, changed };
    });
  }

  async getTerminal(companyId: string, terminalId: string): Promise<TerminalRecord | undefined> {
    return this.record(this.b.pool, companyId, terminalId);
  }

  async listTerminals(companyId: string): Promise<TerminalRecord[]> {
    const rows = (await this.b.pool.query<TerminalRow>(`${RECORD} WHERE t.company_id = $1 ORDER BY t.nome, t.terminal_id`, [companyId])).rows;
    return rows.map(recordOf);
  }

  async removeTerminal(companyId: string, terminalId: string): Promise<boolean> {
    // The series go with it (ON DELETE CASCADE), in the same statement.
    const r = await this.b.pool.query('DELETE FROM terminals WHERE company_id = $1 AND terminal_id = $2', [companyId, terminalId]);
    return r.rowCount === 1;
  }

  private async record(db: Queryable, companyId: string, terminalId: string): Promise<TerminalRecord | undefined> {
    const row = (await db.query<TerminalRow>(`${RECORD} WHERE t.company_id = $1 AND t.terminal_id = $2`, [companyId, terminalId])).rows[0];
    return row && recordOf(row);
  }
}
