// Does anything cost more on year five than on day one? A service and a terminal are grown to a
// small and then a large size from real documents (NFC-e and MDF-e issued through the API of a
// real `balcao service`, sales finished, authorized and printed at a real terminal), cloned in
// their SQLite databases to grow fast at a fixed pace per day (PER_DAY: more history, not busier
// days). The data at the small size is copied aside before growing on, and every operation is
// then measured on both copies side by side — two services, two terminals — their runs taken in
// turns, so that whatever else a shared machine does weighs on both sizes alike:
//
// - every list (NFC-e and MDF-e, each filter): the first page, and the last page as a client
//   reaches it by following `proximo_cursor`; the MDF-e list's deepest `offset` beside them (it
//   stops at 10,000 by design, so it has no ratio target); a lookup by id; all over HTTP;
// - the accountant's export of one day (the same day, so the same documents, at both sizes);
// - the manager's report of one day, a receipt looked up and the recent receipts at the terminal;
// - at the large size, a year's export (the service process's peak RSS) and a year's report
//   (the peak RSS of a process doing only that);
// - a migration added to each terminal database (a new table and a settings row), beside what
//   the whole-database foreign-key check the runner used to run after each migration costs.
//
// Sizes: BALCAO_SCALE_SMALL (default 10,000) and BALCAO_SCALE (default 50,000, small enough for
// a CI machine) NFC-e in the service and sales at the terminal; MDF-e a quarter of that.
// `BALCAO_SCALE=200000 npm run bench -- scale` is issue 27's comparison (README: time and disk);
// BALCAO_SCALE_KEEP=1 keeps the four data folders and prints where they are.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { formatBrasilia } from '../base/common/brasilia.ts';
import { IssuanceClient } from '../electron/core/api-client.ts';
import { PosStore } from '../electron/core/pos-store.ts';
import { ReceiptDocuments } from '../electron/core/receipt-documents.ts';
import { salesReport } from '../electron/core/reports.ts';
import { createTerminal, type Terminal } from '../electron/core/terminal.ts';
import { sampleMdfeRequest, sampleNfceRequest } from '../fiscal/samples.ts';
import { migrate, migrationSetDir } from '../migrations/migrate.ts';
import { MAX_OFFSET } from '../service/paging.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { api, createCompany, startService, type ServiceProcess } from '../test/helpers/service-process.ts';
import { nfceCloner } from './service-clones.ts';
import type { BenchFigure, BenchSuite } from './types.ts';

const execFileAsync = promisify(execFile);

const SMALL = Number(process.env.BALCAO_SCALE_SMALL ?? 10_000);
const LARGE = Number(process.env.BALCAO_SCALE ?? 50_000);
/** Documents (and sales) per day: a busy checkout's ~550, the pace of the issue's 200,000 a year. */
const PER_DAY = 550;
const MDFE_SHARE = 4;
const DAY_MS = 24 * 3600_000;
/** Runs of each timed operation at each size (a median of many: the figures are milliseconds on a shared machine). */
const RUNS = 21;
/** The ratio large/small every operation must stay under. */
const RATIO_TARGET = 1.5;
const PEAK_TARGET_MB = 300;

const days = Math.ceil(LARGE / PER_DAY) + 1;
const firstDay = Date.now() - (days + 1) * DAY_MS;
/** The Brasília day (AAAA-MM-DD) `d` days after the first. */
const dayOf = (d: number): string => formatBrasilia(firstDay + d * DAY_MS).slice(0, 10);
/** The day the one-day figures read: inside the small size, so the same documents at both sizes. */
const SAMPLE_DAY = Math.floor(SMALL / PER_DAY / 2);

/**
 * The measured services and terminals take no scheduled copy of their database: the first one
 * comes soon after a start (base/node/sqlite-backup.ts), and a copy of 3 GB running beside the
 * large size's measurements made its one-day export 3x slower than the small size's (a copy costs
 * what the database weighs by nature; it is a scheduled job of its own, not an operation here).
 */
