// ServiceStore on PostgreSQL (node-postgres): the same operations as sqlite-store.ts, each one
// transaction (or one statement, which is one), for several service processes sharing one
// database. What one process works on is leased to it (pg-db.ts); the idempotency claim is
// atomic across processes by the key's primary key (claimKeyInTx).
//
// Differences from SQLite that a caller may notice:
// - pendingIdempotencyKeys and MdfeStore.processing list only what a process that is gone left
//   (its lease expired), since other processes are still working on theirs.
// - updateCompanySettings cannot scrub replaced secrets from the database files: PostgreSQL
//   keeps old row versions until vacuumed and in its write-ahead log; a VACUUM of the table is
//   asked for afterwards, which frees them for reuse but does not guarantee their bytes are
//   overwritten. They are sealed under the master key (secrets.ts), which is never in the
//   database, so the leftovers are ciphertext.

import { randomUUID } from 'node:crypto';
import { ibptRateRecords, ibptTableOfRecords, ibptTableRecord, type IbptRateRecord, type IbptStoredTable, type IbptTable } from '../fiscal/ibpt/table.ts';
import type { RateOverride } from '../fiscal/ibscbs/rates.ts';
import type pg from 'pg';
import type { SandboxMemory } from './authority/sandbox-memory.ts';
import { PgSandboxMemory } from './authority/sandbox-pg-memory.ts';
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
import { PgMdfeStore } from './mdfe/pg-store.ts';
import { PgNfceStore } from './nfce/pg-store.ts';
import { PgNfeStore } from './nfe/pg-store.ts';
import { PgTerminalStore } from './terminals/pg-store.ts';
import { PgPixStore } from './pix/pg-store.ts';
import {
  holderGone,
  inTransaction,
  keyBytes,
  keyText,
  lockedTurn,
  newPool,
  openPostgres,
  pendingMigrations,
  ProcessLease,
  TURN_WAIT_MS,
  type PgBlocks,
  type Queryable,
} from './pg-db.ts';
import type { PostgresSettings } from './pg-settings.ts';
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

const iso = (d: Date = new Date()): string => d.toISOString();

/** Connections of the sandbox authority's pool, per process: as many as the NFC-e queue sends at once by default. */
const SANDBOX_POOL_SIZE = 8;

const COMPANY_COLUMNS: readonly (keyof CompanyRow)[] = [
  'id',
  'cnpj',
  'ie',
  'nome',
  'fantasia',
  'logradouro',
  'numero',
  'complemento',
  'bairro',
  'codigo_municipio',
  'municipio',
  'uf',
  'cep',
  'telefone',
  'crt',
  'csc_id',
  'csc_enc',
  'qrcode_versao',
  'ambiente',
  'certificado_pfx_enc',
  'certificado_senha_enc',
  'certificado_sha256',
  'certificado_validade',
  'ibscbs',
  'created_at',
  'settings_version',
  'updated_at',
];

export type PgStoreOptions = {
  /**
   * Register this process and renew its lease (pg-db.ts): a service process, whose queues and
   * requests hold work. Tools that only read or change settings (the company command) do not.
   */
  holdsWork?: boolean;
  log?: { warn(obj: object, msg: string): void };
};

export class PgStore implements ServiceStore {
  readonly shared = true;
  readonly #lease: ProcessLease;
  readonly #blocks: PgBlocks;
  readonly mdfe: PgMdfeStore;
  readonly nfce: PgNfceStore;
  readonly nfe: PgNfeStore;
  readonly terminals: PgTerminalStore;
  readonly pix: PgPixStore;
  /** The connections that hold turns' locks (pg-db.ts lockedTurn), opened as turns need them. */
  readonly #locks: pg.Pool;
  #closed = false;

  /** Opens the pool, migrates, and (holdsWork) registers this process. */
  static async open(settings: PostgresSettings, options: PgStoreOptions = {}): Promise<PgStore> {
    const pool = await openPostgres(settings);
    const store = new PgStore(pool, settings);
    if (options.holdsWork) {
      try {
        await store.#lease.start(options.log);
      } catch (err) {
        await store.close();
        throw err;
      }
    }
    return store;
  }

