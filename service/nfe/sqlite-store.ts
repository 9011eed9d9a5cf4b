// NfeStore on the service's SQLite database, built from SqliteStore's building blocks (its
// prepared-statement cache, its BEGIN IMMEDIATE transaction and the *InTx settle/enqueue steps),
// so a return, its idempotency key and its webhook event change in one transaction. Returns are
// a few a day per store: each write is its own transaction, without the NFC-e's group commit.

import type Database from 'better-sqlite3';
import type { KeyAttempt, KeyOutcome } from '../idempotency-rules.ts';
import type { WebhookEvent } from '../webhooks/store.ts';
import type { NewNfeDocument, NfeEventOf, NfeFilters, NfeRecord, NfeStore, NfeSummary, NfeVerdict, NfeWork, ReturnedNfce } from './store.ts';
import { sqlitePage, utcInstant, type Page, type PageRequest } from '../paging.ts';
import { SQLITE_ROWS } from '../row-driver.ts';
import { exportEntryOf, NFE_RECORD_COLUMNS, nfeListSpec, nfeRecordOf, nfeSummaryOf, type ExportRow, type NfeItemRow, type NfeRecordRow } from './rows.ts';
import type { DevolucaoExportEntry } from '../export/devolucoes.ts';

/** What SqliteStore lends this part. */
export type SqliteNfeBlocks = {
  statement(sql: string): Database.Statement;
  transaction<T>(fn: () => T): T;
  /** A read of several statements in one snapshot (a deferred transaction: no write lock). */
  read<T>(fn: () => T): T;
  settleKeyInTx(attempt: KeyAttempt, outcome: KeyOutcome): boolean;
  enqueueWebhookInTx(event: WebhookEvent): boolean;
};

type RecordRow = NfeRecordRow<string | null>;
type ItemRow = NfeItemRow;
const recordOf = (r: RecordRow, items: ItemRow[]): NfeRecord => nfeRecordOf(r, items, SQLITE_ROWS);

const iso = (d: Date = new Date()): string => d.toISOString();

export class SqliteNfeStore implements NfeStore {
  constructor(private readonly b: SqliteNfeBlocks) {}

  async findNfce(companyId: string, chave: string): Promise<ReturnedNfce | undefined> {
    const row = this.b
      .statement(`SELECT id, status, nfe_proc FROM nfce_documents WHERE company_id = ? AND chave = ? AND status <> 'rejeitado'`)
      .get(companyId, chave) as { id: string; status: ReturnedNfce['status']; nfe_proc: string | null } | undefined;
    return row && { id: row.id, status: row.status, nfeProc: row.nfe_proc };
  }

  async returnedQuantities(companyId: string, chaveNfce: string): Promise<Map<number, bigint>> {
    const rows = this.b
      .statement(
        `SELECT i.numero_item, sum(i.quantidade_units) AS units
           FROM nfe_items i JOIN nfe_documents d ON d.id = i.document_id
          WHERE d.company_id = ? AND d.chave_nfce = ? AND d.status IN ('processando', 'autorizado')
          GROUP BY i.numero_item`,
      )
      .all(companyId, chaveNfce) as { numero_item: number; units: number | bigint }[];
    return new Map(rows.map((r) => [r.numero_item, BigInt(r.units)]));
  }

  async nextNumber(companyId: string, serie: number): Promise<number> {
    const reusable = this.b
      .statement(
        `SELECT min(r.numero) FROM nfe_documents r
          WHERE r.company_id = @company AND r.serie = @serie AND r.status = 'rejeitado'
            AND NOT EXISTS (SELECT 1 FROM nfe_documents o
                             WHERE o.company_id = r.company_id AND o.serie = r.serie AND o.numero = r.numero AND o.status <> 'rejeitado')`,
      )
      .pluck()
      .get({ company: companyId, serie }) as number | null;
    if (reusable !== null) return reusable;
    const last = this.b.statement('SELECT max(numero) FROM nfe_documents WHERE company_id = ? AND serie = ?').pluck().get(companyId, serie) as number | null;
    return (last ?? 0) + 1;
  }

