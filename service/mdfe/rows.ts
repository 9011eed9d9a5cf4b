// An MDF-e as both stores read it: its columns and their mapping, written once for SQLite and
// PostgreSQL (service/row-driver.ts says how each returns the idempotency key).

import type { Keyset } from '../export/pages.ts';
import type { Dialect, ListSpec } from '../paging.ts';
import type { RowDriver } from '../row-driver.ts';
import type { MdfeEventRecord, MdfeFilters, MdfeRecord, MdfeSituacao } from './store.ts';

export type MdfeRow<Key> = {
  id: string;
  company_id: string;
  chave: string;
  serie: number;
  numero: number;
  c_mdf: string;
  ambiente: 'homologacao' | 'producao';
  placa: string;
  uf_inicio: string;
  uf_fim: string;
  situacao: MdfeSituacao;
  status: string | null;
  motivo: string | null;
  protocolo: string | null;
  emitido_em: string;
  autorizado_em: string | null;
  encerrado_em: string | null;
  cancelado_em: string | null;
  referencia_externa: Key;
  qrcode: string;
  valor_carga: string;
  created_at: string;
  updated_at: string;
};

// Every column but the XML ones: lists and views never need the documents themselves.
export const MDFE_COLUMNS = `id, company_id, chave, serie, numero, c_mdf, ambiente, placa, uf_inicio, uf_fim, situacao, status, motivo,
  protocolo, emitido_em, autorizado_em, encerrado_em, cancelado_em, referencia_externa, qrcode, valor_carga, created_at, updated_at`;

/** Manifests the authority authorized, in whatever state they are now: what the accountant's export carries. */
export const AUTHORIZED_SITUACOES = `situacao IN ('autorizado', 'encerrado', 'cancelado')`;

/** An MDF-e row with its place in the export's order (seq: SQLite's integer, PostgreSQL's bigint as text). */
export type MdfeExportRow<Key> = MdfeRow<Key> & { seq: number | string };

export const mdfeExportKeyset = (r: MdfeExportRow<unknown>): Keyset => ({ at: r.emitido_em, seq: Number(r.seq) });

export function mdfeRecordOf<Key>(r: MdfeRow<Key>, driver: RowDriver<Key, unknown>): MdfeRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    chave: r.chave,
    serie: r.serie,
    numero: r.numero,
    cMdf: r.c_mdf,
    ambiente: r.ambiente,
    placa: r.placa,
    ufInicio: r.uf_inicio,
    ufFim: r.uf_fim,
    situacao: r.situacao,
    status: r.status,
    motivo: r.motivo,
    protocolo: r.protocolo,
    emitidoEm: r.emitido_em,
    autorizadoEm: r.autorizado_em,
    encerradoEm: r.encerrado_em,
    canceladoEm: r.cancelado_em,
    referenciaExterna: driver.key(r.referencia_externa),
    qrcode: r.qrcode,
    valorCarga: r.valor_carga,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * A manifest's events, oldest first, given the WHERE that names the manifest in each driver's
 * placeholder. `registrado_em` has whole seconds: two events of one second follow the authority's
 * protocol numbers, which it gives in the order it registers them (by type, they came out of order).
 */
export const mdfeEventsQuery = (where: string): string =>
  `SELECT tp_evento, n_seq, status, motivo, protocolo, registrado_em, dados, xml FROM mdfe_eventos WHERE ${where} ORDER BY registrado_em, protocolo NULLS FIRST, tp_evento, n_seq`;

export type MdfeEventRow = {
  tp_evento: string;
  n_seq: number;
  status: string;
  motivo: string;
  protocolo: string | null;
  registrado_em: string;
  dados: string;
  xml: string;
};

export const mdfeEventOf = (r: MdfeEventRow): MdfeEventRecord => ({
  tpEvento: r.tp_evento,
  nSeq: r.n_seq,
  status: r.status,
  motivo: r.motivo,
  protocolo: r.protocolo,
  registradoEm: r.registrado_em,
  dados: JSON.parse(r.dados) as Record<string, string>,
  xml: r.xml,
});

/**
 * The MDF-e list's query (service/paging.ts) for these filters: newest emitido_em first, then
 * seq. One filter is served by its own index (the state, the cStat, the origin or the
 * destination UF, in that order when several are given: the others are checked within its rows).
 */
export function mdfeListSpec(dialect: Dialect, companyId: string, f: MdfeFilters): ListSpec {
  const where: [string, unknown][] = [['company_id = ?', companyId]];
  if (f.situacao !== undefined) where.push(['situacao = ?', f.situacao]);
  if (f.status !== undefined) where.push(['status = ?', f.status]);
  if (f.ufInicio !== undefined) where.push(['uf_inicio = ?', f.ufInicio]);
  if (f.ufFim !== undefined) where.push(['uf_fim = ?', f.ufFim]);
  if (f.from !== undefined) where.push(['emitido_em >= ?', f.from]);
  if (f.until !== undefined) where.push(['emitido_em < ?', f.until]);
  const index =
    f.situacao !== undefined
      ? 'situacao'
      : f.status !== undefined
        ? 'status'
        : f.ufInicio !== undefined
          ? 'uf_inicio'
          : f.ufFim !== undefined
            ? 'uf_fim'
            : 'emitido';
  return { table: 'mdfe', index: `mdfe_company_${index}`, columns: MDFE_COLUMNS, at: 'emitido_em', instant: (p) => p, seq: 'seq', where };
}
