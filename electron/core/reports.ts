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

import { stringify } from 'csv-stringify/sync';
import { brasiliaDateTime } from '../../fiscal/protocol.ts';
import { brasiliaHour, brasiliaPeriod } from '../../base/common/brasilia.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { formatDecimal, fromCents, parseDecimal } from '../../fiscal/money.ts';
import { nfceSaleFacts, type NfceSaleFacts } from '../../fiscal/nfce/sale-facts.ts';
import type { ReportCancellation, ReportCsv, ReportPeriod, ReportReceipt, SalesReport } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import type { PosStore, ReceiptRow, ReconciliationTaskRow } from './pos-store.ts';
import type { ReceiptDocuments } from './receipt-documents.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { paymentMethodName } from './sales.ts';

const DAY_MS = 24 * 3600_000;
const CANCELLED: readonly ReceiptRow['state'][] = ['cancelling', 'cancelled'];
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

/**
 * A fiscal document of the report: a receipt, or a superseded online attempt (cancelled by
 * substitution, or found cancelled), with the sale's receipt that now covers it.
 */
type Fiscal = { row: ReceiptRow; facts: NfceSaleFacts; superseded?: ReconciliationTaskRow };

const readFacts = (xml: string, nNF: number): NfceSaleFacts => {
  try {
    return nfceSaleFacts(xml);
  } catch (err) {
    if (err instanceof FieldError) throw new TerminalError('erro_servico', `O XML da NFC-e nº ${nNF} não pôde ser lido: ${err.message}`);
    throw err;
  }
};

/** The fiscal XML of each receipt that has one (authorized or cancelled; contingency), and of each cancelled superseded attempt. */
async function fiscalOf(
  rows: readonly ReceiptRow[],
  superseded: readonly ReconciliationTaskRow[],
  store: PosStore,
  documents: ReceiptDocuments,
): Promise<{ fiscal: Fiscal[]; unauthorized: ReceiptRow[] }> {
  const fiscal: Fiscal[] = [];
  const unauthorized: ReceiptRow[] = [];
  const missing: string[] = [];
  for (const r of rows) {
    if (r.state === 'voided' || r.state === 'voiding') continue;
    let xml: string | undefined;
    if (WITH_XML.includes(r.state)) {
      try {
        xml = await documents.xml(r);
      } catch {
        missing.push(String(r.nnf));
        continue;
      }
    } else if (r.tp_emis === 9 && r.signed_xml && (r.state === 'pending' || r.state === 'processing')) {
      xml = r.signed_xml;
    }
    if (xml === undefined) unauthorized.push(r);
    else fiscal.push({ row: r, facts: readFacts(xml, r.nnf) });
  }
  for (const t of superseded) {
    let xml: string;
    try {
      xml = await documents.supersededXml(t);
    } catch {
      missing.push(String(t.nnf));
      continue;
    }
    fiscal.push({ row: store.receipt(t.receipt_id)!, facts: readFacts(xml, t.nnf), superseded: t });
  }
  if (missing.length) {
    // A report without some authorized receipts would be wrong, not partial.
    throw new TerminalError(
      'servico_indisponivel',
      `Não foi possível obter o XML autorizado das NFC-e nº ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? '…' : ''}; tente de novo com o serviço de emissão no ar`,
    );
  }
  return { fiscal, unauthorized };
}

const receiptOf = (r: ReceiptRow, totalCents: number, issuedAt: string): ReportReceipt => ({
  receiptId: r.id,
  serie: r.serie,
  nNF: r.nnf,
  chave: r.chave,
  totalCents,
  issuedAt,
});

/** A cancelled document as the report lists it: which NFC-e, how it was cancelled, and the receipt that covers its sale when it was superseded. */
function cancellationOf({ row, facts, superseded }: Fiscal, issuedAt: string): ReportCancellation {
  const total = Number(facts.vNFCents);
  if (!superseded) return { ...receiptOf(row, total, issuedAt), kind: 'cancelamento', substitute: null };
  return {
    receiptId: row.id,
    serie: facts.serie,
    nNF: facts.nNF,
    chave: facts.chave,
    totalCents: total,
    issuedAt,
    // Found cancelled by someone else (not by this terminal's substitution): taken as an ordinary cancellation.
    kind: superseded.outcome === 'cancelada_substituicao' ? 'substituicao' : 'cancelamento',
    substitute: { serie: row.serie, nNF: row.nnf },
  };
}

