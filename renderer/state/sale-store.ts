// The sale on the counter and the last finished one. Thin: every action asks the core and shows
// the SaleView it answers; totals, change and what is left to pay are the core's.

import { create } from 'zustand';
import type { FinishedSale, PaymentInput, PixChargeView, ReceiptView, SaleItemView, SaleView, StaticPixView } from '../../electron/api/terminal-api.ts';
import { announce } from '../a11y/announcer.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { tillFoundClosed } from './cash-store.ts';
import { receiptEvents } from './receipts-store.ts';
import { formatCents } from '../money/money.ts';
import { terminal } from './terminal.ts';
import { closeDialog, useUi } from './ui-store.ts';

type SaleState = {
  sale: SaleView | null;
  /** The last finished sale and its receipt, kept live by receipt events. */
  finished: FinishedSale | null;
  /** Selected line of the items list (keyboard Delete removes it). */
  selectedItemId: number | null;
  error: TerminalFailure | null;
  busy: boolean;
  /** The dynamic PIX charge on screen, kept live by `pix` events. */
  pixCharge: PixChargeView | null;
};

export const useSale = create<SaleState>(() => ({ sale: null, finished: null, selectedItemId: null, error: null, busy: false, pixCharge: null }));

const set = useSale.setState;

/** Runs one core call with the busy flag; failures land in `error` (and are returned). */
async function run<T>(work: () => Promise<T>): Promise<T | TerminalFailure> {
  set({ busy: true, error: null });
  try {
    return await work();
  } catch (err) {
    const failure = asFailure(err);
    set({ error: failure });
    return failure;
  } finally {
    set({ busy: false });
  }
}

const isFailure = <T>(r: T | TerminalFailure): r is TerminalFailure => r instanceof Error;

/** The sale left open before a reload or restart, if any; else none until the first item. */
export async function resumeSale(): Promise<void> {
  const r = await run(() => terminal().openSales());
  if (!isFailure(r)) set({ sale: r[0] ?? null });
}

async function currentOrNewSale(): Promise<SaleView> {
  const { sale } = useSale.getState();
  if (sale && sale.state === 'open') return sale;
  const opened = await terminal().openSale();
  set({ sale: opened, finished: null });
  return opened;
}

// A scanner sends the next code before the core answered the last one: the adds run one after
// another, in scan order, so none is lost and no second sale is opened by a race.
let addChain: Promise<unknown> = Promise.resolve();

export function addItem(code: string, quantity: string | null): Promise<boolean> {
  const next = addChain.then(async () => {
    const r = await run(async () => {
      const sale = await currentOrNewSale();
      return terminal().addItem(sale.id, quantity ? { code, quantity } : { code });
    });
    if (isFailure(r)) return false;
    const added = r.items.at(-1);
    set({ sale: r, finished: null, selectedItemId: added?.id ?? null });
    return true;
  });
  addChain = next;
  return next;
}

export async function removeItem(itemId: number): Promise<void> {
  const { sale } = useSale.getState();
  if (!sale) return;
  const r = await run(() => terminal().removeItem(sale.id, itemId));
  if (!isFailure(r)) set({ sale: r });
}

/** The selected line's quantity changed (the core strikes the line and adds it again): the new line is selected. */
export async function changeItemQuantity(itemId: number, quantity: string): Promise<TerminalFailure | null> {
  const { sale } = useSale.getState();
  if (!sale) return null;
  const r = await run(() => terminal().changeItemQuantity(sale.id, itemId, quantity));
  if (isFailure(r)) return r;
  set({ sale: r, selectedItemId: r.items.at(-1)?.id ?? null });
  return null;
}

/** The selected line, when it still counts (a removed line cannot be changed). */
export function selectedLine(): SaleItemView | null {
  const { sale, selectedItemId } = useSale.getState();
  return sale?.items.find((i) => i.id === selectedItemId && !i.removed) ?? null;
}

export function selectItem(itemId: number | null): void {
  set({ selectedItemId: itemId });
}

/** Moves the selection among the lines still counting (removed ones are skipped). */
export function moveSelection(step: 1 | -1): void {
  const { sale, selectedItemId } = useSale.getState();
  const live = sale?.items.filter((i) => !i.removed) ?? [];
  if (!live.length) return;
  const at = live.findIndex((i) => i.id === selectedItemId);
  const next = at < 0 ? (step > 0 ? 0 : live.length - 1) : Math.max(0, Math.min(live.length - 1, at + step));
  set({ selectedItemId: live[next]!.id });
}

export async function setConsumer(document: string | null): Promise<TerminalFailure | null> {
  const r = await run(async () => terminal().setConsumer((await currentOrNewSale()).id, document));
  if (isFailure(r)) return r;
  set({ sale: r });
  return null;
}

export async function addPayment(payment: PaymentInput): Promise<TerminalFailure | null> {
  const { sale } = useSale.getState();
  if (!sale) return null;
  const r = await run(() => terminal().addPayment(sale.id, payment));
  if (isFailure(r)) return r;
  set({ sale: r });
  return null;
}

