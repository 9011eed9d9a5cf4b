// The law table as docs/fiscal.md lists it ("The law by date"): written there by `npm run docs:law`
// (bin/law-docs.ts) between two markers, and checked to be current by fiscal/law/table.test.ts.

import { LAW_TABLE, type LawRow } from './table.ts';

export const LAW_TABLE_START = '<!-- law-table: written by `npm run docs:law` from fiscal/law/table.ts; do not edit by hand -->';
export const LAW_TABLE_END = '<!-- /law-table -->';

const cell = (text: string): string => text.replace(/\|/g, '\\|');

function ruleOf(row: LawRow): string {
  return 'tPag' in row ? `\`${row.rule}\` ${row.tPag}` : `\`${row.rule}\``;
}

/** The table in Markdown, one line per row, in the table's order. */
export function lawTableMarkdown(): string {
  const lines = [
    '| Rule | What holds | From | Until | Environment | Source | Confidence |',
    '|---|---|---|---|---|---|---|',
    ...LAW_TABLE.map((r) => [ruleOf(r), cell(r.what), r.from ?? '—', r.until ?? '—', r.environment ?? 'both', cell(r.source), r.confidence].join(' | ')).map(
      (line) => `| ${line} |`,
    ),
  ];
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the current table; throws without the markers. */
export function withLawTable(doc: string): string {
  const start = doc.indexOf(LAW_TABLE_START);
  const end = doc.indexOf(LAW_TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/fiscal.md: marcadores da tabela da lei ausentes (${LAW_TABLE_START} … ${LAW_TABLE_END})`);
  return `${doc.slice(0, start + LAW_TABLE_START.length)}\n\n${lawTableMarkdown()}\n\n${doc.slice(end)}`;
}
