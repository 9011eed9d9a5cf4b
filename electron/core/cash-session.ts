// The till (caixa): a cash session opened with the float the cashier counted, the sangrias
// (money taken out) and suprimentos (money put in) made while it is open, and its closing with
// the cashier's count per payment method against what the sales say. A sale cannot finish
// without an open session (sales.ts asks `requireOpenSession` inside the finishing transaction).
//
// Every movement is written like a sale: one IMMEDIATE transaction with its audit row, fsynced
// before the call returns. Money is integer cents.
//
// What the sales say, decided here:
// - A sale counts in the session it finished in, whatever its receipt's fate with the authority
//   (awaiting, authorized, issued in contingency, rejected and waiting for a correction): the
//   customer paid at the counter.
// - A cancelled sale (cancelling or cancelled) and a voided one (its number voided, the sale
//   abandoned) do not: their money went back to the customer, so they leave the expected amounts.
//   Only those cancelled before the closing: the closing is kept as it was computed and printed
//   (cash_sessions.closing_json), and a later cancellation of a sale of a closed session is
//   handed back from the open drawer as a sangria with its reason, recorded by the terminal in
//   the transaction that asks for the cancellation (settleRefund; with the till closed, at the
//   next opening). Only the cash the sale kept (cash paid − change): a card or PIX payment is
//   reversed by its acquirer, not from the drawer. A refusal of that cancellation brings the
//   money back in as a suprimento, as it puts an open session's sale back in its figures.
// - A return (NF-e de devolução) is not money the terminal handles: a cash refund is a sangria.
// - Cash expected = float + cash received − change given − sangrias + suprimentos; every other
//   method expected = what the payments of that method say.
// - The count is blind: the screen asks for the amounts before it shows the expected ones.

import { randomUUID } from 'node:crypto';
import { formatDateTimeBR } from '../../fiscal/danfe/model.ts';
import { formatBRL } from '../../fiscal/money.ts';
import type { ReportDocument, ReportLine } from '../../fiscal/report/report.ts';
import { reportTexts } from '../../fiscal/report/report.ts';
import type { CashClosingView, CashMovementInput, CashMovementView, CashSessionView, CloseCashInput, OpenCashInput } from '../api/terminal-api.ts';
import { TerminalError } from './errors.ts';
import { actorOfManager, audit, authorizeManager, SYSTEM_ACTOR, type Actor } from './managers.ts';
import type { PosStore } from './pos-store.ts';
import type { CashMovementKind, CashSessionRow, OwedCashMovementRow } from './store/cash-sessions.ts';
import type { ManagerRow } from './store/managers-audit.ts';
import type { ReceiptState } from './store/receipts.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { paymentMethod, paymentMethodLabel, PIX_DYNAMIC } from '../../base/common/payment-methods.ts';
import { PixStore } from './pix/pix-store.ts';
import { formatCnpj } from '../../base/common/tax-ids.ts';

export const CASH = '01';

/** Receipt states whose sale's money went back (or never stayed): out of the expected amounts. */
const RETURNED: readonly ReceiptState[] = ['cancelling', 'cancelled', 'voiding', 'voided'];
const UNAUTHORIZED: readonly ReceiptState[] = ['pending', 'processing', 'rejected', 'needs_attention'];

export type CashContext = {
  store: PosStore;
  clock: Clock;
  /** Sangria and suprimento above this need the manager's PIN. */
  pinAboveCents: () => number;
};

/** The closing as computed and kept (closing_json). */
export type CashClosing = Omit<CashClosingView, 'report' | 'printed' | 'printError'>;

const brl = (cents: number): string => `${cents < 0 ? '-' : ''}R$ ${formatBRL(BigInt(Math.abs(cents)))}`;
const signed = (cents: number): string => (cents > 0 ? `+${brl(cents)}` : brl(cents));

function cents(value: unknown, field: string, what: string, allowZero: boolean): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || (!allowZero && value === 0)) {
    throw new TerminalError('pagamento_invalido', `${what}: valor em centavos ${allowZero ? 'maior ou igual a zero' : 'maior que zero'}`, { field });
  }
  return value;
}

function personName(value: unknown, field: string, what: string): string {
  const name = typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '';
  if (name.length < 1 || name.length > 80) throw new TerminalError('estado_invalido', `${what}: de 1 a 80 caracteres`, { field });
  return name;
}

