// What the issuance service heard from the store's PSP (docs/pix.md, "The webhook"): the PSP
// posts each PIX received to the service's receiver, and the terminal asks the service, one cheap
// GET per open charge (`GET /api/v1/pix/recebidos?txid=`), between its reads at the PSP. A PIX
// the service has seen makes the charge due at once, so the loop's next round reads it — ONE read
// at the PSP, which stays the source of truth: the webhook is a hint, never the payment itself.
//
// With a webhook configured at the service the PSP is read less often (`pollFirstMs` growing to
// `pollCapMs`, against 0.5 s to 5 s without one); without it (or with the service away) nothing
// changes but one question to the service every `askWithoutWebhookMs`, to learn of a webhook
// configured later.

import { iso } from '../../../base/common/clock.ts';
import { growingDelayMs } from './charge-rules.ts';
import type { PixChargeRow } from './pix-store.ts';

/** The service's answer for a txid: whether the company has a webhook, and the PIX it received. */
export type ReceivedLookup = (txid: string) => Promise<{ webhook: boolean; endToEndIds: string[] }>;

export type WebhookPolicy = {
  /** How often an open charge's txid is asked of the service while it has a webhook. */
  askMs: number;
  /** How often it is asked while the service has none (or did not answer). */
  askWithoutWebhookMs: number;
  /** Reading an active charge at the PSP while the service has a webhook: first look and cap. */
  pollFirstMs: number;
  pollCapMs: number;
};

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = { askMs: 300, askWithoutWebhookMs: 30_000, pollFirstMs: 5_000, pollCapMs: 60_000 };

const ASKED: readonly PixChargeRow['state'][] = ['creating', 'active'];

export class WebhookHints {
  #webhook = false;
  readonly #askedAt = new Map<string, number>();
  /** How many of each txid's PIX already made it due: a PIX seen makes one PSP read, not one per question. */
  readonly #told = new Map<string, number>();
  readonly policy: WebhookPolicy;

  constructor(
    private readonly lookup: ReceivedLookup | undefined,
    policy: Partial<WebhookPolicy> = {},
  ) {
    this.policy = { ...DEFAULT_WEBHOOK_POLICY, ...policy };
  }

  /** Whether the service said, at its last answer, that a webhook is configured. */
  get webhook(): boolean {
    return this.#webhook;
  }

  private interval(): number {
    return this.#webhook ? this.policy.askMs : this.policy.askWithoutWebhookMs;
  }

  /** The txids among `charges` (open ones are asked, when their turn came) whose PIX the service has seen. */
  async seen(charges: readonly PixChargeRow[], now: number): Promise<string[]> {
    if (!this.lookup) return [];
    const open = charges.filter((c) => ASKED.includes(c.state));
    for (const txid of this.#askedAt.keys()) {
      if (open.some((c) => c.txid === txid)) continue;
      this.#askedAt.delete(txid);
      this.#told.delete(txid);
    }
    const seen: string[] = [];
    for (const charge of open) {
      const asked = this.#askedAt.get(charge.txid);
      if (asked !== undefined && now - asked < this.interval()) continue;
      this.#askedAt.set(charge.txid, now);
      try {
        const answer = await this.lookup(charge.txid);
        this.#webhook = answer.webhook;
        if (charge.state === 'active' && answer.endToEndIds.length > (this.#told.get(charge.txid) ?? 0)) {
          this.#told.set(charge.txid, answer.endToEndIds.length);
          seen.push(charge.txid);
        }
      } catch {
        // The service away (or too old to know the route): the PSP's polling, as without a webhook.
        this.#webhook = false;
      }
    }
    return seen;
  }

  /** Milliseconds until an open charge is to be asked again; undefined when none is open. */
  nextAskIn(charges: readonly PixChargeRow[], now: number): number | undefined {
    if (!this.lookup) return undefined;
    const due = charges.filter((c) => ASKED.includes(c.state)).map((c) => (this.#askedAt.get(c.txid) ?? now) + this.interval() - now);
    return due.length ? Math.max(0, Math.min(...due)) : undefined;
  }

  /** When an active charge is read at the PSP next, `attempts` reads in, with a webhook at the service. */
  pollAt(attempts: number, now: number): string {
    return iso(now + growingDelayMs(attempts, this.policy.pollFirstMs, this.policy.pollCapMs));
  }
}
