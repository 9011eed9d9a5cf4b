// MdfeStore on SQLite: the MDF-e part of SqliteStore (service/sqlite-store.ts), which hands it
// its prepared-statement cache, its BEGIN IMMEDIATE transactions and the idempotency building
// block, so that recording a verdict and settling its key are one transaction.

import type Database from 'better-sqlite3';
import type { KeyAttempt, KeyOutcome } from '../idempotency-rules.ts';
import type { MdfeDocument, MdfeEventRecord, MdfeFilters, MdfeRecord, MdfeSituacao, MdfeStore, MdfeVerdictRecord, MdfeXml, NewMdfe } from './store.ts';
import { sqlitePage, type Page, type PageRequest } from '../paging.ts';
import { SQLITE_ROWS } from '../row-driver.ts';
import { pageOf as exportPageOf, type Keyset, type Page as ExportPage } from '../export/pages.ts';
import {
  AUTHORIZED_SITUACOES,
  MDFE_COLUMNS,
  mdfeEventsQuery,
  mdfeEventOf,
  mdfeExportKeyset,
  mdfeListSpec,
  mdfeRecordOf,
  type MdfeEventRow,
  type MdfeExportRow,
  type MdfeRow,
} from './rows.ts';

const EVENTS_QUERY = mdfeEventsQuery('mdfe_id = ?');

/** What SqliteStore lends: its statement cache, its transactions, its key settling. */
export type SqliteKit = {
  statement(sql: string): Database.Statement;
  transaction<T>(fn: () => T): T;
  /** A read of several statements in one snapshot (a deferred transaction: no write lock). */
  read<T>(fn: () => T): T;
  settleKeyInTx(attempt: KeyAttempt, outcome: KeyOutcome): boolean;
};

type Row = MdfeRow<string | null>;
const fromRow = (r: Row): MdfeRecord => mdfeRecordOf(r, SQLITE_ROWS);

const iso = (): string => new Date().toISOString();

type Queued = { run: () => unknown; durable: boolean; resolve: (value: never) => void; reject: (error: unknown) => void };

export class SqliteMdfeStore implements MdfeStore {
  #queue: Queued[] = [];

  constructor(private readonly kit: SqliteKit) {}

