// The terminal's IBPT tables (Lei 12.741/2012) in its SQLite file, beside PosStore on the same
// database (migrations/pos/20261205T1000_i22e_ibpt_tables.sql): each imported file with its
// validity, chave, versão and fonte, and the rates of its NCM lines. Read whole into memory and
// kept until the tables change (a few tens of thousands of NCMs per UF): a sale looks its items
// up there, not in SQL. Another process (`balcao ibpt import` while the terminal runs) may import
// too: each read compares a one-row summary of the tables with the one its copy was read at.

import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { IbptRates, IbptTable } from '../../../fiscal/ibpt/table.ts';

/** A stored table as the manager sees it: no rates, their count. */
export type IbptTableRow = {
  id: string;
  uf: string;
  versao: string;
  vigencia_inicio: string;
  vigencia_fim: string;
  chave: string;
  fonte: string;
  file_name: string;
  imported_at: string;
  ncm_count: number;
};

type RateRow = { table_id: string; ncm: string; ex: string } & { [K in keyof IbptRates]: number };

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
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM ibpt_tables WHERE uf = ? AND versao = ?').run(table.uf, table.versao);
        this.db
          .prepare(
            `INSERT INTO ibpt_tables (id, uf, versao, vigencia_inicio, vigencia_fim, chave, fonte, file_name, imported_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(id, table.uf, table.versao, table.from, table.until, table.chave, table.fonte, fileName, at);
        for (const [key, r] of table.rates) {
          const [ncm, ex] = key.split('/') as [string, string];
          insertRate.run(id, ncm, ex, r.nacionalfederal, r.importadosfederal, r.estadual, r.municipal);
        }
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
    const tables = new Map<string, IbptTable>(
      rows.map((t) => [t.id, { uf: t.uf, from: t.vigencia_inicio, until: t.vigencia_fim, chave: t.chave, versao: t.versao, fonte: t.fonte, rates: new Map() }]),
    );
    for (const r of this.db.prepare('SELECT * FROM ibpt_rates').iterate() as IterableIterator<RateRow>) {
      tables.get(r.table_id)?.rates.set(`${r.ncm}/${r.ex}`, {
        nacionalfederal: BigInt(r.nacionalfederal),
        importadosfederal: BigInt(r.importadosfederal),
        estadual: BigInt(r.estadual),
        municipal: BigInt(r.municipal),
      });
    }
    this.cached = { version, tables: [...tables.values()] };
    return this.cached.tables;
  }
}
