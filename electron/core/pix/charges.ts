// The dynamic PIX charges of this checkout (docs/pix.md, "Dynamic PIX"): the cashier asks for a
// charge of part (or all) of an open sale; the row and its txid are on disk before the PSP is
// called; a loop of rounds performs what each charge needs next (charge-rules.ts decides every
// answer) — create it, read it until it is paid, expired or removed, remove it when the cashier
// gives up, refund it — and when the PSP reports it paid, the sale gets its payment line (tPag 17,
// card group tpIntegra 1, the PSP's CNPJ, the endToEndId in cAut) and, when that pays it in full,
// is finished: its NFC-e issued and printed as any sale's. A restart picks every unsettled charge
// up where it was.

import { dynamicBrCode } from '../../../base/common/pix/br-code.ts';
import { PIX_DYNAMIC } from '../../../base/common/payment-methods.ts';
import type { PixChargeView, SaleView } from '../../api/terminal-api.ts';
import { TerminalError } from '../errors.ts';
import { WakeableLoop } from '../wakeable-loop.ts';
import { DEFAULT_CHARGE_POLICY, decide, nextCall, secondPayments, secondRefund, watchAgain, type ChargeCall, type ChargePolicy } from './charge-rules.ts';
import { PspClient, type PspOutcome } from './psp-client.ts';
import type { PspSettings, PspSetup } from './psp-settings.ts';
import type { PixChargeRow, PixStore } from './pix-store.ts';
import { WebhookHints, type ReceivedLookup, type WebhookPolicy } from './webhook-hints.ts';

/** How long a charge can be paid for: the customer is at the counter. */
export const CHARGE_EXPIRY_SECONDS = 300;

export type PixChargesDeps = {
  pix: PixStore;
  psp: PspSettings;
  clock: () => number;
  sale: (saleId: string) => SaleView;
  /** The receiver's name and city for the BR Code (the company profile). */
  merchant: () => { name: string; city: string } | null;
  /** The store's PIX key (the charge's receiver). */
  pixKey: () => string | null;
  /** Adds the paid line to the sale (idempotent by cAut); finishes it when it is paid in full. */
  settle: (charge: PixChargeRow, pspCnpj: string) => Promise<void>;
  onChange: (charge: PixChargeView) => void;
  /** The PSP is a sandbox's simulator (the demo): charges say so, for its "Simular pagamento". */
  simulated?: boolean;
  policy?: ChargePolicy;
  /** Asks the issuance service what the PSP's webhook told it (webhook-hints.ts); without it, polling only. */
  received?: ReceivedLookup;
  webhookPolicy?: Partial<WebhookPolicy>;
};

export class PixCharges {
  private readonly loop: WakeableLoop;
  private client: PspClient | undefined;
  /** The configuration `client` was made with: a changed one (a new PSP, the demo's restarted simulator) gets a new client. */
  private clientConfig: string | undefined;
  /** The PSP's CNPJ of the configuration `client` was made from (the NFC-e's card group). */
  private pspCnpj: string | undefined;
  private readonly policy: ChargePolicy;
  private readonly hints: WebhookHints;

  constructor(private readonly deps: PixChargesDeps) {
    this.policy = deps.policy ?? DEFAULT_CHARGE_POLICY;
    this.hints = new WebhookHints(deps.received, deps.webhookPolicy);
    this.loop = new WakeableLoop(() => this.round(), 5_000);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.client?.close();
    this.client = undefined;
    this.clientConfig = undefined;
  }

