// The terminal's printing path and catalog import, on a real SQLite file:
// - print job: an authorized receipt (10 items) rendered for the configured printer and sent
//   through ReceiptPrinter: ESC/POS only (network/USB printers), and with the PNG preview the
//   virtual printer keeps beside each job (what `npm start` does), p50/p99;
// - receipt preview for the screen (SVG + text lines), p50/p99; target p50 < 50 ms;
// - the lookup for receipts owed an automatic print, with 50,000 authorized receipts already
//   printed in the database (it runs whenever a receipt is authorized); target < 5 ms;
// - catalog CSV import of 10,000 rows (validation + one transaction).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestCertificate } from '../fiscal/certificate.ts';
import { danfeTexts } from '../fiscal/danfe/model.ts';
import { renderDanfeSvg } from '../fiscal/danfe/preview.ts';
import { issueNfce } from '../fiscal/nfce/build.ts';
import { nfeProtocolFor, wrapNfeProc } from '../fiscal/protocol.ts';
import { demoEmitter, sampleNfceRequest } from '../fiscal/samples.ts';
import { MemoryPrinter } from '../native/printer/transports.ts';
import { planCatalogImport } from '../electron/core/catalog-import.ts';
import { PosStore } from '../electron/core/pos-store.ts';
import { DEFAULT_PRINTER_SETTINGS, ReceiptPrinter } from '../electron/core/printing.ts';
import { iso } from '../base/common/clock.ts';
import { gtin13 } from './catalog-search.bench.ts';
import { percentile, timeEach, type BenchFigure, type BenchSuite } from './types.ts';

const HISTORY = 50_000;
const CSV_ROWS = 10_000;

export const suite: BenchSuite = {
  name: 'terminal-app',
  async run(): Promise<BenchFigure[]> {
    const dir = mkdtempSync(join(tmpdir(), 'balcao-bench-app-'));
    const store = PosStore.open(dir);
    try {
      const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'BENCH' }).certificate;
      const nfe = issueNfce(sampleNfceRequest({ nNF: 1, items: 10 }), { emitter: demoEmitter(), dhEmi: new Date(), tpEmis: 1, credentials });
      const xml = wrapNfeProc(
        nfe.xml,
        nfeProtocolFor(nfe.xml, { cStat: 100, xMotivo: 'Autorizado o uso da NF-e', verAplic: 'BENCH', dhRecbto: new Date(), nProt: '135260000012345' }),
      );

      // 50,000 authorized receipts, each with its automatic print done.
      const at = iso(Date.now());
      store.series.ensureSeries(1);
      store.transaction(() => {
        const sale = store.db.prepare("INSERT INTO sales (id, state, opened_at, finished_at, total_cents, change_cents) VALUES (?, 'finished', ?, ?, 100, 0)");
        const receipt = store.db.prepare(
          "INSERT INTO receipts (id, sale_id, serie, nnf, idempotency_key, state, request_json, total_cents, created_at, updated_at) VALUES (?, ?, 1, ?, ?, 'pending', '{}', 100, ?, ?)",
        );
        for (let n = 1; n <= HISTORY; n++) {
          sale.run(`s${n}`, at, at);
          receipt.run(`r${n}`, `s${n}`, n, `k${n}`, at, at);
          store.printLog.insertPrintJob({ receipt_id: `r${n}`, copy: 'unica', automatic: 1, state: 'printed', bytes: 1, printer: 'bench', created_at: at });
        }
        store.db.prepare("UPDATE receipts SET state = 'authorized'").run();
      });

      const printer = new ReceiptPrinter({ store, clock: Date.now, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS, transport: new MemoryPrinter() });
      const bare = await timeEach(100, async () => printer.print(await printer.render('r1', 'reimpressao', xml)));
      const virtual = new ReceiptPrinter({ store, clock: Date.now, dataDir: dir, settings: DEFAULT_PRINTER_SETTINGS });
      const withPng = await timeEach(20, async () => virtual.print(await virtual.render('r1', 'reimpressao', xml)));
      const preview = await timeEach(100, () => {
        const model = printer.model(xml);
        return { svg: renderDanfeSvg(model), lines: danfeTexts(model) };
      });
      const lookup = await timeEach(200, () => store.printLog.receiptsToPrintAutomatically(20));

      const csv = [
        'codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario',
        ...Array.from(
          { length: CSV_ROWS },
          (_, i) => `B${i};${gtin13(i + 1)};Produto de teste ${i};19059020;5102;UN;${1 + (i % 90)},${String(i % 100).padStart(2, '0')};SN102`,
        ),
      ].join('\n');
      const [importMs] = await timeEach(1, () =>
        store.transaction(() => {
          for (const row of planCatalogImport(csv, at).rows) store.products.upsertProduct(row);
        }),
      );

      return [
        { name: 'print job, ESC/POS (10 items) p50', value: percentile(bare, 50), unit: 'ms' },
        { name: 'print job, ESC/POS (10 items) p99', value: percentile(bare, 99), unit: 'ms' },
        { name: 'print job, virtual printer with PNG p50', value: percentile(withPng, 50), unit: 'ms' },
        { name: 'receipt preview (SVG + lines) p50', value: percentile(preview, 50), unit: 'ms', target: { kind: 'max', value: 50 } },
        { name: 'receipt preview (SVG + lines) p99', value: percentile(preview, 99), unit: 'ms' },
        { name: `automatic-print lookup, ${HISTORY} receipts p99`, value: percentile(lookup, 99), unit: 'ms', target: { kind: 'max', value: 5 } },
        { name: `catalog CSV import, ${CSV_ROWS} rows`, value: importMs!, unit: 'ms' },
      ];
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
