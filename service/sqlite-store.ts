// ServiceStore on better-sqlite3: prepared statements, one transaction per operation. The
// driver is synchronous, which is what makes `BEGIN IMMEDIATE` claims simple and atomic across
// processes (the write lock is the file's); the async signatures are for the interface's sake.

import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import type { Environment } from '../fiscal/company.ts';
import { ibptRateRecords, ibptTableOfRecords, ibptTableRecord, type IbptRateRecord, type IbptStoredTable, type IbptTable } from '../fiscal/ibpt/table.ts';
import type { RateOverride } from '../fiscal/ibscbs/rates.ts';
import { migrationSetDir, shippedMigrations } from '../migrations/migrate.ts';
import type { SandboxMemory } from './authority/sandbox-memory.ts';
import { SqliteSandboxMemory } from './authority/sandbox-store.ts';
import { companyFromRow, settingsRow, type CompanyRow } from './company-rows.ts';
import {
  canSettle,
  decideClaim,
  type ClaimRequest,
  type ClaimResult,
  type DocumentType,
  type KeyAttempt,
  type KeyOutcome,
  type KeyState,
  type StoredKey,
} from './idempotency-rules.ts';
import { SqliteMdfeStore } from './mdfe/sqlite-store.ts';
import { SqliteNfceStore } from './nfce/sqlite-store.ts';
import { SqliteTerminalStore } from './terminals/sqlite-store.ts';
import { SqlitePixStore } from './pix/sqlite-store.ts';
import { SqliteNfeStore } from './nfe/sqlite-store.ts';
import {
  DEFAULT_SANDBOX_AUTHORITY,
  type CompanyRecord,
  type CompanySettings,
  type PendingKey,
  type ReplacedCertificate,
  type SandboxAuthority,
  type ServiceStore,
  type StoredTechnicalResponsible,
  type TokenOwner,
} from './store.ts';
import { technicalResponsibleOf, type TechnicalResponsibleRow } from './resp-tec.ts';
import type { WebhookAttemptResult, WebhookDelivery, WebhookEvent, WebhookRecord } from './webhooks/store.ts';

import { backupOnline, type Backup, type BackupPlace } from '../base/node/sqlite-backup.ts';

const iso = (d: Date = new Date()): string => d.toISOString();

export class SqliteStore implements ServiceStore {
  readonly #statements = new Map<string, Database.Statement>();

  /** MDF-e part (service/mdfe/sqlite-store.ts), on this connection and its building blocks. */
  readonly mdfe = new SqliteMdfeStore({
    statement: (sql) => this.statement(sql),
    transaction: (fn) => this.transaction(fn),
    read: (fn) => this.read(fn),
    settleKeyInTx: (attempt, outcome) => this.settleKeyInTx(attempt, outcome),
  });

  /** NFC-e part (service/nfce/sqlite-store.ts), on this connection and its building blocks. */
  readonly nfce = new SqliteNfceStore({
    statement: (sql) => this.statement(sql),
    transaction: (fn) => this.transaction(fn),
    read: (fn) => this.read(fn),
    claimKeyInTx: (request) => this.claimKeyInTx(request),
    settleKeyInTx: (attempt, outcome) => this.settleKeyInTx(attempt, outcome),
    enqueueWebhookInTx: (event) => this.enqueueWebhookInTx(event),
  });

  /** NF-e part (service/nfe/sqlite-store.ts), on this connection and its building blocks. */
  readonly nfe = new SqliteNfeStore({
    statement: (sql) => this.statement(sql),
    transaction: (fn) => this.transaction(fn),
    read: (fn) => this.read(fn),
    settleKeyInTx: (attempt, outcome) => this.settleKeyInTx(attempt, outcome),
    enqueueWebhookInTx: (event) => this.enqueueWebhookInTx(event),
  });

  /** Terminals and their series (service/terminals/sqlite-store.ts). */
  readonly terminals = new SqliteTerminalStore({
    statement: (sql) => this.statement(sql),
    transaction: (fn) => this.transaction(fn),
  });

