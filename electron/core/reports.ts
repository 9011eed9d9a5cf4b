// The manager's sales report for Brasília days: totals, by payment method, by hour, by product,
// the cancellations and the contingency receipts, and the sales still without a fiscal document.
//
// Figures are read from each receipt's fiscal XML (the authorized nfeProc, fetched from the
// service once and kept, or the signed XML of a contingency receipt still awaiting the
// authority) by fiscal/nfce/sale-facts.ts, the reader the service's export summary uses too: the
// totals are the documents' own. A receipt is in the period by its dhEmi. What counts in the
// totals is what the accountant's export calls a sale: authorized (online or in contingency) and
// contingency receipts awaiting the authority. Cancelled ones are listed apart, of both kinds:
// cancelled by the manager (110111), and the online attempts of sales re-issued in contingency
// that were authorized after all and then cancelled by substitution (110112; their task in
// contingency/reconcile.ts keeps their XML): every cancelled NFC-e of the accountant's file.
// Online receipts not authorized yet (or refused) have no fiscal document: listed apart, from what
// the sale sent. Products are named as the catalog names them: the XML's xProd is the receipt's,
// which in homologação is the mandatory text instead of the first item's name.
//
// Each receipt's figures are read once, when its state or XML changes, into daily totals kept
// beside the receipts (report-share.ts, store/report-totals.ts refreshReportShare): a report adds up days,
// so a year's costs a few hundred rows and the memory of a day's. The cancelled attempts are
// few, and read through their own index (store/contingency.ts cancelledAttemptsBetween).

import { stringify } from 'csv-stringify/sync';
import { brasiliaDateTime } from '../../fiscal/protocol.ts';
import { brasiliaPeriod } from '../../base/common/brasilia.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { formatDecimal, fromCents } from '../../fiscal/money.ts';
import type { ReportCancellation, ReportCsv, ReportPeriod, ReportReceipt, SalesReport } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import type { ReceiptRow } from './store/receipts.ts';
import type { ReportListedRow } from './store/report-totals.ts';
import { reportFacts, type ReportFacts } from './report-share.ts';
import type { ReceiptDocuments } from './receipt-documents.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { paymentMethodLabel } from '../../base/common/payment-methods.ts';

const DAY_MS = 24 * 3600_000;
const WITH_XML: readonly ReceiptRow['state'][] = ['authorized', 'cancelling', 'cancelled'];

/** The [start, end) instants of a period of Brasília days; the screen's error naming the field. */
export function reportPeriod(input: Partial<ReportPeriod> | undefined): ReportPeriod & { start: Date; end: Date } {
  const de = typeof input?.de === 'string' ? input.de : '';
  const ate = typeof input?.ate === 'string' ? input.ate : '';
  const day = /^\d{4}-\d{2}-\d{2}$/;
  if (!day.test(de) || !brasiliaPeriod(de, de)) throw new TerminalError('estado_invalido', 'Data inicial inválida (use AAAA-MM-DD)', { field: 'de' });
  if (!day.test(ate) || !brasiliaPeriod(ate, ate)) throw new TerminalError('estado_invalido', 'Data final inválida (use AAAA-MM-DD)', { field: 'ate' });
  const period = brasiliaPeriod(de, ate);
  if (!period) throw new TerminalError('estado_invalido', 'A data inicial vem depois da final', { field: 'de' });
  if (period.end.getTime() - period.start.getTime() > 367 * DAY_MS) throw new TerminalError('estado_invalido', 'Período de até um ano', { field: 'ate' });
  return { de, ate, ...period };
}

/** Receipts whose share is read per transaction while the pending ones are folded in. */
const FOLD_BATCH = 500;

/** A report without some authorized NFC-e would be wrong, not partial: it fails, naming them. */
const unavailable = (missing: readonly number[]): TerminalError =>
  new TerminalError(
    'servico_indisponivel',
    `Não foi possível obter o XML autorizado das NFC-e nº ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? '…' : ''}; tente de novo com o serviço de emissão no ar`,
  );

/** A document's figures; the report's error naming the NFC-e when its XML cannot be read. */
function readFacts(xml: string, nNF: number): ReportFacts {
  try {
    return reportFacts(xml);
  } catch (err) {
    if (err instanceof FieldError) throw new TerminalError('erro_servico', `O XML da NFC-e nº ${nNF} não pôde ser lido: ${err.message}`);
    throw err;
  }
}

