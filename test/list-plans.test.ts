// The plans of every list query (service/paging.ts), on SQLite and on PostgreSQL, over a database
// of many companies' documents written straight into the tables: each filter of each list, its
// first page, a page after a cursor, and its total, is read through an index, never by scanning
// the company's (or the whole) table and never by sorting what matched. Then the lists themselves
// through the stores: every document of a company once, newest first, page after page, and a
// total that stops at TOTAL_CAP (1,000).

import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedService } from '../service/open-service.ts';
import { countSql, pageSql, TOTAL_CAP, type Dialect, type ListSpec, type PagePosition } from '../service/paging.ts';
import { mdfeListSpec } from '../service/mdfe/rows.ts';
import { inutilizacaoListSpec, nfceListSpec } from '../service/nfce/rows.ts';
import { nfeListSpec } from '../service/nfe/rows.ts';
import { openTestService, STORES, testStorage, type StoreKind, type TestStorage } from './helpers/stores.ts';

const TABLES = ['nfce_documents', 'nfe_documents', 'mdfe', 'nfce_inutilizacoes'];

// Ten companies; `big` holds more documents than the total counts.
const BIG = 20_000;
const EACH = 300;
const COMPANIES = 10;
const ROWS = BIG + EACH * (COMPANIES - 1);
/** The company whose lists are explained: more documents than the total counts, among others'. */
const BIG_COMPANY = 'c0';
const SMALL = 'c1';

/** Each list with each filter it serves (on BIG_COMPANY), and a period of a month. */
function queries(dialect: Dialect): [string, ListSpec][] {
  const month = { from: '2026-03-01T03:00:00.000Z', until: '2026-04-01T03:00:00.000Z' };
  const key = chave(11);
  return [
    ['nfce', nfceListSpec(dialect, BIG_COMPANY, {})],
    ['nfce status', nfceListSpec(dialect, BIG_COMPANY, { status: 'cancelado' })],
    ['nfce serie', nfceListSpec(dialect, BIG_COMPANY, { serie: 2 })],
    ['nfce serie+status', nfceListSpec(dialect, BIG_COMPANY, { serie: 2, status: 'autorizado' })],
    ['nfce de/ate', nfceListSpec(dialect, BIG_COMPANY, month)],
    ['nfce status de/ate', nfceListSpec(dialect, BIG_COMPANY, { status: 'rejeitado', ...month })],
    ['nfce chave', nfceListSpec(dialect, BIG_COMPANY, { chave: key })],
    ['nfce referencia_externa', nfceListSpec(dialect, BIG_COMPANY, { referenciaExterna: 'venda-11' })],
    ['nfe', nfeListSpec(dialect, BIG_COMPANY, {})],
    ['nfe situacao', nfeListSpec(dialect, BIG_COMPANY, { status: 'rejeitado' })],
    ['nfe serie', nfeListSpec(dialect, BIG_COMPANY, { serie: 1 })],
    ['nfe de/ate', nfeListSpec(dialect, BIG_COMPANY, month)],
    ['nfe chave', nfeListSpec(dialect, BIG_COMPANY, { chave: key })],
    ['nfe chave_nfce', nfeListSpec(dialect, BIG_COMPANY, { chaveNfce: key })],
    ['nfe referencia_externa', nfeListSpec(dialect, BIG_COMPANY, { referenciaExterna: 'devolucao-11' })],
    ['mdfe', mdfeListSpec(dialect, BIG_COMPANY, {})],
    ['mdfe situacao', mdfeListSpec(dialect, BIG_COMPANY, { situacao: 'encerrado' })],
    ['mdfe status', mdfeListSpec(dialect, BIG_COMPANY, { status: '100' })],
    ['mdfe uf_inicio', mdfeListSpec(dialect, BIG_COMPANY, { ufInicio: 'RJ' })],
    ['mdfe uf_fim', mdfeListSpec(dialect, BIG_COMPANY, { ufFim: 'BA' })],
    ['mdfe de/ate', mdfeListSpec(dialect, BIG_COMPANY, month)],
    ['mdfe (offset)', mdfeListSpec(dialect, BIG_COMPANY, {})],
    ['mdfe situacao (offset)', mdfeListSpec(dialect, BIG_COMPANY, { situacao: 'autorizado' })],
    ['inutilizacoes', inutilizacaoListSpec(dialect, BIG_COMPANY, {})],
    ['inutilizacoes serie', inutilizacaoListSpec(dialect, BIG_COMPANY, { serie: 2 })],
    ['inutilizacoes de/ate', inutilizacaoListSpec(dialect, BIG_COMPANY, month)],
  ];
}

