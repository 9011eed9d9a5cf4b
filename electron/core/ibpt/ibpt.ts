// The IBPT table at the terminal (Lei 12.741/2012, docs/fiscal.md "Approximate taxes"): the
// manager imports the CSV IBPT publishes for the store's UF (settings screen, behind the PIN, or
// `balcao ibpt import`); each sale's request then carries every item's vTotTrib from the table of
// the store's UF in force on the sale's day (fiscal/nfce/total.ts withIbptEstimate), and its
// infCpl the table's source and version, so the receipt says the same whether the service or
// this terminal (offline contingency) builds the XML. An NCM the table lacks is sent without
// vTotTrib: the builder's flat rate estimates it; the manager's screen lists those products, and
// says when there is no table of the store's UF or it has expired.

import { brasiliaDay } from '../../../base/common/brasilia.ts';
import type { Clock } from '../../../base/common/clock.ts';
import { FieldError } from '../../../fiscal/errors.ts';
import { IBPT_SOURCE_LINE, ibptTableAt, parseIbptCsv, type IbptTable } from '../../../fiscal/ibpt/table.ts';
import type { IbptContext } from '../../../fiscal/nfce/total.ts';
import type { NfceRequest } from '../../../fiscal/nfce/types.ts';
import type { IbptImportInput, IbptStatusView, IbptTableView } from '../../api/terminal-api.ts';
import { TerminalError } from '../errors.ts';
import { actorOfManager, audit, authorizeManager } from '../managers.ts';
import type { PosStore } from '../pos-store.ts';
import type { IbptStore, IbptTableRow } from './ibpt-store.ts';

/** Largest file accepted: IBPT's tables are about 2 MB per UF. */
export const MAX_IBPT_FILE_BYTES = 20_000_000;
/** How many fallback products the screen lists (the count says how many there are). */
export const FALLBACK_LIST_LIMIT = 200;

const tableView = (t: IbptTableRow): IbptTableView => ({
  uf: t.uf,
  versao: t.versao,
  chave: t.chave,
  fonte: t.fonte,
  from: t.vigencia_inicio,
  until: t.vigencia_fim,
  ncmCount: t.ncm_count,
  fileName: t.file_name,
  importedAt: t.imported_at,
});

/** Reads an IBPT file: a refusal names the file, the line and the column, in Portuguese. */
export function readIbptFile(content: Buffer, fileName: string): IbptTable {
  if (content.length === 0) throw new TerminalError('configuracao_invalida', `${fileName}: arquivo vazio`, { field: 'arquivo' });
  if (content.length > MAX_IBPT_FILE_BYTES)
    throw new TerminalError('configuracao_invalida', `${fileName}: arquivo grande demais para uma tabela do IBPT`, { field: 'arquivo' });
  try {
    return parseIbptCsv(content, fileName);
  } catch (err) {
    if (err instanceof FieldError) throw new TerminalError('configuracao_invalida', `Tabela do IBPT não importada: ${err.message}`, { field: 'arquivo' });
    throw err;
  }
}

/** The IBPT context of a sale made now: the stored tables, the store's UF, the day in Brasília. */
export function ibptContextNow(ibpt: IbptStore, uf: string | undefined, clock: Clock): IbptContext | undefined {
  return uf ? { tables: ibpt.tables(), uf, date: brasiliaDay(clock()) } : undefined;
}

/**
 * A request built again for the same sale (a correction, a new number, a contingency reissue)
 * keeps the estimate its first request carried: the sale's items and day did not change, nor
 * must the approximate taxes the customer was told (each item's vTotTrib and the source line of
 * infCpl; the rest of infCpl is the new request's own).
 */
export function keepIbptEstimate(previousJson: string, next: NfceRequest): NfceRequest {
  const previous = JSON.parse(previousJson) as NfceRequest;
  if (previous.det.length !== next.det.length || previous.det.some((d, i) => d.prod.cProd !== next.det[i]!.prod.cProd)) return next;
  const det = next.det.map((d, i) => {
    const vTotTrib = previous.det[i]!.imposto.vTotTrib;
    return vTotTrib === undefined || d.imposto.vTotTrib !== undefined ? d : { ...d, imposto: { ...d.imposto, vTotTrib } };
  });
  const source = (previous.infCpl ?? '').split(';').filter((line) => IBPT_SOURCE_LINE.test(line));
  const infCpl = [...(next.infCpl ? [next.infCpl] : []), ...source].join(';');
  return { ...next, det, ...(infCpl !== '' && { infCpl }) };
}

/** What the manager's screen shows: the table in force, what is wrong with it, the products on the flat rate. */
export function ibptStatus(ibpt: IbptStore, uf: string | undefined, clock: Clock): IbptStatusView {
  const today = brasiliaDay(clock());
  const rows = ibpt.list();
  const found = uf ? ibptTableAt(ibpt.tables(), uf, today) : undefined;
  const current = found && rows.find((r) => r.uf === found.table.uf && r.versao === found.table.versao);
  let warning: string | null = null;
  if (!uf) warning = 'Cadastre a empresa (UF) para escolher a tabela do IBPT.';
  else if (!current)
    warning = rows.some((r) => r.uf === uf && r.vigencia_inicio > today)
      ? `A tabela do IBPT de ${uf} importada só vale a partir do início da sua vigência; até lá os tributos aproximados usam a alíquota média.`
      : `Nenhuma tabela do IBPT de ${uf} importada: os tributos aproximados de todos os produtos usam a alíquota média.`;
  else if (found.expired)
    warning = `A tabela do IBPT de ${uf} (versão ${current.versao}) venceu em ${current.vigencia_fim.split('-').reverse().join('/')}: continua em uso até que a nova seja importada.`;
  const fallback = ibpt.productsOutside(current?.id ?? null, FALLBACK_LIST_LIMIT);
  return {
    storeUf: uf ?? null,
    current: current ? tableView(current) : null,
    expired: found?.expired ?? false,
    warning,
    tables: rows.map(tableView),
    fallbackProducts: fallback.products,
    fallbackCount: fallback.total,
  };
}

/** Imports the manager's file (the PIN first), audited; returns the new status. */
export async function importIbpt(
  deps: { store: PosStore; ibpt: IbptStore; clock: Clock; uf: string | undefined },
  input: IbptImportInput,
): Promise<IbptStatusView> {
  const fileName = typeof input?.fileName === 'string' && input.fileName.trim() !== '' ? input.fileName.trim() : 'tabela.csv';
  if (typeof input?.csvBase64 !== 'string')
    throw new TerminalError('configuracao_invalida', 'Escolha o arquivo da tabela do IBPT (.csv)', { field: 'arquivo' });
  const table = readIbptFile(Buffer.from(input.csvBase64, 'base64'), fileName);
  const manager = await authorizeManager(deps.store, deps.clock, input, 'tabela_ibpt');
  const stored = deps.ibpt.importTable(table, fileName, new Date(deps.clock()).toISOString());
  audit(deps.store, deps.clock, { actor: actorOfManager(manager), action: 'tabela_ibpt_importada', details: tableView(stored) });
  return ibptStatus(deps.ibpt, deps.uf, deps.clock);
}
