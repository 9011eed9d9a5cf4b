// The accountant's MDF-e export (GET /api/v1/mdfe/exportacao, docs/api.md "Accountant's
// export"): one ZIP with every manifest of the company issued in the period (Brasília days of
// its emission) that the authority authorized, whatever happened next (closed, cancelled), each
// once as its mdfeProc, named by its access key; its registered events (110112 closing, 110111
// cancellation) beside it; and resumo.csv, one line per file. Rejected manifests and attempts
// still processando are left out: they are not fiscal documents.

import type { Readable } from 'node:stream';
import { toCents } from '../../fiscal/money.ts';
import { wrapMdfeProc } from '../../fiscal/protocol.ts';
import { formatBrasilia } from '../../base/common/brasilia.ts';
import { lazyZip, type LazyEntry } from '../export/lazy-zip.ts';
import type { ExportPeriod } from '../export/period.ts';
import type { PagePosition } from '../paging.ts';
import { csvMoney, summaryCsv } from '../export/summary-csv.ts';
import type { MdfeRecord, MdfeStore } from './store.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const withDeclaration = (xml: string): string => (xml.startsWith('<?xml') ? xml : DECLARATION + xml);
const brasiliaText = (instant: string | null): string => (instant ? formatBrasilia(new Date(instant)).slice(0, 19).replace('T', ' ') : '');

/** Manifests the authority authorized, in whatever state they are now. */
const EXPORTED = new Set<MdfeRecord['situacao']>(['autorizado', 'encerrado', 'cancelado']);

/** Manifests read per page of the list (small records, without XML). */
const PAGE = 1_000;

/** The manifests issued in the period, read page after page (service/paging.ts). */
async function issuedIn(store: MdfeStore, companyId: string, period: ExportPeriod): Promise<MdfeRecord[]> {
  const filters = { from: period.start.toISOString(), until: period.end.toISOString() };
  const out: MdfeRecord[] = [];
  let after: PagePosition | undefined;
  do {
    const page = await store.list(companyId, filters, { limit: PAGE, ...(after && { after }) });
    out.push(...page.rows);
    after = page.next ?? undefined;
  } while (after);
  return out;
}

export const MDFE_SUMMARY_COLUMNS = [
  'documento',
  'arquivo',
  'chave',
  'serie',
  'numero',
  'emissao',
  'situacao',
  'placa',
  'uf_inicio',
  'uf_fim',
  'valor_carga',
  'protocolo',
  'autorizado_em',
  'encerrado_em',
  'cancelado_em',
] as const;

export const mdfeFileName = (chave: string): string => `${chave}-mdfe.xml`;

export function mdfeExportFileName(cnpj: string, period: ExportPeriod): string {
  return `mdfe-${cnpj}-${period.de}-a-${period.ate}.zip`;
}

export async function mdfeExport(store: MdfeStore, companyId: string, period: ExportPeriod): Promise<Readable> {
  // The list is newest first; the archive goes by series and number.
  const manifests = (await issuedIn(store, companyId, period)).filter((r) => EXPORTED.has(r.situacao)).sort((a, b) => a.serie - b.serie || a.numero - b.numero);
  const rows: (string | number)[][] = [];
  const entries: LazyEntry[] = [];
  for (const m of manifests) {
    const name = mdfeFileName(m.chave);
    entries.push({
      name,
      content: async () => {
        const found = await store.xml(companyId, m.id);
        if (!found?.protXml) throw new Error(`MDF-e ${m.chave} sem protocolo para exportar`);
        rows.push([
          'mdfe',
          name,
          m.chave,
          m.serie,
          m.numero,
          brasiliaText(m.emitidoEm),
          m.situacao,
          m.placa,
          m.ufInicio,
          m.ufFim,
          csvMoney(toCents(m.valorCarga, 'valorCarga')),
          m.protocolo ?? '',
          brasiliaText(m.autorizadoEm),
          brasiliaText(m.encerradoEm),
          brasiliaText(m.canceladoEm),
        ]);
        return withDeclaration(wrapMdfeProc(found.xml, found.protXml));
      },
    });
    // A manifest leaves `autorizado` only by a registered event, recorded in the same
    // transaction (store.recordEvent): closed → 110112, cancelled → 110111.
    const tpEvento = m.situacao === 'encerrado' ? '110112' : m.situacao === 'cancelado' ? '110111' : undefined;
    if (tpEvento) {
      const eventName = `${m.chave}-evento-${tpEvento}.xml`;
      entries.push({
        name: eventName,
        content: async () => {
          const event = (await store.events(m.id)).find((e) => e.tpEvento === tpEvento);
          if (!event) throw new Error(`evento ${tpEvento} do MDF-e ${m.chave} não encontrado`);
          const at = brasiliaText(event.registradoEm);
          rows.push([
            `evento_${tpEvento}`,
            eventName,
            m.chave,
            m.serie,
            m.numero,
            '',
            m.situacao,
            '',
            '',
            '',
            '',
            event.protocolo ?? '',
            '',
            tpEvento === '110112' ? at : '',
            tpEvento === '110111' ? at : '',
          ]);
          return withDeclaration(event.xml);
        },
      });
    }
  }
  entries.push({ name: 'resumo.csv', content: async () => summaryCsv(MDFE_SUMMARY_COLUMNS, rows) });
  return lazyZip(entries);
}
