// The NFC-e series this terminal holds and the next number of each (numbering.ts, series-registry.ts).

import { StorePart } from './database.ts';

export class SeriesStore extends StorePart {
  ensureSeries(serie: number): void {
    this.st('INSERT OR IGNORE INTO series (serie, next_nnf) VALUES (?, 1)').run(serie);
  }

  /** Takes the next number of the series; call inside the transaction that uses it. */
  takeNextNumber(serie: number): number {
    const row = this.st('UPDATE series SET next_nnf = next_nnf + 1 WHERE serie = ? RETURNING next_nnf - 1 AS nnf').get(serie) as { nnf: number } | undefined;
    if (!row) throw new Error(`série ${serie} não cadastrada neste terminal`);
    return row.nnf;
  }

  /** Moves the series' next number up to `next` (never down); true when it moved (numbering.ts). */
  raiseNextNumber(serie: number, next: number): boolean {
    return this.st('UPDATE series SET next_nnf = ? WHERE serie = ? AND next_nnf < ?').run(next, serie, next).changes === 1;
  }

  nextNumber(serie: number): number | undefined {
    return this.st('SELECT next_nnf FROM series WHERE serie = ?').pluck().get(serie) as number | undefined;
  }
}
