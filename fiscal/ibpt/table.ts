// The IBPT table ("De Olho no Imposto", Lei 12.741/2012): the approximate tax burden of each NCM
// in one UF, as IBPT publishes it, one CSV per UF, `TabelaIBPTax<UF><versão>.csv`, separated by
// ";", in Windows-1252, with the header
//   codigo;ex;tipo;descricao;nacionalfederal;importadosfederal;estadual;municipal;
//   vigenciainicio;vigenciafim;chave;versao;fonte
// (tipo 0 NCM, 1 NBS, 2 LC 116; rates in percent; dates DD/MM/AAAA; the UF is only in the file's
// name). A table is dated data: its validity (vigência) is the same on every line, and the one an
// NFC-e uses is chosen by the date of its dhEmi (`ibptRatesAt`). Only NCM lines (tipo 0) matter:
// the NFC-e has no service items.

import { parse } from 'csv-parse/sync';
import { FieldError } from '../errors.ts';

export const IBPT_COLUMNS = [
  'codigo',
  'ex',
  'tipo',
  'descricao',
  'nacionalfederal',
  'importadosfederal',
  'estadual',
  'municipal',
  'vigenciainicio',
  'vigenciafim',
  'chave',
  'versao',
  'fonte',
] as const;

/** Percent at scale 2 (13.45 % → 1345n). */
export type IbptRates = { nacionalfederal: bigint; importadosfederal: bigint; estadual: bigint; municipal: bigint };

export type IbptTable = {
  uf: string;
  /** First and last day of validity, YYYY-MM-DD. */
  from: string;
  until: string;
  chave: string;
  versao: string;
  fonte: string;
  /** NCM (8 digits) + "/" + ex ("" when none) → its rates. */
  rates: Map<string, IbptRates>;
};

const UFS = new Set('AC AL AM AP BA CE DF ES GO MA MG MS MT PA PB PE PI PR RJ RN RO RR RS SC SE SP TO'.split(' '));

/** The UF of a file named as IBPT names it (`TabelaIBPTaxSP26.1.A.csv`), if it is. */
export function ufOfIbptFileName(name: string): string | undefined {
  const uf = /TabelaIBPTax([A-Z]{2})/i.exec(name)?.[1]?.toUpperCase();
  return uf && UFS.has(uf) ? uf : undefined;
}