/**
 * Reads the shares still pending of the receipts created in [from, until): authorized receipts
 * whose XML the terminal had not fetched (it is fetched now, and kept), and those written before
 * the daily totals existed. A report without some authorized receipts would be wrong, not
 * partial: one whose XML cannot be had fails the report, naming them.
 */
async function foldPending(store: PosStore, documents: ReceiptDocuments, from: string, until: string): Promise<void> {
  const missing: number[] = [];
  let after = { createdAt: from, id: '' };
  for (;;) {
    const batch = store.report.pendingReportReceipts(after, until, FOLD_BATCH);
    if (!batch.length) break;
    after = { createdAt: batch[batch.length - 1]!.created_at, id: batch[batch.length - 1]!.id };
    for (const r of batch) {
      if (!WITH_XML.includes(r.state) || store.receipts.receiptXml(r.id) !== undefined || (r.tp_emis === 9 && r.signed_xml)) continue;
      try {
        await documents.xml(r); // kept, and the share read, in one transaction
      } catch {
        missing.push(r.nnf);
      }
    }
    const unreadable = store.transaction(() => batch.filter((r) => store.report.refreshReportShare(r.id) === 'pending' && !missing.includes(r.nnf)));
    for (const r of unreadable) readFacts(store.receipts.receiptXml(r.id) ?? r.signed_xml ?? '', r.nnf);
  }
  if (missing.length) throw unavailable(missing);
}

const listed = (r: ReportListedRow): ReportReceipt => ({
  receiptId: r.receipt_id,
  serie: r.serie,
  nNF: r.nnf,
  chave: r.chave,
  totalCents: r.vnf_cents,
  issuedAt: brasiliaDateTime(r.dh_emi),
});

/**
 * The online attempts of sales re-issued in contingency, emitted in the days [de, ate], that were
 * cancelled by substitution (110112) or found cancelled: read from their own authorized XML
 * (fetched from the service once and kept with their reconciliation task), each with the receipt
 * that now covers its sale. Their tasks are looked up by creation, a day on each side of the
 * period (dhEmi decides, as for the receipts), through an index of the cancelled ones only.
 */
async function cancelledAttempts(
  store: PosStore,
  documents: ReceiptDocuments,
  period: ReportPeriod & { start: Date; end: Date },
): Promise<ReportCancellation[]> {
  const tasks = store.contingency.cancelledAttemptsBetween(iso(period.start.getTime() - DAY_MS), iso(period.end.getTime() + DAY_MS));
  const cancellations: ReportCancellation[] = [];
  const missing: number[] = [];
  for (const t of tasks) {
    let xml: string;
    try {
      xml = await documents.supersededXml(t);
    } catch {
      missing.push(t.nnf);
      continue;
    }
    const facts = readFacts(xml, t.nnf);
    if (facts.day < period.de || facts.day > period.ate) continue;
    const substitute = store.receipts.receipt(t.receipt_id)!;
    cancellations.push({
      receiptId: substitute.id,
      serie: t.serie,
      nNF: t.nnf,
      chave: t.chave,
      totalCents: facts.vNFCents,
      issuedAt: brasiliaDateTime(facts.dhEmi),
      // Found cancelled by someone else (not by this terminal's substitution): an ordinary cancellation.
      kind: t.outcome === 'cancelada_substituicao' ? 'substituicao' : 'cancelamento',
      substitute: { serie: substitute.serie, nNF: substitute.nnf },
    });
  }
  if (missing.length) throw unavailable(missing);
  return cancellations;
}

/** The order of the cancellations, as of every receipt list: series, then number. */
const bySeriesAndNumber = (a: ReportReceipt, b: ReportReceipt): number => a.serie - b.serie || a.nNF - b.nNF;

/**
 * The report of a period, added up from the daily totals the terminal keeps
 * (report-share.ts): a year costs a few hundred rows, whatever the number of sales.
 */
