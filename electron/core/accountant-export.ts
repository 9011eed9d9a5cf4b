// The accountant's export from the checkout: the service's ZIP of the period (every checkout
// of the company: the service keeps the record), streamed to <data>/exportacoes/. This
// terminal's contingency receipts the service does not have yet are not in it: they are
// counted in `notTransmitted`, for the screen to warn the manager.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DocumentExport, DocumentExportInput } from '../api/terminal-api.ts';
import type { Clock } from '../../base/common/clock.ts';
import { ServiceHttpError, ServiceNetworkError, type IssuanceClient } from './api-client.ts';
import { TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import { reportPeriod } from './reports.ts';

/** Under the terminal's data directory: the accountant's exports (the browser-mode host serves them). */
export const EXPORTS_DIR = 'exportacoes';

export type ExportContext = {
  store: PosStore;
  clock: Clock;
  client: IssuanceClient;
  exportsDir: string;
  /** The company's CNPJ, in the file's name when the profile has one. */
  cnpj: () => string | undefined;
};

export async function exportDocuments(ctx: ExportContext, input: DocumentExportInput): Promise<DocumentExport> {
  const { store, clock } = ctx;
  const period = reportPeriod(input);
  const kind = input?.kind;
  if (kind !== 'nfce' && kind !== 'mdfe') throw new TerminalError('estado_invalido', 'Exportação de NFC-e ou de MDF-e', { field: 'kind' });
  const manager = await authorizeManager(store, clock, input, 'exportacao');
  await mkdir(ctx.exportsDir, { recursive: true, mode: 0o700 });
  const cnpj = ctx.cnpj();
  const fileName = `${kind}-${cnpj ? `${cnpj}-` : ''}${period.de}-a-${period.ate}.zip`;
  const path = join(ctx.exportsDir, fileName);
  let bytes: number;
  try {
    bytes = await ctx.client.downloadExport(kind, period.de, period.ate, path);
  } catch (err) {
    if (err instanceof ServiceNetworkError) throw new TerminalError('servico_indisponivel', `Não foi possível obter a exportação: ${err.message}`);
    if (err instanceof ServiceHttpError) throw new TerminalError('erro_servico', `O serviço recusou a exportação (HTTP ${err.status})`);
    throw err;
  }
  const notTransmitted = kind === 'nfce' ? store.contingency.countUnsentContingencyCreatedBetween(period.start.toISOString(), period.end.toISOString()) : 0;
  audit(store, clock, {
    actor: actorOfManager(manager),
    action: 'exportacao_contabil',
    details: { tipo: kind, de: period.de, ate: period.ate, arquivo: fileName, bytes },
  });
  return { fileName, bytes, path, notTransmitted };
}