function percent(value: string, where: string): bigint {
  const m = /^([0-9]{1,3})(?:[.,]([0-9]{1,2}))?$/.exec(value.trim());
  if (!m) throw new FieldError(where, `percentual inválido: "${value}" (esperado como 13,45 ou 13.45)`);
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

function day(value: string, where: string): string {
  const m = /^([0-9]{2})\/([0-9]{2})\/([0-9]{4})$/.exec(value.trim());
  const iso = m && `${m[3]}-${m[2]}-${m[1]}`;
  if (!iso || Number.isNaN(Date.parse(`${iso}T00:00:00Z`)) || new Date(`${iso}T00:00:00Z`).toISOString().slice(0, 10) !== iso)
    throw new FieldError(where, `data inválida: "${value}" (esperado DD/MM/AAAA)`);
  return iso;
}

/**
 * Reads an IBPT CSV (bytes as published, Windows-1252; or text) named `file`, for `uf` (else the
 * UF in the file's name). Throws a FieldError on `file` naming the line and the column.
 */
export function parseIbptCsv(content: Buffer | string, file: string, uf?: string): IbptTable {
  const tableUf = uf?.toUpperCase() ?? ufOfIbptFileName(file);
  if (!tableUf || !UFS.has(tableUf)) throw new FieldError(file, 'UF da tabela não informada: o nome do arquivo do IBPT a traz (TabelaIBPTax<UF>...csv)');
  // Windows-1252 and Latin-1 agree on every letter of Portuguese.
  const text = typeof content === 'string' ? content : content.toString('latin1');
  let records: string[][];
  try {
    records = parse(text, { delimiter: ';', relax_column_count: false, skip_empty_lines: true, bom: true, trim: true }) as string[][];
  } catch (err) {
    throw new FieldError(file, `não é um CSV do IBPT: ${(err as Error).message}`);
  }
  const [header, ...lines] = records;
  if (!header || header.map((h) => h.toLowerCase()).join(';') !== IBPT_COLUMNS.join(';'))
    throw new FieldError(file, `cabeçalho diferente do leiaute do IBPT; esperado: ${IBPT_COLUMNS.join(';')}`);
  if (lines.length === 0) throw new FieldError(file, 'tabela sem linhas');
  let first: { from: string; until: string; chave: string; versao: string; fonte: string } | undefined;
  const rates = new Map<string, IbptRates>();
  lines.forEach((cells, i) => {
    const line = i + 2;
    const at = (column: (typeof IBPT_COLUMNS)[number]) => cells[IBPT_COLUMNS.indexOf(column)]!;
    const where = (column: string) => `${file}, linha ${line}, ${column}`;
    const validity = {
      from: day(at('vigenciainicio'), where('vigenciainicio')),
      until: day(at('vigenciafim'), where('vigenciafim')),
      chave: at('chave'),
      versao: at('versao'),
      fonte: at('fonte'),
    };
    if (!first) {
      first = validity;
      if (first.until < first.from) throw new FieldError(where('vigenciafim'), 'fim da vigência anterior ao início');
    } else if (validity.from !== first.from || validity.until !== first.until || validity.versao !== first.versao) {
      throw new FieldError(where('versao'), 'vigência ou versão diferente das outras linhas: um arquivo do IBPT traz uma só');
    }
    if (at('tipo') !== '0') return;
    const codigo = at('codigo');
    if (!/^[0-9]{8}$/.test(codigo)) throw new FieldError(where('codigo'), `NCM deve ter 8 dígitos: "${codigo}"`);
    rates.set(`${codigo}/${at('ex')}`, {
      nacionalfederal: percent(at('nacionalfederal'), where('nacionalfederal')),
      importadosfederal: percent(at('importadosfederal'), where('importadosfederal')),
      estadual: percent(at('estadual'), where('estadual')),
      municipal: percent(at('municipal'), where('municipal')),
    });
  });
  return { uf: tableUf, ...first!, rates };
}

// ---------------------------------------------------------------------------------------------
// As the databases keep it (the terminal's and the service's ibpt_tables / ibpt_rates, the same
// columns): rates in percent at scale 2 as integers, `ex` '' when none.

export type IbptTableRecord = { uf: string; versao: string; vigencia_inicio: string; vigencia_fim: string; chave: string; fonte: string };
/** A stored table as its lists show it: no rates, their count. */
export type IbptStoredTable = IbptTableRecord & { id: string; file_name: string; imported_at: string; ncm_count: number };
export type IbptRateRecord = { ncm: string; ex: string } & { [K in keyof IbptRates]: number };

export const ibptTableRecord = (t: IbptTable): IbptTableRecord => ({
  uf: t.uf,
  versao: t.versao,
  vigencia_inicio: t.from,
  vigencia_fim: t.until,
  chave: t.chave,
  fonte: t.fonte,
});

export function ibptRateRecords(t: IbptTable): IbptRateRecord[] {
  return [...t.rates].map(([key, r]) => {
    const [ncm, ex] = key.split('/') as [string, string];
    return {
      ncm,
      ex,
      nacionalfederal: Number(r.nacionalfederal),
      importadosfederal: Number(r.importadosfederal),
      estadual: Number(r.estadual),
      municipal: Number(r.municipal),
    };
  });
}

export function ibptTableOfRecords(t: IbptTableRecord, rates: Iterable<IbptRateRecord>): IbptTable {
  const table: IbptTable = { uf: t.uf, from: t.vigencia_inicio, until: t.vigencia_fim, chave: t.chave, versao: t.versao, fonte: t.fonte, rates: new Map() };
  for (const r of rates) {
    table.rates.set(`${r.ncm}/${r.ex}`, {
      nacionalfederal: BigInt(r.nacionalfederal),
      importadosfederal: BigInt(r.importadosfederal),
      estadual: BigInt(r.estadual),
      municipal: BigInt(r.municipal),
    });
  }
  return table;
}

/**
 * The table of `uf` for `date` (YYYY-MM-DD) among `tables`: the one whose validity covers the day,
 * else the latest one that started before it (IBPT publishes late; an expired table is still a
 * closer estimate than a flat rate, and the manager is told it expired).
 */
export function ibptTableAt(tables: readonly IbptTable[], uf: string, date: string): { table: IbptTable; expired: boolean } | undefined {
  const ofUf = tables.filter((t) => t.uf === uf && t.from <= date).sort((a, b) => (a.from < b.from ? 1 : a.from > b.from ? -1 : 0));
  const covering = ofUf.find((t) => date <= t.until);
  if (covering) return { table: covering, expired: false };
  return ofUf[0] && { table: ofUf[0], expired: true };
}

/** An item's rates: the NCM with its ex, else the NCM without one. */
export function ibptRatesOf(table: IbptTable, ncm: string, ex = ''): IbptRates | undefined {
  return table.rates.get(`${ncm}/${ex}`) ?? table.rates.get(`${ncm}/`);
}

/** Origins of a foreign good (Torig 1, 2, 6, 7: "estrangeira"), which take IBPT's `importadosfederal`. */
export const IMPORTED_ORIGINS: ReadonlySet<string> = new Set(['1', '2', '6', '7']);

/** The total approximate rate of an item, percent at scale 2: federal (national or imported) + state + municipal. */
export function ibptItemRate(rates: IbptRates, orig: string | undefined): bigint {
  const federal = orig !== undefined && IMPORTED_ORIGINS.has(orig) ? rates.importadosfederal : rates.nacionalfederal;
  return federal + rates.estadual + rates.municipal;
}

/** An item's approximate tax in cents: its net value (cents) × its total rate, half-up to the cent. */
export const ibptItemTotTrib = (rates: IbptRates, orig: string | undefined, netCents: bigint): bigint =>
  (netCents * ibptItemRate(rates, orig) + 5_000n) / 10_000n; // percent at scale 2

/** A line of infCpl that names the table (ibptSourceText), for whoever rebuilds a request. */
export const IBPT_SOURCE_LINE = /^Fonte: .+, versão [^;]+$/;

/** "Fonte: IBPT, chave 0C1A2B, versão 26.1.A": how the receipt names the table, as the law's practice does. */
export const ibptSourceText = (t: Pick<IbptTable, 'fonte' | 'chave' | 'versao'>): string =>
  `Fonte: ${t.fonte || 'IBPT'}${t.chave ? `, chave ${t.chave}` : ''}, versão ${t.versao}`;
