// The accountant's NFC-e export (GET /api/v1/nfce/exportacao, docs/api.md "Accountant's export"):
// one ZIP with every NFC-e of the company issued in the period (by ide/dhEmi, in Brasília days,
// in order of emission) that is a fiscal document (authorized, cancelled, or issued in offline contingency and still
// awaiting the authority), each once, named by its access key; the cancellation events beside
// them; the inutilizações registered in the period, named by series and range; and resumo.csv,
// one line per file, whose values are read from each document's own XML
// (fiscal/nfce/sale-facts.ts, the same reader the terminal's reports use). The NF-e de devolução
// authorized in the period go in their own folder, `devolucoes/` (export/devolucoes.ts).
//
// Left out: rejected documents (no fiscal value) and online ones still processando (not yet
// authorized: they belong to the export made once they are).
//
// In memory that does not grow with the period: the documents are read a page at a time
// (service/export/pages.ts), each one's XML when the archive reaches it, and the summary's lines
// wait in a temporary file (SummaryLines) until the end.

import type { Readable } from 'node:stream';
import { nfceSaleFacts } from '../../fiscal/nfce/sale-facts.ts';
import { EXPORT_PAGE_ROWS, everyRow } from '../export/pages.ts';
import type { ExportPeriod } from '../export/period.ts';
import { brasiliaText, csvMoney, SummaryLines } from '../export/summary-csv.ts';
import { withDeclaration, zipStream, type ZipSource } from '../export/zip-stream.ts';
import type { InutilizacaoRecord, NfceExportEntry, NfceStore } from './store.ts';
import { devolucaoEntries, type DevolucaoExportSource, type DevolucaoFacts } from '../export/devolucoes.ts';

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

export function nfceExportFileName(cnpj: string, period: ExportPeriod): string {
  return `nfce-${cnpj}-${period.de}-a-${period.ate}.zip`;
}

/** The archive of the period, streamed; the returns come from `returns`. */
export function nfceExport(store: NfceStore, returns: DevolucaoExportSource, companyId: string, period: ExportPeriod): Readable {
  return zipStream(nfceEntries(store, returns, companyId, period));
}

async function* nfceEntries(store: NfceStore, returns: DevolucaoExportSource, companyId: string, period: ExportPeriod): AsyncGenerator<ZipSource> {
  const summary = new SummaryLines(NFCE_SUMMARY_COLUMNS, (tPag) => `pagamento_${tPag}`);
  try {
    const documents = everyRow((after) => store.exportPage(companyId, period.start, period.end, after, EXPORT_PAGE_ROWS));
    for await (const doc of documents) {
      // Read with the document's XML, written right after it.
      let eventXml: string | null = null;
      yield {
        name: nfceFileName(doc.chave),
        content: async () => {
          const xml = await store.getXml(companyId, doc.id);
          const body = doc.status === 'processando' ? xml?.signedXml : xml?.nfeProc;
          if (!body) throw new Error(`NFC-e ${doc.chave} sem XML para exportar`);
          eventXml = xml?.eventoXml ?? null;
          await documentLine(summary, doc, body);
          return withDeclaration(body);
        },
      };
      if (doc.eventoTipo) {
        const name = eventFileName(doc.chave, doc.eventoTipo);
        yield {
          name,
          content: async () => {
            if (!eventXml) throw new Error(`evento da NFC-e ${doc.chave} não encontrado`);
            const c = doc.protocoloCancelamento ?? '';
            await summary.add([
              `evento_${doc.eventoTipo}`,
              name,
              doc.chave,
              doc.serie,
              doc.numero,
              '',
              'cancelada',
              '',
              c,
              '',
              brasiliaText(doc.canceladoEm),
              c,
              '',
              '',
            ]);
            return withDeclaration(eventXml);
          },
        };
      }
    }
    for (const inut of await store.inutilizacoesBetween(companyId, period.start, period.end)) yield inutilizacaoEntry(summary, inut);
    yield* await devolucaoEntries(returns, companyId, period, (d) => summary.add(devolucaoLine(d)));
    yield { name: 'resumo.csv', content: async () => summary.csv() };
  } finally {
    await summary.dispose();
  }
}

/** The summary line of an NFC-e, its values read from its own XML. */
function documentLine(summary: SummaryLines, doc: NfceExportEntry, xml: string): Promise<void> {
  const facts = nfceSaleFacts(xml);
  const payments = new Map<string, bigint>();
  for (const p of facts.payments) payments.set(p.tPag, (payments.get(p.tPag) ?? 0n) + p.vPagCents);
  return summary.add(
    [
      'nfce',
      nfceFileName(doc.chave),
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
    Object.fromEntries([...payments].map(([tPag, cents]) => [tPag, csvMoney(cents)])),
    csvMoney(0n),
  );
}

/** A return's summary line (no payment columns: its tPag is 90, no payment). */
const devolucaoLine = (d: DevolucaoFacts): (string | number)[] => [
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
];

function inutilizacaoEntry(summary: SummaryLines, inut: InutilizacaoRecord): ZipSource {
  const name = inutilizacaoFileName(inut.serie, inut.numeroInicial, inut.numeroFinal);
  return {
    name,
    content: async () => {
      const range = inut.numeroInicial === inut.numeroFinal ? String(inut.numeroInicial) : `${inut.numeroInicial} a ${inut.numeroFinal}`;
      await summary.add([
        'inutilizacao',
        name,
        '',
        inut.serie,
        range,
        brasiliaText(inut.createdAt.toISOString()),
        'inutilizada',
        '',
        inut.protocolo,
        '',
        '',
        '',
        '',
        '',
      ]);
      return withDeclaration(inut.xml);
    },
  };
}
