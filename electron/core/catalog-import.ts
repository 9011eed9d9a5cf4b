// Catalog import from a spreadsheet (CSV), manager-authorized.
//
//   codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario[;cst_ibs_cbs;cclasstrib]
//   1001;7891000100103;Café torrado e moído 500g;09012100;5102;UN;18,90;SN102;000;000001
//
// - cst_ibs_cbs and cclasstrib (tax reform: the product's IBS/CBS classification) are optional
//   columns, both or neither; in a row both empty means the company's default classification;
// - ';' or ',' between columns (taken from the header line), UTF-8 with or without BOM, the
//   header's names in any order, case and accents ignored ("Código" = "codigo");
// - an empty gtin means "SEM GTIN"; prices as 12,50 / 12.50 / 1.234,56, turned into integer
//   cents from the digits (never through a float);
// - each row goes through the catalog's own checks (catalog.ts productRow); a bad row is
//   reported (line, code, column, message) and the good ones are saved, all in one transaction;
// - a file that cannot be read as a catalog (wrong header, broken quoting) is refused whole,
//   with one message: nothing is imported.

import { parse } from 'csv-parse/sync';
import { FieldError } from '../../fiscal/errors.ts';
import { SEM_GTIN } from '../../fiscal/br/documents.ts';
import type { CatalogImportRejection, CatalogImportReport, ManagerAuthorization } from '../api/terminal-api.ts';
import { productRow } from './catalog.ts';
import { TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import type { ProductRow } from './store/products.ts';
import { iso, type Clock } from '../../base/common/clock.ts';

export const CSV_COLUMNS = ['codigo', 'gtin', 'descricao', 'ncm', 'cfop', 'unidade', 'preco', 'grupo_tributario'] as const;
/** Optional columns, both or neither: the product's IBS/CBS classification. */
export const CSV_IBSCBS_COLUMNS = ['cst_ibs_cbs', 'cclasstrib'] as const;
type Column = (typeof CSV_COLUMNS)[number] | (typeof CSV_IBSCBS_COLUMNS)[number];
const KNOWN_COLUMNS: readonly string[] = [...CSV_COLUMNS, ...CSV_IBSCBS_COLUMNS];

/** Largest file accepted (characters) and most rows: a store's catalog, not a dump. */
export const MAX_CSV_CHARS = 20_000_000;
export const MAX_CSV_ROWS = 100_000;

const COLUMN_OF_FIELD: Readonly<Record<string, Column>> = {
  code: 'codigo',
  gtin: 'gtin',
  description: 'descricao',
  ncm: 'ncm',
  cfop: 'cfop',
  unit: 'unidade',
  price: 'preco',
  taxGroup: 'grupo_tributario',
  'ibsCbs.CST': 'cst_ibs_cbs',
  'ibsCbs.cClassTrib': 'cclasstrib',
};

const fileError = (message: string) => new TerminalError('configuracao_invalida', message, { field: 'csv' });

const normalizeHeader = (name: string): string =>
  name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/**
 * "12,50", "12.50", "12", "1.234,56" → cents as a bigint, from the digits; undefined when the
 * text is not a price.
 */
export function parsePriceCents(text: string): bigint | undefined {
  let t = text.trim().replace(/^R\$\s*/, '');
  if (/^[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]{1,2}$/.test(t)) t = t.replace(/\./g, '');
  const m = /^([0-9]{1,13})(?:[.,]([0-9]{1,2}))?$/.exec(t);
  if (!m) return undefined;
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '0').padEnd(2, '0'));
}

type Parsed = { line: number; record: string[] };

