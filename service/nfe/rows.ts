// A return (NF-e de devolução) as both stores read it: its columns, its items and their mapping,
// written once for SQLite and PostgreSQL (service/row-driver.ts says how each returns the
// idempotency key). An item's quantity comes back as a number or bigint from SQLite and as text
// from PostgreSQL (a bigint read exactly, whatever its size); BigInt() takes all three.

import type { Environment } from '../../fiscal/company.ts';
import { EMISSION_ORDER, keyParam, type Dialect, type ListSpec } from '../paging.ts';
import type { DevolucaoExportEntry } from '../export/devolucoes.ts';
import type { RowDriver } from '../row-driver.ts';
import type { NfeFilters, NfeItemRecord, NfeRecord, NfeStatus, NfeSummary } from './store.ts';

export type NfeRecordRow<Key> = {
  id: string;
  company_id: string;
  tipo: 'devolucao';
  idempotency_key: Key;
  serie: number;
  numero: number;
  chave: string;
  nfce_id: string;
  chave_nfce: string;
  dh_emi: string;
  ambiente: string;
  justificativa: string;
  valor_total: string;
  status: NfeStatus;
  codigo_status: string | null;
  motivo: string | null;
  protocolo: string | null;
  autorizado_em: string | null;
  attempts: number;
  created_at: string;
};

export type NfeItemRow = { numero_item: number; codigo: string; descricao: string; unidade: string; quantidade_units: number | bigint | string; valor: string };

export const NFE_RECORD_COLUMNS = `id, company_id, tipo, idempotency_key, serie, numero, chave, nfce_id, chave_nfce, dh_emi, ambiente,
  justificativa, valor_total, status, codigo_status, motivo, protocolo, autorizado_em, attempts, created_at`;

export function nfeRecordOf<Key>(r: NfeRecordRow<Key>, items: NfeItemRow[], driver: RowDriver<Key, unknown>): NfeRecord {
  return {
    ...nfeSummaryOf(r, driver),
    itens: items.map((i): NfeItemRecord => ({
      numeroItem: i.numero_item,
      codigo: i.codigo,
      descricao: i.descricao,
      unidade: i.unidade,
      quantidadeUnits: BigInt(i.quantidade_units),
      valor: i.valor,
    })),
  };
}

/** A return without its items, as lists show it. */
export function nfeSummaryOf<Key>(r: NfeRecordRow<Key>, driver: RowDriver<Key, unknown>): NfeSummary {
  return {
    id: r.id,
    companyId: r.company_id,
    tipo: r.tipo,
    idempotencyKey: driver.key(r.idempotency_key),
    serie: r.serie,
    numero: r.numero,
    chave: r.chave,
    nfceId: r.nfce_id,
    chaveNfce: r.chave_nfce,
    dhEmi: r.dh_emi,
    ambiente: r.ambiente as Environment,
    justificativa: r.justificativa,
    valorTotal: r.valor_total,
    status: r.status,
    codigoStatus: r.codigo_status,
    motivo: r.motivo,
    protocolo: r.protocolo,
    autorizadoEm: r.autorizado_em,
    attempts: r.attempts,
    createdAt: r.created_at,
  };
}

/**
 * The returns list's query (service/paging.ts): newest dhEmi first; an access key (of the return
 * or of its NFC-e) or an idempotency key names a few; then the state, the series.
 */
export function nfeListSpec(dialect: Dialect, companyId: string, f: NfeFilters): ListSpec {
  const order = EMISSION_ORDER[dialect];
  const where: [string, unknown][] = [['company_id = ?', companyId]];
  if (f.chave !== undefined) where.push(['chave = ?', f.chave]);
  if (f.chaveNfce !== undefined) where.push(['chave_nfce = ?', f.chaveNfce]);
  if (f.referenciaExterna !== undefined) where.push(['idempotency_key = ?', keyParam(dialect, f.referenciaExterna)]);
  if (f.status !== undefined) where.push(['status = ?', f.status]);
  if (f.serie !== undefined) where.push(['serie = ?', f.serie]);
  if (f.from !== undefined) where.push([`${order.at} >= ${order.instant('?')}`, f.from]);
  if (f.until !== undefined) where.push([`${order.at} < ${order.instant('?')}`, f.until]);
  const index =
    f.chave !== undefined
      ? 'chave'
      : f.chaveNfce !== undefined
        ? 'chave_nfce'
        : f.referenciaExterna !== undefined
          ? 'referencia'
          : f.status !== undefined
            ? 'status_emissao'
            : f.serie !== undefined
              ? 'serie_emissao'
              : 'emissao';
  return { table: 'nfe_documents', index: `nfe_documents_${index}`, columns: NFE_RECORD_COLUMNS, ...order, where };
}

export type ExportRow = { id: string; chave: string; serie: number; numero: number; dh_emi: string; protocolo: string | null; autorizado_em: string | null };

export const exportEntryOf = (r: ExportRow): DevolucaoExportEntry => ({
  id: r.id,
  chave: r.chave,
  serie: r.serie,
  numero: r.numero,
  dhEmi: r.dh_emi,
  protocolo: r.protocolo,
  autorizadoEm: r.autorizado_em,
});