/** The open session, or the cashier's error: nothing is sold, withdrawn or counted without one. */
export function requireOpenSession(store: PosStore): CashSessionRow {
  const open = store.cash.openCashSession();
  if (!open) throw new TerminalError('caixa_fechado', 'Caixa fechado: abra o caixa, informando o troco inicial, antes de vender');
  return open;
}

const operatorActor = (session: CashSessionRow, name = session.opened_by): Actor => ({ kind: 'operator', id: `caixa-${session.number}`, name });

// =============================================================================================
// Figures

type Figures = {
  payments: Map<string, number>;
  changeCents: number;
  sangriasCents: number;
  suprimentosCents: number;
  expectedCashCents: number;
  sales: CashClosing['sales'];
};

function figuresOf(store: PosStore, session: CashSessionRow): Figures {
  const sales = store.cash.cashSessionSales(session.id);
  const counted = sales.filter((s) => !RETURNED.includes(s.receipt_state));
  const returned = sales.filter((s) => s.receipt_state === 'cancelling' || s.receipt_state === 'cancelled');
  const payments = new Map(store.cash.cashSessionPayments(session.id, RETURNED).map((p) => [p.tpag, p.amount_cents]));
  const changeCents = counted.reduce((t, s) => t + s.change_cents, 0);
  let sangriasCents = 0;
  let suprimentosCents = 0;
  for (const m of store.cash.cashMovements(session.id)) {
    if (m.kind === 'sangria') sangriasCents += m.amount_cents;
    else suprimentosCents += m.amount_cents;
  }
  return {
    payments,
    changeCents,
    sangriasCents,
    suprimentosCents,
    expectedCashCents: session.float_cents + (payments.get(CASH) ?? 0) - changeCents - sangriasCents + suprimentosCents,
    sales: {
      count: counted.length,
      totalCents: counted.reduce((t, s) => t + s.total_cents, 0),
      contingencyCount: counted.filter((s) => s.tp_emis === 9).length,
      unauthorizedCount: counted.filter((s) => UNAUTHORIZED.includes(s.receipt_state)).length,
      cancelledCount: returned.length,
      cancelledCents: returned.reduce((t, s) => t + s.total_cents, 0),
    },
  };
}

/**
 * Dynamic PIX by what the PSP confirmed (pix_charges: received minus refunded), next to the tPag 17
 * of the receipts, with the difference in words: more at the PSP is a PIX no sale took (the
 * manager's list) or a refund still under way; more on the receipts is a tPag 17 the PSP never
 * confirmed (typed by hand, or a charge still unsettled).
 */
function dynamicPixOf(store: PosStore, session: CashSessionRow, receiptsCents: number): NonNullable<CashClosing['dynamicPix']> {
  const { confirmedCents, refundedCents } = new PixStore(store).confirmedInSession(session.id, session.opened_at);
  const netCents = confirmedCents - refundedCents;
  const differenceCents = netCents - receiptsCents;
  const words =
    differenceCents === 0
      ? 'PIX dinâmico confere: o banco confirmou o que as NFC-e dizem.'
      : differenceCents > 0
        ? `O banco confirmou ${brl(differenceCents)} a mais em PIX dinâmico do que as NFC-e dizem: há PIX pago sem venda (Gerente › PIX pagos sem venda) ou devolução ainda não confirmada.`
        : `As NFC-e dizem ${brl(-differenceCents)} a mais em PIX dinâmico do que o banco confirmou: pagamento PIX lançado sem confirmação do banco; confira o extrato do PSP.`;
  return { confirmedCents, refundedCents, netCents, receiptsCents, differenceCents, words };
}

/** Cash first, then every other method the sales used, by tPag. */
function countMethodsOf(figures: Figures): string[] {
  return [CASH, ...[...figures.payments.keys()].filter((t) => t !== CASH).sort()];
}

// =============================================================================================
// Views

function movementView(m: ReturnType<PosStore['cash']['cashMovements']>[number]): CashMovementView {
  return { id: m.id, kind: m.kind, amountCents: m.amount_cents, reason: m.reason, at: m.at, authorizedBy: m.manager_name };
}

