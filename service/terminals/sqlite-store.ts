// TerminalStore on the service's SQLite database (migrations/service/20261125T0910_terminals.sql).

import type Database from 'better-sqlite3';
import type { SeriesClaim, SeriesClaimResult, TerminalRecord, TerminalStore } from './store.ts';

export type TerminalBlocks = {
  statement(sql: string): Database.Statement;
  transaction<T>(fn: () => T): T;
};

type TerminalRow = { terminal_id: string; nome: string; created_at: string; updated_at: string };

export class SqliteTerminalStore implements TerminalStore {
  constructor(private readonly b: TerminalBlocks) {}

  async claimSeries(c: SeriesClaim): Promise<SeriesClaimResult> {
    const wanted = [...new Set(c.series)].sort((x, y) => x - y);
    const at = c.at.toISOString();
    return this.b.transaction((): SeriesClaimResult => {
      for (const serie of wanted) {
        const holder = this.b
          .statement(
            `SELECT t.terminal_id, t.nome FROM terminal_series s JOIN terminals t ON t.company_id = s.company_id AND t.terminal_id = s.terminal_id
              WHERE s.company_id = ? AND s.serie = ?`,
          )
          .get(c.companyId, serie) as { terminal_id: string; nome: string } | undefined;
        if (holder && holder.terminal_id !== c.terminalId) return { kind: 'taken', serie, holder: { terminalId: holder.terminal_id, nome: holder.nome } };
      }
      const before = this.recordInTx(c.companyId, c.terminalId);
      const changed = !before || before.nome !== c.nome || before.series.join(',') !== wanted.join(',');
      if (changed) {
        this.b
          .statement(
            `INSERT INTO terminals (company_id, terminal_id, nome, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (company_id, terminal_id) DO UPDATE SET nome = excluded.nome, updated_at = excluded.updated_at`,
          )
          .run(c.companyId, c.terminalId, c.nome, at, at);
        const release = this.b.statement('DELETE FROM terminal_series WHERE company_id = ? AND terminal_id = ? AND serie = ?');
        for (const serie of before?.series ?? []) if (!wanted.includes(serie)) release.run(c.companyId, c.terminalId, serie);
        // A series kept keeps the instant it was first claimed.
        const claim = this.b.statement('INSERT INTO terminal_series (company_id, serie, terminal_id, claimed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
        for (const serie of wanted) claim.run(c.companyId, serie, c.terminalId, at);
      }
      return { kind: 'ok', terminal: this.recordInTx(c.companyId, c.terminalId)!, changed };
    });
  }

  async getTerminal(companyId: string, terminalId: string): Promise<TerminalRecord | undefined> {
    return this.recordInTx(companyId, terminalId);
  }

  async listTerminals(companyId: string): Promise<TerminalRecord[]> {
    const rows = this.b.statement('SELECT terminal_id FROM terminals WHERE company_id = ? ORDER BY nome, terminal_id').pluck().all(companyId) as string[];
    return rows.map((id) => this.recordInTx(companyId, id)!);
  }

  async removeTerminal(companyId: string, terminalId: string): Promise<boolean> {
    return this.b.transaction(() => {
      this.b.statement('DELETE FROM terminal_series WHERE company_id = ? AND terminal_id = ?').run(companyId, terminalId);
      return this.b.statement('DELETE FROM terminals WHERE company_id = ? AND terminal_id = ?').run(companyId, terminalId).changes === 1;
    });
  }

  private recordInTx(companyId: string, terminalId: string): TerminalRecord | undefined {
    const row = this.b
      .statement('SELECT terminal_id, nome, created_at, updated_at FROM terminals WHERE company_id = ? AND terminal_id = ?')
      .get(companyId, terminalId) as TerminalRow | undefined;
    if (!row) return undefined;
    const series = this.b
      .statement('SELECT serie FROM terminal_series WHERE company_id = ? AND terminal_id = ? ORDER BY serie')
      .pluck()
      .all(companyId, terminalId) as number[];
    return {
      terminalId: row.terminal_id,
      nome: row.nome,
      series,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