  async insertDocument(d: NewNfeDocument): Promise<void> {
    const at = iso(d.createdAt);
    this.b.transaction(() => {
      this.b
        .statement(
          `INSERT INTO nfe_documents (id, company_id, tipo, idempotency_key, serie, numero, chave, nfce_id, chave_nfce, dh_emi, ambiente,
             justificativa, request_json, signed_xml, valor_total, status, next_attempt_at, created_at, updated_at)
           VALUES (@id, @company_id, @tipo, @idempotency_key, @serie, @numero, @chave, @nfce_id, @chave_nfce, @dh_emi, @ambiente,
             @justificativa, @request_json, @signed_xml, @valor_total, 'processando', @at, @at, @at)`,
        )
        .run({
          id: d.id,
          company_id: d.companyId,
          tipo: d.tipo,
          idempotency_key: d.idempotencyKey,
          serie: d.serie,
          numero: d.numero,
          chave: d.chave,
          nfce_id: d.nfceId,
          chave_nfce: d.chaveNfce,
          dh_emi: d.dhEmi,
          ambiente: d.ambiente,
          justificativa: d.justificativa,
          request_json: d.requestJson,
          signed_xml: d.signedXml,
          valor_total: d.valorTotal,
          at,
        });
      const item = this.b.statement(
        `INSERT INTO nfe_items (document_id, numero_item, codigo, descricao, unidade, quantidade_units, valor) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const i of d.itens) item.run(d.id, i.numeroItem, i.codigo, i.descricao, i.unidade, i.quantidadeUnits, i.valor);
    });
  }

  async getDocument(companyId: string, id: string): Promise<NfeRecord | undefined> {
    const row = this.b.statement(`SELECT ${NFE_RECORD_COLUMNS} FROM nfe_documents WHERE id = ? AND company_id = ?`).get(id, companyId) as RecordRow | undefined;
    return row && recordOf(row, this.items(id));
  }

  async list(companyId: string, filters: NfeFilters, page: PageRequest): Promise<Page<NfeSummary>> {
    const summaryOf = (r: RecordRow) => nfeSummaryOf(r, SQLITE_ROWS);
    return sqlitePage(this.b, nfeListSpec('sqlite', companyId, filters), page, summaryOf, (d: NfeSummary) => utcInstant(d.dhEmi));
  }

  async findByKey(companyId: string, chave: string): Promise<NfeRecord | undefined> {
    const row = this.b
      .statement(
        `SELECT ${NFE_RECORD_COLUMNS} FROM nfe_documents INDEXED BY nfe_documents_chave WHERE company_id = ? AND chave = ?
          ORDER BY status = 'rejeitado', julianday(dh_emi) DESC, rowid DESC LIMIT 1`,
      )
      .get(companyId, chave) as RecordRow | undefined;
    return row && recordOf(row, this.items(row.id));
  }

  async exportEntries(companyId: string, from: Date, until: Date): Promise<DevolucaoExportEntry[]> {
    // Spelled as the index nfe_documents_emissao is (migrations/service/20261201T1000_i25_lists.sql).
    const rows = this.b
      .statement(
        `SELECT id, chave, serie, numero, dh_emi, protocolo, autorizado_em FROM nfe_documents
          WHERE company_id = ? AND julianday(dh_emi) >= julianday(?) AND julianday(dh_emi) < julianday(?) AND status = 'autorizado'
          ORDER BY serie, numero, rowid`,
      )
      .all(companyId, iso(from), iso(until)) as ExportRow[];
    return rows.map(exportEntryOf);
  }

  async exists(id: string): Promise<boolean> {
    return this.b.statement('SELECT 1 FROM nfe_documents WHERE id = ?').get(id) !== undefined;
  }

  async getXml(companyId: string, id: string): Promise<{ signedXml: string; nfeProc: string | null } | undefined> {
    const row = this.b.statement('SELECT signed_xml, nfe_proc FROM nfe_documents WHERE id = ? AND company_id = ?').get(id, companyId) as
      { signed_xml: string; nfe_proc: string | null } | undefined;
    return row && { signedXml: row.signed_xml, nfeProc: row.nfe_proc };
  }

  async dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfeWork[]> {
    const rows = this.b
      .statement(
        `SELECT id, company_id, chave, signed_xml, attempts, created_at FROM nfe_documents
          WHERE status = 'processando' AND next_attempt_at <= ? ORDER BY next_attempt_at, rowid LIMIT ?`,
      )
      .all(iso(now), limit + busy.size) as { id: string; company_id: string; chave: string; signed_xml: string; attempts: number; created_at: string }[];
    return rows
      .filter((r) => !busy.has(r.id))
      .slice(0, limit)
      .map((r) => ({ id: r.id, companyId: r.company_id, chave: r.chave, signedXml: r.signed_xml, attempts: r.attempts, createdAt: r.created_at }));
  }

  async beginSends(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const now = iso();
    this.b.transaction(() => {
      const count = this.b.statement(`UPDATE nfe_documents SET attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'processando'`);
      for (const id of ids) count.run(now, id);
    });
  }

  async postpone(id: string, at: Date, error: string): Promise<void> {
    this.b
      .statement(`UPDATE nfe_documents SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = 'processando'`)
      .run(iso(at), error, iso(), id);
  }

  async recordVerdict(id: string, v: NfeVerdict, eventOf: NfeEventOf): Promise<boolean> {
    return this.b.transaction(() => {
      const now = iso();
      const changed =
        v.status === 'autorizado'
          ? this.b
              .statement(
                `UPDATE nfe_documents SET status = 'autorizado', codigo_status = ?, motivo = ?, protocolo = ?, autorizado_em = ?,
                   nfe_proc = ?, next_attempt_at = NULL, last_error = NULL, updated_at = ?
                 WHERE id = ? AND status = 'processando'`,
              )
              .run(v.codigoStatus, v.motivo, v.protocolo, v.autorizadoEm, v.nfeProc, now, id)
          : this.b
              .statement(
                `UPDATE nfe_documents SET status = 'rejeitado', codigo_status = ?, motivo = ?, next_attempt_at = NULL,
                   last_error = NULL, updated_at = ?
                 WHERE id = ? AND status = 'processando'`,
              )
              .run(v.codigoStatus, v.motivo, now, id);
      if (changed.changes === 0) return false;
      const row = this.b.statement(`SELECT ${NFE_RECORD_COLUMNS} FROM nfe_documents WHERE id = ?`).get(id) as RecordRow;
      const record = recordOf(row, this.items(id));
      if (record.idempotencyKey !== null) {
        this.b.settleKeyInTx(
          { companyId: record.companyId, docType: 'nfe', key: record.idempotencyKey, documentId: id },
          v.status === 'autorizado' ? 'authorized' : 'rejected',
        );
      }
      this.b.enqueueWebhookInTx(eventOf(record));
      return true;
    });
  }

  async backlog(): Promise<{ processando: number; oldestCreatedAt: string | null }> {
    const row = this.b.statement(`SELECT count(*) AS processando, min(created_at) AS oldest FROM nfe_documents WHERE status = 'processando'`).get() as {
      processando: number;
      oldest: string | null;
    };
    return { processando: row.processando, oldestCreatedAt: row.oldest };
  }

  /** One process owns the file: its caller's turns (issuance.ts) are the only ones. */
  async numberingTurn<T>(_companyId: string, turn: () => Promise<T>): Promise<T> {
    return turn();
  }

  private items(id: string): ItemRow[] {
    return this.b
      .statement('SELECT numero_item, codigo, descricao, unidade, quantidade_units, valor FROM nfe_items WHERE document_id = ? ORDER BY numero_item')
      .all(id) as ItemRow[];
  }
}
