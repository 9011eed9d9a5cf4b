// What checking the terminal's database at every start costs (base/node/sqlite-check.ts), at a
// month and at a year of a busy checkout's data: 300 sales a day, each with its three items, its
// payment, its receipt (request JSON), its outbox entry, its authorized nfeProc kept for
// reprints and reports, its print job and an audit line. The rows are a real sale of the real
// terminal core, copied with SQL (selling 110,000 sales one by one would take the bench an hour).
//
// Figures, side by side, at both sizes:
// - start check: what a start pays (a WAL checkpoint, then the page scan of sqlite-pages.ts: one
//   sequential read, every page accounted for);
// - quick_check: SQLite's PRAGMA quick_check, what the start would pay instead;
// - the file's size.
// Both are warm-cache figures (the file was just written); a cold start after a reboot adds the
// time to read the file from disk, the same for both (they read every page).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { checkDatabase } from '../base/node/sqlite-check.ts';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { issueNfce } from '../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { POS_DB_FILE, posBackupPlace } from '../electron/core/db.ts';
import { createTerminal } from '../electron/core/terminal.ts';
import type { BenchFigure, BenchSuite } from './types.ts';

const PER_DAY = 300;
const SIZES = [
  { label: 'um mês', sales: PER_DAY * 30 },
  { label: 'um ano', sales: PER_DAY * 365 },
];
const RUNS = 3;

/** A terminal database with one real authorized sale (the template), closed. */
async function template(dir: string): Promise<string> {
  const terminal = await createTerminal({ dataDir: dir, startWorker: false, backupIntervalMs: 0 });
  try {
    terminal.seedDemoCatalog();
    await terminal.openCashSession({ floatCents: 0, operator: 'bench' });
    let sale = await terminal.openSale();
    for (const code of ['1001', '1003', '1006']) sale = await terminal.addItem(sale.id, { code, quantity: code === '1006' ? '0.35' : '2' });
    await terminal.addPayment(sale.id, { tPag: '01', amountCents: Math.ceil(sale.totalCents / 1000) * 1000 });
    const { receipt } = terminal.finishSaleNow(sale.id);
    // What the receipt holds once authorized: its key, protocol, QR Code and the nfeProc.
    const { certificate } = generateTestCertificate({ cnpj: demoEmitter().cnpj, xNome: demoEmitter().xNome });
    const issued = issueNfce(sampleNfceRequest({ nNF: receipt.nNF, items: 3 }), {
      emitter: demoEmitter(),
      credentials: certificate,
      dhEmi: new Date(),
      tpEmis: 1,
    });
    const at = new Date().toISOString();
    const store = terminal.store;
    store.receipts.updateReceipt(
      receipt.id,
      { state: 'authorized', chave: issued.key, protocolo: '135260000012345', qrcode: issued.qrCode, codigo_status: '100' },
      at,
    );
    store.db
      .prepare('INSERT INTO receipt_xml (receipt_id, xml, fetched_at) VALUES (?, ?, ?)')
      .run(receipt.id, `<nfeProc versao="4.00">${issued.xml}<protNFe versao="4.00"><infProt>${'p'.repeat(400)}</infProt></protNFe></nfeProc>`, at);
    store.db
      .prepare(
        "INSERT INTO print_jobs (receipt_id, copy, automatic, state, bytes, printer, created_at, finished_at) VALUES (?, 'unica', 1, 'printed', 4200, 'virtual', ?, ?)",
      )
      .run(receipt.id, at, at);
    return receipt.id;
  } finally {
    await terminal.close();
  }
}

/** INSERT … SELECT of `table`'s template rows, `count` times, with the columns in `changed` computed from `i`. */
function cloneRows(db: Database.Database, table: string, where: string, changed: Record<string, string>, count: number, omit: string[] = []): void {
  const columns = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name).filter((c) => !omit.includes(c));
  const select = columns.map((c) => changed[c] ?? c).join(', ');
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= ?)
     INSERT INTO ${table} (${columns.join(', ')}) SELECT ${select} FROM n, ${table} WHERE ${where}`,
  ).run(count);
}

/** Grows the template's database to `sales` sales spread over the days before it. */
function grow(file: string, receiptId: string, sales: number): void {
  const db = new Database(file);
  try {
    const { sale_id: saleId } = db.prepare('SELECT sale_id FROM receipts WHERE id = ?').get(receiptId) as { sale_id: string };
    const id = (prefix: string) => `'${prefix}-' || printf('%08d', i)`;
    const when = (col: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${col}, '-' || (i * ${Math.round(86400 / PER_DAY)}) || ' seconds')`;
    const n = sales - 1;
    db.transaction(() => {
      cloneRows(db, 'sales', `sales.id = '${saleId}'`, { id: id('venda'), opened_at: when('opened_at'), finished_at: when('finished_at') }, n);
      cloneRows(db, 'sale_items', `sale_items.sale_id = '${saleId}'`, { sale_id: id('venda'), added_at: when('added_at') }, n, ['id']);
      cloneRows(db, 'sale_payments', `sale_payments.sale_id = '${saleId}'`, { sale_id: id('venda'), added_at: when('added_at') }, n, ['id']);
      cloneRows(
        db,
        'receipts',
        `receipts.id = '${receiptId}'`,
        { id: id('nfce'), sale_id: id('venda'), nnf: 'nnf + i', idempotency_key: id('chave'), created_at: when('created_at'), updated_at: when('updated_at') },
        n,
      );
      cloneRows(db, 'outbox', `outbox.receipt_id = '${receiptId}'`, { receipt_id: id('nfce'), idempotency_key: id('chave'), state: "'done'" }, n, ['seq']);
      cloneRows(db, 'receipt_xml', `receipt_xml.receipt_id = '${receiptId}'`, { receipt_id: id('nfce') }, n);
      cloneRows(db, 'print_jobs', `print_jobs.receipt_id = '${receiptId}'`, { receipt_id: id('nfce') }, n, ['id']);
      cloneRows(db, 'audit_log', `audit_log.receipt_id = '${receiptId}'`, { receipt_id: id('nfce') }, n, ['id']);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const suite: BenchSuite = {
  name: 'integrity',
  async run(): Promise<BenchFigure[]> {
    const figures: BenchFigure[] = [];
    for (const size of SIZES) {
      const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-integrity-'));
      try {
        const receiptId = await template(dir);
        const file = join(dir, POS_DB_FILE);
        grow(file, receiptId, size.sales);
        const db = new Database(file);
        try {
          const target = { file, owner: 'do terminal', backups: posBackupPlace(dir), dataDir: dir };
          const scans: number[] = [];
          const quicks: number[] = [];
          for (let r = 0; r < RUNS; r++) {
            scans.push(checkDatabase(db, target).ms);
            const t0 = performance.now();
            db.pragma('quick_check');
            quicks.push(performance.now() - t0);
          }
          figures.push(
            { name: `start check, ${size.label} (${size.sales} vendas)`, value: median(scans), unit: 'ms' },
            { name: `quick_check, ${size.label}`, value: median(quicks), unit: 'ms' },
            { name: `pos.sqlite, ${size.label}`, value: statSync(file).size / 1e6, unit: 'MB' },
          );
        } finally {
          db.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    return figures;
  },
};
