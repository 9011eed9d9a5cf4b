// NfceStore on PostgreSQL, built from PgStore's building blocks (service/pg-db.ts PgBlocks: its
// pool, transactions, this process's lease, and the claim/settle/enqueue steps), so a document,
// its idempotency key and its webhook event change in one transaction, as on SQLite
// (sqlite-store.ts beside this file).
//
// Queue documents are leased (pg-db.ts): dueDocuments takes due documents nobody holds, or whose
// holder's lease ran out, with FOR UPDATE SKIP LOCKED (two processes never take the same one)
// and marks them leased_by this process; the verdict or the postponement frees them.
//
// The hot paths are single statements where they can be: a receipt with a new idempotency key is
// claimed and stored by one INSERT (the key's INSERT in a CTE), one round trip and one commit.

import type { Environment } from '../../fiscal/company.ts';
import type { ClaimRequest } from '../idempotency-rules.ts';
import { holderGone, isUniqueViolation, keyBytes, type PgBlocks } from '../pg-db.ts';
import { postgresPage, utcInstant, type Page, type PageRequest } from '../paging.ts';
import type {
  Backlog,
  InsertResult,
  InutilizacaoFilters,
  InutilizacaoRecord,
  InutilizacaoSummary,
  NfceFilters,
  NewNfceDocument,
  NfceCancellation,
  NfceEventOf,
  NfceExportEntry,
  NfceRecord,
  NfceSend,
  NfceStatus,
  NfceStore,
  NfceVerdict,
  NfceWork,
  NfceXml,
} from './store.ts';
import { POSTGRES_ROWS } from '../row-driver.ts';
import { pageOf as exportPageOf, type Keyset, type Page as ExportPage } from '../export/pages.ts';
import {
  EXPORT_COLUMNS,
  NFCE_RECORD_COLUMNS,
  exportEntryOf,
  exportKeyset,
  inutilizacaoListSpec,
  inutilizacaoOf,
  inutilizacaoSummaryOf,
  nfceListSpec,
  nfceRecordOf,
  type ExportRow,
  type InutilizacaoRow,
  type NfceRecordRow,
} from './rows.ts';

type InutilizacaoXmlRow = InutilizacaoRow & { xml: string };

type RecordRow = NfceRecordRow<Buffer | null, boolean>;
const recordOf = (r: RecordRow): NfceRecord => nfceRecordOf(r, POSTGRES_ROWS);

const LIVE_KEY_INDEX = 'nfce_documents_live_key';

const iso = (d: Date = new Date()): string => d.toISOString();

// The document's columns and their parameters $1..$16 (see documentParams).
const INSERT_COLUMNS = `id, company_id, idempotency_key, serie, numero, chave, cnf, dh_emi, tp_emis, contingencia, ambiente,
  request_json, received_xml, signed_xml, qrcode, url_consulta, valor_total, status, next_attempt_at, created_at, updated_at`;
