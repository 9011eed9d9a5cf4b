// MdfeStore on PostgreSQL: the MDF-e part of PgStore (service/pg-store.ts), on its pool, its
// transactions and its key settling (service/pg-db.ts PgBlocks), so that recording a verdict and
// settling its key are one transaction, as on SQLite (sqlite-store.ts beside this file).
//
// A manifest being issued names the process whose request issues it (issued_by): the recovery
// of another process settles it only once that process's lease ran out (`processing`).

import { holderGone, keyBytes, type PgBlocks, type Queryable } from '../pg-db.ts';
import type { KeyAttempt } from '../idempotency-rules.ts';
import type { MdfeDocument, MdfeEventRecord, MdfeFilters, MdfeRecord, MdfeSituacao, MdfeStore, MdfeVerdictRecord, MdfeXml, NewMdfe } from './store.ts';
import { postgresPage, type Page, type PageRequest } from '../paging.ts';
import { POSTGRES_ROWS } from '../row-driver.ts';
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

const EVENTS_QUERY = mdfeEventsQuery('mdfe_id = $1');

type Row = MdfeRow<Buffer | null>;
const fromRow = (r: Row): MdfeRecord => mdfeRecordOf(r, POSTGRES_ROWS);

const iso = (): string => new Date().toISOString();

export class PgMdfeStore implements MdfeStore {
  constructor(private readonly b: PgBlocks) {}

  private async byId(db: Queryable, id: string): Promise<MdfeRecord | undefined> {
    const row = (await db.query<Row>(`SELECT ${MDFE_COLUMNS} FROM mdfe WHERE id = $1`, [id])).rows[0];
    return row && fromRow(row);
  }

  async codeOfLastAttempt(companyId: string, serie: number, numero: number): Promise<string | undefined> {
    const r = await this.b.pool.query<{ c_mdf: string }>(
      'SELECT c_mdf FROM mdfe WHERE company_id = $1 AND serie = $2 AND numero = $3 ORDER BY seq DESC LIMIT 1',
      [companyId, serie, numero],
    );
    return r.rows[0]?.c_mdf;
  }

  async insertProcessing(m: NewMdfe, documents: readonly MdfeDocument[]): Promise<void> {
    await this.b.transaction(async (client) => {
      await client.query(
        `INSERT INTO mdfe (id, company_id, chave, serie, numero, c_mdf, ambiente, placa, uf_inicio, uf_fim, situacao,
           emitido_em, referencia_externa, qrcode, valor_carga, xml, issued_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'processando', $11, $12, $13, $14, $15, $16, $17, $17)`,
        [
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
          keyBytes(m.referenciaExterna),
          m.qrcode,
          m.valorCarga,
          m.xml,
          this.b.lease.id,
          m.createdAt,
        ],
      );
      if (documents.length) {
        await client.query(
          `INSERT INTO mdfe_documentos (mdfe_id, ordem, tipo, chave, codigo_municipio_descarga)
           SELECT $1, ordem - 1, tipo, chave, municipio FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS d(tipo, chave, municipio, ordem)`,
          [m.id, documents.map((d) => d.tipo), documents.map((d) => d.chave), documents.map((d) => d.codigoMunicipioDescarga)],
        );
      }
    });
  }

  async recordVerdict(id: string, v: MdfeVerdictRecord, attempt?: KeyAttempt): Promise<MdfeRecord | undefined> {
    return this.b.transaction(async (client) => {
      const changed = await client.query(
        `UPDATE mdfe SET situacao = $1, status = $2, motivo = $3, protocolo = $4, autorizado_em = $5, prot_xml = $6, updated_at = $7,
           issued_by = NULL
         WHERE id = $8 AND situacao = 'processando'`,
        [
          v.authorized ? 'autorizado' : 'rejeitado',
          v.status,
          v.motivo,
          v.authorized ? v.protocolo : null,
          v.authorized ? v.at : null,
          v.protXml || null,
          iso(),
          id,
        ],
      );
      if (changed.rowCount && attempt) await this.b.settleKeyInTx(client, attempt, v.authorized ? 'authorized' : 'rejected');
      return this.byId(client, id);
    });
  }

  async discardAttempt(id: string, attempt?: KeyAttempt): Promise<void> {
    await this.b.transaction(async (client) => {
      await client.query("DELETE FROM mdfe WHERE id = $1 AND situacao = 'processando'", [id]);
      if (attempt) await this.b.settleKeyInTx(client, attempt, 'rejected');
    });
  }

  async releaseKey(attempt: KeyAttempt): Promise<void> {
    await this.b.settleKeyInTx(this.b.pool, attempt, 'rejected');
  }

  async get(companyId: string, id: string): Promise<MdfeRecord | undefined> {
    const row = (await this.b.pool.query<Row>(`SELECT ${MDFE_COLUMNS} FROM mdfe WHERE id = $1 AND company_id = $2`, [id, companyId])).rows[0];
    return row && fromRow(row);
  }