  private constructor(
    private readonly pool: pg.Pool,
    private readonly settings: PostgresSettings,
  ) {
    this.#lease = new ProcessLease(pool, settings.leaseMs);
    this.#locks = newPool({ ...settings, statementTimeoutMs: TURN_WAIT_MS }, settings.poolSize, 'balcao-turns');
    this.#blocks = {
      pool,
      transaction: (fn) => inTransaction(pool, fn),
      lease: this.#lease,
      claimKeyInTx: (client, request) => this.claimKeyInTx(client, request),
      settleKeyInTx: (client, attempt, outcome) => this.settleKeyInTx(client, attempt, outcome),
      enqueueWebhookInTx: (client, event) => this.enqueueWebhookInTx(client, event),
      turn: (what, key, work) => lockedTurn(this.#locks, what, key, work),
    };
    this.mdfe = new PgMdfeStore(this.#blocks);
    this.nfce = new PgNfceStore(this.#blocks);
    this.nfe = new PgNfeStore(this.#blocks);
    this.terminals = new PgTerminalStore(this.#blocks);
    this.pix = new PgPixStore(this.#blocks);
  }

  /** This process's id in `service_processes` (logged, so a lease can be traced to its process). */
  get processId(): string {
    return this.#lease.id;
  }

  /** Renews this process's lease now (it renews itself every fifth of the lease's length). */
  renewLease(): Promise<void> {
    return this.#lease.renew();
  }

  // --- companies and tokens -------------------------------------------------------------------

  async insertCompany(c: Omit<CompanyRecord, 'version' | 'updatedAt'>, tokenSha256: Buffer): Promise<void> {
    const row: CompanyRow = {
      ...settingsRow(c),
      id: c.id,
      cnpj: c.cnpj,
      uf: c.address.uf,
      created_at: c.createdAt,
      settings_version: 1,
      updated_at: c.createdAt,
    };
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `INSERT INTO companies (${COMPANY_COLUMNS.join(', ')}) VALUES (${COMPANY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
        COMPANY_COLUMNS.map((column) => row[column]),
      );
      await client.query('INSERT INTO api_tokens (token_sha256, company_id, created_at) VALUES ($1, $2, $3)', [tokenSha256, c.id, c.createdAt]);
    });
  }

  async getCompanyVersion(id: string): Promise<number | undefined> {
    const r = await this.pool.query<{ settings_version: number }>('SELECT settings_version FROM companies WHERE id = $1', [id]);
    return r.rows[0]?.settings_version;
  }

  async updateCompanySettings(
    id: string,
    expectedVersion: number,
    settings: CompanySettings,
    replaced?: Omit<ReplacedCertificate, 'replacedAt'>,
  ): Promise<CompanyRecord | undefined> {
    const updated = await inTransaction(this.pool, async (client) => {
      const onFile = (
        await client.query<{ certificado_sha256: string }>('SELECT certificado_sha256 FROM companies WHERE id = $1 AND settings_version = $2 FOR UPDATE', [
          id,
          expectedVersion,
        ])
      ).rows[0]?.certificado_sha256;
      if (onFile === undefined) return undefined;
      const certificateChanges = settings.certificate.sha256 !== onFile;
      if (certificateChanges !== (replaced !== undefined) || (replaced && replaced.sha256 !== onFile)) {
        throw new Error(`updateCompanySettings: o certificado substituído (${replaced?.sha256 ?? 'nenhum'}) não confere com o certificado em uso (${onFile})`);
      }
      const now = iso();
      const row = settingsRow(settings);
      const columns = Object.keys(row) as (keyof typeof row)[];
      const result = await client.query<CompanyRow>(
        `UPDATE companies SET ${columns.map((c, i) => `${c} = $${i + 1}`).join(', ')}, settings_version = settings_version + 1,
           updated_at = $${columns.length + 1}
         WHERE id = $${columns.length + 2} AND settings_version = $${columns.length + 3}
         RETURNING *`,
        [...columns.map((c) => row[c]), now, id, expectedVersion],
      );
      if (replaced) {
        await client.query(`INSERT INTO replaced_certificates (company_id, sha256, not_before, not_after, replaced_at) VALUES ($1, $2, $3, $4, $5)`, [
          id,
          replaced.sha256,
          replaced.notBefore,
          replaced.notAfter,
          now,
        ]);
      }
      return companyFromRow(result.rows[0]!);
    });
    // Frees the replaced row versions (see the header); best effort, the update stands either way.
    if (updated) await this.pool.query('VACUUM companies').catch(() => undefined);
    return updated;
  }

  async getOperatorRates(): Promise<RateOverride[]> {
    const row = (await this.pool.query<{ periods: string }>('SELECT periods FROM operator_ibscbs_rates WHERE id = 1')).rows[0];
    return row === undefined ? [] : (JSON.parse(row.periods) as RateOverride[]);
  }

  async setOperatorRates(periods: readonly RateOverride[]): Promise<void> {
    const now = iso();
    await inTransaction(this.pool, async (client) => {
      await client.query(
        'INSERT INTO operator_ibscbs_rates (id, periods, updated_at) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET periods = excluded.periods, updated_at = excluded.updated_at',
        [JSON.stringify(periods), now],
      );
      await client.query('UPDATE companies SET settings_version = settings_version + 1, updated_at = $1', [now]);
    });
  }
  // --- IBPT tables (Lei 12.741) ----------------------------------------------------------------

  async importIbptTable(table: IbptTable, fileName: string): Promise<IbptStoredTable> {
    const id = randomUUID();
    const now = iso();
    const t = ibptTableRecord(table);
    const rates = ibptRateRecords(table);
    const column = <K extends keyof IbptRateRecord>(k: K) => rates.map((r) => r[k]);
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM ibpt_tables WHERE uf = $1 AND versao = $2', [t.uf, t.versao]);
      await client.query(
        `INSERT INTO ibpt_tables (id, uf, versao, vigencia_inicio, vigencia_fim, chave, fonte, file_name, imported_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, t.uf, t.versao, t.vigencia_inicio, t.vigencia_fim, t.chave, t.fonte, fileName, now],
      );
      // One statement for the whole table (tens of thousands of NCMs), column by column.
      await client.query(
        `INSERT INTO ibpt_rates (table_id, ncm, ex, nacionalfederal, importadosfederal, estadual, municipal)
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int[])`,
        [id, column('ncm'), column('ex'), column('nacionalfederal'), column('importadosfederal'), column('estadual'), column('municipal')],
      );
      await client.query('UPDATE companies SET settings_version = settings_version + 1, updated_at = $1 WHERE uf = $2', [now, t.uf]);
    });
    return (await this.listIbptTables()).find((stored) => stored.id === id)!;
  }

  async ibptTables(uf: string): Promise<IbptTable[]> {
    const tables = (await this.pool.query<IbptStoredTable>('SELECT * FROM ibpt_tables WHERE uf = $1', [uf])).rows;
    const rates = (
      await this.pool.query<IbptRateRecord & { table_id: string }>('SELECT r.* FROM ibpt_rates r JOIN ibpt_tables t ON t.id = r.table_id WHERE t.uf = $1', [uf])
    ).rows;
    return tables.map((t) =>
      ibptTableOfRecords(
        t,
        rates.filter((r) => r.table_id === t.id),
      ),
    );
  }

  async ibptStamp(uf: string): Promise<string> {
    const row = (
      await this.pool.query<{ stamp: string }>("SELECT count(*) || '/' || coalesce(max(imported_at), '') AS stamp FROM ibpt_tables WHERE uf = $1", [uf])
    ).rows[0];
    return row!.stamp;
  }

  async listIbptTables(): Promise<IbptStoredTable[]> {
    const rows = (
      await this.pool.query<IbptStoredTable>(
        `SELECT t.*, (SELECT count(*) FROM ibpt_rates r WHERE r.table_id = t.id)::int AS ncm_count
           FROM ibpt_tables t ORDER BY t.vigencia_inicio DESC, t.uf`,
      )
    ).rows;
    return rows;
  }

  async replacedCertificates(companyId: string): Promise<ReplacedCertificate[]> {
    const rows = (
      await this.pool.query<{ sha256: string; not_before: string; not_after: string; replaced_at: string }>(
        `SELECT sha256, not_before, not_after, replaced_at FROM replaced_certificates WHERE company_id = $1 ORDER BY replaced_at, id`,
        [companyId],
      )
    ).rows;
    return rows.map((r) => ({ sha256: r.sha256, notBefore: r.not_before, notAfter: r.not_after, replacedAt: r.replaced_at }));
  }

  async replaceApiTokens(companyId: string, tokenSha256: Buffer): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      if (!(await client.query('SELECT 1 FROM companies WHERE id = $1 FOR UPDATE', [companyId])).rowCount) return false;
      await client.query('DELETE FROM api_tokens WHERE company_id = $1', [companyId]);
      await client.query('INSERT INTO api_tokens (token_sha256, company_id, created_at) VALUES ($1, $2, $3)', [tokenSha256, companyId, iso()]);
      return true;
    });
  }

  async getCompany(id: string): Promise<CompanyRecord | undefined> {
    const row = (await this.pool.query<CompanyRow>('SELECT * FROM companies WHERE id = $1', [id])).rows[0];
    return row && companyFromRow(row);
  }

  async findTokenOwner(tokenSha256: Buffer): Promise<TokenOwner | undefined> {
    const row = (
      await this.pool.query<{
        token_sha256: Buffer;
        id: string;
        cnpj: string;
        uf: string;
        ambiente: TokenOwner['company']['ambiente'];
        settings_version: number;
        offset_minutes: number;
      }>(
        `SELECT t.token_sha256, c.id, c.cnpj, c.uf, c.ambiente, c.settings_version, coalesce(k.offset_minutes, 0) AS offset_minutes
           FROM api_tokens t JOIN companies c ON c.id = t.company_id LEFT JOIN company_clock k ON k.company_id = c.id
          WHERE t.token_sha256 = $1`,
        [tokenSha256],
      )
    ).rows[0];
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
    return inTransaction(this.pool, (client) => this.claimKeyInTx(client, request));
  }

  async findIdempotencyKey(companyId: string, docType: DocumentType, key: string): Promise<StoredKey | undefined> {
    return this.storedKey(this.pool, companyId, docType, key);
  }

  async settleIdempotencyKey(attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean> {
    return this.settleKeyInTx(this.pool, attempt, outcome);
  }

  async forgetIdempotencyKey(attempt: KeyAttempt): Promise<boolean> {
    const { companyId, docType, key, documentId } = attempt;
    const removed = await this.pool.query(
      `DELETE FROM idempotency_keys WHERE company_id = $1 AND doc_type = $2 AND key = $3 AND document_id = $4 AND state = 'processing'`,
      [companyId, docType, keyBytes(key), documentId],
    );
    return removed.rowCount === 1;
  }

  async pendingIdempotencyKeys(docType: DocumentType): Promise<PendingKey[]> {
    const rows = (
      await this.pool.query<{ company_id: string; doc_type: DocumentType; key: Buffer; document_id: string; created_at: string; updated_at: string }>(
        `SELECT company_id, doc_type, key, document_id, created_at, updated_at
           FROM idempotency_keys k WHERE doc_type = $1 AND state = 'processing' AND ${holderGone('k.claimed_by', '$2')}
          ORDER BY updated_at`,
        [docType, this.#lease.leaseMs],
      )
    ).rows;
    return rows.map((r) => ({
      companyId: r.company_id,
      docType: r.doc_type,
      key: keyText(r.key)!,
      documentId: r.document_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  private async storedKey(db: Queryable, companyId: string, docType: DocumentType, key: string, forUpdate = false): Promise<StoredKey | undefined> {
    const r = await db.query<StoredKey>(
      `SELECT state, fingerprint, document_id AS "documentId" FROM idempotency_keys
        WHERE company_id = $1 AND doc_type = $2 AND key = $3${forUpdate ? ' FOR UPDATE' : ''}`,
      [companyId, docType, keyBytes(key)],
    );
    return r.rows[0];
  }

  /**
   * Building block: the claim, inside a transaction that may also create the document. The key's
   * primary key decides between concurrent first claims from any process: the INSERT of one
   * wins, the other's waits for it to commit and then does nothing; the row is then read locked
   * and judged by the shared rules (idempotency-rules.ts).
   */
  private async claimKeyInTx(client: pg.PoolClient, request: ClaimRequest): Promise<ClaimResult> {
    const { companyId, docType, key, fingerprint, documentId } = request;
    const now = iso();
    const inserted = await client.query(
      `INSERT INTO idempotency_keys (company_id, doc_type, key, fingerprint, document_id, state, claimed_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'processing', $6, $7, $7) ON CONFLICT DO NOTHING`,
      [companyId, docType, keyBytes(key), fingerprint, documentId, this.#lease.id, now],
    );
    if (inserted.rowCount === 1) return { kind: 'new' };
    const decision = decideClaim(await this.storedKey(client, companyId, docType, key, true), fingerprint);
    switch (decision.action) {
      case 'insert':
        // Deleted between the INSERT and the read (a forgotten claim): claim it now.
        return this.claimKeyInTx(client, request);
      case 'retake':
        await client.query(
          `UPDATE idempotency_keys SET fingerprint = $1, document_id = $2, state = 'processing', claimed_by = $3, updated_at = $4
            WHERE company_id = $5 AND doc_type = $6 AND key = $7`,
          [fingerprint, documentId, this.#lease.id, now, companyId, docType, keyBytes(key)],
        );
        return { kind: 'new' };
      case 'refuse':
        return decision.result;
    }
  }

  /**
   * Building block: settling, in the transaction recording the outcome (or alone). One
   * statement: the current state read locked, changed only from processing; whether the
   * settlement holds is the shared rule's (canSettle).
   */
  private async settleKeyInTx(db: Queryable, attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean> {
    const { companyId, docType, key, documentId } = attempt;
    const r = await db.query<{ state: KeyState | null }>(
      `WITH current AS (
         SELECT state FROM idempotency_keys WHERE company_id = $1 AND doc_type = $2 AND key = $3 AND document_id = $4 FOR UPDATE
       ), changed AS (
         UPDATE idempotency_keys SET state = $5, updated_at = $6
          WHERE company_id = $1 AND doc_type = $2 AND key = $3 AND document_id = $4 AND state = 'processing'
       )
       SELECT (SELECT state FROM current) AS state`,
      [companyId, docType, keyBytes(key), documentId, outcome, iso()],
    );
    const current = r.rows[0]?.state;
    return current !== null && current !== undefined && canSettle(current, outcome);
  }

  // --- sandbox --------------------------------------------------------------------------------

  async getSandboxAuthority(companyId: string): Promise<SandboxAuthority> {
    const row = (
      await this.pool.query<{ latency_ms: number; disponivel: boolean }>('SELECT latency_ms, disponivel FROM sandbox_authority WHERE company_id = $1', [
        companyId,
      ])
    ).rows[0];
    return row ? { latencyMs: row.latency_ms, disponivel: row.disponivel } : { ...DEFAULT_SANDBOX_AUTHORITY };
  }

  async updateSandboxAuthority(companyId: string, patch: Partial<SandboxAuthority>): Promise<SandboxAuthority> {
    // One statement: the fields given replace the stored ones (or the defaults), the others stay.
    const row = (
      await this.pool.query<{ latency_ms: number; disponivel: boolean }>(
        `INSERT INTO sandbox_authority (company_id, latency_ms, disponivel, updated_at)
         VALUES ($1, coalesce($2::integer, $5::integer), coalesce($3::boolean, $6::boolean), $4)
         ON CONFLICT (company_id) DO UPDATE SET latency_ms = coalesce($2::integer, sandbox_authority.latency_ms),
           disponivel = coalesce($3::boolean, sandbox_authority.disponivel), updated_at = $4
         RETURNING latency_ms, disponivel`,
        [companyId, patch.latencyMs ?? null, patch.disponivel ?? null, iso(), DEFAULT_SANDBOX_AUTHORITY.latencyMs, DEFAULT_SANDBOX_AUTHORITY.disponivel],
      )
    ).rows[0]!;
    return { latencyMs: row.latency_ms, disponivel: row.disponivel };
  }

  async getSandboxReading(companyId: string): Promise<{ authority: SandboxAuthority; offsetMinutes: number }> {
    const row = (
      await this.pool.query<{ latency_ms: number | null; disponivel: boolean | null; offset_minutes: number | null }>(
        `SELECT (SELECT latency_ms FROM sandbox_authority WHERE company_id = $1) AS latency_ms,
                (SELECT disponivel FROM sandbox_authority WHERE company_id = $1) AS disponivel,
                (SELECT offset_minutes FROM company_clock WHERE company_id = $1) AS offset_minutes`,
        [companyId],
      )
    ).rows[0]!;
    return {
      authority: row.latency_ms === null ? { ...DEFAULT_SANDBOX_AUTHORITY } : { latencyMs: row.latency_ms, disponivel: row.disponivel! },
      offsetMinutes: row.offset_minutes ?? 0,
    };
  }

  async getClockOffsetMinutes(companyId: string): Promise<number> {
    const r = await this.pool.query<{ offset_minutes: number }>('SELECT offset_minutes FROM company_clock WHERE company_id = $1', [companyId]);
    return r.rows[0]?.offset_minutes ?? 0;
  }

  async advanceClock(companyId: string, minutes: number): Promise<number> {
    if (!Number.isSafeInteger(minutes) || minutes < 0) throw new RangeError(`advanceClock: minutos inválidos (${minutes})`);
    const r = await this.pool.query<{ offset_minutes: number }>(
      `INSERT INTO company_clock (company_id, offset_minutes, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (company_id) DO UPDATE SET offset_minutes = company_clock.offset_minutes + excluded.offset_minutes,
         updated_at = excluded.updated_at
       RETURNING offset_minutes`,
      [companyId, minutes, iso()],
    );
    return r.rows[0]!.offset_minutes;
  }

  /** On a small pool of its own (sandbox-pg-memory.ts), closed with it. */
  openSandboxAuthorityMemory(): SandboxMemory {
    return new PgSandboxMemory(newPool(this.settings, SANDBOX_POOL_SIZE, 'balcao-sandbox-authority'), true);
  }

  // --- webhooks -------------------------------------------------------------------------------

  async putWebhook(companyId: string, webhook: { url: string; secretSealed: Buffer }): Promise<void> {
    const now = iso();
    await this.pool.query(
      `INSERT INTO webhooks (company_id, url, segredo_enc, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (company_id) DO UPDATE SET url = excluded.url, segredo_enc = excluded.segredo_enc, updated_at = excluded.updated_at`,
      [companyId, webhook.url, webhook.secretSealed, now],
    );
  }

  async getWebhook(companyId: string): Promise<WebhookRecord | undefined> {
    const row = (
      await this.pool.query<{ url: string; segredo_enc: Buffer; created_at: string; updated_at: string }>(
        'SELECT url, segredo_enc, created_at, updated_at FROM webhooks WHERE company_id = $1',
        [companyId],
      )
    ).rows[0];
    return row && { url: row.url, secretSealed: row.segredo_enc, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  async deleteWebhook(companyId: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM webhooks WHERE company_id = $1', [companyId])).rowCount ?? 0) > 0;
  }

  async enqueueWebhookEvent(event: WebhookEvent): Promise<boolean> {
    return this.enqueueWebhookInTx(this.pool, event);
  }

  /** Building block: queue an event in the transaction of the state change it reports. */
  private async enqueueWebhookInTx(db: Queryable, event: WebhookEvent): Promise<boolean> {
    const at = iso(event.createdAt);
    const r = await db.query(
      `INSERT INTO webhook_deliveries (event_id, company_id, tipo, payload, next_attempt_at, created_at)
       SELECT $1, $2, $3, $4, $5, $5 WHERE EXISTS (SELECT 1 FROM webhooks WHERE company_id = $2)`,
      [event.eventId, event.companyId, event.tipo, event.payload, at],
    );
    return r.rowCount === 1;
  }

  /**
   * Leased to this process (leased_by), as a queued document: held while it lives, however long
   * the attempt takes; free when it records the attempt, when it stops, or once its lease runs
   * out (BALCAO_LEASE_MS) if it died. `leaseMs`, the SQLite store's pushed next attempt, is not
   * used. SKIP LOCKED: deliveries another process is taking right now are not waited for.
   */
  async leaseDueWebhookDeliveries(now: Date, limit: number): Promise<WebhookDelivery[]> {
    const r = await this.pool.query<{ event_id: string; company_id: string; tipo: string; payload: string; attempts: number; created_at: string; due: string }>(
      `WITH due AS (
         SELECT event_id, next_attempt_at FROM webhook_deliveries w
          WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= $1
            AND (leased_by IS NULL OR ${holderGone('w.leased_by', '$4')})
          ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
       )
       UPDATE webhook_deliveries d SET leased_by = $3 FROM due WHERE d.event_id = due.event_id
       RETURNING d.event_id, d.company_id, d.tipo, d.payload, d.attempts, d.created_at, due.next_attempt_at AS due`,
      [iso(now), limit, this.#lease.id, this.#lease.leaseMs],
    );
    return r.rows
      .sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : 0))
      .map((row) => ({
        eventId: row.event_id,
        companyId: row.company_id,
        tipo: row.tipo,
        payload: row.payload,
        attempts: row.attempts,
        createdAt: row.created_at,
      }));
  }

  async recordWebhookAttempt(eventId: string, result: WebhookAttemptResult): Promise<void> {
    if (result.delivered) {
      await this.pool.query(
        'UPDATE webhook_deliveries SET attempts = attempts + 1, delivered_at = $1, last_error = NULL, leased_by = NULL WHERE event_id = $2',
        [iso(result.at), eventId],
      );
    } else if ('giveUp' in result) {
      await this.pool.query('UPDATE webhook_deliveries SET attempts = attempts + 1, gave_up_at = $1, last_error = $2, leased_by = NULL WHERE event_id = $3', [
        iso(result.at),
        result.error,
        eventId,
      ]);
    } else {
      await this.pool.query(
        'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2, leased_by = NULL WHERE event_id = $3',
        [iso(result.nextAttemptAt), result.error, eventId],
      );
    }
  }

  // --- misc -----------------------------------------------------------------------------------

  async technicalResponsible(): Promise<StoredTechnicalResponsible | undefined> {
    const row = (await this.pool.query<TechnicalResponsibleRow>('SELECT * FROM technical_responsible WHERE id = 1')).rows[0];
    return row && technicalResponsibleOf(row);
  }

  async setTechnicalResponsible(value: StoredTechnicalResponsible | undefined): Promise<void> {
    if (!value) {
      await this.pool.query('DELETE FROM technical_responsible WHERE id = 1');
      return;
    }
    await this.pool.query(
      `INSERT INTO technical_responsible (id, cnpj, contact, email, phone, csrt_id, csrt_sealed, updated_at) VALUES (1, $1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET cnpj = excluded.cnpj, contact = excluded.contact, email = excluded.email, phone = excluded.phone,
         csrt_id = excluded.csrt_id, csrt_sealed = excluded.csrt_sealed, updated_at = excluded.updated_at`,
      [value.cnpj, value.contact, value.email, value.phone, value.csrt?.id ?? null, value.csrt?.sealed ?? null, value.updatedAt],
    );
  }

  async masterKeyCheck(candidate: Buffer): Promise<Buffer> {
    // Two processes starting on a new database: one INSERT wins, both read the winner's.
    await this.pool.query('INSERT INTO master_key_check (id, sealed, created_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING', [candidate, iso()]);
    return (await this.pool.query<{ sealed: Buffer }>('SELECT sealed FROM master_key_check WHERE id = 1')).rows[0]!.sealed;
  }

  async checkReady(): Promise<void> {
    const missing = await pendingMigrations(this.pool);
    if (missing.length) throw new Error(`migrações pendentes no banco: ${missing.join(', ')}`);
  }

  /** Releases this process's lease (what it held is free at once), then the pool. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#lease.release();
    } finally {
      await Promise.all([this.pool.end(), this.#locks.end()]);
    }
  }
}