export function cashSessionView(store: PosStore, session: CashSessionRow, pinAboveCents: number, company?: ReportCompany): CashSessionView {
  const closing = session.closing_json ? (JSON.parse(session.closing_json) as CashClosing) : null;
  const movements = store.cash.cashMovements(session.id).map(movementView);
  return {
    id: session.id,
    number: session.number,
    state: session.closed_at ? 'closed' : 'open',
    openedAt: session.opened_at,
    openedBy: session.opened_by,
    floatCents: session.float_cents,
    movements,
    countMethods: (closing ? closing.methods.map((m) => m.tPag) : countMethodsOf(figuresOf(store, session))).map((tPag) => ({
      tPag,
      description: paymentMethodLabel(tPag),
    })),
    pinAboveCents,
    closing: closing && {
      ...closing,
      report: reportTexts(closingReport(session, closing, movements, company)),
      printed: session.report_printed_at !== null,
      printError: session.report_print_error,
    },
  };
}

// =============================================================================================
// Operations

/** Opens a session with the float; what the drawer owes since the last closing (refunds) is recorded in it at once. */
export function openCashSession(ctx: CashContext, input: OpenCashInput): CashSessionRow {
  const floatCents = cents(input?.floatCents, 'floatCents', 'Troco inicial', true);
  const operator = personName(input?.operator, 'operator', 'Nome do operador(a)');
  return ctx.store.transaction(() => {
    const open = ctx.store.cash.openCashSession();
    if (open) throw new TerminalError('estado_invalido', `O caixa já está aberto (nº ${open.number}, por ${open.opened_by})`);
    const session = {
      id: randomUUID(),
      number: ctx.store.cash.nextCashSessionNumber(),
      opened_at: iso(ctx.clock()),
      opened_by: operator,
      float_cents: floatCents,
    };
    ctx.store.cash.insertCashSession(session);
    const row = ctx.store.cash.cashSession(session.id)!;
    audit(ctx.store, ctx.clock, { actor: operatorActor(row), action: 'caixa_aberto', details: { caixa: row.number, trocoInicialCentavos: floatCents } });
    for (const owed of ctx.store.cash.owedCashMovements()) {
      recordTerminalMovement(ctx.store, ctx.clock, row, owed);
      ctx.store.cash.deleteOwedCashMovement(owed.receipt_id);
    }
    return row;
  });
}

/**
 * A sangria or a suprimento in the open session. Above the configured amount the manager's PIN
 * is checked first (a wrong one is audited by authorizeManager); a sangria larger than the cash
 * the drawer should hold is refused.
 */
export async function addCashMovement(ctx: CashContext, input: CashMovementInput): Promise<CashSessionRow> {
  const kind = input?.kind;
  if (kind !== 'sangria' && kind !== 'suprimento') throw new TerminalError('estado_invalido', 'Movimento deve ser sangria ou suprimento', { field: 'kind' });
  const what = kind === 'sangria' ? 'Valor da sangria' : 'Valor do suprimento';
  const amountCents = cents(input.amountCents, 'amountCents', what, false);
  const reason = typeof input.reason === 'string' ? input.reason.trim().replace(/\s+/g, ' ') : '';
  if (reason.length < 3 || reason.length > 255)
    throw new TerminalError('justificativa_invalida', 'Informe o motivo (de 3 a 255 caracteres)', { field: 'reason' });
  const session = requireOpenSession(ctx.store);
  const limit = ctx.pinAboveCents();
  let manager: ManagerRow | undefined;
  if (amountCents > limit) {
    if (!input.managerId || !input.pin) {
      throw new TerminalError('pin_invalido', `${kind === 'sangria' ? 'Sangria' : 'Suprimento'} acima de ${brl(limit)}: informe o PIN do gerente`, {
        field: 'pin',
      });
    }
    manager = await authorizeManager(ctx.store, ctx.clock, { managerId: input.managerId, pin: input.pin }, kind);
  }
  return ctx.store.transaction(() => {
    const open = requireOpenSession(ctx.store);
    if (open.id !== session.id) throw new TerminalError('estado_invalido', 'O caixa mudou enquanto o movimento era autorizado; repita');
    if (kind === 'sangria') {
      const available = figuresOf(ctx.store, open).expectedCashCents;
      if (amountCents > available) {
        throw new TerminalError('pagamento_invalido', `A sangria (${brl(amountCents)}) é maior que o dinheiro esperado no caixa (${brl(available)})`, {
          field: 'amountCents',
        });
      }
    }
    const at = iso(ctx.clock());
    ctx.store.cash.insertCashMovement({ session_id: open.id, kind, amount_cents: amountCents, reason, manager_id: manager?.id ?? null, at });
    audit(ctx.store, ctx.clock, {
      actor: manager ? actorOfManager(manager) : operatorActor(open),
      action: kind,
      reason,
      details: { caixa: open.number, valorCentavos: amountCents, ...(manager && { operador: open.opened_by }) },
    });
    return open;
  });
}

