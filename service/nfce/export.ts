// The accountant's NFC-e export (GET /api/v1/nfce/exportacao, docs/api.md "Accountant's export"):
// one ZIP with every NFC-e of the company issued in the period (by ide/dhEmi, in Brasília days)
// that is a fiscal document (authorized, cancelled, or issued in offline contingency and still
// awaiting the authority), each once, named by its access key; the cancellation events beside
// them; the inutilizações registered in the period, named by series and range; and resumo.csv,
// one line per file, whose values are read from each document's own XML
// (fiscal/nfce/sale-facts.ts, the same reader the terminal's reports use). The NF-e de devolução
// authorized in the period go in their own folder, `devolucoes/` (export/devolucoes.ts).
//
// Left out: rejected documents (no fiscal value) and online ones still processando (not yet
// authorized: they belong to the export made once they are).

import type { Readable } from 'node:stream';
import { nfceSaleFacts } from '../../fiscal/nfce/sale-facts.ts';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { lazyZip, type LazyEntry } from '../export/lazy-zip.ts';
import type { ExportPeriod } from '../export/period.ts';
import { csvMoney, summaryCsv } from '../export/summary-csv.ts';
import { devolucaoEntries, type DevolucaoExportSource, type DevolucaoFacts } from '../export/devolucoes.ts';
import type { InutilizacaoRecord, NfceExportEntry, NfceStore } from './store.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Our stored XML has no declaration; the accountant's tools expect one. */
const withDeclaration = (xml: string): string => (xml.startsWith('<?xml') ? xml : DECLARATION + xml);

/** `2026-11-22 14:03:05`: the Brasília wall clock, as a spreadsheet sorts and reads it. */
const brasiliaText = (instant: string | null): string => (instant ? formatBrasilia(new Date(instant)).slice(0, 19).replace('T', ' ') : '');

export const nfceFileName = (chave: string): string => `${chave}-nfce.xml`;
export const eventFileName = (chave: string, tpEvento: string): string => `${chave}-evento-${tpEvento}.xml`;
export const inutilizacaoFileName = (serie: number, first: number, last: number): string => `inutilizacao-serie-${serie}-numeros-${first}-a-${last}.xml`;

/** The summary's fixed columns; one `pagamento_XX` column per tPag of the period follows them. */
export const NFCE_SUMMARY_COLUMNS = [
  'documento',
  'arquivo',
  'chave',
  'serie',
  'numero',
  'emissao',
  'situacao',
  'contingencia',
  'protocolo',
  'autorizada_em',
  'cancelada_em',
  'protocolo_cancelamento',
  'valor_total',
  'troco',
] as const;

export type NfceSituacaoExportada = 'autorizada' | 'cancelada' | 'contingencia_pendente';

const situacaoOf = (e: NfceExportEntry): NfceSituacaoExportada =>
  e.status === 'cancelado' ? 'cancelada' : e.status === 'autorizado' ? 'autorizada' : 'contingencia_pendente';

type Row = { fixed: (string | number)[]; payments: Map<string, bigint> };

export function nfceExportFileName(cnpj: string, period: ExportPeriod): string {
  return `nfce-${cnpj}-${period.de}-a-${period.ate}.zip`;
}

/** A return's summary line (no payment columns: its tPag is 90, no payment). */
const devolucaoLine = (d: DevolucaoFacts): Row => ({
  fixed: [
    'nfe_devolucao',
    d.name,
    d.chave,
    d.serie,
    d.numero,
    brasiliaText(d.dhEmi),
    'autorizada',
    'nao',
    d.protocolo ?? '',
    brasiliaText(d.autorizadoEm),
    '',
    '',
    csvMoney(d.vNFCents),
    '',
  ],
  payments: new Map(),
});

