// The PIX part of the service store (ServiceStore.pix): each company's webhook secret (only its
// SHA-256) and the PIX its PSP reported through the API Pix webhook, once per endToEndId
// (docs/pix.md, "The webhook").

export type ReceivedPix = {
  endToEndId: string;
  /** The charge's txid; a PIX without one (a static QR) has none. */
  txid: string | null;
  /** Reais with two decimals, as the API Pix writes them ("12.34"). */
  valor: string;
  /** When the PSP says it was paid (RFC 3339, the PSP's own text). */
  horario: string;
  /** When the service first received it (ISO 8601, UTC). */
  receivedAt: string;
};

export interface PixStore {
  /** Sets (or replaces) the company's webhook secret; the old one stops opening the receiver at once. */
  setWebhookSecret(companyId: string, secretSha256: Buffer, at: Date): Promise<void>;
  /** The company whose secret hashes to `secretSha256`, if any. */
  companyOfWebhookSecret(secretSha256: Buffer): Promise<string | undefined>;
  /** Whether the company has a webhook secret (its PSP may be calling). */
  hasWebhookSecret(companyId: string): Promise<boolean>;
  /** Records each PIX once per company and endToEndId, in one transaction; how many were new. */
  recordReceived(companyId: string, pix: readonly Omit<ReceivedPix, 'receivedAt'>[], at: Date): Promise<number>;
  /** The company's received PIX of a txid, oldest first. */
  receivedOfTxid(companyId: string, txid: string): Promise<ReceivedPix[]>;
}
