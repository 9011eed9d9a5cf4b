// NfeStore on PostgreSQL, built from PgStore's building blocks (service/pg-db.ts PgBlocks), so a
// return, its idempotency key and its webhook event change in one transaction, as on SQLite
// (sqlite-store.ts beside this file). Queued returns are leased like the NFC-e (nfce/pg-store.ts),
// and a company's returns are numbered one at a time across processes (numberingTurn).

import { holderGone, keyBytes, type PgBlocks, type Queryable } from '../pg-db.ts';
import type { NewNfeDocument, NfeEventOf, NfeFilters, NfeRecord, NfeStore, NfeSummary, NfeVerdict, NfeWork, ReturnedNfce } from './store.ts';
import { postgresPage, utcInstant, type Page, type PageRequest } from '../paging.ts';
import { POSTGRES_ROWS } from '../row-driver.ts';
import { exportEntryOf, NFE_RECORD_COLUMNS, nfeListSpec, nfeRecordOf, nfeSummaryOf, type ExportRow, type NfeItemRow, type NfeRecordRow } from './rows.ts';
import type { DevolucaoExportEntry } from '../export/devolucoes.ts';

type RecordRow = NfeRecordRow<Buffer | null>;
type ItemRow = NfeItemRow;
const recordOf = (r: RecordRow, items: ItemRow[]): NfeRecord => nfeRecordOf(r, items, POSTGRES_ROWS);

const iso = (d: Date = new Date()): string => d.toISOString();

export class PgNfeStore implements NfeStore {
  constructor(private readonly b: PgBlocks) {}

  async findNfce(companyId: string, chave: string): Promise<ReturnedNfce | undefined> {
    const row = (
      await this.b.pool.query<{ id: string; status: ReturnedNfce['status']; nfe_proc: string | null }>(
        `SELECT id, status, nfe_proc FROM nfce_documents WHERE company_id = $1 AND chave = $2 AND status <> 'rejeitado'`,
        [companyId, chave],
      )
    ).rows[0];
    return row && { id: row.id, status: row.status, nfeProc: row.nfe_proc };
  }

  async returnedQuantities(companyId: string, chaveNfce: string): Promise<Map<number, bigint>> {
    const rows = (
      await this.b.pool.query<{ numero_item: number; units: string }>(
        `SELECT i.numero_item, sum(i.quantidade_units)::text AS units
           FROM nfe_items i JOIN nfe_documents d ON d.id = i.document_id
          WHERE d.company_id = $1 AND d.chave_nfce = $2 AND d.status IN ('processando', 'autorizado')
          GROUP BY i.numero_item`,
        [companyId, chaveNfce],
      )
    ).rows;
    return new Map(rows.map((r) => [r.numero_item, BigInt(r.units)]));
  }

  async nextNumber(companyId: string, serie: number): Promise<number> {
    const r = (
      await this.b.pool.query<{ reusable: number | null; last: number | null }>(
        `SELECT (SELECT min(r.numero) FROM nfe_documents r
                  WHERE r.company_id = $1 AND r.serie = $2 AND r.status = 'rejeitado'
                    AND NOT EXISTS (SELECT 1 FROM nfe_documents o
                                     WHERE o.company_id = r.company_id AND o.serie = r.serie AND o.numero = r.numero AND o.status <> 'rejeitado')) AS reusable,
                (SELECT max(numero) FROM nfe_documents WHERE company_id = $1 AND serie = $2) AS last`,
        [companyId, serie],
      )
    ).rows[0]!;
    return r.reusable ?? (r.last ?? 0) + 1;
  }

  numberingTurn<T>(companyId: string, turn: () => Promise<T>): Promise<T> {
    return this.b.turn('nfeNumbering', companyId, turn);
  }