const NO_SCHEDULED_COPIES = { BALCAO_BACKUP_INTERVAL_MIN: '0' };

type Size = 'small' | 'large';
type BySize<T> = Record<Size, T>;
const SIZES: readonly Size[] = ['small', 'large'];
const bySize = <T>(f: (size: Size) => T): BySize<T> => ({ small: f('small'), large: f('large') });
const middle = (times: number[]): number => times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;

/**
 * The median time of each size's `fn`, their runs taken in turns (small then large, then large
 * then small…) against a copy of the data at each size running side by side: whatever else this
 * shared machine does meanwhile weighs on both alike, so the ratio is the data's, not the load's.
 */
async function sideBySide(fn: BySize<() => Promise<unknown>>, runs = RUNS): Promise<BySize<number>> {
  const timed = (f: () => Promise<unknown>) => async () => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  return inTurns(
    bySize((size) => timed(fn[size])),
    runs,
  );
}

/** As sideBySide, for operations that time themselves (what they would count is only part of their run). */
async function inTurns(ms: BySize<() => Promise<number>>, runs = RUNS): Promise<BySize<number>> {
  for (const size of SIZES) await ms[size](); // warm-up
  const times: BySize<number[]> = { small: [], large: [] };
  for (let i = 0; i < runs; i++) {
    for (const size of i % 2 ? [...SIZES].reverse() : SIZES) times[size].push(await ms[size]());
  }
  return { small: middle(times.small), large: middle(times.large) };
}

/** Peak resident memory of a process (MB) while `fn` runs: its high-water mark reset first (Linux). */
async function peakRssMb(pid: number | 'self', fn: () => Promise<unknown>): Promise<number> {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  await fn();
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
  return Number(hwm) / 1024;
}

// ---------------------------------------------------------------------------------------------
// The service: real documents through the API, then clones

type Seeds = { nfce: string[]; mdfe: string[] };

async function seedService(service: ServiceProcess, token: string): Promise<Seeds> {
  const c = api(service.url, token);
  await c.post('/api/v1/sandbox/autoridade', { latencia_ms: 0, disponivel: true });
  const nfce: string[] = [];
  for (let n = 1; n <= 30; n++) {
    const res = await c.post('/api/v1/nfce', sampleNfceRequest({ nNF: n, serie: 9, items: 1 + (n % 5) }));
    if (res.status !== 202) throw new Error(`NFC-e ${n}: ${res.status} ${res.text}`);
    nfce.push(res.body.id);
  }
  for (const id of nfce) {
    while ((await c.get(`/api/v1/nfce/${id}`)).body.status === 'processando') await new Promise((r) => setTimeout(r, 20));
  }
  for (const id of nfce.slice(0, 2)) await c.post(`/api/v1/nfce/${id}/cancelar`, { justificativa: 'Cliente desistiu da compra no caixa' });
  const mdfe: string[] = [];
  for (let n = 1; n <= 12; n++) {
    const res = await c.post('/api/v1/mdfe/emitir', sampleMdfeRequest({ nMDF: n, placa: `SCL${String(n).padStart(4, '0')}` }));
    if (res.status !== 201) throw new Error(`MDF-e ${n}: ${res.status} ${res.text}`);
    mdfe.push(res.body.mdfe_id);
  }
  for (const id of mdfe.slice(0, 3)) await c.post(`/api/v1/mdfe/${id}/encerrar`, { uf: 'BA', codigo_municipio: '2927408' });
  for (const id of mdfe.slice(3, 5)) await c.post(`/api/v1/mdfe/${id}/cancelar`, { justificativa: 'Viagem desistida pelo contratante' });
  return { nfce, mdfe };
}

const UFS = [
  ['SP', 'BA'],
  ['SP', 'RJ'],
  ['MG', 'SP'],
  ['PR', 'SC'],
  ['RS', 'SP'],
] as const;