/** The static PIX BR Code for part of the open sale (the cashier confirms the payment by hand). */
export async function staticPix(amountCents: number): Promise<StaticPixView | TerminalFailure> {
  const { sale } = useSale.getState();
  if (!sale) return asFailure(new Error('Nenhuma venda aberta'));
  return run(() => terminal().staticPix(sale.id, amountCents));
}

/** A dynamic PIX charge at the store's PSP for part of the open sale; the core follows it. */
export async function createPixCharge(amountCents: number): Promise<TerminalFailure | null> {
  const { sale } = useSale.getState();
  if (!sale) return null;
  const r = await run(() => terminal().createPixCharge(sale.id, amountCents));
  if (isFailure(r)) return r;
  pixChargeShown(r);
  return null;
}

/** "Cancelar cobrança": the cashier gives up on the unpaid charge. */
export async function cancelPixCharge(): Promise<TerminalFailure | null> {
  const { pixCharge } = useSale.getState();
  if (!pixCharge) return null;
  const r = await run(() => terminal().cancelPixCharge(pixCharge.txid));
  if (isFailure(r)) return r;
  pixChargeChanged(r);
  return null;
}

/** The demo's "Simular pagamento": the simulated PSP pays the charge; its events do the rest. */
export async function simulatePixPayment(): Promise<TerminalFailure | null> {
  const { pixCharge } = useSale.getState();
  if (!pixCharge) return null;
  const r = await run(() => terminal().simulatePixPayment(pixCharge.txid));
  return isFailure(r) ? r : null;
}

/** Back to the payment form after a charge that did not pay the sale. */
export function closePixCharge(): void {
  set({ pixCharge: null });
}

function pixChargeShown(charge: PixChargeView): void {
  set({ pixCharge: charge });
  // Paid before its answer came (the events got here first): settle it now.
  if (charge.state === 'finished') void pixSettled(charge);
}

/** A `pix` event: the charge on screen follows it; once its payment is on the sale, the sale too. */
export function pixChargeChanged(charge: PixChargeView): void {
  const shown = useSale.getState().pixCharge;
  if (!shown || shown.txid !== charge.txid || shown.state === 'finished') return;
  pixChargeShown(charge);
}

/**
 * The charge's PIX is on the sale (the core added the line, and finished the sale when that paid
 * it in full): the screen shows the sale as the core has it — still open, or its receipt.
 */
async function pixSettled(charge: PixChargeView): Promise<void> {
  announce({ text: `Pagamento PIX confirmado pelo banco: ${formatCents(charge.paidCents ?? charge.amountCents)}`, politeness: 'polite' });
  try {
    const sale = await terminal().getSale(charge.saleId);
    if (sale.state === 'open') {
      set({ sale, pixCharge: null });
      return;
    }
    await receiptEvents.fetch(
      () => terminal().recentReceipts(20),
      (receipts) => {
        const receipt = receipts.find((r) => r.saleId === sale.id);
        set({ sale: null, pixCharge: null, selectedItemId: null, ...(receipt && { finished: { sale, receipt } }) });
      },
      receiptChanged,
    );
    // The payment dialog gives way to the receipt; another dialog the cashier opened meanwhile stays.
    if (useUi.getState().dialog.kind === 'payment') closeDialog();
  } catch (err) {
    set({ error: asFailure(err) });
  }
}

export async function removePayment(paymentId: number): Promise<void> {
  const { sale } = useSale.getState();
  if (!sale) return;
  const r = await run(() => terminal().removePayment(sale.id, paymentId));
  if (!isFailure(r)) set({ sale: r });
}

export async function discardSale(): Promise<void> {
  const { sale } = useSale.getState();
  if (!sale) return;
  const r = await run(() => terminal().discardSale(sale.id));
  if (!isFailure(r)) set({ sale: null, selectedItemId: null });
}

export async function finishSale(): Promise<FinishedSale | TerminalFailure | null> {
  const { sale } = useSale.getState();
  if (!sale) return null;
  const r = await run(() =>
    // The new receipt's events can overtake this answer: they are applied again after it.
    receiptEvents.fetch(
      () => terminal().finishSale(sale.id),
      (answer) => set({ sale: null, finished: answer, selectedItemId: null }),
      receiptChanged,
    ),
  );
  // Closed elsewhere (another window, after a restart): the counter gives way to opening it.
  if (isFailure(r) && r.code === 'caixa_fechado') tillFoundClosed();
  return isFailure(r) ? r : useSale.getState().finished;
}

// Keys typed on the receipt panel (the next customer's first scan) that the product input,
// mounting again, starts with.
let prefill = '';

/** Back to an empty counter after a finished sale; `typed` is what the cashier already typed. */
export function newSale(typed = ''): void {
  prefill = typed;
  set({ finished: null, error: null });
}

export function takePrefill(): string {
  const t = prefill;
  prefill = '';
  return t;
}

export function clearSaleError(): void {
  set({ error: null });
}

/** A receipt event: the finished sale's receipt follows it. */
export function receiptChanged(receipt: ReceiptView): void {
  const { finished } = useSale.getState();
  if (finished && finished.receipt.id === receipt.id) set({ finished: { ...finished, receipt } });
}