export async function salesReport(store: PosStore, documents: ReceiptDocuments, clock: Clock, input: Partial<ReportPeriod>): Promise<SalesReport> {
  const period = reportPeriod(input);
  // dhEmi is the service's (or, offline, the terminal's) clock at acceptance: close to the
  // receipt's creation here. A day on each side catches those near midnight; dhEmi decides.
  await foldPending(store, documents, iso(period.start.getTime() - DAY_MS), iso(period.end.getTime() + DAY_MS));
  const { de, ate } = period;
  const totals = store.report.reportTotals(de, ate);
  const hours = new Map(store.report.reportHours(de, ate).map((h) => [h.hour, h]));
  const receipts = store.report.reportListed(de, ate);
  const products = store.report.reportProducts(de, ate);
  const names = store.products.productNames(products.map((p) => p.code));
  const cancelled: ReportCancellation[] = [
    ...receipts.filter((r) => r.bucket === 'cancelled').map((r) => ({ ...listed(r), kind: 'cancelamento' as const, substitute: null })),
    ...(await cancelledAttempts(store, documents, period)),
  ];
  return {
    de,
    ate,
    generatedAt: iso(clock()),
    totals: { count: totals.count, totalCents: totals.total_cents, changeCents: totals.change_cents },
    byPayment: store.report
      .reportPayments(de, ate)
      .map((p) => ({ tPag: p.tpag, description: paymentMethodLabel(p.tpag), count: p.count, amountCents: p.amount_cents })),
    byHour: Array.from({ length: 24 }, (_, hour) => ({ hour, count: hours.get(hour)?.count ?? 0, totalCents: hours.get(hour)?.total_cents ?? 0 })),
    byProduct: products
      .sort((a, b) => b.total_cents - a.total_cents || a.code.localeCompare(b.code))
      .map((p) => ({
        code: p.code,
        description: names.get(p.code) ?? p.description,
        unit: p.unit,
        quantity: formatDecimal(BigInt(p.quantity_units), 4).replace(/\.?0+$/, ''),
        totalCents: p.total_cents,
      })),
    cancelled: cancelled.sort(bySeriesAndNumber),
    contingency: receipts.filter((r) => r.bucket === 'sale').map((r) => ({ ...listed(r), authorized: r.state === 'authorized' })),
    unauthorized: store.report.unsettledReceiptsCreatedBetween(iso(period.start.getTime()), iso(period.end.getTime())).map((r) => ({
      receiptId: r.id,
      serie: r.serie,
      nNF: r.nnf,
      chave: r.chave,
      totalCents: r.total_cents,
      issuedAt: brasiliaDateTime(r.created_at),
      state: r.state,
    })),
  };
}

/** Cents as a Brazilian spreadsheet reads them: `1234,56`. */
const csvMoney = (cents: number): string => fromCents(BigInt(cents)).replace('.', ',');

/** A cancellation's line in the CSV: `cancelada` (110111) or `cancelada_substituicao` (110112). */
const CANCELLATION_SECTION: Record<ReportCancellation['kind'], string> = { cancelamento: 'cancelada', substituicao: 'cancelada_substituicao' };

/**
 * The report as one CSV for a spreadsheet (";", decimal comma, UTF-8 with BOM, as the service's
 * export summary): one line per figure, `secao;item;descricao;quantidade;valor`.
 */
export function salesReportCsv(report: SalesReport): ReportCsv {
  const rows: (string | number)[][] = [['secao', 'item', 'descricao', 'quantidade', 'valor']];
  rows.push(['total', 'vendas', 'NFC-e do período', report.totals.count, csvMoney(report.totals.totalCents)]);
  rows.push(['total', 'troco', 'Troco dado', '', csvMoney(report.totals.changeCents)]);
  for (const p of report.byPayment) rows.push(['pagamento', p.tPag, p.description, p.count, csvMoney(p.amountCents)]);
  for (const h of report.byHour)
    if (h.count) rows.push(['hora', String(h.hour).padStart(2, '0'), `${String(h.hour).padStart(2, '0')}h`, h.count, csvMoney(h.totalCents)]);
  for (const p of report.byProduct) rows.push(['produto', p.code, `${p.description} (${p.unit})`, p.quantity.replace('.', ','), csvMoney(p.totalCents)]);
  for (const c of report.cancelled) rows.push([CANCELLATION_SECTION[c.kind], `${c.serie}-${c.nNF}`, c.chave ?? '', '', csvMoney(c.totalCents)]);
  for (const c of report.contingency)
    rows.push(['contingencia', `${c.serie}-${c.nNF}`, `${c.chave ?? ''}${c.authorized ? '' : ' (aguardando autorização)'}`, '', csvMoney(c.totalCents)]);
  for (const u of report.unauthorized) rows.push(['sem_autorizacao', `${u.serie}-${u.nNF}`, u.state, '', csvMoney(u.totalCents)]);
  const name = report.de === report.ate ? report.de : `${report.de}-a-${report.ate}`;
  return { fileName: `vendas-${name}.csv`, csv: '\uFEFF' + stringify(rows, { delimiter: ';', record_delimiter: '\r\n' }) };
}
