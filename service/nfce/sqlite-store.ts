// NfceStore on the service's SQLite database, built from SqliteStore's building blocks (its
// prepared-statement cache, its BEGIN IMMEDIATE transaction, and the *InTx claim/settle/enqueue
// steps), so a document, its idempotency key and its webhook event change in one transaction.

import type Database from 'better-sqlite3';
import type { Environment } from '../../fiscal/company.ts';
import type { ClaimRequest, ClaimResult, KeyAttempt, KeyOutcome } from '../idempotency-rules.ts';
import type { WebhookEvent } from '../webhooks/store.ts';
import { sqlitePage, utcInstant, type Page, type PageRequest } from '../paging.ts';
import type {
  Backlog,
  NfceEventOf,
  InsertResult,
  InutilizacaoFilters,
  InutilizacaoRecord,
  InutilizacaoSummary,
  NfceFilters,
  NewNfceDocument,
  NfceCancellation,
  NfceRecord,
  NfceSend,
  NfceStatus,
  NfceStore,
  NfceVerdict,
  NfceExportEntry,
  NfceWork,
  NfceXml,
} from './store.ts';
import { SQLITE_ROWS } from '../row-driver.ts';
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

/** What SqliteStore lends its parts: its connection's statements and transaction steps. */
export type SqliteBlocks = {
  statement(sql: string): Database.Statement;
  transaction<T>(fn: () => T): T;
  /** A read of several statements in one snapshot (a deferred transaction: no write lock). */
  read<T>(fn: () => T): T;
  claimKeyInTx(request: ClaimRequest): ClaimResult;
  settleKeyInTx(attempt: KeyAttempt, outcome: KeyOutcome): boolean;
  enqueueWebhookInTx(event: WebhookEvent): boolean;
};

type RecordRow = NfceRecordRow<string | null, number>;
const recordOf = (r: RecordRow): NfceRecord => nfceRecordOf(r, SQLITE_ROWS);

const iso = (d: Date = new Date()): string => d.toISOString();

/** Thrown inside a transaction to roll back a claim whose document cannot be inserted. */
class SameKey {
  constructor(readonly result: Extract<InsertResult, { kind: 'same_key' }>) {}
}