  /** Asks the PSP for a charge of `amountCents` of the open sale; written before any call. */
  create(saleId: string, amountCents: number): PixChargeView {
    const config = this.deps.psp.config();
    if (!config)
      throw new TerminalError('configuracao_invalida', 'PIX dinâmico: nenhum PSP configurado; o gerente o informa em Configurações › PIX (PSP)', {
        field: 'pix.psp',
      });
    const key = this.deps.pixKey();
    if (!key)
      throw new TerminalError('configuracao_invalida', 'PIX dinâmico: nenhuma chave PIX configurada; o gerente a informa em Configurações › PIX (PSP)', {
        field: 'pix.key',
      });
    if (!this.deps.merchant()) throw new TerminalError('configuracao_invalida', 'PIX dinâmico: cadastre a empresa em Configurações', { field: 'company' });
    const sale = this.deps.sale(saleId);
    if (sale.state !== 'open') throw new TerminalError('estado_invalido', 'PIX dinâmico: a venda não está aberta');
    if (!Number.isSafeInteger(amountCents) || amountCents <= 0 || amountCents > sale.remainingCents)
      throw new TerminalError('pagamento_invalido', 'Valor do PIX: maior que zero e no máximo o que falta pagar', { field: 'amountCents' });
    const now = this.deps.clock();
    const row = this.deps.pix.transaction(() => {
      const pending = this.deps.pix.chargesOfSale(saleId).find((c) => c.state === 'creating' || c.state === 'active' || c.state === 'paid');
      if (pending) throw new TerminalError('estado_invalido', 'Esta venda já tem uma cobrança PIX em andamento: aguarde ou cancele-a', { field: 'saleId' });
      return this.deps.pix.insertCharge({
        saleId,
        amountCents,
        expiresAt: new Date(now + CHARGE_EXPIRY_SECONDS * 1000).toISOString(),
        at: new Date(now).toISOString(),
      });
    });
    this.loop.wake();
    return this.view(row);
  }

  /** The cashier gives up on an unpaid charge: it is removed at the PSP, unless it was paid meanwhile. */
  cancel(txid: string): PixChargeView {
    const row = this.deps.pix.transaction(() => {
      const charge = this.deps.pix.charge(txid);
      if (!charge) throw new TerminalError('nao_encontrado', 'Cobrança PIX não encontrada', { field: 'txid' });
      if (charge.state === 'creating' || charge.state === 'active') {
        this.deps.pix.update(
          txid,
          { state: 'cancelling', attempts: 0, next_try_at: new Date(this.deps.clock()).toISOString() },
          new Date(this.deps.clock()).toISOString(),
        );
      }
      return this.deps.pix.charge(txid)!;
    });
    this.loop.wake();
    return this.view(row);
  }

  /** Looks at once for a sale just undone (cancelled, voided) whose PIX goes back. */
  wake(): void {
    this.loop.wake();
  }

  private markRefunding(charge: PixChargeRow): void {
    if (charge.state === 'refunding' || charge.state === 'refunded') return;
    const at = new Date(this.deps.clock()).toISOString();
    // One refund id per charge (D + its txid, 35 characters): asked again, it is the same refund.
    this.deps.pix.update(charge.txid, { state: 'refunding', refund_id: `D${charge.txid}`, refund_state: null, attempts: 0, next_try_at: at }, at);
  }

  paidLate(): PixChargeView[] {
    return this.deps.pix.paidLate().map((c) => this.view(c));
  }

  /**
   * The manager's "Concluir venda" of a paid-late charge: it goes back to `paid`, so the loop
   * settles it as any paid charge (the line once, by its endToEndId; the sale finished when paid
   * in full). Only from `paid_late`, in one transaction: a second click finds it taken.
   */
  resume(txid: string, check: (charge: PixChargeRow) => void): PixChargeRow {
    const row = this.deps.pix.transaction(() => {
      const charge = this.latePaid(txid);
      check(charge);
      const at = new Date(this.deps.clock()).toISOString();
      this.deps.pix.update(txid, { state: 'paid', last_error: null, attempts: 0, next_try_at: at }, at);
      return this.deps.pix.charge(txid)!;
    });
    this.loop.wake();
    return row;
  }

  /** The manager's "Devolver" of a paid-late charge (refused for any other: a sale's PIX goes back by cancelling its NFC-e). */
  refundLate(txid: string): PixChargeRow {
    const row = this.deps.pix.transaction(() => {
      const charge = this.latePaid(txid);
      this.markRefunding(charge);
      return this.deps.pix.charge(txid)!;
    });
    this.loop.wake();
    return row;
  }

