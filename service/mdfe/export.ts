// The accountant's MDF-e export (GET /api/v1/mdfe/exportacao, docs/api.md "Accountant's
// export"): one ZIP with every manifest of the company issued in the period (Brasília days of
// its emission, in order of emission) that the authority authorized, whatever happened next
// (closed, cancelled), each once as its mdfeProc, named by its access key; its registered events
// (110112 closing, 110111 cancellation) beside it; and resumo.csv, one line per file. Rejected
// manifests and attempts still processando are left out: they are not fiscal documents. Read a
// page at a time, each XML when the archive reaches it, the summary's lines in a temporary file:
// a year costs the memory of a day.

import type { Readable } from 'node:stream';
import { toCents } from '../../fiscal/money.ts';
import { wrapMdfeProc } from '../../fiscal/protocol.ts';
import { EXPORT_PAGE_ROWS, everyRow } from '../export/pages.ts';
import type { ExportPeriod } from '../export/period.ts';
import { brasiliaText, csvMoney, SummaryLines } from '../export/summary-csv.ts';
import { withDeclaration, zipStream, type ZipSource } from '../export/zip-stream.ts';
import type { MdfeRecord, MdfeStore } from './store.ts';

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

export function mdfeExport(store: MdfeStore, companyId: string, period: ExportPeriod): Readable {
  return zipStream(mdfeEntries(store, companyId, period));
}

async function* mdfeEntries(store: MdfeStore, companyId: string, period: ExportPeriod): AsyncGenerator<ZipSource> {
  const summary = new SummaryLines(MDFE_SUMMARY_COLUMNS);
  const [from, until] = [period.start.toISOString(), period.end.toISOString()];
  try {
    for await (const m of everyRow((after) => store.exportPage(companyId, from, until, after, EXPORT_PAGE_ROWS))) {
      const name = mdfeFileName(m.chave);
      yield {
        name,
        content: async () => {
          const found = await store.xml(companyId, m.id);
          if (!found?.protXml) throw new Error(`MDF-e ${m.chave} sem protocolo para exportar`);
          await summary.add([
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
      };
      const event = eventEntry(store, summary, m);
      if (event) yield event;
    }
    yield { name: 'resumo.csv', content: async () => summary.csv() };
  } finally {
    await summary.dispose();
  }
}

/**
 * A manifest leaves `autorizado` only by a registered event, recorded in the same transaction
 * (store.recordEvent): closed → 110112, cancelled → 110111.
 */
function eventEntry(store: MdfeStore, summary: SummaryLines, m: MdfeRecord): ZipSource | undefined {
  const tpEvento = m.situacao === 'encerrado' ? '110112' : m.situacao === 'cancelado' ? '110111' : undefined;
  if (!tpEvento) return undefined;
  const name = `${m.chave}-evento-${tpEvento}.xml`;
  return {
    name,
    content: async () => {
      const event = (await store.events(m.id)).find((e) => e.tpEvento === tpEvento);
      if (!event) throw new Error(`evento ${tpEvento} do MDF-e ${m.chave} não encontrado`);
      const at = brasiliaText(event.registradoEm);
      await summary.add([
        `evento_${tpEvento}`,
        name,
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
  };
}