  /** The API Pix webhook's secrets and received PIX (service/pix/sqlite-store.ts). */
  readonly pix = new SqlitePixStore({
    statement: (sql) => this.statement(sql),
    transaction: (fn) => this.transaction(fn),
  });

  /** `onClose`: what else this store holds, let go after the database closes (the data folder's lock). */
  constructor(
    protected readonly db: Database.Database,
    private readonly onClose?: () => void,
  ) {}

  /** Prepared once per SQL text and reused: preparing costs more than most of these queries. */
  protected statement(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction: the write lock is taken before the first
   * read, so a read-decide-write sequence cannot interleave with another connection's.
   */
  protected transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** Several reads in one snapshot, without the write lock (a deferred transaction). */
  protected read<T>(fn: () => T): T {
    return this.db.transaction(fn).deferred();
  }

  // --- companies and tokens -------------------------------------------------------------------

  async insertCompany(c: Omit<CompanyRecord, 'version' | 'updatedAt'>, tokenSha256: Buffer): Promise<void> {
    this.transaction(() => {
      this.statement(
        `INSERT INTO companies (id, cnpj, ie, nome, fantasia, logradouro, numero, complemento, bairro,
           codigo_municipio, municipio, uf, cep, telefone, crt, csc_id, csc_enc, qrcode_versao, ambiente,
           certificado_pfx_enc, certificado_senha_enc, certificado_sha256, certificado_validade, ibscbs, created_at,
           settings_version, updated_at)
         VALUES (@id, @cnpj, @ie, @nome, @fantasia, @logradouro, @numero, @complemento, @bairro,
           @codigo_municipio, @municipio, @uf, @cep, @telefone, @crt, @csc_id, @csc_enc, @qrcode_versao, @ambiente,
           @certificado_pfx_enc, @certificado_senha_enc, @certificado_sha256, @certificado_validade, @ibscbs, @created_at,
           @settings_version, @updated_at)`,
      ).run({
        ...settingsRow(c),
        id: c.id,
        cnpj: c.cnpj,
        uf: c.address.uf,
        created_at: c.createdAt,
        settings_version: 1,
        updated_at: c.createdAt,
      } satisfies CompanyRow);
      this.statement('INSERT INTO api_tokens (token_sha256, company_id, created_at) VALUES (?, ?, ?)').run(tokenSha256, c.id, c.createdAt);
    });
  }

  async getCompanyVersion(id: string): Promise<number | undefined> {
    return this.statement('SELECT settings_version FROM companies WHERE id = ?').pluck().get(id) as number | undefined;
  }

  async updateCompanySettings(
    id: string,
    expectedVersion: number,
    settings: CompanySettings,
    replaced?: Omit<ReplacedCertificate, 'replacedAt'>,
  ): Promise<CompanyRecord | undefined> {
    // The settings carry sealed secrets (the .pfx with its private key, its password, the CSC)
    // that an update may replace. SQLite leaves a replaced value's bytes in the page's free space
    // and in the WAL; secure_delete zeroes the freed space, and the checkpoint below copies the
    // scrubbed pages over the old ones and empties the WAL. Only here: settings change rarely,
    // while zeroing on every document update would cost the hot path writes.
    const secureDelete = this.db.pragma('secure_delete', { simple: true }) as number;
    this.db.pragma('secure_delete = ON');
    let updated: CompanyRecord | undefined;
    try {
      updated = this.transaction(() => {
        const onFile = this.statement('SELECT certificado_sha256 FROM companies WHERE id = ? AND settings_version = ?').pluck().get(id, expectedVersion) as
          string | undefined;
        if (onFile === undefined) return undefined;
        const certificateChanges = settings.certificate.sha256 !== onFile;
        if (certificateChanges !== (replaced !== undefined) || (replaced && replaced.sha256 !== onFile)) {
          throw new Error(
            `updateCompanySettings: o certificado substituído (${replaced?.sha256 ?? 'nenhum'}) não confere com o certificado em uso (${onFile})`,
          );
        }
        const now = iso();
        this.statement(
          `UPDATE companies SET ie = @ie, nome = @nome, fantasia = @fantasia, logradouro = @logradouro, numero = @numero,
             complemento = @complemento, bairro = @bairro, codigo_municipio = @codigo_municipio, municipio = @municipio,
             cep = @cep, telefone = @telefone, crt = @crt, csc_id = @csc_id, csc_enc = @csc_enc,
             qrcode_versao = @qrcode_versao, ambiente = @ambiente, certificado_pfx_enc = @certificado_pfx_enc,
             certificado_senha_enc = @certificado_senha_enc, certificado_sha256 = @certificado_sha256,
             certificado_validade = @certificado_validade, ibscbs = @ibscbs, settings_version = settings_version + 1,
             updated_at = @updated_at
           WHERE id = @id AND settings_version = @expected_version`,
        ).run({ ...settingsRow(settings), id, expected_version: expectedVersion, updated_at: now });
        if (replaced) {
          this.statement(`INSERT INTO replaced_certificates (company_id, sha256, not_before, not_after, replaced_at) VALUES (?, ?, ?, ?, ?)`).run(
            id,
            replaced.sha256,
            replaced.notBefore,
            replaced.notAfter,
            now,
          );
        }
        return companyFromRow(this.statement('SELECT * FROM companies WHERE id = ?').get(id) as CompanyRow);
      });
    } finally {
      this.db.pragma(`secure_delete = ${secureDelete}`);
    }
    // TRUNCATE waits (busy_timeout) for readers of older snapshots, such as the running service,
    // to finish their statement. Should one outlast it, the scrubbed pages still reach the main
    // file at the next checkpoint; the update itself stands either way.
    if (updated) this.db.pragma('wal_checkpoint(TRUNCATE)');
    return updated;
  }

  async replacedCertificates(companyId: string): Promise<ReplacedCertificate[]> {
    const rows = this.statement(
      `SELECT sha256, not_before, not_after, replaced_at FROM replaced_certificates WHERE company_id = ? ORDER BY replaced_at, id`,
    ).all(companyId) as { sha256: string; not_before: string; not_after: string; replaced_at: string }[];
    return rows.map((r) => ({ sha256: r.sha256, notBefore: r.not_before, notAfter: r.not_after, replacedAt: r.replaced_at }));
  }

  async replaceApiTokens(companyId: string, tokenSha256: Buffer): Promise<boolean> {
    return this.transaction(() => {
      if (!this.statement('SELECT 1 FROM companies WHERE id = ?').get(companyId)) return false;
      this.statement('DELETE FROM api_tokens WHERE company_id = ?').run(companyId);
      this.statement('INSERT INTO api_tokens (token_sha256, company_id, created_at) VALUES (?, ?, ?)').run(tokenSha256, companyId, iso());
      return true;
    });
  }

  async getOperatorRates(): Promise<RateOverride[]> {
    const periods = this.statement('SELECT periods FROM operator_ibscbs_rates WHERE id = 1').pluck().get() as string | undefined;
    return periods === undefined ? [] : (JSON.parse(periods) as RateOverride[]);
  }

  async setOperatorRates(periods: readonly RateOverride[]): Promise<void> {
    const now = iso();
    this.transaction(() => {
      this.statement(
        'INSERT INTO operator_ibscbs_rates (id, periods, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET periods = excluded.periods, updated_at = excluded.updated_at',
      ).run(JSON.stringify(periods), now);
      this.statement('UPDATE companies SET settings_version = settings_version + 1, updated_at = ?').run(now);
    });
  }

  // --- IBPT tables (Lei 12.741) ----------------------------------------------------------------

  async importIbptTable(table: IbptTable, fileName: string): Promise<IbptStoredTable> {
    const id = randomUUID();
    const now = iso();
    this.transaction(() => {
      this.statement('DELETE FROM ibpt_tables WHERE uf = ? AND versao = ?').run(table.uf, table.versao);
      this.statement(
        `INSERT INTO ibpt_tables (id, uf, versao, vigencia_inicio, vigencia_fim, chave, fonte, file_name, imported_at)
         VALUES (@id, @uf, @versao, @vigencia_inicio, @vigencia_fim, @chave, @fonte, @file_name, @imported_at)`,
      ).run({ id, ...ibptTableRecord(table), file_name: fileName, imported_at: now });
      const rate = this.statement(
        `INSERT INTO ibpt_rates (table_id, ncm, ex, nacionalfederal, importadosfederal, estadual, municipal)
         VALUES (@table_id, @ncm, @ex, @nacionalfederal, @importadosfederal, @estadual, @municipal)`,
      );
      for (const r of ibptRateRecords(table)) rate.run({ table_id: id, ...r });
      this.statement('UPDATE companies SET settings_version = settings_version + 1, updated_at = ? WHERE uf = ?').run(now, table.uf);
    });
    return (await this.listIbptTables()).find((t) => t.id === id)!;
  }

  async ibptTables(uf: string): Promise<IbptTable[]> {
    const rates = this.statement('SELECT * FROM ibpt_rates WHERE table_id = ?');
    return this.read(() =>
      (this.statement('SELECT * FROM ibpt_tables WHERE uf = ?').all(uf) as IbptStoredTable[]).map((t) =>
        ibptTableOfRecords(t, rates.iterate(t.id) as IterableIterator<IbptRateRecord>),
      ),
    );
  }

  async ibptStamp(uf: string): Promise<string> {
    return this.statement("SELECT count(*) || '/' || coalesce(max(imported_at), '') FROM ibpt_tables WHERE uf = ?").pluck().get(uf) as string;
  }

  async listIbptTables(): Promise<IbptStoredTable[]> {
    return this.statement(
      `SELECT t.*, (SELECT count(*) FROM ibpt_rates r WHERE r.table_id = t.id) AS ncm_count
         FROM ibpt_tables t ORDER BY t.vigencia_inicio DESC, t.uf`,
    ).all() as IbptStoredTable[];
  }

  async getCompany(id: string): Promise<CompanyRecord | undefined> {
    const row = this.statement('SELECT * FROM companies WHERE id = ?').get(id) as CompanyRow | undefined;
    return row && companyFromRow(row);
  }

  async findTokenOwner(tokenSha256: Buffer): Promise<TokenOwner | undefined> {
    const row = this.statement(
      `SELECT t.token_sha256, c.id, c.cnpj, c.uf, c.ambiente, c.settings_version, coalesce(k.offset_minutes, 0) AS offset_minutes
         FROM api_tokens t JOIN companies c ON c.id = t.company_id LEFT JOIN company_clock k ON k.company_id = c.id
        WHERE t.token_sha256 = ?`,
    ).get(tokenSha256) as
      { token_sha256: Buffer; id: string; cnpj: string; uf: string; ambiente: Environment; settings_version: number; offset_minutes: number } | undefined;
    if (!row) return undefined;
    return {
      tokenSha256: row.token_sha256,
      company: { id: row.id, cnpj: row.cnpj, uf: row.uf, ambiente: row.ambiente },
      settingsVersion: row.settings_version,
      clockOffsetMinutes: row.offset_minutes,
    };
  }

  // --- idempotency ----------------------------------------------------------------------------

  async claimIdempotencyKey(request: ClaimRequest): Promise<ClaimResult> {
    return this.transaction(() => this.claimKeyInTx(request));
  }

  async findIdempotencyKey(companyId: string, docType: DocumentType, key: string): Promise<StoredKey | undefined> {
    return this.storedKey(companyId, docType, key);
  }

  async settleIdempotencyKey(attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean> {
    return this.transaction(() => this.settleKeyInTx(attempt, outcome));
  }

  async forgetIdempotencyKey(attempt: KeyAttempt): Promise<boolean> {
    const { companyId, docType, key, documentId } = attempt;
    const removed = this.statement(
      `DELETE FROM idempotency_keys WHERE company_id = ? AND doc_type = ? AND key = ? AND document_id = ? AND state = 'processing'`,
    ).run(companyId, docType, key, documentId);
    return removed.changes === 1;
  }

  async pendingIdempotencyKeys(docType: DocumentType): Promise<PendingKey[]> {
    const rows = this.statement(
      `SELECT company_id, doc_type, key, document_id, created_at, updated_at
         FROM idempotency_keys WHERE doc_type = ? AND state = 'processing' ORDER BY updated_at`,
    ).all(docType) as {
      company_id: string;
      doc_type: DocumentType;
      key: string;
      document_id: string;
      created_at: string;
      updated_at: string;
    }[];
    return rows.map((r) => ({
      companyId: r.company_id,
      docType: r.doc_type,
      key: r.key,
      documentId: r.document_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  private storedKey(companyId: string, docType: DocumentType, key: string): StoredKey | undefined {
    return this.statement(
      `SELECT state, fingerprint, document_id AS documentId FROM idempotency_keys
        WHERE company_id = ? AND doc_type = ? AND key = ?`,
    ).get(companyId, docType, key) as StoredKey | undefined;
  }

  /** Building block: the claim, for use inside a transaction that also creates the document. */
  protected claimKeyInTx(request: ClaimRequest): ClaimResult {
    const { companyId, docType, key, fingerprint, documentId } = request;
    const decision = decideClaim(this.storedKey(companyId, docType, key), fingerprint);
    const now = iso();
    switch (decision.action) {
      case 'insert':
        this.statement(
          `INSERT INTO idempotency_keys (company_id, doc_type, key, fingerprint, document_id, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, 'processing', ?, ?)`,
        ).run(companyId, docType, key, fingerprint, documentId, now, now);
        return { kind: 'new' };
      case 'retake':
        this.statement(
          `UPDATE idempotency_keys SET fingerprint = ?, document_id = ?, state = 'processing', updated_at = ?
            WHERE company_id = ? AND doc_type = ? AND key = ?`,
        ).run(fingerprint, documentId, now, companyId, docType, key);
        return { kind: 'new' };
      case 'refuse':
        return decision.result;
    }
  }

  /** Building block: settling, for use inside the transaction that records the document's outcome. */
  protected settleKeyInTx(attempt: KeyAttempt, outcome: KeyOutcome): boolean {
    const { companyId, docType, key, documentId } = attempt;
    const current = this.statement(`SELECT state FROM idempotency_keys WHERE company_id = ? AND doc_type = ? AND key = ? AND document_id = ?`)
      .pluck()
      .get(companyId, docType, key, documentId) as KeyState | undefined;
    if (!current || !canSettle(current, outcome)) return false;
    if (current !== outcome) {
      this.statement(`UPDATE idempotency_keys SET state = ?, updated_at = ? WHERE company_id = ? AND doc_type = ? AND key = ?`).run(
        outcome,
        iso(),
        companyId,
        docType,
        key,
      );
    }
    return true;
  }

  // --- sandbox --------------------------------------------------------------------------------

  async getSandboxAuthority(companyId: string): Promise<SandboxAuthority> {
    return this.readSandboxAuthority(companyId);
  }

  async updateSandboxAuthority(companyId: string, patch: Partial<SandboxAuthority>): Promise<SandboxAuthority> {
    return this.transaction(() => {
      const next = { ...this.readSandboxAuthority(companyId), ...definedOnly(patch) };
      this.statement(
        `INSERT INTO sandbox_authority (company_id, latency_ms, disponivel, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (company_id) DO UPDATE SET latency_ms = excluded.latency_ms,
           disponivel = excluded.disponivel, updated_at = excluded.updated_at`,
      ).run(companyId, next.latencyMs, next.disponivel ? 1 : 0, iso());
      return next;
    });
  }

  private readSandboxAuthority(companyId: string): SandboxAuthority {
    const row = this.statement('SELECT latency_ms, disponivel FROM sandbox_authority WHERE company_id = ?').get(companyId) as
      { latency_ms: number; disponivel: number } | undefined;
    return row ? { latencyMs: row.latency_ms, disponivel: row.disponivel === 1 } : { ...DEFAULT_SANDBOX_AUTHORITY };
  }

  async getSandboxReading(companyId: string): Promise<{ authority: SandboxAuthority; offsetMinutes: number }> {
    return { authority: this.readSandboxAuthority(companyId), offsetMinutes: await this.getClockOffsetMinutes(companyId) };
  }

  async getClockOffsetMinutes(companyId: string): Promise<number> {
    const offset = this.statement('SELECT offset_minutes FROM company_clock WHERE company_id = ?').pluck().get(companyId) as number | undefined;
    return offset ?? 0;
  }

  /** `<data>/sandbox-authority.sqlite`, beside this database; undefined for one in memory. */
  sandboxAuthorityFile(): string | undefined {
    return this.db.memory ? undefined : join(dirname(this.db.name), 'sandbox-authority.sqlite');
  }

  openSandboxAuthorityMemory(): SandboxMemory {
    return new SqliteSandboxMemory(this.sandboxAuthorityFile() ?? ':memory:');
  }

  async advanceClock(companyId: string, minutes: number): Promise<number> {
    if (!Number.isSafeInteger(minutes) || minutes < 0) throw new RangeError(`advanceClock: minutos inválidos (${minutes})`);
    return this.statement(
      `INSERT INTO company_clock (company_id, offset_minutes, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (company_id) DO UPDATE SET offset_minutes = offset_minutes + excluded.offset_minutes,
         updated_at = excluded.updated_at
       RETURNING offset_minutes`,
    )
      .pluck()
      .get(companyId, minutes, iso()) as number;
  }

  // --- webhooks -------------------------------------------------------------------------------

  async putWebhook(companyId: string, webhook: { url: string; secretSealed: Buffer }): Promise<void> {
    const now = iso();
    this.statement(
      `INSERT INTO webhooks (company_id, url, segredo_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (company_id) DO UPDATE SET url = excluded.url, segredo_enc = excluded.segredo_enc,
         updated_at = excluded.updated_at`,
    ).run(companyId, webhook.url, webhook.secretSealed, now, now);
  }

  async getWebhook(companyId: string): Promise<WebhookRecord | undefined> {
    const row = this.statement('SELECT url, segredo_enc, created_at, updated_at FROM webhooks WHERE company_id = ?').get(companyId) as
      { url: string; segredo_enc: Buffer; created_at: string; updated_at: string } | undefined;
    return row && { url: row.url, secretSealed: row.segredo_enc, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  async deleteWebhook(companyId: string): Promise<boolean> {
    return this.statement('DELETE FROM webhooks WHERE company_id = ?').run(companyId).changes > 0;
  }

  async enqueueWebhookEvent(event: WebhookEvent): Promise<boolean> {
    return this.transaction(() => this.enqueueWebhookInTx(event));
  }

  /** Building block: queue an event in the transaction of the state change it reports. */
  protected enqueueWebhookInTx(event: WebhookEvent): boolean {
    const at = iso(event.createdAt);
    return (
      this.statement(
        `INSERT INTO webhook_deliveries (event_id, company_id, tipo, payload, next_attempt_at, created_at)
         SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE company_id = ?)`,
      ).run(event.eventId, event.companyId, event.tipo, event.payload, at, at, event.companyId).changes > 0
    );
  }

  async leaseDueWebhookDeliveries(now: Date, limit: number, leaseMs: number): Promise<WebhookDelivery[]> {
    return this.transaction(() => {
      const rows = this.statement(
        `SELECT event_id, company_id, tipo, payload, attempts, created_at FROM webhook_deliveries
          WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ?
          ORDER BY next_attempt_at LIMIT ?`,
      ).all(iso(now), limit) as {
        event_id: string;
        company_id: string;
        tipo: string;
        payload: string;
        attempts: number;
        created_at: string;
      }[];
      const lease = this.statement('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event_id = ?');
      const until = iso(new Date(now.getTime() + leaseMs));
      for (const r of rows) lease.run(until, r.event_id);
      return rows.map((r) => ({
        eventId: r.event_id,
        companyId: r.company_id,
        tipo: r.tipo,
        payload: r.payload,
        attempts: r.attempts,
        createdAt: r.created_at,
      }));
    });
  }

  async recordWebhookAttempt(eventId: string, result: WebhookAttemptResult): Promise<void> {
    if (result.delivered) {
      this.statement('UPDATE webhook_deliveries SET attempts = attempts + 1, delivered_at = ?, last_error = NULL WHERE event_id = ?').run(
        iso(result.at),
        eventId,
      );
    } else if ('giveUp' in result) {
      this.statement('UPDATE webhook_deliveries SET attempts = attempts + 1, gave_up_at = ?, last_error = ? WHERE event_id = ?').run(
        iso(result.at),
        result.error,
        eventId,
      );
    } else {
      this.statement('UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE event_id = ?').run(
        iso(result.nextAttemptAt),
        result.error,
        eventId,
      );
    }
  }

  // --- misc -----------------------------------------------------------------------------------

  async technicalResponsible(): Promise<StoredTechnicalResponsible | undefined> {
    const row = this.statement('SELECT * FROM technical_responsible WHERE id = 1').get() as TechnicalResponsibleRow | undefined;
    return row && technicalResponsibleOf(row);
  }

  async setTechnicalResponsible(value: StoredTechnicalResponsible | undefined): Promise<void> {
    if (!value) {
      this.statement('DELETE FROM technical_responsible WHERE id = 1').run();
      return;
    }
    this.statement(
      `INSERT INTO technical_responsible (id, cnpj, contact, email, phone, csrt_id, csrt_sealed, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET cnpj = excluded.cnpj, contact = excluded.contact, email = excluded.email, phone = excluded.phone,
         csrt_id = excluded.csrt_id, csrt_sealed = excluded.csrt_sealed, updated_at = excluded.updated_at`,
    ).run(value.cnpj, value.contact, value.email, value.phone, value.csrt?.id ?? null, value.csrt?.sealed ?? null, value.updatedAt);
  }

  async masterKeyCheck(candidate: Buffer): Promise<Buffer> {
    return this.transaction(() => {
      const stored = this.statement('SELECT sealed FROM master_key_check WHERE id = 1').pluck().get() as Buffer | undefined;
      if (stored) return stored;
      this.statement('INSERT INTO master_key_check (id, sealed, created_at) VALUES (1, ?, ?)').run(candidate, iso());
      return candidate;
    });
  }

  /** One process owns the file (see the header). */
  readonly shared = false;

  async checkReady(): Promise<void> {
    // The service migrates its file when it opens it; a tool may open it without (db.ts).
    const applied = new Set(this.statement('SELECT id FROM schema_migrations').pluck().all() as string[]);
    const missing = shippedMigrations(migrationSetDir('service')).filter((m) => !applied.has(m.id));
    if (missing.length) throw new Error(`migrações pendentes no banco: ${missing.map((m) => m.id).join(', ')}`);
  }

  /** A verified copy of this database into `place`, taken while the service goes on (base/node/sqlite-backup.ts). */
  backupTo(place: BackupPlace, reason?: string): Promise<Backup> {
    return backupOnline(this.db, place, reason);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
    this.onClose?.();
  }
}

function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}
