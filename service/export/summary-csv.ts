// The summary CSV inside an export: written for a Brazilian spreadsheet, the accountant's tool,
// so fields are separated by ";" and values use the decimal comma ("1234,56"), and the file
// starts with a UTF-8 BOM (without it, Excel reads the accents as Latin-1). csv-stringify does
// the quoting.

import { stringify } from 'csv-stringify/sync';
import { fromCents } from '../../fiscal/money.ts';

/** Cents as the spreadsheet reads them: `1234,56`, `-1,00`. */
export const csvMoney = (cents: bigint): string => fromCents(cents).replace('.', ',');

/** The CSV text of a header and rows. */
export function summaryCsv(columns: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return '\uFEFF' + stringify([columns, ...rows] as (string | number)[][], { delimiter: ';', record_delimiter: '\r\n' });
}
