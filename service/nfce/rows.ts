// An NFC-e and an inutilização as both stores read them: the columns a record needs (never the
// XML texts, plus whether the signed XML exists) and their mapping, written once for SQLite and
// PostgreSQL (service/row-driver.ts says how each returns a key and a flag).

import type { Environment } from '../../fiscal/company.ts';
import { EMISSION_ORDER, keyParam, type Dialect, type ListSpec } from '../paging.ts';
import type { RowDriver } from '../row-driver.ts';
import type { Keyset } from '../export/pages.ts';
import type { InutilizacaoFilters, InutilizacaoRecord, InutilizacaoSummary, NfceExportEntry, NfceFilters, NfceRecord, NfceStatus } from './store.ts';

export type NfceRecordRow<Key, Flag> = {
  id: string;
  company_id: string;
  idempotency_key: Key;
  serie: number;
  numero: number;
  chave: string;
  cnf: string;
  dh_emi: string;
  tp_emis: number;
  contingencia: Flag;
  ambiente: string;
  qrcode: string | null;
  url_consulta: string;
  valor_total: string;
  status: NfceStatus;
  codigo_status: string | null;
  motivo: string | null;
  protocolo: string | null;
  autorizado_em: string | null;
  cancelado_em: string | null;
  protocolo_cancelamento: string | null;
  cancelamento_codigo_status: string | null;
  cancelamento_motivo: string | null;
  signed: Flag;
  attempts: number;
  created_at: string;
};

export const NFCE_RECORD_COLUMNS = `id, company_id, idempotency_key, serie, numero, chave, cnf, dh_emi, tp_emis, contingencia, ambiente,
  qrcode, url_consulta, valor_total, status, codigo_status, motivo, protocolo, autorizado_em, cancelado_em,
  protocolo_cancelamento, cancelamento_codigo_status, cancelamento_motivo, signed_xml IS NOT NULL AS signed, attempts, created_at`;

export function nfceRecordOf<Key, Flag>(r: NfceRecordRow<Key, Flag>, driver: RowDriver<Key, Flag>): NfceRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    idempotencyKey: driver.key(r.idempotency_key),
    serie: r.serie,
    numero: r.numero,
    chave: r.chave,
    cNF: r.cnf,
    dhEmi: r.dh_emi,
    tpEmis: r.tp_emis as 1 | 9,
    contingencia: driver.flag(r.contingencia),
    ambiente: r.ambiente as Environment,
    qrcode: r.qrcode,
    urlConsulta: r.url_consulta,
    valorTotal: r.valor_total,
    status: r.status,
    codigoStatus: r.codigo_status,
    motivo: r.motivo,
    protocolo: r.protocolo,
    autorizadoEm: r.autorizado_em,
    canceladoEm: r.cancelado_em,
    protocoloCancelamento: r.protocolo_cancelamento,
    cancelamentoCodigoStatus: r.cancelamento_codigo_status,
    cancelamentoMotivo: r.cancelamento_motivo,
    signed: driver.flag(r.signed),
    attempts: r.attempts,
    createdAt: r.created_at,
  };
}

/** A document as the accountant's export reads it, with its place in the export's order (seq: the rowid, or PostgreSQL's seq). */
export type ExportRow<Flag> = {
  seq: number | string;
  id: string;
  chave: string;
  serie: number;
  numero: number;
  dh_emi: string;
  status: NfceStatus;
  contingencia: Flag;
  protocolo: string | null;
  autorizado_em: string | null;
  cancelado_em: string | null;
  protocolo_cancelamento: string | null;
  evento_tipo: '110111' | '110112' | null;
};

/** The export's columns; `find` is the engine's substring function (SQLite instr, PostgreSQL strpos). */
export const EXPORT_COLUMNS = (find: 'instr' | 'strpos') => `id, chave, serie, numero, dh_emi, status, contingencia, protocolo, autorizado_em,
  cancelado_em, protocolo_cancelamento,
  CASE WHEN evento_xml IS NULL THEN NULL WHEN ${find}(evento_xml, '<tpEvento>110112</tpEvento>') > 0 THEN '110112' ELSE '110111' END AS evento_tipo`;

export const exportKeyset = (r: ExportRow<unknown>): Keyset => ({ at: r.dh_emi, seq: Number(r.seq) });