/**
 * Closes the open session with the cashier's count: every method the closing asks for must be
 * counted (cash included); a method the sales did not use may be counted too. Refused while a
 * sale with items is open: its money is not in any figure yet.
 */
export function closeCashSession(ctx: CashContext, input: CloseCashInput): CashSessionRow {
  const operator = personName(input?.operator, 'operator', 'Nome de quem fecha o caixa');
  if (!Array.isArray(input?.counts)) throw new TerminalError('pagamento_invalido', 'Informe a contagem de cada forma de pagamento', { field: 'counts' });
  const counted = new Map<string, number>();
  input.counts.forEach((c, i) => {
    if (typeof c?.tPag !== 'string' || (paymentMethod(c.tPag)?.counter ?? 'no') === 'no') {
      throw new TerminalError('pagamento_invalido', `Forma de pagamento desconhecida: ${String(c?.tPag)}`, { field: `counts[${i}].tPag` });
    }
    if (counted.has(c.tPag)) throw new TerminalError('pagamento_invalido', `${paymentMethodLabel(c.tPag)} contado duas vezes`, { field: `counts[${i}].tPag` });
    counted.set(c.tPag, cents(c.countedCents, `counts.${c.tPag}`, `Valor contado em ${paymentMethodLabel(c.tPag)}`, true));
  });
  return ctx.store.transaction(() => {
    const session = requireOpenSession(ctx.store);
    if (ctx.store.sales.openSalesWithItems() > 0) {
      throw new TerminalError('estado_invalido', 'Há uma venda em andamento: finalize-a ou cancele-a antes de fechar o caixa');
    }
    const f = figuresOf(ctx.store, session);
    for (const tPag of countMethodsOf(f)) {
      if (!counted.has(tPag))
        throw new TerminalError('pagamento_invalido', `Informe o valor contado em ${paymentMethodLabel(tPag)}`, { field: `counts.${tPag}` });
    }
    const expectedOf = (tPag: string): number => (tPag === CASH ? f.expectedCashCents : (f.payments.get(tPag) ?? 0));
    const order = [CASH, ...[...counted.keys()].filter((t) => t !== CASH).sort()];
    const methods = order.map((tPag) => {
      const expectedCents = expectedOf(tPag);
      const countedCents = counted.get(tPag)!;
      return { tPag, description: paymentMethodLabel(tPag), expectedCents, countedCents, differenceCents: countedCents - expectedCents };
    });
    const cash = methods[0]!;
    const closedAt = iso(ctx.clock());
    const closing: CashClosing = {
      closedAt,
      closedBy: operator,
      cash: {
        floatCents: session.float_cents,
        receivedCents: f.payments.get(CASH) ?? 0,
        changeCents: f.changeCents,
        sangriasCents: f.sangriasCents,
        suprimentosCents: f.suprimentosCents,
        expectedCents: cash.expectedCents,
        countedCents: cash.countedCents,
        differenceCents: cash.differenceCents,
      },
      methods,
      differenceCents: methods.reduce((t, m) => t + m.differenceCents, 0),
      sales: f.sales,
      dynamicPix: dynamicPixOf(ctx.store, session, f.payments.get(PIX_DYNAMIC) ?? 0),
    };
    for (const m of methods)
      ctx.store.cash.insertCashCount({ session_id: session.id, tpag: m.tPag, expected_cents: m.expectedCents, counted_cents: m.countedCents });
    ctx.store.cash.closeCashSession(session.id, closedAt, operator, JSON.stringify(closing));
    audit(ctx.store, ctx.clock, {
      actor: operatorActor(session, operator),
      action: 'caixa_fechado',
      details: {
        caixa: session.number,
        diferencaCentavos: closing.differenceCents,
        formas: methods.map((m) => ({ tPag: m.tPag, esperado: m.expectedCents, contado: m.countedCents, diferenca: m.differenceCents })),
      },
    });
    return ctx.store.cash.cashSession(session.id)!;
  });
}

// =============================================================================================
// Refunds: a sale of a closed session undone after its closing