  async findByKey(companyId: string, chave: string): Promise<MdfeRecord | undefined> {
    const row = (
      await this.b.pool.query<Row>(
        `SELECT ${MDFE_COLUMNS} FROM mdfe WHERE company_id = $1 AND chave = $2
          ORDER BY situacao IN ('rejeitado', 'processando'), emitido_em DESC, seq DESC LIMIT 1`,
        [companyId, chave],
      )
    ).rows[0];
    return row && fromRow(row);
  }

  async getById(id: string): Promise<MdfeRecord | undefined> {
    return this.byId(this.b.pool, id);
  }

  async documents(id: string): Promise<MdfeDocument[]> {
    const rows = (
      await this.b.pool.query<{ tipo: 'CTe' | 'NFe'; chave: string; codigo_municipio_descarga: string }>(
        'SELECT tipo, chave, codigo_municipio_descarga FROM mdfe_documentos WHERE mdfe_id = $1 ORDER BY ordem',
        [id],
      )
    ).rows;
    return rows.map((r) => ({ tipo: r.tipo, chave: r.chave, codigoMunicipioDescarga: r.codigo_municipio_descarga }));
  }

  async events(id: string): Promise<MdfeEventRecord[]> {
    return (await this.b.pool.query<MdfeEventRow>(EVENTS_QUERY, [id])).rows.map(mdfeEventOf);
  }

  async xml(companyId: string, id: string): Promise<MdfeXml | undefined> {
    const row = (
      await this.b.pool.query<{ situacao: MdfeSituacao; xml: string; prot_xml: string | null }>(
        'SELECT situacao, xml, prot_xml FROM mdfe WHERE id = $1 AND company_id = $2',
        [id, companyId],
      )
    ).rows[0];
    return row && { situacao: row.situacao, xml: row.xml, protXml: row.prot_xml };
  }

  async exportPage(companyId: string, from: string, until: string, after: Keyset | null, limit: number): Promise<ExportPage<MdfeRecord>> {
    // Index mdfe_company_emitido (company_id, emitido_em, seq): the page starts at the last one's instant and skips its ties.
    const rows = (
      await this.b.pool.query<MdfeExportRow<Buffer | null>>(
        `SELECT seq, ${MDFE_COLUMNS} FROM mdfe
          WHERE company_id = $1 AND emitido_em >= $2 AND emitido_em < $3 AND (emitido_em > $2 OR seq > $4) AND ${AUTHORIZED_SITUACOES}
          ORDER BY emitido_em, seq LIMIT $5`,
        [companyId, after?.at ?? from, until, after?.seq ?? 0, limit],
      )
    ).rows;
    return exportPageOf(rows, limit, mdfeExportKeyset, fromRow);
  }

  async list(companyId: string, filters: MdfeFilters, page: PageRequest): Promise<Page<MdfeRecord>> {
    return postgresPage(this.b, mdfeListSpec('postgres', companyId, filters), page, fromRow, (m: MdfeRecord) => m.emitidoEm);
  }

  changeTurn<T>(id: string, change: () => Promise<T>): Promise<T> {
    return this.b.turn('mdfe', id, change);
  }

  async recordEvent(
    id: string,
    e: MdfeEventRecord,
    to: 'encerrado' | 'cancelado' | null,
    added: readonly MdfeDocument[] = [],
  ): Promise<MdfeRecord | undefined> {
    return this.b.transaction(async (client) => {
      const column = to === 'encerrado' ? 'encerrado_em' : to === 'cancelado' ? 'cancelado_em' : undefined;
      const changed = column
        ? await client.query(`UPDATE mdfe SET situacao = $1, ${column} = $2, updated_at = $3 WHERE id = $4 AND situacao = 'autorizado'`, [
            to,
            e.registradoEm,
            iso(),
            id,
          ])
        : await client.query(`UPDATE mdfe SET updated_at = $1 WHERE id = $2 AND situacao = 'autorizado'`, [iso(), id]);
      if (!changed.rowCount) return undefined;
      await client.query(
        `INSERT INTO mdfe_eventos (mdfe_id, tp_evento, n_seq, status, motivo, protocolo, registrado_em, dados, xml)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, e.tpEvento, e.nSeq, e.status, e.motivo, e.protocolo, e.registradoEm, JSON.stringify(e.dados), e.xml],
      );
      if (added.length) {
        // The row lock taken by the UPDATE above serializes the documents' order with other events.
        await client.query(
          `INSERT INTO mdfe_documentos (mdfe_id, ordem, tipo, chave, codigo_municipio_descarga)
           SELECT $1, (SELECT coalesce(max(ordem) + 1, 0) FROM mdfe_documentos WHERE mdfe_id = $1) + d.ordem - 1, d.tipo, d.chave, d.municipio
             FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS d(tipo, chave, municipio, ordem)`,
          [id, added.map((d) => d.tipo), added.map((d) => d.chave), added.map((d) => d.codigoMunicipioDescarga)],
        );
      }
      return this.byId(client, id);
    });
  }

  async processing(): Promise<MdfeRecord[]> {
    const rows = (
      await this.b.pool.query<Row>(`SELECT ${MDFE_COLUMNS} FROM mdfe m WHERE situacao = 'processando' AND ${holderGone('m.issued_by', '$1')} ORDER BY seq`, [
        this.b.lease.leaseMs,
      ])
    ).rows;
    return rows.map(fromRow);
  }
}