/** Grows the service's NFC-e to `nfce` and its MDF-e to a quarter of that, PER_DAY a day from the first day. */
function growService(file: string, seeds: Seeds, nfce: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  const cloneNfce = nfceCloner(db);
  const cloneMdfe = db.prepare(
    `INSERT INTO mdfe (id, company_id, chave, serie, numero, c_mdf, ambiente, placa, uf_inicio, uf_fim, situacao, status, motivo, protocolo,
       emitido_em, autorizado_em, encerrado_em, cancelado_em, referencia_externa, qrcode, valor_carga, xml, prot_xml, created_at, updated_at)
     SELECT @id, company_id, @chave, serie, @numero, c_mdf, ambiente, placa, @ufIni, @ufFim, situacao, status, motivo, protocolo,
       @at, @at, CASE WHEN encerrado_em IS NULL THEN NULL ELSE @at END, CASE WHEN cancelado_em IS NULL THEN NULL ELSE @at END, NULL,
       qrcode, valor_carga, xml, prot_xml, @at, @at
     FROM mdfe WHERE id = @seed`,
  );
  const cloneEvents = db.prepare(
    `INSERT INTO mdfe_eventos (mdfe_id, tp_evento, n_seq, status, motivo, protocolo, registrado_em, dados, xml)
     SELECT @id, tp_evento, n_seq, status, motivo, protocolo, @at, dados, xml FROM mdfe_eventos WHERE mdfe_id = @seed`,
  );
  const have = count('nfce_documents');
  const grow = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const at = firstDay + Math.floor(i / PER_DAY) * DAY_MS + (i % PER_DAY) * 60_000;
      cloneNfce({
        id: randomUUID(),
        numero: 100_000 + i,
        chave: String(10n ** 43n + BigInt(i)),
        dh: formatBrasilia(at),
        at: new Date(at).toISOString(),
        seed: seeds.nfce[i % seeds.nfce.length]!,
        referencia: null,
      });
      if (i % MDFE_SHARE === 0) {
        const id = randomUUID();
        const seed = seeds.mdfe[(i / MDFE_SHARE) % seeds.mdfe.length]!;
        const [ufIni, ufFim] = UFS[(i / MDFE_SHARE) % UFS.length]!;
        cloneMdfe.run({ id, chave: String(2n * 10n ** 43n + BigInt(i)), numero: 100_000 + i, ufIni, ufFim, at: new Date(at).toISOString(), seed });
        cloneEvents.run({ id, at: new Date(at).toISOString(), seed });
      }
    }
  });
  for (let i = have; i < nfce; i += 5000) grow(i, Math.min(nfce, i + 5000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

// ---------------------------------------------------------------------------------------------
// The terminal: real sales, then clones (and the daily totals they add up to)

async function seedTerminal(terminal: Terminal): Promise<void> {
  await terminal.openCashSession({ floatCents: 0, operator: 'bench' });
  terminal.seedDemoCatalog();
  const codes = ['1001', '1002', '1003', '1004', '1005', '1007', '1008'];
  for (let n = 0; n < 20; n++) {
    let sale = await terminal.openSale();
    for (let i = 0; i <= n % 4; i++) sale = await terminal.addItem(sale.id, { code: codes[(n + i) % codes.length]! });
    // PIX for the exact total, or cash rounded up (with change).
    const pix = n % 3 === 0;
    sale = await terminal.addPayment(sale.id, { tPag: pix ? '17' : '01', amountCents: pix ? sale.totalCents : Math.ceil(sale.totalCents / 100) * 100 });
    await terminal.finishSale(sale.id);
  }
  const xml = terminal.store.db.prepare('SELECT count(*) FROM receipt_xml').pluck();
  const t0 = performance.now();
  while ((xml.get() as number) < 20) {
    if (performance.now() - t0 > 120_000) throw new Error('as vendas de semente não foram autorizadas e impressas em 120 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function growTerminal(file: string, sales: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const seeds = db.prepare(`SELECT id, sale_id FROM receipts WHERE state = 'authorized' AND nnf < 100000 ORDER BY nnf`).all() as {
    id: string;
    sale_id: string;
  }[];
  const steps = [
    `INSERT INTO sales (id, state, opened_at, finished_at, consumer_doc, total_cents, change_cents, cash_session_id)
       SELECT @sale, state, @at, @at, consumer_doc, total_cents, change_cents, cash_session_id FROM sales WHERE id = @seedSale`,
    `INSERT INTO sale_items (sale_id, product_code, gtin, description, ncm, cfop, unit, tax_group, ibscbs_cst, ibscbs_cclasstrib, quantity_units,
       unit_price_cents, total_cents, added_at, removed_at)
       SELECT @sale, product_code, gtin, description, ncm, cfop, unit, tax_group, ibscbs_cst, ibscbs_cclasstrib, quantity_units,
       unit_price_cents, total_cents, @at, removed_at FROM sale_items WHERE sale_id = @seedSale`,
    `INSERT INTO sale_payments (sale_id, tpag, amount_cents, card_tp_integra, card_cnpj, card_tband, card_caut, added_at)
       SELECT @sale, tpag, amount_cents, card_tp_integra, card_cnpj, card_tband, card_caut, @at FROM sale_payments WHERE sale_id = @seedSale`,
    `INSERT INTO receipts (id, sale_id, serie, nnf, idempotency_key, state, tp_emis, signed_xml, request_json, total_cents, service_id, chave,
       codigo_status, motivo, protocolo, autorizado_em, authorized_seen_at, cancelado_em, qrcode, url_consulta, attention, corrections, created_at, updated_at)
       SELECT @id, @sale, serie, @nnf, @id, state, tp_emis, signed_xml, request_json, total_cents, service_id, chave, codigo_status, motivo,
       protocolo, @dh, @at, cancelado_em, qrcode, url_consulta, attention, corrections, @at, @at FROM receipts WHERE id = @seed`,
    `INSERT INTO outbox (kind, receipt_id, idempotency_key, payload, state, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at)
       SELECT kind, @id, @id, payload, state, attempts, next_attempt_at, last_error, @at, @at, @at FROM outbox WHERE receipt_id = @seed`,
    `INSERT INTO receipt_xml (receipt_id, xml, fetched_at) SELECT @id, xml, @at FROM receipt_xml WHERE receipt_id = @seed`,
    `INSERT INTO report_receipts (receipt_id, bucket, created_at, day, dh_emi, tp_emis, vnf_cents, facts)
       SELECT @id, bucket, @at, @day, @dh, tp_emis, vnf_cents, json_set(facts, '$.day', @day, '$.dhEmi', @dh) FROM report_receipts WHERE receipt_id = @seed`,
  ].map((sql) => db.prepare(sql));
  // Every document kept (the longest retention, five years): the worst case, and at both sizes
  // the same work. With the default 90 days, the large terminal's first start would spend the
  // measurements pruning a year of documents in the background (retention.ts; a one-off).
  db.prepare(
    `INSERT INTO settings (key, value, updated_at) VALUES ('retention', '{"days":1825}', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ).run(new Date().toISOString());
  const have = db.prepare('SELECT count(*) FROM receipts').pluck().get() as number;
  const grow = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const d = Math.floor(i / PER_DAY);
      const at = firstDay + d * DAY_MS + (i % PER_DAY) * 60_000;
      const seed = seeds[i % seeds.length]!;
      const dh = formatBrasilia(at);
      const params = {
        id: randomUUID(),
        sale: randomUUID(),
        seed: seed.id,
        seedSale: seed.sale_id,
        nnf: 100_000 + i,
        at: new Date(at).toISOString(),
        dh,
        day: dh.slice(0, 10),
      };
      for (const step of steps) step.run(params);
    }
  });
  for (let i = have; i < sales; i += 5000) grow(i, Math.min(sales, i + 5000));
  // The daily totals of what was cloned, added up as PosStore would have (report-share.ts).
  db.exec(`
    DELETE FROM report_days; DELETE FROM report_day_payments; DELETE FROM report_day_hours; DELETE FROM report_day_products;
    INSERT INTO report_days SELECT day, count(*), sum(vnf_cents), sum(json_extract(facts, '$.vTrocoCents')) FROM report_receipts WHERE bucket = 'sale' GROUP BY day;
    INSERT INTO report_day_payments SELECT f.day, json_extract(p.value, '$[0]'), count(*), sum(json_extract(p.value, '$[1]'))
      FROM report_receipts f, json_each(f.facts, '$.payments') p WHERE f.bucket = 'sale' GROUP BY 1, 2;
    INSERT INTO report_day_hours SELECT day, json_extract(facts, '$.hour'), count(*), sum(vnf_cents) FROM report_receipts WHERE bucket = 'sale' GROUP BY 1, 2;
    INSERT INTO report_day_products SELECT f.day, json_extract(i.value, '$[0]'), max(json_extract(i.value, '$[1]')), max(json_extract(i.value, '$[2]')),
      sum(json_extract(i.value, '$[3]')), sum(json_extract(i.value, '$[4]'))
      FROM report_receipts f, json_each(f.facts, '$.items') i WHERE f.bucket = 'sale' GROUP BY 1, 2;`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

// ---------------------------------------------------------------------------------------------
// The measurements

/** A year's report in a process of its own, as a checkout's would run it: its time and that process's peak RSS. */
async function yearReport(terminalDir: string, de: string, ate: string): Promise<{ ms: number; peakMb: number }> {
  const script = `
    import { readFileSync } from 'node:fs';
    import { PosStore } from ${JSON.stringify(new URL('../electron/core/pos-store.ts', import.meta.url).href)};
    import { salesReport } from ${JSON.stringify(new URL('../electron/core/reports.ts', import.meta.url).href)};
    const store = PosStore.open(${JSON.stringify(terminalDir)});
    const t0 = performance.now();
    const report = await salesReport(store, undefined, Date.now, { de: ${JSON.stringify(de)}, ate: ${JSON.stringify(ate)} });
    const ms = performance.now() - t0;
    const peak = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    store.close();
    console.log(JSON.stringify({ ms, peakMb: peak, count: report.totals.count }));`;
  const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { ms: number; peakMb: number };
}

type Row = { name: string; unit: string; small?: number; large?: number; ratio: boolean };

/** A migration added to a terminal's database (a new table and a settings row): what applying it costs, then undone. */
async function migrationCost(file: string): Promise<number> {
  const dir = join(tmpdir(), `balcao-bench-migrations-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(migrationSetDir('pos'))) copyFileSync(join(migrationSetDir('pos'), name), join(dir, name));
  const id = '20991231T0000_bench_scale';
  writeFileSync(
    join(dir, `${id}.sql`),
    `CREATE TABLE bench_scale (id INTEGER PRIMARY KEY, receipt_id TEXT REFERENCES receipts (id), note TEXT);
     INSERT INTO settings (key, value, updated_at) VALUES ('bench_scale', '1', '2026-01-01T00:00:00.000Z');`,
  );
  const db = new Database(file);
  try {
    const t0 = performance.now();
    migrate(db, dir, { progress: () => {} });
    return performance.now() - t0;
  } finally {
    // Undone, so that the next run (and the terminal) finds the database as it was.
    db.exec(`DROP TABLE IF EXISTS bench_scale; DELETE FROM settings WHERE key = 'bench_scale'; DELETE FROM schema_migrations WHERE id = '${id}';`);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What checking the whole database for broken foreign keys costs: what the runner did after every migration before issue 27. */
function wholeForeignKeyCheck(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const t0 = performance.now();
    db.pragma('foreign_key_check');
    return performance.now() - t0;
  } finally {
    db.close();
  }
}

/** Every operation at both sizes, side by side: two services and two terminals, one on each copy of the data. */
async function measure(ctx: Context, rows: Map<string, Row>): Promise<void> {
  const put = (name: string, unit: string, value: Partial<BySize<number>>, ratio = true) => rows.set(name, { name, unit, ratio, ...value });
  const day = dayOf(SAMPLE_DAY);
  const services = bySize(() => undefined as ServiceProcess | undefined);
  try {
    for (const size of SIZES)
      services[size] = await startService({ dataDir: ctx.dirs[size].service, env: { BALCAO_LOG_LEVEL: 'warn', ...NO_SCHEDULED_COPIES } });
    const c = bySize((size) => api(services[size]!.url, ctx.token));
    const lists: [path: 'mdfe' | 'nfce', label: string, query: string][] = [
      ['mdfe', 'all', ''],
      ['mdfe', 'situacao=encerrado', 'situacao=encerrado'],
      ['mdfe', 'status=100', 'status=100'],
      ['mdfe', 'uf_inicio=PR', 'uf_inicio=PR'],
      ['mdfe', 'uf_fim=RJ', 'uf_fim=RJ'],
      ['mdfe', 'de=ate=one day', `de=${day}&ate=${day}`],
      ['nfce', 'all', ''],
      ['nfce', 'status=cancelado', 'status=cancelado'],
      ['nfce', 'serie=9', 'serie=9'],
      ['nfce', 'de=ate=one day', `de=${day}&ate=${day}`],
    ];
    for (const [path, label, query] of lists) {
      const url = (paging: string) => `/api/v1/${path}?${[paging, query].filter(Boolean).join('&')}`;
      const first = bySize(() => ({}) as { total: number; proximo_cursor: string | null });
      for (const size of SIZES) {
        const res = await c[size].get(url('limit=50'));
        if (res.status !== 200) throw new Error(`GET ${url('limit=50')}: ${res.status} ${res.text}`);
        first[size] = res.body;
      }
      put(`GET /${path} ${label}, first page`, 'ms', await sideBySide(bySize((size) => () => c[size].get(url('limit=50')))));
      // The last page as a client reaches it, following proximo_cursor (the walk is not timed).
      const deepest = bySize(() => null as string | null);
      for (const size of SIZES) {
        for (let cursor = first[size].proximo_cursor; cursor;) {
          deepest[size] = cursor;
          const page = await c[size].get(url(`limit=200&cursor=${encodeURIComponent(cursor)}`));
          if (page.status !== 200) throw new Error(`GET ${path} cursor: ${page.status} ${page.text}`);
          cursor = page.body.proximo_cursor;
        }
      }
      if (deepest.small && deepest.large) {
        const last = bySize((size) => url(`limit=50&cursor=${encodeURIComponent(deepest[size]!)}`));
        put(`GET /${path} ${label}, last page (cursor)`, 'ms', await sideBySide(bySize((size) => () => c[size].get(last[size]))));
      }
      if (path === 'mdfe') {
        // Offset paging stops at MAX_OFFSET (docs/api.md): bounded, and a deeper offset costs more by design.
        const offset = bySize((size) => Math.min(MAX_OFFSET, Math.max(0, first[size].total - 50)));
        put(
          `GET /mdfe ${label}, deepest offset (${offset.small} / ${offset.large})`,
          'ms',
          await sideBySide(bySize((size) => () => c[size].get(url(`limit=50&offset=${offset[size]}`)))),
          false,
        );
      }
    }
    put('GET /nfce/{id}', 'ms', await sideBySide(bySize((size) => () => c[size].get(`/api/v1/nfce/${ctx.seeds.nfce[5]}`))));
    put('GET /mdfe/{id}', 'ms', await sideBySide(bySize((size) => () => c[size].get(`/api/v1/mdfe/${ctx.seeds.mdfe[7]}`))));
    const exportOf = async (size: Size, document: 'nfce' | 'mdfe', de: string, ate: string) => {
      const res = await fetch(`${services[size]!.url}/api/v1/${document}/exportacao?de=${de}&ate=${ate}`, {
        headers: { authorization: `Bearer ${ctx.token}` },
      });
      if (res.status !== 200) throw new Error(`exportação ${document} ${de}..${ate}: ${res.status}`);
      return (await res.arrayBuffer()).byteLength;
    };
    put('NFC-e export, one day', 'ms', await sideBySide(bySize((size) => () => exportOf(size, 'nfce', day, day))));
    put('MDF-e export, one day', 'ms', await sideBySide(bySize((size) => () => exportOf(size, 'mdfe', day, day))));
    const yearEnd = dayOf(Math.min(days - 1, 365));
    let seconds = 0;
    let bytes = 0;
    const peak = await peakRssMb(services.large!.pid, async () => {
      const t0 = performance.now();
      bytes = await exportOf('large', 'nfce', dayOf(0), yearEnd);
      seconds = (performance.now() - t0) / 1000;
    });
    put(`NFC-e export, a year (${dayOf(0)}..${yearEnd}), time`, 's', { large: seconds }, false);
    put('NFC-e export, a year, ZIP size', 'MB', { large: bytes / 1048576 }, false);
    put('NFC-e export, a year, service peak RSS', 'MB', { large: peak }, false);
  } finally {
    for (const size of SIZES) await services[size]?.stop();
  }

  const terminals = bySize(() => undefined as Terminal | undefined);
  try {
    for (const size of SIZES)
      terminals[size] = await createTerminal({ dataDir: ctx.dirs[size].terminal, token: ctx.token, series: 2, startWorker: false, backupIntervalMs: 0 });
    const t = bySize((size) => terminals[size]!);
    // The report itself, without the manager's PIN check (a constant scrypt) in the figure.
    const documents = bySize(
      (size) => new ReceiptDocuments({ store: t[size].store, client: new IssuanceClient({ baseUrl: 'http://127.0.0.1:9', token: 't' }), clock: Date.now }),
    );
    put(
      'terminal report, one day',
      'ms',
      await sideBySide(bySize((size) => () => salesReport(t[size].store, documents[size], Date.now, { de: day, ate: day }))),
    );
    // The same receipt at both sizes: one of the small size's, which the large one holds too.
    const receipt = t.small.store.db
      .prepare('SELECT id FROM receipts WHERE nnf = ?')
      .pluck()
      .get(100_000 + Math.floor(SMALL / 2)) as string;
    put('terminal receipt lookup', 'ms', await sideBySide(bySize((size) => () => t[size].getReceipt(receipt))));
    put('terminal recent receipts (F9)', 'ms', await sideBySide(bySize((size) => () => t[size].recentReceipts(50))));
  } finally {
    for (const size of SIZES) await terminals[size]?.close();
  }
  const year = await yearReport(ctx.dirs.large.terminal, dayOf(0), dayOf(Math.min(days - 1, 365)));
  put('terminal report, a year, time', 'ms', { large: year.ms }, false);
  put('terminal report, a year, peak RSS of a process doing only that', 'MB', { large: year.peakMb }, false);
  const file = bySize((size) => join(ctx.dirs[size].terminal, 'pos.sqlite'));
  put(
    'a new migration (new table + settings row), terminal',
    'ms',
    await inTurns(
      bySize((size) => () => migrationCost(file[size])),
      5,
    ),
  );
  // The same migration on a new, empty terminal database: what it costs with nothing stored.
  const emptyDir = mkdtempSync(join(tmpdir(), 'balcao-bench-scale-empty-'));
  try {
    PosStore.open(emptyDir).close();
    const ms: number[] = [];
    for (let i = 0; i < 5; i++) ms.push(await migrationCost(join(emptyDir, 'pos.sqlite')));
    put('  the same migration on a new, empty terminal database', 'ms', { large: middle(ms) }, false);
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
  }
  put(
    '  what a foreign_key_check of the whole database costs (the runner no longer does it)',
    'ms',
    bySize((size) => wholeForeignKeyCheck(file[size])),
    false,
  );
  put(
    'service database size',
    'MB',
    bySize((size) => statSync(join(ctx.dirs[size].service, 'service.sqlite')).size / 1048576),
    false,
  );
  put(
    'terminal database size',
    'MB',
    bySize((size) => statSync(file[size]).size / 1048576),
    false,
  );
}

type Dirs = { service: string; terminal: string };
type Context = { dirs: BySize<Dirs>; token: string; seeds: Seeds };

const fmt = (n: number | undefined): string => (n === undefined ? '—' : n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3));

export const suite: BenchSuite = {
  name: 'scale',
  async run(): Promise<BenchFigure[]> {
    // The data grown to the small size is copied aside before growing on to the large size.
    const temp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
    const dirs = bySize(() => ({ service: temp('balcao-bench-scale-service-'), terminal: temp('balcao-bench-scale-terminal-') }));
    const { service: serviceDir, terminal: terminalDir } = dirs.large;
    try {
      const { token } = await createCompany(serviceDir, { 'csc-id': '1', csc: 'CSC-DE-TESTE-123456' });
      const service = await startService({ dataDir: serviceDir, env: { BALCAO_LOG_LEVEL: 'warn' } });
      let seeds: Seeds;
      try {
        seeds = await seedService(service, token);
        const terminal = await createTerminal({ dataDir: terminalDir, serviceUrl: service.url, token, series: 2, printerTransport: new MemoryPrinter() });
        try {
          await seedTerminal(terminal);
        } finally {
          await terminal.close();
        }
      } finally {
        await service.stop();
      }
      const s = (ms: number) => (ms / 1000).toFixed(0);
      for (const [size, n] of [
        ['small', SMALL],
        ['large', LARGE],
      ] as const) {
        const t0 = performance.now();
        growService(join(serviceDir, 'service.sqlite'), seeds, n);
        const t1 = performance.now();
        growTerminal(join(terminalDir, 'pos.sqlite'), n);
        console.log(`  grown to ${n} NFC-e and sales, ${n / MDFE_SHARE} MDF-e (service ${s(t1 - t0)} s, terminal ${s(performance.now() - t1)} s)`);
        if (size === 'small') {
          cpSync(serviceDir, dirs.small.service, { recursive: true });
          cpSync(terminalDir, dirs.small.terminal, { recursive: true });
        }
      }
      const rows = new Map<string, Row>();
      const t2 = performance.now();
      await measure({ dirs, token, seeds }, rows);
      console.log(`  measured both sizes side by side (${s(performance.now() - t2)} s)`);

      console.log(`\n  ${'operation'.padEnd(64)} ${String(SMALL).padStart(10)} ${String(LARGE).padStart(10)}   ratio`);
      const figures: BenchFigure[] = [];
      for (const r of rows.values()) {
        const ratio = r.small !== undefined && r.large !== undefined && r.small > 0 ? r.large / r.small : undefined;
        const flag = r.ratio && ratio !== undefined ? (ratio <= RATIO_TARGET ? '' : `  > ${RATIO_TARGET}`) : '';
        console.log(
          `  ${`${r.name} (${r.unit})`.padEnd(64)} ${fmt(r.small).padStart(10)} ${fmt(r.large).padStart(10)}   ${r.ratio && ratio !== undefined ? ratio.toFixed(2) : ''}${flag}`,
        );
        if (r.ratio && ratio !== undefined)
          figures.push({ name: `${r.name}, ratio ${LARGE}/${SMALL}`, value: ratio, unit: 'x', target: { kind: 'max', value: RATIO_TARGET } });
        else if (r.large !== undefined)
          figures.push({
            name: `${r.name} at ${LARGE}`,
            value: r.large,
            unit: r.unit,
            ...(/peak RSS/.test(r.name) && { target: { kind: 'max' as const, value: PEAK_TARGET_MB } }),
          });
      }
      console.log('');
      return figures;
    } finally {
      if (process.env.BALCAO_SCALE_KEEP) console.log(`  kept (BALCAO_SCALE_KEEP): ${JSON.stringify(dirs)}`);
      else for (const size of SIZES) for (const dir of Object.values(dirs[size])) rmSync(dir, { recursive: true, force: true });
    }
  },
};