const INSERT_VALUES = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14, $15, $16, 'processando', $17, $17, $17`;

function documentParams(d: NewNfceDocument): unknown[] {
  return [
    d.id,
    d.companyId,
    keyBytes(d.idempotencyKey),
    d.serie,
    d.numero,
    d.chave,
    d.cNF,
    d.dhEmi,
    d.tpEmis,
    d.contingencia,
    d.ambiente,
    d.requestJson ?? null,
    d.receivedXml ?? null,
    d.qrcode,
    d.urlConsulta,
    d.valorTotal,
    iso(d.createdAt),
  ];
}

type WorkRow = {
  id: string;
  company_id: string;
  chave: string;
  cnf: string;
  dh_emi: string;
  tp_emis: number;
  ambiente: Environment;
  request_json: string | null;
  signed_xml: string | null;
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  seq: number;
};

export class PgNfceStore implements NfceStore {
  constructor(private readonly b: PgBlocks) {}

  async insertDocument(d: NewNfceDocument, claim?: ClaimRequest): Promise<InsertResult> {
    try {
      // Fast path: no key, or a key never claimed: one statement.
      const inserted = claim
        ? await this.b.pool.query(
            `WITH claimed AS (
               INSERT INTO idempotency_keys (company_id, doc_type, key, fingerprint, document_id, state, claimed_by, created_at, updated_at)
               VALUES ($2, 'nfce', $18, $19, $1, 'processing', $20, $17, $17) ON CONFLICT DO NOTHING RETURNING 1
             )
             INSERT INTO nfce_documents (${INSERT_COLUMNS}) SELECT ${INSERT_VALUES} WHERE EXISTS (SELECT 1 FROM claimed)`,
            [...documentParams(d), keyBytes(claim.key), claim.fingerprint, this.b.lease.id],
          )
        : await this.b.pool.query(`INSERT INTO nfce_documents (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})`, documentParams(d));
      if (inserted.rowCount === 1) return { kind: 'new' };
    } catch (err) {
      if (isUniqueViolation(err, LIVE_KEY_INDEX)) return this.sameKey(d);
      throw err;
    }
    // The key exists: judged by the shared rules, and retaken (a rejected attempt's) with the document.
    try {
      return await this.b.transaction(async (client) => {
        const claimed = await this.b.claimKeyInTx(client, claim!);
        if (claimed.kind !== 'new') return claimed;
        await client.query(`INSERT INTO nfce_documents (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})`, documentParams(d));
        return { kind: 'new' } as const;
      });
    } catch (err) {
      if (isUniqueViolation(err, LIVE_KEY_INDEX)) return this.sameKey(d);
      throw err;
    }
  }

  /** The live document holding the access key (its insert was refused by the unique index). */
  private async sameKey(d: NewNfceDocument): Promise<InsertResult> {
    const live = (
      await this.b.pool.query<{ id: string; status: NfceStatus }>(
        `SELECT id, status FROM nfce_documents WHERE company_id = $1 AND chave = $2 AND status <> 'rejeitado'`,
        [d.companyId, d.chave],
      )
    ).rows[0];
    if (!live) throw new Error(`NFC-e de chave ${d.chave} recusada pelo índice de chave única, mas não encontrada`);
    return { kind: 'same_key', documentId: live.id, status: live.status };
  }

  async getDocument(companyId: string, id: string): Promise<NfceRecord | undefined> {
    const row = (await this.b.pool.query<RecordRow>(`SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents WHERE id = $1 AND company_id = $2`, [id, companyId]))
      .rows[0];
    return row && recordOf(row);
  }

  async list(companyId: string, filters: NfceFilters, page: PageRequest): Promise<Page<NfceRecord>> {
    return postgresPage(this.b, nfceListSpec('postgres', companyId, filters), page, recordOf, (d: NfceRecord) => utcInstant(d.dhEmi));
  }

  async findByKey(companyId: string, chave: string): Promise<NfceRecord | undefined> {
    const row = (
      await this.b.pool.query<RecordRow>(
        `SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents WHERE company_id = $1 AND chave = $2
          ORDER BY status = 'rejeitado', balcao_instant(dh_emi) DESC, seq DESC LIMIT 1`,
        [companyId, chave],
      )
    ).rows[0];
    return row && recordOf(row);
  }

  async getXml(companyId: string, id: string): Promise<NfceXml | undefined> {
    const row = (
      await this.b.pool.query<{ signed_xml: string | null; nfe_proc: string | null; evento_xml: string | null }>(
        'SELECT signed_xml, nfe_proc, evento_xml FROM nfce_documents WHERE id = $1 AND company_id = $2',
        [id, companyId],
      )
    ).rows[0];
    return row && { signedXml: row.signed_xml, nfeProc: row.nfe_proc, eventoXml: row.evento_xml };
  }

  async dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfceWork[]> {
    const rows = (
      await this.b.pool.query<WorkRow>(
        `WITH due AS (
           SELECT id FROM nfce_documents c
            WHERE status = 'processando' AND next_attempt_at <= $1 AND NOT (id = ANY($3::text[]))
              AND (leased_by IS NULL OR leased_by = $4 OR ${holderGone('c.leased_by', '$5')})
            ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         UPDATE nfce_documents d SET leased_by = $4 FROM due WHERE d.id = due.id
         RETURNING d.id, d.company_id, d.chave, d.cnf, d.dh_emi, d.tp_emis, d.ambiente, d.request_json, d.signed_xml, d.attempts,
           d.created_at, d.next_attempt_at, d.seq`,
        [iso(now), limit, [...busy], this.b.lease.id, this.b.lease.leaseMs],
      )
    ).rows;
    rows.sort((a, b) => (a.next_attempt_at < b.next_attempt_at ? -1 : a.next_attempt_at > b.next_attempt_at ? 1 : a.seq - b.seq));
    return rows.map((r) => ({
      id: r.id,
      companyId: r.company_id,
      chave: r.chave,
      cNF: r.cnf,
      dhEmi: r.dh_emi,
      tpEmis: r.tp_emis as 1 | 9,
      ambiente: r.ambiente,
      requestJson: r.request_json,
      signedXml: r.signed_xml,
      attempts: r.attempts,
      createdAt: r.created_at,
    }));
  }

  async beginSends(sends: readonly NfceSend[]): Promise<void> {
    if (sends.length === 0) return;
    // One statement for the batch: the signed XML where it was signed now (and not stored yet),
    // the attempt counted, as the SQLite part does send by send.
    await this.b.pool.query(
      `UPDATE nfce_documents d SET signed_xml = coalesce(s.xml, d.signed_xml), qrcode = coalesce(s.qrcode, d.qrcode),
         attempts = d.attempts + 1, updated_at = $4
        FROM unnest($1::text[], $2::text[], $3::text[]) AS s(id, xml, qrcode)
       WHERE d.id = s.id AND d.status = 'processando' AND (s.xml IS NULL OR d.signed_xml IS NULL)`,
      [sends.map((s) => s.id), sends.map((s) => s.signed?.xml ?? null), sends.map((s) => s.signed?.qrcode ?? null), iso()],
    );
  }

  async postpone(id: string, at: Date, error: string): Promise<void> {
    await this.b.pool.query(
      `UPDATE nfce_documents SET next_attempt_at = $1, last_error = $2, updated_at = $3, leased_by = NULL WHERE id = $4 AND status = 'processando'`,
      [iso(at), error, iso(), id],
    );
  }

  async recordVerdict(id: string, v: NfceVerdict, eventOf: NfceEventOf): Promise<boolean> {
    // The queue's hot path, in two round trips and one statement that is its transaction: the
    // document as it is (this process holds its lease: nothing else changes it meanwhile), its
    // event built from it in its new state, then the verdict, the key settled and the event
    // queued together, only if it is still processando.
    const row = (
      await this.b.pool.query<RecordRow>({ text: `SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents WHERE id = $1 AND status = 'processando'`, values: [id] })
    ).rows[0];
    if (!row) return false;
    const before = recordOf(row);
    const after: NfceRecord =
      v.status === 'autorizado'
        ? {
            ...before,
            status: v.cancelado ? 'cancelado' : 'autorizado',
            codigoStatus: v.codigoStatus,
            motivo: v.motivo,
            protocolo: v.protocolo,
            autorizadoEm: v.autorizadoEm,
          }
        : { ...before, status: 'rejeitado', codigoStatus: v.codigoStatus, motivo: v.motivo };
    const event = eventOf(after);
    const now = iso();
    const authorized = v.status === 'autorizado';
    const r = await this.b.pool.query<{ changed: number }>({
      text: `WITH doc AS (
               UPDATE nfce_documents SET status = $2, codigo_status = $3, motivo = $4,
                 protocolo = CASE WHEN $10 THEN $5 ELSE protocolo END, autorizado_em = CASE WHEN $10 THEN $6 ELSE autorizado_em END,
                 nfe_proc = CASE WHEN $10 THEN $7 ELSE nfe_proc END,
                 next_attempt_at = NULL, last_error = NULL, leased_by = NULL, updated_at = $8
               WHERE id = $1 AND status = 'processando'
               RETURNING company_id, idempotency_key
             ), settled AS (
               UPDATE idempotency_keys k SET state = $9, updated_at = $8 FROM doc
                WHERE doc.idempotency_key IS NOT NULL AND k.company_id = doc.company_id AND k.doc_type = 'nfce'
                  AND k.key = doc.idempotency_key AND k.document_id = $1 AND k.state = 'processing'
             ), queued AS (
               INSERT INTO webhook_deliveries (event_id, company_id, tipo, payload, next_attempt_at, created_at)
               SELECT $11, doc.company_id, $12, $13, $14, $14 FROM doc WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.company_id = doc.company_id)
             )
             SELECT count(*)::int AS changed FROM doc`,
      values: [
        id,
        after.status,
        v.codigoStatus,
        v.motivo,
        authorized ? v.protocolo : null,
        authorized ? v.autorizadoEm : null,
        authorized ? v.nfeProc : null,
        now,
        authorized ? 'authorized' : 'rejected',
        authorized,
        event.eventId,
        event.tipo,
        event.payload,
        iso(event.createdAt),
      ],
    });
    return r.rows[0]!.changed === 1;
  }

  changeTurn<T>(id: string, change: () => Promise<T>): Promise<T> {
    return this.b.turn('nfce', id, change);
  }

  async recordCancellation(id: string, c: NfceCancellation, eventOf: NfceEventOf): Promise<boolean> {
    return this.b.transaction(async (client) => {
      const row = (
        await client.query<RecordRow>(
          `UPDATE nfce_documents SET status = 'cancelado', cancelado_em = $1, protocolo_cancelamento = $2, cancelamento_codigo_status = $3,
             cancelamento_motivo = $4, evento_xml = $5, updated_at = $6
            WHERE id = $7 AND status = 'autorizado'
            RETURNING ${NFCE_RECORD_COLUMNS}`,
          [c.canceladoEm, c.protocolo, c.codigoStatus, c.motivo, c.eventoXml, iso(), id],
        )
      ).rows[0];
      if (!row) return false;
      await this.b.enqueueWebhookInTx(client, eventOf(recordOf(row)));
      return true;
    });
  }

  async backlog(): Promise<Backlog> {
    const row = (
      await this.b.pool.query<{ processando: number; oldest: string | null }>(
        `SELECT count(*) AS processando, min(created_at) AS oldest FROM nfce_documents WHERE status = 'processando'`,
      )
    ).rows[0]!;
    return { processando: row.processando, oldestCreatedAt: row.oldest };
  }

  async insertInutilizacao(r: InutilizacaoRecord): Promise<void> {
    await this.b.pool.query(
      `INSERT INTO nfce_inutilizacoes (id, company_id, serie, numero_inicial, numero_final, justificativa, protocolo,
         codigo_status, motivo, xml, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [r.id, r.companyId, r.serie, r.numeroInicial, r.numeroFinal, r.justificativa, r.protocolo, r.codigoStatus, r.motivo, r.xml, iso(r.createdAt)],
    );
  }

  async highestNumbers(companyId: string, series: readonly number[]): Promise<Map<number, number>> {
    const rows = (
      await this.b.pool.query<{ serie: number; highest: number }>(
        `SELECT s.serie, greatest(
             coalesce((SELECT max(numero) FROM nfce_documents WHERE company_id = $1 AND serie = s.serie AND status <> 'rejeitado'), 0),
             coalesce((SELECT max(numero_final) FROM nfce_inutilizacoes WHERE company_id = $1 AND serie = s.serie), 0))::integer AS highest
           FROM unnest($2::integer[]) AS s (serie)`,
        [companyId, [...series]],
      )
    ).rows;
    return new Map(rows.map((r) => [r.serie, r.highest]));
  }

  async findInutilizacao(companyId: string, serie: number, first: number, last: number): Promise<InutilizacaoRecord | undefined> {
    const r = (
      await this.b.pool.query<InutilizacaoXmlRow>(
        `SELECT * FROM nfce_inutilizacoes WHERE company_id = $1 AND serie = $2 AND numero_inicial = $3 AND numero_final = $4`,
        [companyId, serie, first, last],
      )
    ).rows[0];
    return r && inutilizacaoOf(r);
  }

  async listInutilizacoes(companyId: string, filters: InutilizacaoFilters, page: PageRequest): Promise<Page<InutilizacaoSummary>> {
    const spec = inutilizacaoListSpec('postgres', companyId, filters);
    return postgresPage(this.b, spec, page, inutilizacaoSummaryOf, (i: InutilizacaoSummary) => i.createdAt.toISOString());
  }

  async getInutilizacao(companyId: string, id: string): Promise<InutilizacaoRecord | undefined> {
    const r = (await this.b.pool.query<InutilizacaoXmlRow>('SELECT * FROM nfce_inutilizacoes WHERE id = $1 AND company_id = $2', [id, companyId])).rows[0];
    return r && inutilizacaoOf(r);
  }

  async exportPage(companyId: string, from: Date, until: Date, after: Keyset | null, limit: number): Promise<ExportPage<NfceExportEntry>> {
    // balcao_instant(dh_emi) reads the offset dhEmi is written with; spelled as the index
    // nfce_documents_emissao is (migrations/service-postgres/20261201T1000_i25_lists.sql):
    // the page starts at the last one's instant and skips its ties up to its seq.
    const rows = (
      await this.b.pool.query<ExportRow<boolean>>(
        `SELECT seq, ${EXPORT_COLUMNS('strpos')}
           FROM nfce_documents
          WHERE company_id = $1 AND balcao_instant(dh_emi) >= balcao_instant($2) AND balcao_instant(dh_emi) < $3::timestamptz
            AND (balcao_instant(dh_emi) > balcao_instant($2) OR seq > $4)
            AND (status IN ('autorizado', 'cancelado') OR (status = 'processando' AND contingencia AND signed_xml IS NOT NULL))
          ORDER BY balcao_instant(dh_emi), seq LIMIT $5`,
        [companyId, after?.at ?? iso(from), iso(until), after?.seq ?? 0, limit],
      )
    ).rows;
    return exportPageOf(rows, limit, exportKeyset, (r) => exportEntryOf(r, POSTGRES_ROWS));
  }

  async deleteArchived(companyId: string, ids: readonly string[]): Promise<number> {
    // One statement, so one transaction: the documents and their keys go together.
    const { rows } = await this.b.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM nfce_documents d
          WHERE d.company_id = $1 AND d.id = ANY($2::text[])
            AND NOT EXISTS (SELECT 1 FROM nfe_documents n WHERE n.company_id = d.company_id AND n.chave_nfce = d.chave)
         RETURNING d.id, d.idempotency_key
       ), keys AS (
         DELETE FROM idempotency_keys k USING gone
          WHERE k.company_id = $1 AND k.doc_type = 'nfce' AND k.key = gone.idempotency_key AND k.document_id = gone.id
       )
       SELECT count(*)::int AS n FROM gone`,
      [companyId, ids],
    );
    return rows[0]!.n;
  }

  async inutilizacoesBetween(companyId: string, from: Date, until: Date): Promise<InutilizacaoRecord[]> {
    const rows = (
      await this.b.pool.query<InutilizacaoXmlRow>(
        `SELECT * FROM nfce_inutilizacoes WHERE company_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY serie, numero_inicial, numero_final`,
        [companyId, iso(from), iso(until)],
      )
    ).rows;
    return rows.map(inutilizacaoOf);
  }
}
