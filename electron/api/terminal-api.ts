// The screen API of the terminal: what the checkout screen (renderer/) may ask of the terminal
// core, and the shapes it gets back. TYPES ONLY: the same interface is implemented by the core
// in-process (electron/core/terminal.ts), and later carried over Electron IPC and over the
// browser-mode host, so every value here must survive structured clone and JSON:
// - money is an integer number of cents (never a float, never a bigint: JSON has no bigint);
// - quantities are decimal strings with a dot ("1", "0.350");
// - instants are ISO 8601 strings; the service's own instants are kept as it wrote them.
// Errors are rejected promises carrying `TerminalErrorData` (code + Portuguese message).

/** Integer number of cents (R$ 12,50 = 1250). */
export type Cents = number;

export type ProductView = {
  code: string;
  /** GTIN, or "SEM GTIN". */
  gtin: string;
  description: string;
  unit: string;
  priceCents: Cents;
};

export type SaleState = 'open' | 'finished' | 'discarded';

export type SaleItemView = {
  id: number;
  code: string;
  gtin: string;
  description: string;
  unit: string;
  /** Decimal string, up to 4 places. */
  quantity: string;
  unitPriceCents: Cents;
  totalCents: Cents;
  /** Removed items stay listed (struck through) and count in no total. */
  removed: boolean;
};

/** Card group of a card (or PIX) payment (fiscal-notes 5.1). */
export type CardInput = {
  /** "1" integrated (TEF: then cnpj and cAut are required), "2" card machine not integrated. */
  tpIntegra: '1' | '2';
  /** CNPJ of the acquirer / payment institution, 14 digits. */
  cnpj?: string;
  /** Card brand code (tBand), 2 digits: "01" Visa, "02" Mastercard, ... */
  tBand?: string;
  /** Authorization code of the operation. */
  cAut?: string;
};

export type PaymentInput = {
  /** tPag: "01" dinheiro, "03" crédito, "04" débito, "17" PIX, ... */
  tPag: string;
  amountCents: Cents;
  card?: CardInput;
};

export type PaymentView = {
  id: number;
  tPag: string;
  /** "Dinheiro", "Cartão de Crédito", ... */
  description: string;
  amountCents: Cents;
  card: CardInput | null;
};

export type ConsumerView = { kind: 'cpf' | 'cnpj'; document: string };

export type SaleView = {
  id: string;
  state: SaleState;
  openedAt: string;
  finishedAt: string | null;
  items: SaleItemView[];
  payments: PaymentView[];
  consumer: ConsumerView | null;
  totalCents: Cents;
  paidCents: Cents;
  /** What is still to be paid (0 when paid). */
  remainingCents: Cents;
  /** Change to give back, in cash. */
  changeCents: Cents;
  /** The receipt, once the sale is finished. */
  receiptId: string | null;
};

/**
 * The life of a receipt at the terminal:
 * pending → processing → authorized → (cancelling → cancelled)
 *                      ↘ rejected / needs_attention → (correction) → pending … (same nNF, same key)
 *                                                   ↘ (abandoned) voiding → voided
 */
export type ReceiptState =
  | 'pending' // finished and on disk; the service has not acknowledged it yet
  | 'processing' // accepted by the service; the authority's verdict is awaited
  | 'authorized'
  | 'rejected' // rejected by the authority: correct and resubmit (same number)
  | 'needs_attention' // the service refused the request: see `attention`
  | 'cancelling'
  | 'cancelled'
  | 'voiding' // number being voided (inutilização)
  | 'voided';

export type CancellationInfo = {
  /** True while a manager may cancel it from this terminal. */
  allowed: boolean;
  /** Local instant after which this terminal refuses (window minus the safety margin). */
  deadline: string | null;
  /** Whole seconds left to cancel, 0 when over; null when not authorized. */
  secondsLeft: number | null;
  /** What to offer: cancel within the window, else the return (NF-e de devolução). */
  remedy: 'cancelar' | 'devolucao' | null;
};

export type ReceiptView = {
  id: string;
  saleId: string;
  serie: number;
  nNF: number;
  state: ReceiptState;
  totalCents: Cents;
  createdAt: string;
  chave: string | null;
  protocolo: string | null;
  /** The authority's cStat. */
  codigoStatus: string | null;
  motivo: string | null;
  /** As the service reported it. */
  autorizadoEm: string | null;
  canceladoEm: string | null;
  qrcode: string | null;
  urlConsulta: string | null;
  /** Issued in offline contingency (tpEmis 9). */
  contingency: boolean;
  /** What the operator must act on, in Portuguese; null when nothing. */
  attention: string | null;
  cancellation: CancellationInfo;
  /** Rejected or refused: the sale's payments / consumer may be corrected and resubmitted. */
  canCorrect: boolean;
  /** Rejected or refused: the number may be voided (the sale abandoned). */
  canVoid: boolean;
};

