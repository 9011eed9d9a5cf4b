// The webhooks' part of the service store (ServiceStore extends it): each company's webhook,
// and the outbox of events to deliver. Document stores queue an event in the same transaction
// as the state change it tells of (WebhookEvent); the delivery worker leases and records them.

export type WebhookRecord = { url: string; secretSealed: Buffer; createdAt: string; updatedAt: string };

export type WebhookEvent = {
  eventId: string;
  companyId: string;
  tipo: string;
  /** The exact JSON body to POST on every attempt. */
  payload: string;
  createdAt: Date;
};

export type WebhookDelivery = {
  eventId: string;
  companyId: string;
  tipo: string;
  payload: string;
  attempts: number;
  createdAt: string;
};

export type WebhookAttemptResult =
  | { delivered: true; at: Date }
  | { delivered: false; at: Date; error: string; nextAttemptAt: Date }
  | { delivered: false; at: Date; error: string; giveUp: true };

export interface WebhookStore {
  putWebhook(companyId: string, webhook: { url: string; secretSealed: Buffer }): Promise<void>;
  getWebhook(companyId: string): Promise<WebhookRecord | undefined>;
  /** False when there was none. */
  deleteWebhook(companyId: string): Promise<boolean>;
  /**
   * Queues an event for delivery if the company has a webhook now (false otherwise). Document
   * state changes queue theirs inside their own transaction instead (SqliteStore.enqueueWebhookInTx).
   */
  enqueueWebhookEvent(event: WebhookEvent): Promise<boolean>;
  /**
   * Takes up to `limit` deliveries due at `now`, leased so that no other worker takes them while
   * they are attempted; a worker that dies mid-delivery leaves them to be retried when the lease
   * ends (at least once). On SQLite the lease is their next attempt pushed `leaseMs` ahead; on
   * PostgreSQL they are leased to the process, as its queued documents are (pg-db.ts): held while
   * it lives, free once its lease (BALCAO_LEASE_MS) runs out or it stops.
   */
  leaseDueWebhookDeliveries(now: Date, limit: number, leaseMs: number): Promise<WebhookDelivery[]>;
  recordWebhookAttempt(eventId: string, result: WebhookAttemptResult): Promise<void>;
}