/** The rows of the file with their line numbers (1-based; the header is line 1). */
function readCsv(csv: unknown): { columns: Map<Column, number>; rows: Parsed[] } {
  if (typeof csv !== 'string' || csv.trim() === '' || csv.replace(/^\uFEFF/, '').trim() === '') throw fileError('Arquivo CSV vazio');
  if (csv.length > MAX_CSV_CHARS) throw fileError(`Arquivo CSV grande demais (máximo ${MAX_CSV_CHARS / 1_000_000} milhões de caracteres)`);
  const firstLine = csv.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0]!;
  const delimiter = firstLine.includes(';') ? ';' : ',';
  let parsed: { record: string[]; info: { lines: number } }[];
  try {
    parsed = parse(csv, {
      delimiter,
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: 100_000,
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (err) {
    const e = err as { message?: string; lines?: number; code?: string };
    const where = e.lines ? ` (linha ${e.lines})` : '';
    const why = e.code === 'CSV_QUOTE_NOT_CLOSED' ? 'aspas abertas e não fechadas' : (e.message ?? String(err));
    throw fileError(`Arquivo CSV ilegível${where}: ${why}. Nada foi importado.`);
  }
  const [header, ...body] = parsed;
  const names = header!.record.map(normalizeHeader);
  const columns = new Map<Column, number>();
  const unknown: string[] = [];
  names.forEach((n, i) => {
    if (KNOWN_COLUMNS.includes(n) && !columns.has(n as Column)) columns.set(n as Column, i);
    else if (n !== '') unknown.push(header!.record[i]!);
  });
  const missing: string[] = CSV_COLUMNS.filter((c) => !columns.has(c));
  const ibsCbsColumns = CSV_IBSCBS_COLUMNS.filter((c) => columns.has(c));
  if (ibsCbsColumns.length === 1) missing.push(CSV_IBSCBS_COLUMNS.find((c) => !columns.has(c))!);
  if (missing.length || unknown.length) {
    throw fileError(
      `Cabeçalho do CSV inválido: ${[
        missing.length && `faltam as colunas ${missing.join(', ')}`,
        unknown.length && `colunas desconhecidas: ${unknown.join(', ')}`,
      ]
        .filter(Boolean)
        .join('; ')}. Esperado: ${CSV_COLUMNS.join(delimiter)} (e, opcionais, ${CSV_IBSCBS_COLUMNS.join(delimiter)}). Nada foi importado.`,
    );
  }
  if (body.length > MAX_CSV_ROWS) throw fileError(`Arquivo CSV com linhas demais (máximo ${MAX_CSV_ROWS}). Nada foi importado.`);
  // info.lines is where a record ends; a quoted field spanning lines started earlier.
  const rows = body.map(({ record, info }) => ({ line: info.lines - record.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0), record }));
  return { columns, rows };
}

export type CatalogPlan = { rows: ProductRow[]; rejected: CatalogImportRejection[] };

/** Checks every row; nothing is written. */
export function planCatalogImport(csv: unknown, now: string): CatalogPlan {
  const { columns, rows } = readCsv(csv);
  const valid: ProductRow[] = [];
  const rejected: CatalogImportRejection[] = [];
  const seen = new Map<string, number>();
  for (const { line, record } of rows) {
    const cell = (c: Column) => (columns.has(c) ? (record[columns.get(c)!] ?? '').trim() : '');
    const code = cell('codigo') || null;
    if (record.length !== columns.size) {
      rejected.push({ line, code, field: 'linha', message: `A linha tem ${record.length} colunas; o cabeçalho tem ${columns.size}` });
      continue;
    }
    const price = parsePriceCents(cell('preco'));
    if (price === undefined) {
      rejected.push({ line, code, field: 'preco', message: `Preço inválido: "${cell('preco')}" (use 12,50 ou 12.50)` });
    }
    let row: ProductRow | undefined;
    try {
      row = productRow(
        {
          code: cell('codigo'),
          gtin: cell('gtin') === '' ? SEM_GTIN : cell('gtin'),
          description: cell('descricao'),
          ncm: cell('ncm'),
          cfop: cell('cfop'),
          unit: cell('unidade'),
          price: price === undefined || price > BigInt(Number.MAX_SAFE_INTEGER) ? 1 : Number(price),
          taxGroup: cell('grupo_tributario'),
          // Both empty: the company's default. One of them alone is checked, and refused.
          ibsCbs: cell('cst_ibs_cbs') === '' && cell('cclasstrib') === '' ? null : { CST: cell('cst_ibs_cbs'), cClassTrib: cell('cclasstrib') },
        },
        now,
      );
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      for (const issue of err.issues) {
        const field = COLUMN_OF_FIELD[issue.field] ?? issue.field;
        rejected.push({ line, code, field, message: issue.message.charAt(0).toUpperCase() + issue.message.slice(1) });
      }
    }
    if (!row || price === undefined) continue;
    const earlier = seen.get(row.code);
    if (earlier !== undefined) {
      rejected.push({ line, code, field: 'codigo', message: `Código repetido no arquivo (já está na linha ${earlier})` });
      continue;
    }
    seen.set(row.code, line);
    valid.push(row);
  }
  rejected.sort((a, b) => a.line - b.line);
  return { rows: valid, rejected };
}

/**
 * Imports a catalog CSV: the file is checked first (a malformed one is refused before the PIN
 * is asked), then the manager's PIN, then every valid row is saved in one transaction.
 */
export async function importCatalogCsv(store: PosStore, clock: Clock, csv: unknown, auth: ManagerAuthorization): Promise<CatalogImportReport> {
  const plan = planCatalogImport(csv, iso(clock()));
  const manager = await authorizeManager(store, clock, auth, 'importacao_catalogo');
  let imported = 0;
  let updated = 0;
  store.transaction(() => {
    for (const row of plan.rows) {
      if (store.products.productExists(row.code)) updated++;
      else imported++;
      store.products.upsertProduct(row);
    }
    audit(store, clock, {
      actor: actorOfManager(manager),
      action: 'catalogo_importado',
      details: { novos: imported, atualizados: updated, recusados: plan.rejected.length },
    });
  });
  return { imported, updated, rejected: plan.rejected };
}