export function exportEntryOf<Flag>(r: ExportRow<Flag>, driver: RowDriver<unknown, Flag>): NfceExportEntry {
  return {
    id: r.id,
    chave: r.chave,
    serie: r.serie,
    numero: r.numero,
    dhEmi: r.dh_emi,
    status: r.status,
    contingencia: driver.flag(r.contingencia),
    protocolo: r.protocolo,
    autorizadoEm: r.autorizado_em,
    canceladoEm: r.cancelado_em,
    protocoloCancelamento: r.protocolo_cancelamento,
    eventoTipo: r.evento_tipo,
  };
}
/** An inutilização as lists show it: everything but its XML. */
export const INUTILIZACAO_COLUMNS = 'id, company_id, serie, numero_inicial, numero_final, justificativa, protocolo, codigo_status, motivo, created_at';

export type InutilizacaoRow = {
  id: string;
  company_id: string;
  serie: number;
  numero_inicial: number;
  numero_final: number;
  justificativa: string;
  protocolo: string;
  codigo_status: string;
  motivo: string;
  created_at: string;
};

export const inutilizacaoSummaryOf = (r: InutilizacaoRow): InutilizacaoSummary => ({
  id: r.id,
  companyId: r.company_id,
  serie: r.serie,
  numeroInicial: r.numero_inicial,
  numeroFinal: r.numero_final,
  justificativa: r.justificativa,
  protocolo: r.protocolo,
  codigoStatus: r.codigo_status,
  motivo: r.motivo,
  createdAt: new Date(r.created_at),
});

export const inutilizacaoOf = (r: InutilizacaoRow & { xml: string }): InutilizacaoRecord => ({ ...inutilizacaoSummaryOf(r), xml: r.xml });

/**
 * The NFC-e list's query (service/paging.ts) for these filters: the index that serves them, the
 * filters themselves. An access key or an idempotency key names at most a few documents; then
 * series and state together, state, series; else the company's documents by emission.
 */
export function nfceListSpec(dialect: Dialect, companyId: string, f: NfceFilters): ListSpec {
  const order = EMISSION_ORDER[dialect];
  const where: [string, unknown][] = [['company_id = ?', companyId]];
  if (f.chave !== undefined) where.push(['chave = ?', f.chave]);
  if (f.referenciaExterna !== undefined) where.push(['idempotency_key = ?', keyParam(dialect, f.referenciaExterna)]);
  if (f.serie !== undefined) where.push(['serie = ?', f.serie]);
  if (f.status !== undefined) where.push(['status = ?', f.status]);
  if (f.from !== undefined) where.push([`${order.at} >= ${order.instant('?')}`, f.from]);
  if (f.until !== undefined) where.push([`${order.at} < ${order.instant('?')}`, f.until]);
  const index =
    f.chave !== undefined
      ? 'chave'
      : f.referenciaExterna !== undefined
        ? 'referencia'
        : f.serie !== undefined && f.status !== undefined
          ? 'serie_status_emissao'
          : f.status !== undefined
            ? 'status_emissao'
            : f.serie !== undefined
              ? 'serie_emissao'
              : 'emissao';
  return { table: 'nfce_documents', index: `nfce_documents_${index}`, columns: NFCE_RECORD_COLUMNS, ...order, where };
}

/** The inutilizações list's query: newest registration first, by series when asked. */
export function inutilizacaoListSpec(dialect: Dialect, companyId: string, f: InutilizacaoFilters): ListSpec {
  const where: [string, unknown][] = [['company_id = ?', companyId]];
  if (f.serie !== undefined) where.push(['serie = ?', f.serie]);
  if (f.from !== undefined) where.push(['created_at >= ?', f.from]);
  if (f.until !== undefined) where.push(['created_at < ?', f.until]);
  return {
    table: 'nfce_inutilizacoes',
    index: f.serie !== undefined ? 'nfce_inutilizacoes_serie_registro' : 'nfce_inutilizacoes_registro',
    columns: INUTILIZACAO_COLUMNS,
    at: 'created_at',
    instant: (p) => p,
    seq: dialect === 'sqlite' ? 'rowid' : 'seq',
    where,
  };
}
