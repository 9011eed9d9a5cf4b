// Each receipt's share of the report and the retention of its documents, on a real terminal
// database: the daily totals follow the receipt's state and XML in the same transaction; old
// settled receipts lose their XML and request bodies and the totals stay as they were.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixturePath } from '../../fiscal/testdata/fixtures.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { seedDemoCatalog } from './catalog.ts';
import { PosStore } from './pos-store.ts';
import { reportFacts } from './report-share.ts';
import { pruneBatch } from './retention.ts';
import * as sales from './sales.ts';

const XML = readFileSync(fixturePath('nfce_tpEmis1_qrV2_online_signed_testcert.xml'), 'utf8');
const NFE_PROC = `<nfeProc versao="4.00" xmlns="http://www.portalfiscal.inf.br/nfe">${XML.replace(/^<\?xml[^>]*>/, '')}<protNFe versao="4.00"/></nfeProc>`;
const FACTS = reportFacts(NFE_PROC);
const DAY_MS = 24 * 3600_000;

let dir: string;
let store: PosStore;
const clock: Clock = () => Date.parse('2026-11-22T15:00:00.000Z');
const at = iso(clock());

function receipt(when: Clock = clock): string {
  const ctx = { store, clock: when, serie: 1 };
  const sale = sales.openSale(ctx);
  sales.addItem(ctx, sale.id, { code: '1002' });
  sales.addPayment(ctx, sale.id, { tPag: '01', amountCents: 5000 });
  return sales.finishSale(ctx, sale.id).receipt.id;
}

/** Authorized by the service, its emit command done, its XML fetched. */
function settle(id: string, withXml = true): void {
  store.transaction(() => {
    store.receipts.updateReceipt(id, { state: 'authorized', service_id: `svc-${id}` }, at);
    for (const o of store.outbox.outboxOf(id)) store.outbox.updateOutbox(o.seq, { state: 'done', completed_at: at }, at);
    if (withXml) store.receipts.putReceiptXml(id, NFE_PROC, at);
  });
}

const totals = () => store.report.reportTotals(FACTS.day, FACTS.day);
const bucket = (id: string) => store.db.prepare('SELECT bucket FROM report_receipts WHERE receipt_id = ?').pluck().get(id);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'balcao-retention-'));
  store = PosStore.open(dir);
  store.series.ensureSeries(1);
  seedDemoCatalog(store, at);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a receipt's share of the report", () => {
  it('counts once authorized with its XML, leaves the totals when cancelled, and is read later when the XML comes later', () => {
    const id = receipt();
    expect(bucket(id)).toBe('none');
    store.transaction(() => store.receipts.updateReceipt(id, { state: 'authorized', service_id: 'svc' }, at));
    expect(bucket(id)).toBe('pending'); // the report fetches the XML first
    expect(totals()).toEqual({ count: 0, total_cents: 0, change_cents: 0 });

    store.transaction(() => store.receipts.putReceiptXml(id, NFE_PROC, at));
    expect(bucket(id)).toBe('sale');
    expect(totals()).toEqual({ count: 1, total_cents: FACTS.vNFCents, change_cents: FACTS.vTrocoCents });
    expect(store.report.reportProducts(FACTS.day, FACTS.day).map((p) => [p.code, p.total_cents])).toEqual(FACTS.items.map((i) => [i[0], i[4]]));
    store.transaction(() => store.receipts.putReceiptXml(id, NFE_PROC, at)); // the same XML again: nothing moves
    expect(totals().count).toBe(1);

    store.transaction(() => store.receipts.updateReceipt(id, { state: 'cancelled' }, at));
    expect(totals()).toEqual({ count: 0, total_cents: 0, change_cents: 0 });
    expect(store.report.reportProducts(FACTS.day, FACTS.day)).toEqual([]);
    expect(store.report.reportListed(FACTS.day, FACTS.day).map((r) => [r.receipt_id, r.bucket, r.vnf_cents])).toEqual([[id, 'cancelled', FACTS.vNFCents]]);
  });
});

describe('retention', () => {
  it('lets go of the documents of settled receipts older than the period, keeps the rest and every total', () => {
    const old = receipt();
    const voided = receipt();
    store.transaction(() => {
      store.receipts.updateReceipt(voided, { state: 'voided' }, at);
      for (const o of store.outbox.outboxOf(voided)) store.outbox.updateOutbox(o.seq, { state: 'failed', completed_at: at }, at); // superseded by the void
    });
    const awaiting = receipt(); // still waiting for the service: keeps everything
    const recent = receipt(() => clock() + 80 * DAY_MS);
    settle(old);
    settle(recent);
    const before = totals();
    expect(before.count).toBe(2);

    const later: Clock = () => clock() + 91 * DAY_MS;
    expect(pruneBatch(store, later, { days: 90 })).toEqual({ seen: 3, pruned: 2 });
    expect(store.receipts.receiptXml(old)).toBeUndefined();
    expect(store.receipts.receipt(old)!.request_json).toBe('');
    expect(store.outbox.outboxOf(old).map((o) => o.payload)).toEqual(['']);
    expect(store.receipts.receipt(voided)!.request_json).toBe('');
    expect(store.receipts.receipt(awaiting)!.request_json).not.toBe('');
    expect(store.outbox.outboxOf(awaiting)[0]!.payload).not.toBe('');
    expect(store.receipts.receiptXml(recent)).toBe(NFE_PROC);
    expect(totals()).toEqual(before);

    // Where it stopped is remembered: the next batch starts after the receipts seen.
    expect(pruneBatch(store, later, { days: 90 })).toEqual({ seen: 0, pruned: 0 });
    // Its XML fetched again for a reprint: kept for the reprint, and the totals do not move.
    store.transaction(() => store.receipts.putReceiptXml(old, NFE_PROC, at));
    expect(totals()).toEqual(before);
    // A shorter period reaches the recent one.
    expect(pruneBatch(store, later, { days: 7 })).toEqual({ seen: 1, pruned: 1 });
    expect(store.receipts.receiptXml(recent)).toBeUndefined();
    expect(totals()).toEqual(before);
  });
});
