// The period of an export: `de` and `ate`, Brasília calendar days (AAAA-MM-DD), both included.

import { brasiliaPeriod } from '../../base/common/brasilia.ts';
import { invalidRequest } from '../http/errors.ts';

/** An export covers at most this many days (a year): the accountant asks by month. */
export const MAX_EXPORT_DAYS = 366;

export type ExportPeriod = { de: string; ate: string; start: Date; end: Date };

/** The period asked for; 400 requisicao_invalida naming `de` or `ate` when it is not one. */
export function exportPeriod(de: string, ate: string): ExportPeriod {
  const DAY = /^\d{4}-\d{2}-\d{2}$/;
  const bad = (field: 'de' | 'ate', message: string) => invalidRequest('Período inválido.', [{ field, message }]);
  if (!DAY.test(de) || !brasiliaPeriod(de, de)) throw bad('de', 'data inválida (use AAAA-MM-DD, ex.: 2026-11-01)');
  if (!DAY.test(ate) || !brasiliaPeriod(ate, ate)) throw bad('ate', 'data inválida (use AAAA-MM-DD, ex.: 2026-11-30)');
  const period = brasiliaPeriod(de, ate);
  if (!period) throw bad('de', 'posterior a ate');
  if (period.end.getTime() - period.start.getTime() > MAX_EXPORT_DAYS * 24 * 3600_000 + 3600_000) {
    throw bad('ate', `o período vai além de ${MAX_EXPORT_DAYS} dias; exporte em partes (por mês)`);
  }
  return { de, ate, ...period };
}