/** An inutilização's entry, its summary line written as the archive reaches it. */
function inutilizacaoEntry(inut: InutilizacaoRecord, rows: Row[]): LazyEntry {
  const name = inutilizacaoFileName(inut.serie, inut.numeroInicial, inut.numeroFinal);
  return {
    name,
    content: async () => {
      const range = inut.numeroInicial === inut.numeroFinal ? String(inut.numeroInicial) : `${inut.numeroInicial} a ${inut.numeroFinal}`;
      rows.push({
        fixed: ['inutilizacao', name, '', inut.serie, range, brasiliaText(inut.createdAt.toISOString()), 'inutilizada', '', inut.protocolo, '', '', '', '', ''],
        payments: new Map(),
      });
      return withDeclaration(inut.xml);
    },
  };
}

/** The archive of the period, streamed; the returns come from `returns`. */
export async function nfceExport(store: NfceStore, returns: DevolucaoExportSource, companyId: string, period: ExportPeriod): Promise<Readable> {
  const rows: Row[] = [];
  const [documents, inutilizacoes, devolucoes] = await Promise.all([
    store.exportEntries(companyId, period.start, period.end),
    store.inutilizacoesBetween(companyId, period.start, period.end),
    devolucaoEntries(returns, companyId, period, withDeclaration, (d) => rows.push(devolucaoLine(d))),
  ]);
  const events = new Map<string, string>();
  const entries: LazyEntry[] = [];

  for (const doc of documents) {
    const name = nfceFileName(doc.chave);
    entries.push({
      name,
      content: async () => {
        const xml = await store.getXml(companyId, doc.id);
        const body = doc.status === 'processando' ? xml?.signedXml : xml?.nfeProc;
        if (!body) throw new Error(`NFC-e ${doc.chave} sem XML para exportar`);
        if (doc.eventoTipo && xml?.eventoXml) events.set(doc.id, xml.eventoXml);
        const facts = nfceSaleFacts(body);
        const payments = new Map<string, bigint>();
        for (const p of facts.payments) payments.set(p.tPag, (payments.get(p.tPag) ?? 0n) + p.vPagCents);
        rows.push({
          fixed: [
            'nfce',
            name,
            doc.chave,
            doc.serie,
            doc.numero,
            brasiliaText(doc.dhEmi),
            situacaoOf(doc),
            doc.contingencia ? 'sim' : 'nao',
            doc.protocolo ?? '',
            brasiliaText(doc.autorizadoEm),
            brasiliaText(doc.canceladoEm),
            doc.protocoloCancelamento ?? '',
            csvMoney(facts.vNFCents),
            csvMoney(facts.vTrocoCents),
          ],
          payments,
        });
        return withDeclaration(body);
      },
    });
    if (doc.eventoTipo) {
      const eventName = eventFileName(doc.chave, doc.eventoTipo);
      entries.push({
        name: eventName,
        content: async () => {
          const xml = events.get(doc.id);
          if (!xml) throw new Error(`evento da NFC-e ${doc.chave} não encontrado`);
          events.delete(doc.id);
          rows.push({
            fixed: [
              `evento_${doc.eventoTipo}`,
              eventName,
              doc.chave,
              doc.serie,
              doc.numero,
              '',
              'cancelada',
              '',
              doc.protocoloCancelamento ?? '',
              '',
              brasiliaText(doc.canceladoEm),
              doc.protocoloCancelamento ?? '',
              '',
              '',
            ],
            payments: new Map(),
          });
          return withDeclaration(xml);
        },
      });
    }
  }

  entries.push(...inutilizacoes.map((inut) => inutilizacaoEntry(inut, rows)));
  entries.push(...devolucoes);

  entries.push({
    name: 'resumo.csv',
    content: async () => {
      const tPags = [...new Set(rows.flatMap((r) => [...r.payments.keys()]))].sort();
      return summaryCsv(
        [...NFCE_SUMMARY_COLUMNS, ...tPags.map((t) => `pagamento_${t}`)],
        rows.map((r) => [...r.fixed, ...tPags.map((t) => (r.fixed[0] === 'nfce' ? csvMoney(r.payments.get(t) ?? 0n) : ''))]),
      );
    },
  });
  return lazyZip(entries);
}