  /**
   * Group commit for the writes of an issuance (the `processando` row, the verdict): those
   * requested in the same turn of the event loop share one transaction, hence one disk flush,
   * each in its own savepoint so one failing write fails alone. With several issuances in flight
   * this divides the disk waits, which dominate an issuance's cost; alone, a write waits only for
   * the rest of the current turn. Each promise settles after the commit.
   *
   * `durable: false` (the verdict) commits without waiting for the disk (synchronous NORMAL for
   * that one transaction; WAL keeps commit order, so the next durable commit flushes it too).
   * That commit survives a crash of the process (it is in the OS's cache), and only a power cut
   * within that instant could lose it: then the `processando` row, which WAS flushed before the
   * manifest was sent, is settled on restart by consulting the authority (issuance.ts
   * `recover`), so an authorization is never lost and nothing is issued twice. A batch with any
   * durable write is flushed as usual (synchronous FULL, db.ts).
   */
  private write<T>(op: () => T, durable: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: op, durable, resolve: resolve as (value: never) => void, reject });
      if (this.#queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    // Everything between here and the restore below is synchronous: no other user of the shared
    // connection can run a transaction under the relaxed setting.
    const relaxed = !batch.some((op) => op.durable);
    const previous = relaxed ? (this.kit.statement('PRAGMA synchronous').pluck().get() as number) : undefined;
    if (relaxed) this.kit.statement('PRAGMA synchronous = NORMAL').run();
    try {
      this.kit.transaction(() => {
        for (const op of batch) {
          try {
            results.push({ ok: true, value: this.kit.transaction(op.run) });
          } catch (error) {
            results.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const op of batch) op.reject(error);
      return;
    } finally {
      if (previous !== undefined) this.kit.statement(`PRAGMA synchronous = ${Number(previous)}`).run();
    }
    batch.forEach((op, i) => {
      const r = results[i]!;
      if (r.ok) op.resolve(r.value as never);
      else op.reject(r.error);
    });
  }

  private byId(id: string): MdfeRecord | undefined {
    const row = this.kit.statement(`SELECT ${MDFE_COLUMNS} FROM mdfe WHERE id = ?`).get(id) as Row | undefined;
    return row && fromRow(row);
  }

  async codeOfLastAttempt(companyId: string, serie: number, numero: number): Promise<string | undefined> {
    return this.kit
      .statement('SELECT c_mdf FROM mdfe WHERE company_id = ? AND serie = ? AND numero = ? ORDER BY seq DESC LIMIT 1')
      .pluck()
      .get(companyId, serie, numero) as string | undefined;
  }

  async insertProcessing(m: NewMdfe, documents: readonly MdfeDocument[]): Promise<void> {
    // Durable before the manifest is sent: the restart recovery depends on it.
    await this.write(() => {
      this.kit
        .statement(
          `INSERT INTO mdfe (id, company_id, chave, serie, numero, c_mdf, ambiente, placa, uf_inicio, uf_fim, situacao,
             emitido_em, referencia_externa, qrcode, valor_carga, xml, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'processando', ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          m.id,
          m.companyId,
          m.chave,
          m.serie,
          m.numero,
          m.cMdf,
          m.ambiente,
          m.placa,
          m.ufInicio,
          m.ufFim,
          m.emitidoEm,
          m.referenciaExterna,
          m.qrcode,
          m.valorCarga,
          m.xml,
          m.createdAt,
          m.createdAt,
        );
      const insert = this.kit.statement('INSERT INTO mdfe_documentos (mdfe_id, ordem, tipo, chave, codigo_municipio_descarga) VALUES (?, ?, ?, ?, ?)');
      documents.forEach((d, i) => insert.run(m.id, i, d.tipo, d.chave, d.codigoMunicipioDescarga));
    }, true);
  }

  async recordVerdict(id: string, v: MdfeVerdictRecord, attempt?: KeyAttempt): Promise<MdfeRecord | undefined> {
    return this.write(() => {
      const now = iso();
      const changed = this.kit
        .statement(
          `UPDATE mdfe SET situacao = ?, status = ?, motivo = ?, protocolo = ?, autorizado_em = ?, prot_xml = ?, updated_at = ?
           WHERE id = ? AND situacao = 'processando'`,
        )
        .run(
          v.authorized ? 'autorizado' : 'rejeitado',
          v.status,
          v.motivo,
          v.authorized ? v.protocolo : null,
          v.authorized ? v.at : null,
          v.protXml || null,
          now,
          id,
        ).changes;
      if (changed && attempt) this.kit.settleKeyInTx(attempt, v.authorized ? 'authorized' : 'rejected');
      return this.byId(id);
    }, false);
  }

  async discardAttempt(id: string, attempt?: KeyAttempt): Promise<void> {
    this.kit.transaction(() => {
      this.kit.statement("DELETE FROM mdfe WHERE id = ? AND situacao = 'processando'").run(id);
      if (attempt) this.kit.settleKeyInTx(attempt, 'rejected');
    });
  }

  async releaseKey(attempt: KeyAttempt): Promise<void> {
    this.kit.transaction(() => this.kit.settleKeyInTx(attempt, 'rejected'));
  }

  async get(companyId: string, id: string): Promise<MdfeRecord | undefined> {
    const row = this.kit.statement(`SELECT ${MDFE_COLUMNS} FROM mdfe WHERE id = ? AND company_id = ?`).get(id, companyId) as Row | undefined;
    return row && fromRow(row);
  }

  async findByKey(companyId: string, chave: string): Promise<MdfeRecord | undefined> {
    const row = this.kit
      .statement(
        `SELECT ${MDFE_COLUMNS} FROM mdfe INDEXED BY mdfe_company_chave WHERE company_id = ? AND chave = ?
          ORDER BY situacao IN ('rejeitado', 'processando'), emitido_em DESC, seq DESC LIMIT 1`,
      )
      .get(companyId, chave) as Row | undefined;
    return row && fromRow(row);
  }

  async getById(id: string): Promise<MdfeRecord | undefined> {
    return this.byId(id);
  }

  async documents(id: string): Promise<MdfeDocument[]> {
    const rows = this.kit.statement('SELECT tipo, chave, codigo_municipio_descarga FROM mdfe_documentos WHERE mdfe_id = ? ORDER BY ordem').all(id) as {
      tipo: 'CTe' | 'NFe';
      chave: string;
      codigo_municipio_descarga: string;
    }[];
    return rows.map((r) => ({ tipo: r.tipo, chave: r.chave, codigoMunicipioDescarga: r.codigo_municipio_descarga }));
  }

  async events(id: string): Promise<MdfeEventRecord[]> {
    return (this.kit.statement(EVENTS_QUERY).all(id) as MdfeEventRow[]).map(mdfeEventOf);
  }

  async xml(companyId: string, id: string): Promise<MdfeXml | undefined> {
    const row = this.kit.statement('SELECT situacao, xml, prot_xml FROM mdfe WHERE id = ? AND company_id = ?').get(id, companyId) as
      { situacao: MdfeSituacao; xml: string; prot_xml: string | null } | undefined;
    return row && { situacao: row.situacao, xml: row.xml, protXml: row.prot_xml };
  }

  async exportPage(companyId: string, from: string, until: string, after: Keyset | null, limit: number): Promise<ExportPage<MdfeRecord>> {
    // Index mdfe_company_emitido (company_id, emitido_em, seq): the page starts at the last one's instant and skips its ties.
    const rows = this.kit
      .statement(
        `SELECT seq, ${MDFE_COLUMNS} FROM mdfe
          WHERE company_id = ? AND emitido_em >= ? AND emitido_em < ? AND (emitido_em > ? OR seq > ?) AND ${AUTHORIZED_SITUACOES}
          ORDER BY emitido_em, seq LIMIT ?`,
      )
      .all(companyId, after?.at ?? from, until, after?.at ?? from, after?.seq ?? 0, limit) as MdfeExportRow<string | null>[];
    return exportPageOf(rows, limit, mdfeExportKeyset, fromRow);
  }

  async list(companyId: string, filters: MdfeFilters, page: PageRequest): Promise<Page<MdfeRecord>> {
    return sqlitePage(this.kit, mdfeListSpec('sqlite', companyId, filters), page, fromRow, (m: MdfeRecord) => m.emitidoEm);
  }

  /** One process owns a SQLite store: its turn (turns.ts) is the only one. */
  changeTurn<T>(_id: string, change: () => Promise<T>): Promise<T> {
    return change();
  }

  async recordEvent(
    id: string,
    e: MdfeEventRecord,
    to: 'encerrado' | 'cancelado' | null,
    added: readonly MdfeDocument[] = [],
  ): Promise<MdfeRecord | undefined> {
    return this.kit.transaction(() => {
      const column = to === 'encerrado' ? 'encerrado_em' : to === 'cancelado' ? 'cancelado_em' : undefined;
      const changed = column
        ? this.kit
            .statement(`UPDATE mdfe SET situacao = ?, ${column} = ?, updated_at = ? WHERE id = ? AND situacao = 'autorizado'`)
            .run(to, e.registradoEm, iso(), id).changes
        : this.kit.statement(`UPDATE mdfe SET updated_at = ? WHERE id = ? AND situacao = 'autorizado'`).run(iso(), id).changes;
      if (!changed) return undefined;
      this.kit
        .statement(
          `INSERT INTO mdfe_eventos (mdfe_id, tp_evento, n_seq, status, motivo, protocolo, registrado_em, dados, xml)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, e.tpEvento, e.nSeq, e.status, e.motivo, e.protocolo, e.registradoEm, JSON.stringify(e.dados), e.xml);
      if (added.length) {
        const next = this.kit.statement('SELECT coalesce(max(ordem) + 1, 0) FROM mdfe_documentos WHERE mdfe_id = ?').pluck().get(id) as number;
        const insert = this.kit.statement('INSERT INTO mdfe_documentos (mdfe_id, ordem, tipo, chave, codigo_municipio_descarga) VALUES (?, ?, ?, ?, ?)');
        added.forEach((d, i) => insert.run(id, next + i, d.tipo, d.chave, d.codigoMunicipioDescarga));
      }
      return this.byId(id);
    });
  }

  async processing(): Promise<MdfeRecord[]> {
    const rows = this.kit.statement(`SELECT ${MDFE_COLUMNS} FROM mdfe WHERE situacao = 'processando' ORDER BY seq`).all() as Row[];
    return rows.map(fromRow);
  }
}
