// The service's dependencies, built once per process and handed to every route plugin. Routes
// never construct their own: one store, one clock, one idempotency mechanism for all.

import { CompanyClock, type ServiceMode } from './clock.ts';
import { Companies } from './companies.ts';
import { Idempotency } from './idempotency.ts';
import type { SecretBox } from './secrets.ts';
import type { ServiceStore } from './store.ts';
import { WebhookSettings } from './webhook-settings.ts';

export type ServiceDeps = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretBox;
  clock: CompanyClock;
  idempotency: Idempotency;
  companies: Companies;
  webhooks: WebhookSettings;
};

export type DepsOptions = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretBox;
  /** Real time source (ms since epoch); the company clocks add their sandbox offsets to it. */
  realNow?: () => number;
};

export function createServiceDeps({ mode, store, secrets, realNow }: DepsOptions): ServiceDeps {
  return {
    mode,
    store,
    secrets,
    clock: new CompanyClock(store, mode, realNow),
    idempotency: new Idempotency(store),
    companies: new Companies({ store, secrets }),
    webhooks: new WebhookSettings(store, secrets),
  };
}