  private latePaid(txid: string): PixChargeRow {
    const charge = this.deps.pix.charge(txid);
    if (!charge) throw new TerminalError('nao_encontrado', 'Cobrança PIX não encontrada', { field: 'txid' });
    if (charge.state !== 'paid_late' || !charge.e2eid)
      throw new TerminalError('estado_invalido', 'Esta cobrança PIX não está mais aguardando o gerente (já concluída ou devolvida)', { field: 'txid' });
    return charge;
  }

  get(txid: string): PixChargeView {
    const charge = this.deps.pix.charge(txid);
    if (!charge) throw new TerminalError('nao_encontrado', 'Cobrança PIX não encontrada', { field: 'txid' });
    return this.view(charge);
  }

  view(c: PixChargeRow): PixChargeView {
    const merchant = this.deps.merchant();
    return {
      txid: c.txid,
      saleId: c.sale_id,
      amountCents: c.amount_cents,
      state: c.state,
      brCode: c.location && merchant ? dynamicBrCode({ location: c.location, merchantName: merchant.name, merchantCity: merchant.city }) : null,
      expiresAt: c.expires_at,
      e2eid: c.e2eid,
      paidCents: c.paid_cents,
      paidAt: c.paid_at,
      refundState: c.refund_state,
      lastError: c.last_error,
      simulated: this.deps.simulated === true,
      qrSlipPrinted: c.qr_slip_at !== null,
      secondPayments: this.deps.pix.secondPaymentsOf(c.txid).map((p) => ({
        e2eid: p.e2eid,
        paidCents: p.paid_cents,
        paidAt: p.paid_at,
        refundState: p.refund_state,
        lastError: p.last_error,
      })),
    };
  }

  /** One round: every due charge's next call; the milliseconds until the next one is due. */
  async round(): Promise<number> {
    // The secrets are opened (and a client made) only when the stored configuration changed.
    const version = this.deps.psp.storedVersion();
    if (version === null) return 60_000;
    if (version !== this.clientConfig) {
      await this.client?.close();
      this.client = undefined;
      this.clientConfig = undefined;
      let config: PspSetup | null;
      try {
        config = this.deps.psp.config();
      } catch {
        // Secrets this computer cannot open: nothing can be asked until the manager enters them again.
        return 60_000;
      }
      if (!config) return 60_000;
      this.client = new PspClient(config);
      this.pspCnpj = config.pspCnpj;
      this.clientConfig = version;
    }
    const now = () => this.deps.clock();
    // A PIX-paid sale whose receipt was cancelled (or its number voided): the money goes back.
    this.deps.pix.transaction(() => this.deps.pix.chargesOfUndoneSales().forEach((c) => this.markRefunding(c)));
    // A PIX the service's webhook heard of: its charge is read at the PSP now, once.
    for (const txid of await this.hints.seen(this.deps.pix.openCharges(), now())) {
      const at = new Date(now()).toISOString();
      this.deps.pix.update(txid, { next_try_at: at }, at);
    }
    for (const charge of this.deps.pix.dueCharges(new Date(now()).toISOString())) {
      try {
        await this.advance(charge, this.pspCnpj!);
      } catch (error) {
        const at = new Date(now()).toISOString();
        this.deps.pix.update(
          charge.txid,
          { last_error: (error as Error).message, attempts: charge.attempts + 1, next_try_at: new Date(now() + this.policy.retryCapMs).toISOString() },
          at,
        );
      }
      this.deps.onChange(this.view(this.deps.pix.charge(charge.txid)!));
    }
    await this.refundSecondPayments();
    const next = this.deps.pix.nextDue();
    const untilDue = next === undefined ? 60_000 : Math.max(0, Date.parse(next) - now());
    return Math.min(untilDue, this.hints.nextAskIn(this.deps.pix.openCharges(), now()) ?? untilDue);
  }