/** A movement the terminal records for a receipt, in the open session, audited as the one who authorized it. */
function recordTerminalMovement(store: PosStore, clock: Clock, session: CashSessionRow, m: Omit<OwedCashMovementRow, 'owed_at'>): void {
  store.cash.insertCashMovement({
    session_id: session.id,
    kind: m.kind,
    amount_cents: m.amount_cents,
    reason: m.reason,
    manager_id: m.manager_id,
    at: iso(clock()),
    receipt_id: m.receipt_id,
  });
  const manager = m.manager_id ? store.managers.manager(m.manager_id) : undefined;
  audit(store, clock, {
    actor: manager ? actorOfManager(manager) : SYSTEM_ACTOR,
    action: m.kind,
    receiptId: m.receipt_id,
    reason: m.reason,
    details: { caixa: session.number, valorCentavos: m.amount_cents, automatico: true },
  });
}

/**
 * Keeps the drawers in step with a receipt whose sale belongs to an already closed session:
 * call it in the transaction that moves the receipt into (or back out of) a cancellation or a
 * void. The cash the sale kept goes back to the customer from the open session's drawer (a
 * sangria) when the receipt is being cancelled or voided, and comes back in (a suprimento) when
 * that was refused; with the till closed it is owed, and recorded when the next session opens.
 * A sale of the open session needs nothing: its figures follow its receipt. `manager`: who
 * authorized the cancellation; null when the terminal records a refusal.
 */
export function settleRefund(store: PosStore, clock: Clock, receiptId: string, manager: ManagerRow | null): void {
  const facts = store.cash.saleCashFacts(receiptId);
  if (!facts || facts.session_closed_at === null) return;
  const r = store.receipts.receipt(receiptId)!;
  const owed = store.cash.owedCashMovement(receiptId);
  const owedNet = owed ? (owed.kind === 'sangria' ? owed.amount_cents : -owed.amount_cents) : 0;
  const due = (RETURNED.includes(r.state) ? Math.max(0, facts.cash_kept_cents) : 0) - store.cash.refundedCents(receiptId) - owedNet;
  if (due === 0) return;
  const what = `NFC-e nº ${r.nnf} (série ${r.serie}) do caixa nº ${facts.session_number}`;
  const reasonOf = (kind: CashMovementKind): string =>
    kind === 'sangria'
      ? `Devolução em dinheiro: ${what} ${r.state === 'voiding' || r.state === 'voided' ? 'inutilizada' : 'cancelada'} após o fechamento`
      : `Cancelamento recusado: ${what}; o valor devolvido volta ao caixa`;
  const open = store.cash.openCashSession();
  if (open) {
    const kind = due > 0 ? 'sangria' : 'suprimento';
    recordTerminalMovement(store, clock, open, {
      receipt_id: receiptId,
      kind,
      amount_cents: Math.abs(due),
      reason: reasonOf(kind),
      manager_id: manager?.id ?? null,
    });
    return;
  }
  const net = owedNet + due;
  if (net === 0) {
    store.cash.deleteOwedCashMovement(receiptId);
    return;
  }
  const kind = net > 0 ? 'sangria' : 'suprimento';
  store.cash.putOwedCashMovement({
    receipt_id: receiptId,
    kind,
    amount_cents: Math.abs(net),
    reason: reasonOf(kind),
    manager_id: manager?.id ?? null,
    owed_at: iso(clock()),
  });
}

// =============================================================================================
// The closing report (printed on the thermal printer, and as a PDF)

const when = (instant: string): string => formatDateTimeBR(instant, 'instante').slice(0, 16);

/** Who the report is of: the company's trade name and its CNPJ, printed with its mask. */
export type ReportCompany = { name: string; cnpj: string };