/** The order of the cancellations, as of every receipt list: series, then number. */
const bySeriesAndNumber = (a: ReportReceipt, b: ReportReceipt): number => a.serie - b.serie || a.nNF - b.nNF;

export async function salesReport(store: PosStore, documents: ReceiptDocuments, clock: Clock, input: Partial<ReportPeriod>): Promise<SalesReport> {
  const period = reportPeriod(input);
  // dhEmi is the service's (or, offline, the terminal's) clock at acceptance: close to the
  // receipt's creation here. A day on each side catches those near midnight; dhEmi decides.
  const [from, until] = [iso(period.start.getTime() - DAY_MS), iso(period.end.getTime() + DAY_MS)];
  const { fiscal, unauthorized } = await fiscalOf(store.receiptsCreatedBetween(from, until), store.cancelledAttemptsBetween(from, until), store, documents);
  const inPeriod = (instant: string): boolean => {
    const t = Date.parse(instant);
    return t >= period.start.getTime() && t < period.end.getTime();
  };

  const byPayment = new Map<string, { count: number; amountCents: bigint }>();
  const byHour = Array.from({ length: 24 }, (_, hour) => ({ hour, count: 0, totalCents: 0n }));
  const byProduct = new Map<string, { code: string; description: string; unit: string; quantity: bigint; totalCents: bigint }>();
  let count = 0;
  let total = 0n;
  let change = 0n;
  const cancelled: ReportCancellation[] = [];
  const contingency: SalesReport['contingency'] = [];

  for (const document of fiscal) {
    const { row, facts } = document;
    if (!inPeriod(facts.dhEmi)) continue;
    const issuedAt = brasiliaDateTime(facts.dhEmi);
    if (document.superseded || CANCELLED.includes(row.state)) {
      cancelled.push(cancellationOf(document, issuedAt));
      continue;
    }
    const receipt = receiptOf(row, Number(facts.vNFCents), issuedAt);
    if (facts.tpEmis === 9) contingency.push({ ...receipt, authorized: row.state === 'authorized' });
    count++;
    total += facts.vNFCents;
    change += facts.vTrocoCents;
    for (const p of facts.payments) {
      const m = byPayment.get(p.tPag) ?? { count: 0, amountCents: 0n };
      m.count++;
      m.amountCents += p.vPagCents;
      byPayment.set(p.tPag, m);
    }
    const hour = byHour[brasiliaHour(new Date(facts.dhEmi))]!;
    hour.count++;
    hour.totalCents += facts.vNFCents;
    for (const item of facts.items) {
      const p = byProduct.get(item.cProd) ?? { code: item.cProd, description: item.xProd, unit: item.uCom, quantity: 0n, totalCents: 0n };
      p.quantity += parseDecimal(item.qCom.replace(/(\.\d{4})\d+$/, '$1'), 4, 'qCom');
      p.totalCents += item.valueCents;
      byProduct.set(item.cProd, p);
    }
  }

  const names = store.productNames([...byProduct.keys()]);
  return {
    de: period.de,
    ate: period.ate,
    generatedAt: iso(clock()),
    totals: { count, totalCents: Number(total), changeCents: Number(change) },
    byPayment: [...byPayment]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([tPag, m]) => ({ tPag, description: paymentMethodName(tPag), count: m.count, amountCents: Number(m.amountCents) })),
    byHour: byHour.map((h) => ({ hour: h.hour, count: h.count, totalCents: Number(h.totalCents) })),
    byProduct: [...byProduct.values()]
      .sort((a, b) => (b.totalCents > a.totalCents ? 1 : b.totalCents < a.totalCents ? -1 : a.code.localeCompare(b.code)))
      .map((p) => ({
        code: p.code,
        description: names.get(p.code) ?? p.description,
        unit: p.unit,
        quantity: formatDecimal(p.quantity, 4).replace(/\.?0+$/, ''),
        totalCents: Number(p.totalCents),
      })),
    cancelled: cancelled.sort(bySeriesAndNumber),
    contingency,
    unauthorized: unauthorized
      .filter((r) => inPeriod(r.created_at))
      .map((r) => ({ ...receiptOf(r, r.total_cents, brasiliaDateTime(r.created_at)), state: r.state })),
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