  async insertDocument(d: NewNfeDocument): Promise<void> {
    const at = iso(d.createdAt);
    await this.b.transaction(async (client) => {
      await client.query(
        `INSERT INTO nfe_documents (id, company_id, tipo, idempotency_key, serie, numero, chave, nfce_id, chave_nfce, dh_emi, ambiente,
           justificativa, request_json, signed_xml, valor_total, status, next_attempt_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'processando', $16, $16, $16)`,
        [
          d.id,
          d.companyId,
          d.tipo,
          keyBytes(d.idempotencyKey),
          d.serie,
          d.numero,
          d.chave,
          d.nfceId,
          d.chaveNfce,
          d.dhEmi,
          d.ambiente,
          d.justificativa,
          d.requestJson,
          d.signedXml,
          d.valorTotal,
          at,
        ],
      );
      await client.query(
        `INSERT INTO nfe_items (document_id, numero_item, codigo, descricao, unidade, quantidade_units, valor)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])`,
        [
          d.id,
          d.itens.map((i) => i.numeroItem),
          d.itens.map((i) => i.codigo),
          d.itens.map((i) => i.descricao),
          d.itens.map((i) => i.unidade),
          d.itens.map((i) => i.quantidadeUnits.toString()),
          d.itens.map((i) => i.valor),
        ],
      );
    });
  }

  async getDocument(companyId: string, id: string): Promise<NfeRecord | undefined> {
    const row = (await this.b.pool.query<RecordRow>(`SELECT ${NFE_RECORD_COLUMNS} FROM nfe_documents WHERE id = $1 AND company_id = $2`, [id, companyId]))
      .rows[0];
    return row && recordOf(row, await this.items(this.b.pool, id));
  }

  async list(companyId: string, filters: NfeFilters, page: PageRequest): Promise<Page<NfeSummary>> {
    const summaryOf = (r: RecordRow) => nfeSummaryOf(r, POSTGRES_ROWS);
    return postgresPage(this.b, nfeListSpec('postgres', companyId, filters), page, summaryOf, (d: NfeSummary) => utcInstant(d.dhEmi));
  }

  async findByKey(companyId: string, chave: string): Promise<NfeRecord | undefined> {
    const row = (
      await this.b.pool.query<RecordRow>(
        `SELECT ${NFE_RECORD_COLUMNS} FROM nfe_documents WHERE company_id = $1 AND chave = $2
          ORDER BY status = 'rejeitado', balcao_instant(dh_emi) DESC, seq DESC LIMIT 1`,
        [companyId, chave],
      )
    ).rows[0];
    return row && recordOf(row, await this.items(this.b.pool, row.id));
  }

  async exportEntries(companyId: string, from: Date, until: Date): Promise<DevolucaoExportEntry[]> {
    // Spelled as the index nfe_documents_emissao is (migrations/service-postgres/20261201T1000_i25_lists.sql).
    const rows = (
      await this.b.pool.query<ExportRow>(
        `SELECT id, chave, serie, numero, dh_emi, protocolo, autorizado_em FROM nfe_documents
          WHERE company_id = $1 AND balcao_instant(dh_emi) >= $2::timestamptz AND balcao_instant(dh_emi) < $3::timestamptz AND status = 'autorizado'
          ORDER BY serie, numero, seq`,
        [companyId, iso(from), iso(until)],
      )
    ).rows;
    return rows.map(exportEntryOf);
  }