type Pending = { work: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/** How long a background write (the queue's) may wait for others to share its commit. */
const LINGER_MS = 4;
/** Commits are at least this far apart: under load, more writes share each fsync. */
const MIN_GAP_MS = 2;

/**
 * Group commit. With synchronous=FULL every COMMIT blocks the event loop on an fsync (measured
 * with strace: 0.3 to 0.5 ms here; on a busy machine the thread then also waits for a CPU),
 * which made commits, not work, the limit of POST /nfce and of the queue. Writes asked for
 * within one turn of the event loop (an HTTP request's), or within LINGER_MS (the queue's,
 * which nobody waits for), and never sooner than MIN_GAP_MS after the previous commit, run in
 * ONE transaction, each in its own savepoint: one that fails rolls back alone, the others go
 * on. Every caller is answered only after that COMMIT, so each write is still atomic, and
 * durable before anyone hears of it. Under no load a batch is a single write, as before.
 */
class GroupCommit {
  #pending: Pending[] = [];
  /** When the scheduled flush runs (performance.now()), if one is scheduled. */
  #due: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #lastFlush = -Infinity;

  constructor(private readonly transaction: <T>(fn: () => T) => T) {}

  /** `background`: nobody is waiting on the line for it; it may linger to share a commit. */
  run<T>(work: () => T, background = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      const now = performance.now();
      const due = Math.max(this.#lastFlush + MIN_GAP_MS, background ? now + LINGER_MS : now);
      if (this.#due !== undefined && this.#due <= due) return;
      this.unschedule();
      this.#due = due;
      if (due <= now) this.#immediate = setImmediate(() => this.flush());
      else this.#timer = setTimeout(() => this.flush(), due - now);
    });
  }

  private unschedule(): void {
    clearTimeout(this.#timer);
    clearImmediate(this.#immediate);
    this.#due = undefined;
  }

  private flush(): void {
    this.unschedule();
    const batch = this.#pending;
    this.#pending = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.transaction(() => {
        for (const { work } of batch) {
          try {
            // Nested: better-sqlite3 runs it in a SAVEPOINT of the batch's transaction.
            outcomes.push({ ok: true, value: this.transaction(work) });
          } catch (err) {
            outcomes.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      // The batch did not commit: none of its writes happened.
      for (const p of batch) p.reject(err);
      return;
    } finally {
      this.#lastFlush = performance.now();
    }
    batch.forEach((p, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.err);
    });
  }
}

export class SqliteNfceStore implements NfceStore {
  readonly #commit: GroupCommit;

  constructor(private readonly b: SqliteBlocks) {
    this.#commit = new GroupCommit((fn) => b.transaction(fn));
  }

  async insertDocument(d: NewNfceDocument, claim?: ClaimRequest): Promise<InsertResult> {
    try {
      return await this.#commit.run((): InsertResult => {
        if (claim) {
          const claimed = this.b.claimKeyInTx(claim);
          if (claimed.kind !== 'new') return claimed;
        }
        const live = this.b
          .statement(`SELECT id, status FROM nfce_documents WHERE company_id = ? AND chave = ? AND status <> 'rejeitado'`)
          .get(d.companyId, d.chave) as { id: string; status: NfceStatus } | undefined;
        if (live) throw new SameKey({ kind: 'same_key', documentId: live.id, status: live.status });
        const at = iso(d.createdAt);
        this.b
          .statement(
            `INSERT INTO nfce_documents (id, company_id, idempotency_key, serie, numero, chave, cnf, dh_emi, tp_emis, contingencia,
               ambiente, request_json, received_xml, signed_xml, qrcode, url_consulta, valor_total, status, next_attempt_at,
               created_at, updated_at)
             VALUES (@id, @company_id, @idempotency_key, @serie, @numero, @chave, @cnf, @dh_emi, @tp_emis, @contingencia,
               @ambiente, @request_json, @received_xml, @received_xml, @qrcode, @url_consulta, @valor_total, 'processando', @at,
               @at, @at)`,
          )
          .run({
            id: d.id,
            company_id: d.companyId,
            idempotency_key: d.idempotencyKey,
            serie: d.serie,
            numero: d.numero,
            chave: d.chave,
            cnf: d.cNF,
            dh_emi: d.dhEmi,
            tp_emis: d.tpEmis,
            contingencia: d.contingencia ? 1 : 0,
            ambiente: d.ambiente,
            request_json: d.requestJson ?? null,
            received_xml: d.receivedXml ?? null,
            qrcode: d.qrcode,
            url_consulta: d.urlConsulta,
            valor_total: d.valorTotal,
            at,
          });
        return { kind: 'new' };
      });
    } catch (err) {
      if (err instanceof SameKey) return err.result;
      throw err;
    }
  }

  async getDocument(companyId: string, id: string): Promise<NfceRecord | undefined> {
    const row = this.b.statement(`SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents WHERE id = ? AND company_id = ?`).get(id, companyId) as
      RecordRow | undefined;
    return row && recordOf(row);
  }

  async list(companyId: string, filters: NfceFilters, page: PageRequest): Promise<Page<NfceRecord>> {
    return sqlitePage(this.b, nfceListSpec('sqlite', companyId, filters), page, recordOf, (d: NfceRecord) => utcInstant(d.dhEmi));
  }

  async findByKey(companyId: string, chave: string): Promise<NfceRecord | undefined> {
    const row = this.b
      .statement(
        `SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents INDEXED BY nfce_documents_chave WHERE company_id = ? AND chave = ?
          ORDER BY status = 'rejeitado', julianday(dh_emi) DESC, rowid DESC LIMIT 1`,
      )
      .get(companyId, chave) as RecordRow | undefined;
    return row && recordOf(row);
  }

  async getXml(companyId: string, id: string): Promise<NfceXml | undefined> {
    const row = this.b.statement('SELECT signed_xml, nfe_proc, evento_xml FROM nfce_documents WHERE id = ? AND company_id = ?').get(id, companyId) as
      { signed_xml: string | null; nfe_proc: string | null; evento_xml: string | null } | undefined;
    return row && { signedXml: row.signed_xml, nfeProc: row.nfe_proc, eventoXml: row.evento_xml };
  }

  async dueDocuments(now: Date, limit: number, busy: ReadonlySet<string>): Promise<NfceWork[]> {
    // The busy ones (in flight in this process) are still due and come first in order: asking for
    // that many more rows and skipping them avoids a NOT IN list.
    const rows = this.b
      .statement(
        `SELECT id, company_id, chave, cnf, dh_emi, tp_emis, ambiente, request_json, signed_xml, attempts, created_at
           FROM nfce_documents WHERE status = 'processando' AND next_attempt_at <= ?
          ORDER BY next_attempt_at, rowid LIMIT ?`,
      )
      .all(iso(now), limit + busy.size) as {
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
    }[];
    const out: NfceWork[] = [];
    for (const r of rows) {
      if (busy.has(r.id)) continue;
      out.push({
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
      });
      if (out.length === limit) break;
    }
    return out;
  }

  async beginSends(sends: readonly NfceSend[]): Promise<void> {
    if (sends.length === 0) return;
    const now = iso();
    await this.#commit.run(() => {
      for (const s of sends) {
        if (s.signed) {
          this.b
            .statement(
              `UPDATE nfce_documents SET signed_xml = ?, qrcode = ?, attempts = attempts + 1, updated_at = ?
                WHERE id = ? AND status = 'processando' AND signed_xml IS NULL`,
            )
            .run(s.signed.xml, s.signed.qrcode, now, s.id);
        } else {
          this.b.statement(`UPDATE nfce_documents SET attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'processando'`).run(now, s.id);
        }
      }
    });
  }

  async postpone(id: string, at: Date, error: string): Promise<void> {
    await this.#commit.run(
      () =>
        this.b
          .statement(`UPDATE nfce_documents SET next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = 'processando'`)
          .run(iso(at), error, iso(), id),
      true,
    );
  }

  async recordVerdict(id: string, v: NfceVerdict, eventOf: NfceEventOf): Promise<boolean> {
    return this.#commit.run(() => {
      const now = iso();
      const changed =
        v.status === 'autorizado'
          ? this.b
              .statement(
                `UPDATE nfce_documents SET status = ?, codigo_status = ?, motivo = ?, protocolo = ?, autorizado_em = ?,
                   nfe_proc = ?, next_attempt_at = NULL, last_error = NULL, updated_at = ?
                 WHERE id = ? AND status = 'processando'`,
              )
              .run(v.cancelado ? 'cancelado' : 'autorizado', v.codigoStatus, v.motivo, v.protocolo, v.autorizadoEm, v.nfeProc, now, id)
          : this.b
              .statement(
                `UPDATE nfce_documents SET status = 'rejeitado', codigo_status = ?, motivo = ?, next_attempt_at = NULL,
                   last_error = NULL, updated_at = ?
                 WHERE id = ? AND status = 'processando'`,
              )
              .run(v.codigoStatus, v.motivo, now, id);
      if (changed.changes === 0) return false;
      const record = this.recordInTx(id);
      if (record.idempotencyKey !== null) {
        this.b.settleKeyInTx(
          { companyId: record.companyId, docType: 'nfce', key: record.idempotencyKey, documentId: id },
          v.status === 'autorizado' ? 'authorized' : 'rejected',
        );
      }
      this.b.enqueueWebhookInTx(eventOf(record));
      return true;
    }, true);
  }

  /** One process owns a SQLite store: its turn (turns.ts) is the only one. */
  changeTurn<T>(_id: string, change: () => Promise<T>): Promise<T> {
    return change();
  }

  async recordCancellation(id: string, c: NfceCancellation, eventOf: NfceEventOf): Promise<boolean> {
    return this.#commit.run(() => {
      const changed = this.b
        .statement(
          `UPDATE nfce_documents SET status = 'cancelado', cancelado_em = ?, protocolo_cancelamento = ?, cancelamento_codigo_status = ?,
             cancelamento_motivo = ?, evento_xml = ?, updated_at = ?
            WHERE id = ? AND status = 'autorizado'`,
        )
        .run(c.canceladoEm, c.protocolo, c.codigoStatus, c.motivo, c.eventoXml, iso(), id);
      if (changed.changes === 0) return false;
      this.b.enqueueWebhookInTx(eventOf(this.recordInTx(id)));
      return true;
    });
  }

  async backlog(): Promise<Backlog> {
    const row = this.b.statement(`SELECT count(*) AS processando, min(created_at) AS oldest FROM nfce_documents WHERE status = 'processando'`).get() as {
      processando: number;
      oldest: string | null;
    };
    return { processando: row.processando, oldestCreatedAt: row.oldest };
  }

  async insertInutilizacao(r: InutilizacaoRecord): Promise<void> {
    this.b
      .statement(
        `INSERT INTO nfce_inutilizacoes (id, company_id, serie, numero_inicial, numero_final, justificativa, protocolo,
           codigo_status, motivo, xml, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.id, r.companyId, r.serie, r.numeroInicial, r.numeroFinal, r.justificativa, r.protocolo, r.codigoStatus, r.motivo, r.xml, iso(r.createdAt));
  }

  async highestNumbers(companyId: string, series: readonly number[]): Promise<Map<number, number>> {
    const highest = this.b.statement(
      `SELECT max(coalesce((SELECT max(numero) FROM nfce_documents WHERE company_id = @c AND serie = @s AND status <> 'rejeitado'), 0),
                  coalesce((SELECT max(numero_final) FROM nfce_inutilizacoes WHERE company_id = @c AND serie = @s), 0))`,
    );
    return new Map(series.map((serie) => [serie, highest.pluck().get({ c: companyId, s: serie }) as number]));
  }

  async findInutilizacao(companyId: string, serie: number, first: number, last: number): Promise<InutilizacaoRecord | undefined> {
    const r = this.b
      .statement(`SELECT * FROM nfce_inutilizacoes WHERE company_id = ? AND serie = ? AND numero_inicial = ? AND numero_final = ?`)
      .get(companyId, serie, first, last) as (InutilizacaoRow & { xml: string }) | undefined;
    return r && inutilizacaoOf(r);
  }

  async listInutilizacoes(companyId: string, filters: InutilizacaoFilters, page: PageRequest): Promise<Page<InutilizacaoSummary>> {
    const spec = inutilizacaoListSpec('sqlite', companyId, filters);
    return sqlitePage(this.b, spec, page, inutilizacaoSummaryOf, (i: InutilizacaoSummary) => i.createdAt.toISOString());
  }

  async getInutilizacao(companyId: string, id: string): Promise<InutilizacaoRecord | undefined> {
    const r = this.b.statement('SELECT * FROM nfce_inutilizacoes WHERE id = ? AND company_id = ?').get(id, companyId) as
      (InutilizacaoRow & { xml: string }) | undefined;
    return r && inutilizacaoOf(r);
  }

  async exportPage(companyId: string, from: Date, until: Date, after: Keyset | null, limit: number): Promise<ExportPage<NfceExportEntry>> {
    // julianday(dh_emi) reads the offset dhEmi is written with; spelled as the index
    // nfce_documents_emissao is (migrations/service/20261125T0900_exports.sql), whose entries end
    // with the rowid: the page starts at the last one's instant and skips its ties up to its rowid.
    const rows = this.b
      .statement(
        `SELECT rowid AS seq, ${EXPORT_COLUMNS('instr')}
           FROM nfce_documents
          WHERE company_id = ? AND julianday(dh_emi) >= julianday(?) AND julianday(dh_emi) < julianday(?)
            AND (julianday(dh_emi) > julianday(?) OR rowid > ?)
            AND (status IN ('autorizado', 'cancelado') OR (status = 'processando' AND contingencia = 1 AND signed_xml IS NOT NULL))
          ORDER BY julianday(dh_emi), rowid LIMIT ?`,
      )
      .all(companyId, after?.at ?? iso(from), iso(until), after?.at ?? iso(from), after?.seq ?? 0, limit) as ExportRow<number>[];
    return exportPageOf(rows, limit, exportKeyset, (r) => exportEntryOf(r, SQLITE_ROWS));
  }

  async deleteArchived(companyId: string, ids: readonly string[]): Promise<number> {
    return this.b.transaction(() => {
      let deleted = 0;
      for (const id of ids) {
        const doc = this.b
          .statement(
            `SELECT idempotency_key FROM nfce_documents d
              WHERE id = ? AND company_id = ? AND NOT EXISTS (SELECT 1 FROM nfe_documents n WHERE n.company_id = d.company_id AND n.chave_nfce = d.chave)`,
          )
          .get(id, companyId) as { idempotency_key: string | null } | undefined;
        if (!doc) continue;
        if (doc.idempotency_key !== null) {
          this.b
            .statement(`DELETE FROM idempotency_keys WHERE company_id = ? AND doc_type = 'nfce' AND key = ? AND document_id = ?`)
            .run(companyId, doc.idempotency_key, id);
        }
        deleted += this.b.statement('DELETE FROM nfce_documents WHERE id = ?').run(id).changes;
      }
      return deleted;
    });
  }

  async inutilizacoesBetween(companyId: string, from: Date, until: Date): Promise<InutilizacaoRecord[]> {
    const rows = this.b
      .statement(`SELECT * FROM nfce_inutilizacoes WHERE company_id = ? AND created_at >= ? AND created_at < ? ORDER BY serie, numero_inicial, numero_final`)
      .all(companyId, iso(from), iso(until)) as (InutilizacaoRow & { xml: string })[];
    return rows.map(inutilizacaoOf);
  }

  private recordInTx(id: string): NfceRecord {
    return recordOf(this.b.statement(`SELECT ${NFCE_RECORD_COLUMNS} FROM nfce_documents WHERE id = ?`).get(id) as RecordRow);
  }
}