  /**
   * Each second PIX of a charge paid twice goes back to its payer in full: asked once (its fixed
   * refund id makes asking again the same refund), then read until the PSP ends it.
   */
  private async refundSecondPayments(): Promise<void> {
    for (const second of this.deps.pix.dueSecondPayments(new Date(this.deps.clock()).toISOString())) {
      const outcome =
        second.refund_state === null
          ? await this.client!.refund(second.e2eid, second.refund_id, second.paid_cents)
          : await this.client!.getRefund(second.e2eid, second.refund_id);
      this.deps.pix.updateSecondPayment(
        second.e2eid,
        secondRefund(second.attempts, outcome, this.deps.clock(), this.policy),
        new Date(this.deps.clock()).toISOString(),
      );
      this.deps.onChange(this.view(this.deps.pix.charge(second.txid)!));
    }
  }

  private async advance(charge: PixChargeRow, pspCnpj: string): Promise<void> {
    let call: ChargeCall | undefined = nextCall(charge);
    let current = charge;
    while (call) {
      if (call === 'finish') {
        await this.finish(current, pspCnpj);
        return;
      }
      const outcome = await this.perform(call, current);
      const now = this.deps.clock();
      // Paid twice: any PIX beyond the one the charge takes is recorded now, and refunded.
      if (call === 'read') this.deps.pix.recordSecondPayments(current.txid, secondPayments(current, outcome), new Date(now).toISOString());
      const { patch, follow } = decide(call, current, outcome, now, this.policy);
      // With a webhook at the service, an unpaid charge is read at the PSP less often (webhook-hints.ts).
      if (this.hints.webhook && (patch.state ?? current.state) === 'active' && patch.next_try_at)
        patch.next_try_at = [patch.next_try_at, this.hints.pollAt(patch.attempts ?? current.attempts, now)].sort().at(-1)!;
      this.deps.pix.update(current.txid, patch, new Date(now).toISOString());
      current = this.deps.pix.charge(current.txid)!;
      // Told as soon as it is on disk: the screen shows "paid" before the NFC-e is under way.
      if (patch.state) this.deps.onChange(this.view(current));
      call = follow ?? (current.state === 'paid' ? 'finish' : undefined);
    }
  }

  private perform(call: Exclude<ChargeCall, 'finish'>, c: PixChargeRow): Promise<PspOutcome> {
    const client = this.client!;
    switch (call) {
      case 'create': {
        const expirySeconds = Math.max(1, Math.round((Date.parse(c.expires_at) - Date.parse(c.created_at)) / 1000));
        return client.createCharge({ txid: c.txid, amountCents: c.amount_cents, key: this.deps.pixKey() ?? '', expirySeconds });
      }
      case 'read':
        return client.getCharge(c.txid);
      case 'remove':
        return client.removeCharge(c.txid);
      case 'refund':
        return client.refund(c.e2eid!, c.refund_id!, c.paid_cents!);
      case 'read-refund':
        return client.getRefund(c.e2eid!, c.refund_id!);
    }
  }

  private async finish(charge: PixChargeRow, pspCnpj: string): Promise<void> {
    const at = () => new Date(this.deps.clock()).toISOString();
    try {
      await this.deps.settle(charge, pspCnpj);
      // Still read for a while: a second PIX for the same txid is found and refunded.
      this.deps.pix.update(charge.txid, { state: 'finished', last_error: null, attempts: 0, next_try_at: watchAgain(0, this.deps.clock()) }, at());
    } catch (error) {
      // The sale cannot take it (changed, or finished otherwise meanwhile): the manager decides.
      this.deps.pix.update(charge.txid, { state: 'paid_late', last_error: `Venda não concluída com este PIX: ${(error as Error).message}` }, at());
    }
  }
}

/** The payment line a paid charge adds to its sale: tPag 17, integrated, the PSP and the endToEndId. */
export const paidChargePayment = (charge: PixChargeRow, pspCnpj: string) => ({
  tPag: PIX_DYNAMIC,
  amountCents: charge.paid_cents!,
  card: { tpIntegra: '1' as const, cnpj: pspCnpj, cAut: charge.e2eid! },
});
