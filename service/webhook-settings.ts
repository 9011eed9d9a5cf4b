// A company's webhook: where NFC-e outcomes are POSTed and the secret that signs them
// (docs/api.md, "Webhooks"). The secret is shown to the company (GET) but sealed at rest like
// every other credential.

import { randomBytes } from 'node:crypto';
import { ApiError } from './http/errors.ts';
import { openText, secretContext, type SecretSealer } from './secrets.ts';
import { ANY_DESTINATION, urlRefusal, type DestinationPolicy, type Lookup } from './webhooks/destinations.ts';
import type { WebhookStore } from './webhooks/store.ts';

export type WebhookView = { url: string; segredo: string };

/** 32 random bytes, base64url: what a company gets when it does not choose its own secret. */
export const generateWebhookSecret = (): string => randomBytes(32).toString('base64url');

export class WebhookSettings {
  constructor(
    private readonly store: WebhookStore,
    private readonly secrets: SecretSealer,
    /** Where a webhook may point (webhooks/destinations.ts), and how names are resolved for it. */
    private readonly destinations: DestinationPolicy = ANY_DESTINATION,
    private readonly lookup?: Lookup,
  ) {}

  /** Sets the webhook; a destination the operator does not allow is a 422 naming `url`. */
  async put(companyId: string, input: { url: string; segredo?: string }): Promise<WebhookView> {
    const refused = await urlRefusal(this.destinations, input.url, this.lookup);
    if (refused) {
      throw new ApiError('validacao', 'Destino do webhook não permitido neste serviço.', { details: [{ field: 'url', message: refused }] });
    }
    const segredo = input.segredo ?? generateWebhookSecret();
    await this.store.putWebhook(companyId, {
      url: input.url,
      secretSealed: this.secrets.seal(segredo, secretContext.webhookSecret(companyId)),
    });
    return { url: input.url, segredo };
  }

  async get(companyId: string): Promise<WebhookView | undefined> {
    const record = await this.store.getWebhook(companyId);
    if (!record) return undefined;
    return { url: record.url, segredo: openText(this.secrets, record.secretSealed, secretContext.webhookSecret(companyId)) };
  }

  remove(companyId: string): Promise<boolean> {
    return this.store.deleteWebhook(companyId);
  }
}
