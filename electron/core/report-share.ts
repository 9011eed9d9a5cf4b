// What one receipt adds to the manager's report (electron/core/reports.ts), read from its fiscal
// XML by the reader the service's export summary uses (fiscal/nfce/sale-facts.ts): which part of
// the report it belongs to, and its figures. The terminal keeps each receipt's share and the
// daily totals they add up to (report_receipts and report_day_* in the terminal's database,
// migrations/pos/20261203T0900_i27_report_totals.sql), changed by store/report-totals.ts in the same
// transaction as the receipt's state or XML: a year's report then adds up 365 days, not 200,000
// receipts.
//
// What counts is what the accountant's export calls a sale: authorized (online or in
// contingency) and contingency receipts awaiting the authority; cancelled ones are listed apart;
// voided numbers and online receipts without a verdict count nowhere (the report lists the
// latter from the receipts themselves).

import { brasiliaDay, brasiliaHour } from '../../base/common/brasilia.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { parseDecimal } from '../../fiscal/money.ts';
import { nfceSaleFacts } from '../../fiscal/nfce/sale-facts.ts';

/** The receipt's columns the share depends on (a ReceiptRow has them). */
export type ShareInput = { state: string; tp_emis: number; signed_xml: string | null };

/** A receipt's figures as the report adds them: money in cents, quantities in ten-thousandths. */
export type ReportFacts = {
  /** The Brasília day and hour of its dhEmi. */
  day: string;
  hour: number;
  dhEmi: string;
  tpEmis: number;
  vNFCents: number;
  vTrocoCents: number;
  /** [tPag, vPag cents], one per detPag. */
  payments: [string, number][];
  /** [cProd, xProd, uCom, qCom in ten-thousandths, vProd − vDesc cents], one per item. */
  items: [string, string, string, number, number][];
};

export type ReportShare =
  /** Its XML is still to be read: the report reads it (fetching it from the service) before adding up. */
  { bucket: 'pending' } | { bucket: 'none' } | ({ bucket: 'sale' | 'cancelled' } & ReportFacts);

const WITH_NFE_PROC = new Set(['authorized', 'cancelling', 'cancelled']);
const AWAITING_VERDICT = new Set(['pending', 'processing']);

/** The receipt's figures read from its XML; FieldError when the XML is not a readable NFC-e. */
export function reportFacts(xml: string): ReportFacts {
  const facts = nfceSaleFacts(xml);
  const instant = new Date(facts.dhEmi);
  return {
    day: brasiliaDay(instant),
    hour: brasiliaHour(instant),
    dhEmi: facts.dhEmi,
    tpEmis: facts.tpEmis,
    vNFCents: Number(facts.vNFCents),
    vTrocoCents: Number(facts.vTrocoCents),
    payments: facts.payments.map((p) => [p.tPag, Number(p.vPagCents)]),
    items: facts.items.map((i) => [i.cProd, i.xProd, i.uCom, Number(parseDecimal(i.qCom.replace(/(\.\d{4})\d+$/, '$1'), 4, 'qCom')), Number(i.valueCents)]),
  };
}

/**
 * The receipt's share, given its authorized XML (nfeProc) when the terminal has it. Never
 * throws: an XML that cannot be read leaves the share pending, and the report says why when it
 * reads it again (a receipt's state change must not fail for the report's sake).
 */
export function reportShareOf(r: ShareInput, nfeProc: () => string | undefined): ReportShare {
  let bucket: 'sale' | 'cancelled';
  let xml: string | undefined;
  if (WITH_NFE_PROC.has(r.state)) {
    bucket = r.state === 'authorized' ? 'sale' : 'cancelled';
    // A contingency receipt's own signed XML has the same figures as its nfeProc.
    xml = nfeProc() ?? (r.tp_emis === 9 ? (r.signed_xml ?? undefined) : undefined);
    if (xml === undefined) return { bucket: 'pending' };
  } else if (r.tp_emis === 9 && r.signed_xml && AWAITING_VERDICT.has(r.state)) {
    bucket = 'sale';
    xml = r.signed_xml;
  } else {
    return { bucket: 'none' };
  }
  try {
    return { bucket, ...reportFacts(xml) };
  } catch (err) {
    if (err instanceof FieldError) return { bucket: 'pending' };
    throw err;
  }
}
