// The terminal's IBPT tables (Lei 12.741/2012) in its SQLite file, beside PosStore on the same
// database (migrations/pos/20261205T1000_i22e_ibpt_tables.sql): each imported file with its
// validity, chave, versão and fonte, and the rates of its NCM lines. Read whole into memory and
// kept until the tables change (a few tens of thousands of NCMs per UF): a sale looks its items
// up there, not in SQL. Another process (`balcao ibpt import` while the terminal runs) may import
// too: each read compares a one-row summary of the tables with the one its copy was read at.

import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { ibptRateRecords, ibptTableOfRecords, ibptTableRecord, type IbptRateRecord, type IbptTable, type IbptStoredTable } from '../../../fiscal/ibpt/table.ts';

export type IbptTableRow = IbptStoredTable;

export class IbptStore {
  private readonly db: Database.Database;
  private cached: { version: string; tables: IbptTable[] } | undefined;

  constructor(db: Database.Database) {
    this.db = db;
  }

  /** Stores `table` read from `fileName`, replacing the one of the same UF and versão; one transaction. */
  importTable(table: IbptTable, fileName: string, at: string): IbptTableRow {
    const id = randomUUID();
    const insertRate = this.db.prepare(
      `INSERT INTO ibpt_rates (table_id, ncm, ex, nacionalfederal, importadosfederal, estadual, municipal)
       VALUES (@table_id, @ncm, @ex, @nacionalfederal, @importadosfederal, @estadual, @municipal)`,
    );
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM ibpt_tables WHERE uf = ? AND versao = ?').run(table.uf, table.versao);
        this.db
          .prepare(
            `INSERT INTO ibpt_tables (id, uf, versao, vigencia_inicio, vigencia_fim, chave, fonte, file_name, imported_at)
             VALUES (@id, @uf, @versao, @vigencia_inicio, @vigencia_fim, @chave, @fonte, @file_name, @imported_at)`,
          )
          .run({ id, ...ibptTableRecord(table), file_name: fileName, imported_at: at });
        for (const r of ibptRateRecords(table)) insertRate.run({ table_id: id, ...r });
      })
      .immediate();
    this.cached = undefined;
    return this.list().find((t) => t.id === id)!;
  }

  /** The stored tables, newest validity first. */
  list(): IbptTableRow[] {
    return this.db
      .prepare(
        `SELECT t.*, (SELECT count(*) FROM ibpt_rates r WHERE r.table_id = t.id) AS ncm_count
         FROM ibpt_tables t ORDER BY t.vigencia_inicio DESC, t.uf`,
      )
      .all() as IbptTableRow[];
  }

  /**
   * The active products whose NCM the table `tableId` lacks (all of them without a table): their
   * vTotTrib is the flat rate. The first `limit` by code, and how many there are.
   */
  productsOutside(tableId: string | null, limit: number): { products: { code: string; description: string; ncm: string }[]; total: number } {
    const where = `FROM products p WHERE p.active = 1
      AND NOT EXISTS (SELECT 1 FROM ibpt_rates r WHERE r.table_id = @tableId AND r.ncm = p.ncm AND r.ex = '')`;
    return {
      products: this.db.prepare(`SELECT p.code, p.description, p.ncm ${where} ORDER BY p.code LIMIT @limit`).all({ tableId, limit }) as {
        code: string;
        description: string;
        ncm: string;
      }[],
      total: this.db.prepare(`SELECT count(*) ${where}`).pluck().get({ tableId }) as number,
    };
  }

  /** Every stored table with its rates, for fiscal/ibpt/table.ts ibptTableAt. */
  tables(): readonly IbptTable[] {
    const version = this.db.prepare("SELECT count(*) || '/' || coalesce(max(imported_at), '') FROM ibpt_tables").pluck().get() as string;
    if (this.cached?.version === version) return this.cached.tables;
    const rows = this.db.prepare('SELECT * FROM ibpt_tables').all() as IbptTableRow[];
    const rates = this.db.prepare('SELECT * FROM ibpt_rates WHERE table_id = ?');
    const tables = rows.map((t) => ibptTableOfRecords(t, rates.iterate(t.id) as IterableIterator<IbptRateRecord>));
    this.cached = { version, tables };
    return this.cached.tables;
  }
}