export function closingReport(session: CashSessionRow, closing: CashClosing, movements: readonly CashMovementView[], company?: ReportCompany): ReportDocument {
  const lines: ReportLine[] = [];
  if (company) {
    lines.push({ kind: 'text', text: company.name, align: 'center', bold: true }, { kind: 'text', text: `CNPJ ${formatCnpj(company.cnpj)}`, align: 'center' });
  }
  lines.push(
    { kind: 'text', text: `Caixa nº ${session.number}`, align: 'center', bold: true },
    { kind: 'pair', label: 'Aberto em', value: `${when(session.opened_at)} por ${session.opened_by}` },
    { kind: 'pair', label: 'Fechado em', value: `${when(closing.closedAt)} por ${closing.closedBy}` },
    { kind: 'rule' },
    { kind: 'text', text: 'VENDAS', bold: true },
    { kind: 'pair', label: `Vendas do caixa (${closing.sales.count})`, value: brl(closing.sales.totalCents) },
    { kind: 'pair', label: 'Emitidas em contingência', value: String(closing.sales.contingencyCount) },
    { kind: 'pair', label: 'Ainda sem autorização', value: String(closing.sales.unauthorizedCount) },
    { kind: 'pair', label: `Canceladas, fora do caixa (${closing.sales.cancelledCount})`, value: brl(closing.sales.cancelledCents) },
    { kind: 'rule' },
    { kind: 'text', text: 'DINHEIRO', bold: true },
    { kind: 'pair', label: 'Troco inicial', value: brl(closing.cash.floatCents) },
    { kind: 'pair', label: 'Recebido em dinheiro', value: brl(closing.cash.receivedCents) },
    { kind: 'pair', label: 'Troco dado', value: brl(-closing.cash.changeCents) },
    { kind: 'pair', label: 'Suprimentos', value: brl(closing.cash.suprimentosCents) },
    { kind: 'pair', label: 'Sangrias', value: brl(-closing.cash.sangriasCents) },
  );
  for (const m of closing.methods) {
    if (m.tPag !== CASH) lines.push({ kind: 'rule' }, { kind: 'text', text: m.description.toUpperCase(), bold: true });
    lines.push(
      { kind: 'pair', label: 'Esperado', value: brl(m.expectedCents) },
      { kind: 'pair', label: 'Contado', value: brl(m.countedCents) },
      { kind: 'pair', label: 'Diferença', value: signed(m.differenceCents), bold: true },
    );
  }
  lines.push({ kind: 'rule' }, { kind: 'pair', label: 'DIFERENÇA TOTAL', value: signed(closing.differenceCents), bold: true });
  lines.push(...dynamicPixLines(closing.dynamicPix));
  if (movements.length) {
    lines.push({ kind: 'rule' }, { kind: 'text', text: 'SANGRIAS E SUPRIMENTOS', bold: true });
    for (const m of movements) {
      lines.push({
        kind: 'pair',
        label: `${when(m.at).slice(11)} ${m.kind === 'sangria' ? 'Sangria' : 'Suprimento'}: ${m.reason}`,
        value: brl(m.kind === 'sangria' ? -m.amountCents : m.amountCents),
      });
      if (m.authorizedBy) lines.push({ kind: 'text', text: `    autorizado por ${m.authorizedBy}` });
    }
  }
  lines.push({ kind: 'rule' }, { kind: 'signature', label: `Operador(a): ${closing.closedBy}` }, { kind: 'signature', label: 'Gerente' });
  return { title: 'FECHAMENTO DE CAIXA', lines };
}

/**
 * The closing's dynamic PIX as the screen shows it (what the PSP confirmed beside what the
 * receipts say, and the difference in words), so the paper the manager signs and the PDF kept
 * carry it too. A store that took no dynamic PIX in the session gets no such block.
 */
function dynamicPixLines(pix: CashClosing['dynamicPix']): ReportLine[] {
  if (!pix || (pix.confirmedCents === 0 && pix.refundedCents === 0 && pix.receiptsCents === 0)) return [];
  return [
    { kind: 'rule' },
    { kind: 'text', text: 'PIX DINÂMICO PELO BANCO', bold: true },
    { kind: 'pair', label: 'Confirmado pelo banco', value: brl(pix.confirmedCents) },
    { kind: 'pair', label: 'Devolvido pelo banco', value: brl(-pix.refundedCents) },
    { kind: 'pair', label: 'Líquido no banco', value: brl(pix.netCents) },
    { kind: 'pair', label: 'PIX dinâmico nas NFC-e', value: brl(pix.receiptsCents) },
    { kind: 'pair', label: 'Diferença', value: signed(pix.differenceCents), bold: true },
    { kind: 'text', text: pix.words },
  ];
}

/** The report of a closed session, for printing again and for the PDF. */
export function closedSessionReport(store: PosStore, session: CashSessionRow, company?: ReportCompany): ReportDocument {
  if (!session.closing_json) throw new TerminalError('estado_invalido', 'Este caixa ainda está aberto: o relatório sai no fechamento');
  return closingReport(session, JSON.parse(session.closing_json) as CashClosing, store.cash.cashMovements(session.id).map(movementView), company);
}