  async exists(id: string): Promise<boolean> {
    return ((await this.b.pool.query('SELECT 1 FROM nfe_documents WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  async getXml(companyId: string, id: string): Promise<{ signedXml: string; nfeProc: string | null } | undefined> {
    const row = (
      await this.b.pool.query<{ signed_xml: string; nfe_proc: string | null }>(
        'SELECT signed_xml, nfe_proc FROM nfe_documents WHERE id = $1 AND company_id = $2',
        [id, companyId],
      )
    ).rows[0];
    return row && { signedXml: row.signed_xml, nfeProc: row.nfe_proc };
  }

  async dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfeWork[]> {
    const rows = (
      await this.b.pool.query<{
        id: string;
        company_id: string;
        chave: string;
        signed_xml: string;
        attempts: number;
        created_at: string;
        next_attempt_at: string;
        seq: number;
      }>(
        `WITH due AS (
           SELECT id FROM nfe_documents c
            WHERE status = 'processando' AND next_attempt_at <= $1 AND NOT (id = ANY($3::text[]))
              AND (leased_by IS NULL OR leased_by = $4 OR ${holderGone('c.leased_by', '$5')})
            ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         UPDATE nfe_documents d SET leased_by = $4 FROM due WHERE d.id = due.id
         RETURNING d.id, d.company_id, d.chave, d.signed_xml, d.attempts, d.created_at, d.next_attempt_at, d.seq`,
        [iso(now), limit, [...busy], this.b.lease.id, this.b.lease.leaseMs],
      )
    ).rows;
    rows.sort((a, b) => (a.next_attempt_at < b.next_attempt_at ? -1 : a.next_attempt_at > b.next_attempt_at ? 1 : a.seq - b.seq));
    return rows.map((r) => ({ id: r.id, companyId: r.company_id, chave: r.chave, signedXml: r.signed_xml, attempts: r.attempts, createdAt: r.created_at }));
  }

  async beginSends(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.b.pool.query(`UPDATE nfe_documents SET attempts = attempts + 1, updated_at = $1 WHERE id = ANY($2::text[]) AND status = 'processando'`, [
      iso(),
      [...ids],
    ]);
  }

  async postpone(id: string, at: Date, error: string): Promise<void> {
    await this.b.pool.query(
      `UPDATE nfe_documents SET next_attempt_at = $1, last_error = $2, updated_at = $3, leased_by = NULL WHERE id = $4 AND status = 'processando'`,
      [iso(at), error, iso(), id],
    );
  }

  async backlog(): Promise<{ processando: number; oldestCreatedAt: string | null }> {
    const row = (
      await this.b.pool.query<{ processando: number; oldest: string | null }>(
        `SELECT count(*) AS processando, min(created_at) AS oldest FROM nfe_documents WHERE status = 'processando'`,
      )
    ).rows[0]!;
    return { processando: row.processando, oldestCreatedAt: row.oldest };
  }

  async recordVerdict(id: string, v: NfeVerdict, eventOf: NfeEventOf): Promise<boolean> {
    return this.b.transaction(async (client) => {
      const now = iso();
      const changed =
        v.status === 'autorizado'
          ? await client.query<RecordRow>(
              `UPDATE nfe_documents SET status = 'autorizado', codigo_status = $1, motivo = $2, protocolo = $3, autorizado_em = $4,
                 nfe_proc = $5, next_attempt_at = NULL, last_error = NULL, leased_by = NULL, updated_at = $6
               WHERE id = $7 AND status = 'processando'
               RETURNING ${NFE_RECORD_COLUMNS}`,
              [v.codigoStatus, v.motivo, v.protocolo, v.autorizadoEm, v.nfeProc, now, id],
            )
          : await client.query<RecordRow>(
              `UPDATE nfe_documents SET status = 'rejeitado', codigo_status = $1, motivo = $2, next_attempt_at = NULL,
                 last_error = NULL, leased_by = NULL, updated_at = $3
               WHERE id = $4 AND status = 'processando'
               RETURNING ${NFE_RECORD_COLUMNS}`,
              [v.codigoStatus, v.motivo, now, id],
            );
      const row = changed.rows[0];
      if (!row) return false;
      const record = recordOf(row, await this.items(client, id));
      if (record.idempotencyKey !== null) {
        await this.b.settleKeyInTx(
          client,
          { companyId: record.companyId, docType: 'nfe', key: record.idempotencyKey, documentId: id },
          v.status === 'autorizado' ? 'authorized' : 'rejected',
        );
      }
      await this.b.enqueueWebhookInTx(client, eventOf(record));
      return true;
    });
  }

  private async items(db: Queryable, id: string): Promise<ItemRow[]> {
    return (
      await db.query<ItemRow>(
        'SELECT numero_item, codigo, descricao, unidade, quantidade_units::text AS quantidade_units, valor FROM nfe_items WHERE document_id = $1 ORDER BY numero_item',
        [id],
      )
    ).rows;
  }
}