const AFTER: PagePosition = { at: '2026-06-01T12:00:00.000Z', seq: 5_000 };

/** Each statement a list runs: the first page, a page after a cursor, the total; or the deepest offset (MDF-e). */
function statements(dialect: Dialect, name: string, spec: ListSpec) {
  if (name.endsWith('(offset)')) return [{ what: 'página com offset', ...pageSql(dialect, spec, { limit: 50, offset: 10_000 }) }];
  return [
    { what: 'página', ...pageSql(dialect, spec, { limit: 50 }) },
    { what: 'página após cursor', ...pageSql(dialect, spec, { limit: 50, after: AFTER }) },
    { what: 'total', ...countSql(dialect, spec) },
  ];
}

function chave(i: number, model = '65'): string {
  return `35261111222333000181${model}001${String(i).padStart(9, '0')}1${String(i).padStart(8, '0')}0`;
}

// Documents are written straight into the tables (no foreign-key checks on SQLite's side: the
// companies do not exist), spread over a year, every company's interleaved with the others'.
const FILL = {
  nfce: (n: string, company: string, at: string) => `INSERT INTO nfce_documents (id, company_id, idempotency_key, serie, numero, chave, cnf, dh_emi, tp_emis,
      contingencia, ambiente, request_json, url_consulta, valor_total, status, codigo_status, created_at, updated_at)
    SELECT 'nfce-' || i, ${company}, 'venda-' || i, i % 3 + 1, i, '3526111122233300018165001' || ${n}, '12345678', ${at}, 1,
      FALSE, 'homologacao', '{}', 'https://consulta', '10.00',
      CASE WHEN i % 50 = 0 THEN 'rejeitado' WHEN i % 70 = 0 THEN 'cancelado' ELSE 'autorizado' END, '100', ${at}, ${at}`,
  nfe: (n: string, company: string, at: string) => `INSERT INTO nfe_documents (id, company_id, tipo, idempotency_key, serie, numero, chave, nfce_id, chave_nfce,
      dh_emi, ambiente, justificativa, request_json, signed_xml, valor_total, status, created_at, updated_at)
    SELECT 'nfe-' || i, ${company}, 'devolucao', 'devolucao-' || i, 1, i, '3526111122233300018155001' || ${n}, 'nfce-' || i,
      '3526111122233300018165001' || ${n}, ${at}, 'homologacao', 'Produto devolvido pelo cliente', '{}', '<NFe/>', '1.00',
      CASE WHEN i % 50 = 0 THEN 'rejeitado' ELSE 'autorizado' END, ${at}, ${at}`,
  mdfe: (
    n: string,
    company: string,
    at: string,
  ) => `INSERT INTO mdfe (id, company_id, chave, serie, numero, c_mdf, ambiente, placa, uf_inicio, uf_fim, situacao,
      status, protocolo, emitido_em, qrcode, valor_carga, xml, created_at, updated_at)
    SELECT 'mdfe-' || i, ${company}, '3526111122233300018158001' || ${n}, 1, i, '12345678', 'homologacao', 'ABC1234',
      CASE WHEN i % 7 = 0 THEN 'RJ' ELSE 'SP' END, CASE WHEN i % 11 = 0 THEN 'BA' ELSE 'MG' END,
      CASE WHEN i % 5 = 0 THEN 'encerrado' ELSE 'autorizado' END, '100', '135260000000001', ${at}, 'https://qr', '1.00', '<MDFe/>', ${at}, ${at}`,
  inutilizacoes: (company: string, at: string) => `INSERT INTO nfce_inutilizacoes (id, company_id, serie, numero_inicial, numero_final, justificativa,
      protocolo, codigo_status, motivo, xml, created_at)
    SELECT 'inut-' || i, ${company}, i % 3 + 1, i, i, 'Numeracao pulada por falha no sistema', '135260000000001', '102',
      'Inutilização de número homologado', '<ProcInutNFe/>', ${at}`,
};

