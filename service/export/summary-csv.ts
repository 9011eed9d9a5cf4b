// The summary CSV inside an export: written for a Brazilian spreadsheet, the accountant's tool,
// so fields are separated by ";" and values use the decimal comma ("1234,56"), and the file
// starts with a UTF-8 BOM (without it, Excel reads the accents as Latin-1). csv-stringify does
// the quoting. The lines are gathered in a temporary file as the archive is written (Spool) and
// read back when the summary's turn comes, so a year's summary is never held in memory.

import { stringify } from 'csv-stringify/sync';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { fromCents } from '../../fiscal/money.ts';
import { Spool } from './spool.ts';

/** Cents as the spreadsheet reads them: `1234,56`, `-1,00`. */
export const csvMoney = (cents: bigint): string => fromCents(cents).replace('.', ',');

/** `2026-11-22 14:03:05`: an instant as the Brasília wall clock, as a spreadsheet sorts and reads it; '' for none. */
export const brasiliaText = (instant: string | null): string => (instant ? formatBrasilia(new Date(instant)).slice(0, 19).replace('T', ' ') : '');

export type SummaryRow = readonly (string | number)[];

const csvLine = (row: SummaryRow): string => stringify([row as (string | number)[]], { delimiter: ';', record_delimiter: '\r\n' });

/**
 * The summary's lines as the archive's entries are written, each with what may add columns to it
 * (`extra`: column → value, e.g. one payment method's amount); the header and the lines come out
 * at the end, with one column per extra key any line had, in order (`extraColumn` names it).
 */
export class SummaryLines<Extra extends Record<string, string> = Record<string, string>> {
  readonly #spool = new Spool();
  readonly #extraKeys = new Set<string>();

  constructor(
    private readonly columns: readonly string[],
    private readonly extraColumn: (key: string) => string = (key) => key,
  ) {}

  /** `absent`: this line's value in an extra column it has no key for. */
  add(row: SummaryRow, extra?: Extra, absent = ''): Promise<void> {
    for (const key of Object.keys(extra ?? {})) this.#extraKeys.add(key);
    return this.#spool.append(JSON.stringify([row, extra ?? {}, absent]) + '\n');
  }

  /** The CSV text, a line at a time: the BOM and header, then every line added. */
  async *csv(): AsyncGenerator<string> {
    const keys = [...this.#extraKeys].sort();
    yield '\uFEFF' + csvLine([...this.columns, ...keys.map(this.extraColumn)]);
    for await (const line of this.#spool.lines()) {
      const [row, extra, absent] = JSON.parse(line) as [SummaryRow, Record<string, string>, string];
      yield csvLine([...row, ...keys.map((k) => extra[k] ?? absent)]);
    }
  }

  dispose(): Promise<void> {
    return this.#spool.dispose();
  }
}