export type FinishedSale = { sale: SaleView; receipt: ReceiptView };

export type QueueStatus = {
  /** Whether the last exchange with the service got an answer; null before the first one. */
  online: boolean | null;
  lastContactAt: string | null;
  /** Last transport or service problem, in Portuguese; null after a good exchange. */
  lastError: string | null;
  /** Commands not settled yet (receipts to send or awaiting a verdict, cancellations, voids). */
  pending: number;
  oldestPendingAt: string | null;
  oldestPendingAgeSeconds: number | null;
  /** Receipts waiting for the operator (rejected or needing attention). */
  needsAttention: number;
};

export type ManagerView = { id: string; name: string };

/** A manager's authorization, typed on the screen. */
export type ManagerAuthorization = { managerId: string; pin: string };

/** Who did it and why, for the audit log. */
export type OperatorStamp = { operator: string; reason: string };

export type CancelInput = ManagerAuthorization & {
  /** 15 to 255 characters. */
  justification: string;
};

export type VoidInput = ManagerAuthorization & {
  /** 15 to 255 characters. */
  justification: string;
};

/** What a correction may change: the payments (e.g. card data for 391) and the consumer. */
export type CorrectionInput = {
  payments?: PaymentInput[];
  /** CPF or CNPJ; null removes it. */
  consumer?: string | null;
};

export type ReprintResult = {
  receipt: ReceiptView;
  /** The 80 mm receipt as ESC/POS bytes (base64), as the service renders it. */
  escposBase64: string;
};

export type TerminalEvent = { type: 'receipt'; receipt: ReceiptView } | { type: 'queue'; status: QueueStatus };

export type TerminalErrorCode =
  | 'nao_encontrado'
  | 'estado_invalido'
  | 'produto_nao_encontrado'
  | 'quantidade_invalida'
  | 'documento_invalido'
  | 'pagamento_invalido'
  | 'pagamento_insuficiente'
  | 'venda_vazia'
  | 'justificativa_invalida'
  | 'pin_invalido'
  | 'gerente_bloqueado'
  | 'prazo_expirado'
  | 'servico_indisponivel'
  | 'erro_servico';

export type TerminalErrorData = {
  code: TerminalErrorCode;
  /** Shown to the cashier / manager as is. */
  message: string;
  /** The input the message is about (e.g. "consumer", "payments[0].card.cnpj"). */
  field?: string;
  /** With `prazo_expirado`: offer the return instead. */
  remedy?: 'devolucao';
};

export interface TerminalApi {
  findProducts(query: string, limit?: number): Promise<ProductView[]>;

  openSale(): Promise<SaleView>;
  getSale(saleId: string): Promise<SaleView>;
  /** Sales left open (e.g. before a restart), oldest first. */
  openSales(): Promise<SaleView[]>;
  /** `code` is the product code or its GTIN; quantity defaults to "1". */
  addItem(saleId: string, input: { code: string; quantity?: string }): Promise<SaleView>;
  removeItem(saleId: string, itemId: number): Promise<SaleView>;
  /** CPF (11 digits) or CNPJ (14); punctuation is ignored; null removes it. */
  setConsumer(saleId: string, document: string | null): Promise<SaleView>;
  addPayment(saleId: string, payment: PaymentInput): Promise<SaleView>;
  removePayment(saleId: string, paymentId: number): Promise<SaleView>;
  discardSale(saleId: string): Promise<SaleView>;
  /**
   * Durably finishes the sale: allocates the number, writes the receipt and its outbox entry in
   * one transaction, and resolves only once that is on disk. The receipt is sent afterwards.
   */
  finishSale(saleId: string): Promise<FinishedSale>;

  recentReceipts(limit?: number): Promise<ReceiptView[]>;
  getReceipt(receiptId: string): Promise<ReceiptView>;
  /** Manager-authorized; refused here once the window (minus the safety margin) is over. */
  cancelReceipt(receiptId: string, input: CancelInput): Promise<ReceiptView>;
  /** A rejected / refused receipt: apply the correction and send it again, same number. */
  correctAndResubmit(receiptId: string, correction: CorrectionInput, stamp: OperatorStamp): Promise<ReceiptView>;
  /** A rejected / refused receipt whose sale is abandoned: void its number (inutilização). */
  voidReceipt(receiptId: string, input: VoidInput): Promise<ReceiptView>;
  reprint(receiptId: string, stamp: OperatorStamp): Promise<ReprintResult>;

  listManagers(): Promise<ManagerView[]>;
  queueStatus(): Promise<QueueStatus>;
  /** Receipt changes and queue status, as they happen. Returns the unsubscribe function. */
  subscribe(listener: (event: TerminalEvent) => void): () => void;
}