function fillSqlite(file: string): void {
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  try {
    const company = `CASE WHEN i <= ${BIG} THEN 'c0' ELSE 'c' || (i % ${COMPANIES - 1} + 1) END`;
    // A document every 20 minutes from 2026-01-01; dhEmi with the Brasília offset, the others UTC.
    const dhEmi = `strftime('%Y-%m-%dT%H:%M:%S-03:00', 1767225600 + i * 1200 - 10800, 'unixepoch')`;
    const utc = `strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + i * 1200, 'unixepoch')`;
    const n = `printf('%09d', i) || '1' || printf('%08d', i) || '0'`;
    const series = `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${ROWS}) `;
    db.transaction(() => {
      db.exec(series + FILL.nfce(n, company, dhEmi).replace('FALSE', '0') + ' FROM s');
      db.exec(series + FILL.nfe(n, company, dhEmi) + ' FROM s');
      db.exec(series + FILL.mdfe(n, company, utc) + ' FROM s');
      db.exec(series + FILL.inutilizacoes(company, utc) + ' FROM s');
    })();
  } finally {
    db.close();
  }
}

async function fillPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const company = `CASE WHEN i <= ${BIG} THEN 'c0' ELSE 'c' || (i % ${COMPANIES - 1} + 1) END`;
    const instant = `(timestamptz '2026-01-01T00:00:00Z' + i * interval '20 minutes')`;
    const dhEmi = `to_char(${instant} AT TIME ZONE '-03:00', 'YYYY-MM-DD"T"HH24:MI:SS"-03:00"')`;
    const utc = `to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    const n = `lpad(i::text, 9, '0') || '1' || lpad(i::text, 8, '0') || '0'`;
    const series = ` FROM generate_series(1, ${ROWS}) AS s(i)`;
    // A fair plan needs the company to be one among many, as in a service that hosts many:
    // 30 000 more documents of 40 other companies in every table.
    const others = `'x' || (i % 40)`;
    const more = ` FROM generate_series(${ROWS + 1}, ${ROWS + 30_000}) AS s(i)`;
    const nfce = (c: string) => FILL.nfce(n, c, dhEmi).replace(`'venda-' || i`, `convert_to('venda-' || i, 'UTF8')`);
    const nfe = (c: string) => FILL.nfe(n, c, dhEmi).replace(`'devolucao-' || i`, `convert_to('devolucao-' || i, 'UTF8')`);
    const fills: [string, string][] = [
      [nfce(company), series],
      [nfce(others), more],
      [nfe(company), series],
      [nfe(others), more],
      [FILL.mdfe(n, company, utc), series],
      [FILL.mdfe(n, others, utc), more],
      [FILL.inutilizacoes(company, utc), series],
      [FILL.inutilizacoes(others, utc), more],
    ];
    for (const [fill, rows] of fills) await client.query(fill + rows);
    // What autovacuum does for a live database: statistics and the visibility map. Drawn from
    // every row (a target of 1,000 samples 300,000, more than these tables hold): from ANALYZE's
    // default random sample of 30,000, a deep offset page of a company of 20,000 documents, where
    // reading 10,050 in the index's order and sorting the company's rows cost nearly the same,
    // was planned one way or the other from run to run.
    await client.query('SET default_statistics_target = 1000');
    for (const table of TABLES) await client.query(`VACUUM ANALYZE ${table}`);
  } finally {
    await client.end();
  }
}

/** SQLite's plan lines (EXPLAIN QUERY PLAN). */
function sqlitePlan(file: string, text: string, values: unknown[]): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]).map((r) => r.detail);
  } finally {
    db.close();
  }
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe.each(STORES)('list plans on %s', (kind: StoreKind) => {
  let storage: TestStorage;
  let opened: OpenedService;
  const dialect: Dialect = kind;

  beforeAll(async () => {
    storage = await testStorage(kind);
    opened = await openTestService(storage);
    if (kind === 'sqlite') fillSqlite(join(storage.dataDir, 'service.sqlite'));
    else await fillPostgres(storage.database!);
  }, 120_000);

  afterAll(async () => {
    await opened?.store.close();
    await storage?.close();
  });

  it('reads every list through an index: no scan of the table, no sort of what matched', async () => {
    const client = kind === 'postgres' ? new pg.Client({ connectionString: storage.database }) : undefined;
    await client?.connect();
    // A table of a few tens of thousands of rows is small enough for the planner to prefer reading
    // it whole for a deep offset page, depending on the sample ANALYZE drew: with sequential scans
    // priced out, a plan still scans the table only when no index can serve the query, which is
    // what this test is about.
    await client?.query('SET enable_seqscan = off');
    try {
      for (const [name, spec] of queries(dialect)) {
        for (const { what, text, values } of statements(dialect, name, spec)) {
          const label = `${name}: ${what}`;
          if (kind === 'sqlite') {
            const plan = sqlitePlan(join(storage.dataDir, 'service.sqlite'), text, values);
            expect(plan.join(' | '), label).toContain(`SEARCH ${spec.table} USING`);
            expect(plan.join(' | '), label).toContain(spec.index);
            for (const line of plan) {
              expect(line, label).not.toMatch(new RegExp(`^SCAN (${TABLES.join('|')})\\b`));
              expect(line, label).not.toContain('TEMP B-TREE');
            }
          } else {
            const explained = (await client!.query(`EXPLAIN (FORMAT JSON) ${text}`, values)).rows as { 'QUERY PLAN': { Plan: PlanNode }[] }[];
            const all = nodes(explained[0]!['QUERY PLAN'][0]!.Plan);
            const shown = `${label}: ${all.map((n) => `${n['Node Type']}${n['Index Name'] ? ` (${n['Index Name']})` : ''}`).join(', ')}`;
            // No scan of the table: only its list indexes. A page is read in the order of one of
            // them and stops when full (the planner may prefer a less specific one when the other
            // filter matches nearly every row), never sorted. A count reads through the index in
            // order and stops at the cap, or, when it expects fewer rows to match, may gather
            // those from an index first (a bitmap) and sort them.
            const scans = all.filter((n) => /Scan/.test(n['Node Type']) && n['Node Type'] !== 'Bitmap Heap Scan' && n['Node Type'] !== 'Subquery Scan');
            expect(scans.length, shown).toBeGreaterThan(0);
            for (const n of scans) expect(n['Index Name'] ?? n['Node Type'], shown).toMatch(new RegExp(`^(${spec.table}|mdfe_company)_`));
            for (const n of all) expect(n['Node Type'], shown).not.toBe('Seq Scan');
            if (what !== 'total') for (const n of all) expect(['Sort', 'Incremental Sort', 'Bitmap Heap Scan'], shown).not.toContain(n['Node Type']);
          }
        }
      }
    } finally {
      await client?.end();
    }
  });

  it('pages through a company once, newest first, and caps the total at TOTAL_CAP', async () => {
    const small = await opened.store.nfce.list(SMALL, {}, { limit: 50 });
    expect(small).toMatchObject({ total: EACH, totalLimited: false });
    const seen: string[] = [];
    let instants: number[] = [];
    let page = small;
    for (;;) {
      seen.push(...page.rows.map((r) => r.id));
      instants = [...instants, ...page.rows.map((r) => Date.parse(r.dhEmi))];
      if (!page.next) break;
      page = await opened.store.nfce.list(SMALL, {}, { limit: 50, after: page.next });
    }
    expect(seen).toHaveLength(EACH);
    expect(new Set(seen).size).toBe(EACH);
    expect(instants).toEqual([...instants].sort((a, b) => b - a));

    const big = await opened.store.nfce.list('c0', { status: 'autorizado' }, { limit: 10 });
    expect(big).toMatchObject({ total: TOTAL_CAP, totalLimited: true });
    const rejected = await opened.store.nfce.list('c0', { status: 'rejeitado' }, { limit: 10 });
    expect(rejected).toMatchObject({ total: BIG / 50, totalLimited: false });
    const deep = await opened.store.mdfe.list('c0', {}, { limit: 5, offset: 10_000 });
    expect(deep.rows).toHaveLength(5);
  });
});
