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

/** Card group of a card (or PIX) payment (docs/fiscal.md, "Payments"). */
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
  /**
   * The total is above the limit for an unidentified consumer (NT 2026.002, R$ 10.000,00 or the
   * UF's): the sale cannot finish without the consumer's CPF or CNPJ.
   */
  consumerRequired: boolean;
  identificationLimitCents: Cents;
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

/**
 * An earlier online attempt of a receipt's sale, superseded when the sale was issued again in
 * offline contingency (electron/core/contingency/reconcile.ts): its number and key, and what
 * became of it. Checked at the service first; cancelled by substitution (110112) when it had been
 * authorized after all, else its number voided; "blocked": waiting for the manager
 * (Gerente → Contingência); "cancelled": found cancelled already.
 */
export type SupersededAttempt = {
  serie: number;
  nNF: number;
  chave: string | null;
  state: 'checking' | 'cancelling' | 'voiding' | 'blocked' | 'cancelled_by_substitution' | 'cancelled' | 'voided';
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
  /** A contingency receipt's sale was first sent online: those attempts (normally none or one). */
  superseded: SupersededAttempt[];
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
  /** Offline contingency: on, since when, deadlines, open reconciliation tasks. */
  contingency: ContingencyStatus;
  /**
   * What is wrong with this computer that a person must fix, in words that say how: its clock
   * far from the service's, the automatic backup failing, the disk full. Empty when all is well.
   */
  alerts: string[];
  /** The service's warnings for the company, in Portuguese (next year's IBS/CBS rates missing...). */
  serviceNotices: string[];
};

export type ManagerView = { id: string; name: string };

/** A manager's authorization, typed on the screen. */
export type ManagerAuthorization = { managerId: string; pin: string };

/** A manager's authorization with the reason (1 to 255 characters) the audit log keeps. */
export type ReasonedAuthorization = ManagerAuthorization & { reason: string };

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
  /** The receipt as ESC/POS bytes (base64): the job just sent to this terminal's printer. */
  escposBase64: string;
};

// ---- Returns (NF-e de devolução, model 55) ------------------------------------------------------
// After the cancellation window, goods come back through an inbound NF-e that references the
// receipt's access key (docs/api.md, "NFC-e"). Returns are manager-authorized and, like every
// command, queued in the outbox and retried with one idempotency key.

export type ReturnItemInput = {
  /** The sale item (SaleItemView.id) coming back. */
  itemId: number;
  /** Decimal string with a dot, at most what was sold minus what already came back. */
  quantity: string;
};

export type ReturnInput = ManagerAuthorization & {
  /** Default: every item, whole quantity. */
  items?: ReturnItemInput[];
  /** Why the goods came back (15 to 255 characters); printed in the NF-e's additional information. */
  reason: string;
  /**
   * The person returning the goods. Required when the receipt named no consumer; otherwise the
   * receipt's consumer is used and `name` defaults to "CONSUMIDOR".
   */
  consumer?: { document: string; name: string };
};

export type ReturnState = 'pending' | 'processing' | 'authorized' | 'rejected' | 'needs_attention';

export type ReturnView = {
  id: string;
  receiptId: string;
  state: ReturnState;
  /** Model 55 series and number, as the service allocated them; null until it answers. */
  serie: number | null;
  nNF: number | null;
  chave: string | null;
  protocolo: string | null;
  codigoStatus: string | null;
  motivo: string | null;
  totalCents: Cents;
  items: { itemId: number; description: string; quantity: string; totalCents: Cents }[];
  createdAt: string;
  autorizadoEm: string | null;
  attention: string | null;
};

// ---- Printer -----------------------------------------------------------------------------------

/** "system": a print queue of the operating system (CUPS, or a Windows print server over IPP). */
export type PrinterKind = 'virtual' | 'tcp' | 'usb' | 'serial' | 'device' | 'file' | 'system';

/** A serial printer's line, as the printer is set (its DIP switches or setup mode); 8 data bits always. */
export type SerialLineSettings = {
  baudRate: 1200 | 2400 | 4800 | 9600 | 19200 | 38400 | 57600 | 115200;
  parity: 'none' | 'even' | 'odd';
  stopBits: 1 | 2;
  /** "rtscts": the printer's busy line (hardware); "xonxoff": XOFF/XON bytes (software). */
  flowControl: 'none' | 'rtscts' | 'xonxoff';
};

export type PrinterSettings = {
  kind: PrinterKind;
  /**
   * "192.168.0.50:9100" (tcp); "04b8:0e15" (usb: vendor:product, or null for the first USB
   * printer found); "/dev/ttyUSB0" or "COM3" (serial); "/dev/usb/lp0" (device); a file path
   * (file); a queue name of this computer's CUPS ("TM-T20") or the queue's ipp://, ipps://,
   * http:// or https:// URI (system); null for virtual.
   */
  address: string | null;
  /** Kind "serial" only. */
  serial?: SerialLineSettings;
  /** fiscal/danfe/escpos.ts PrinterProfileId. */
  profile: 'epson-tm-t20' | 'elgin-i9' | 'bematech-mp4200-escpos' | 'generic-escpos';
  paperWidth: 80 | 58;
};

export type PrinterStatusView = {
  ready: boolean;
  /** "Impressora virtual", "192.168.0.50:9100", ... */
  name: string;
  /** What is wrong, in Portuguese (sem papel, tampa aberta, desligada); null when ready. */
  problem: string | null;
  lastPrintAt: string | null;
};

/** A job the printer got: a receipt's copy, or a till's closing report (printed again or not). */
export type PrintedJob =
  | {
      kind: 'nfce';
      receiptId: string;
      /** "consumidor" / "estabelecimento" (contingency prints both), "unica", or "reimpressao". */
      copy: string;
      printedAt: string;
    }
  | { kind: 'fechamento'; cashSessionNumber: number; printedAt: string };

/** The receipt as the screen previews it (the same layout the printer gets). */
export type ReceiptPreview = { receiptId: string; svg: string; lines: string[] };

// ---- PIX ---------------------------------------------------------------------------------------

/**
 * The store's PIX (docs/pix.md). `key`: the receiving PIX key the static BR Code (tPag 20) names;
 * null: no static PIX at this counter. Seeded on the first start from BALCAO_PIX_CHAVE.
 */
export type PixSettings = { key: string | null };

/**
 * The store's PSP for dynamic PIX as the manager enters it on screen (Gerente › PIX (PSP),
 * docs/pix.md). Secrets never come back: an empty `clientSecret`, a null `certificate` or an
 * absent `caPem` keep what is stored; `caPem: null` removes the extra roots. `pixKey` is the
 * store's PIX key (the same one static PIX uses); `printQr` prints the charge's QR Code for the
 * customer on the thermal printer.
 */
export type PspSettingsInput = {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  certificate: { kind: 'pfx'; pfxBase64: string; password: string } | { kind: 'pem'; certPem: string; keyPem: string } | null;
  caPem?: string | null;
  pspCnpj: string;
  pixKey: string;
  printQr: boolean;
};

/** What the screen sees of the PSP settings: no secret, only whether each is set ("configurado"). */
export type PspSettingsView = {
  configured: boolean;
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  pspCnpj: string;
  clientSecretSet: boolean;
  certificateKind: 'pfx' | 'pem' | null;
  caSet: boolean;
  pixKey: string | null;
  printQr: boolean;
};

/** "Testar conexão": whether an OAuth2 token came from the PSP over mutual TLS, in words. */
export type PspConnectionTest = { ok: boolean; message: string };

/**
 * A static PIX for part of a sale (tPag 20): the BR Code to show as a QR Code, its reference (the
 * txid the store finds in its bank statement) and whom the payer's app will name. Nothing tells
 * the terminal it was paid: the cashier checks and confirms by hand (addPayment with tPag 20).
 */
export type StaticPixView = { brCode: string; reference: string; key: string; merchantName: string; amountCents: Cents };

/**
 * A dynamic PIX charge (tPag 17) at the store's PSP for part or all of a sale (docs/pix.md,
 * "Dynamic PIX"). `state`: creating → active (the QR Code can be shown) → paid → finished (its
 * payment line is on the sale, finished when that paid it in full); or cancelling → cancelled,
 * expired; paid_late (paid after the cashier gave up: for the manager); refunding → refunded.
 */
export type PixChargeView = {
  txid: string;
  saleId: string;
  amountCents: Cents;
  state: 'creating' | 'active' | 'paid' | 'finished' | 'cancelling' | 'cancelled' | 'expired' | 'paid_late' | 'refunding' | 'refunded';
  /** The dynamic BR Code to show as a QR Code, once the PSP has the charge. */
  brCode: string | null;
  expiresAt: string;
  /** The PIX's endToEndId once paid (cAut of the card group). */
  e2eid: string | null;
  paidCents: Cents | null;
  /** When the PSP says the PIX was paid (its `horario`), once paid. */
  paidAt: string | null;
  refundState: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO' | null;
  /** The last problem with the PSP, in words, or null. */
  lastError: string | null;
  /** The PSP is the demo's simulator (`balcao start`): the screen offers "Simular pagamento". */
  simulated: boolean;
  /** The customer's QR slip was sent to the printer (once per charge, when the manager turned it on). */
  qrSlipPrinted: boolean;
  /** Paid twice: each PIX beyond the one the sale took, refunded automatically, with its refund's state (null: not yet asked). */
  secondPayments: {
    e2eid: string;
    paidCents: Cents;
    paidAt: string;
    refundState: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO' | null;
    lastError: string | null;
  }[];
};

/**
 * A PIX the PSP received that no sale took (Gerente › PIX pagos sem venda, docs/pix.md "Paid
 * without a sale"): paid after the cashier gave up, or the sale could not take it; and the
 * refunds of such PIX, with their state, for a day after they ended.
 */
export type PaidPixWithoutSale = PixChargeView & {
  /** The sale the charge was for, as it is now. */
  sale: { id: string; state: SaleView['state']; totalCents: Cents; remainingCents: Cents };
};

// ---- Scale labels -------------------------------------------------------------------------------

/**
 * How this store's scales print their EAN-13 labels: "2", the product's code, zeros, the value
 * (the item's total price or its weight in kg), the check digit (electron/core/scale-label.ts).
 */
export type ScaleLabelSettings = {
  /** Off: a code starting with 2 is only looked up in the catalog. */
  enabled: boolean;
  /** Digits of the product's code after the leading 2. */
  codeLength: 4 | 5 | 6;
  /** Digits of the value before the check digit; code + value at most 11. */
  valueLength: 5 | 6;
  /** "price": the value is the item's total; "weight": its weight in kg. */
  content: 'price' | 'weight';
  /** Decimal places of the value: 0 to 2 for a price (2: centavos), 0 to 4 for a weight (3: grams). */
  decimals: number;
};

// ---- Settings and company profile --------------------------------------------------------------

/** A period of the company's own IBS/CBS rates (percent, decimal strings with a dot). */
export type IbsCbsRatePeriod = { from: string; to?: string; pIBSUF?: string; pIBSMun?: string; pCBS?: string };

/**
 * Tax reform (IBS/CBS): whether a Simples Nacional company (CRT 1, 2, 4) writes the groups (CRT 3
 * always does), the classification of products without their own, the company's rates for
 * periods (instead of the published ones, e.g. the CBS of 2027 until it is published).
 */
export type IbsCbsProfile = { optIn: boolean; defaultClassification: { CST: string; cClassTrib: string }; rates: IbsCbsRatePeriod[] };

/** The company as this terminal knows it (needed to issue in contingency by itself). */
export type CompanyProfile = {
  cnpj: string;
  ie: string;
  xNome: string;
  xFant?: string;
  address: { xLgr: string; nro: string; xCpl?: string; xBairro: string; cMun: string; xMun: string; UF: string; CEP: string; fone?: string };
  crt: 1 | 2 | 3 | 4;
  environment: 'producao' | 'homologacao';
  qrCodeVersion: 2 | 3;
  cscId: string | null;
  /** Absent: the defaults (no opt-in, 000 / 000001, the published rates). */
  ibsCbs?: IbsCbsProfile;
  /** Never returned: true when a CSC token is stored. */
  cscSet?: boolean;
};

export type CertificateView = { subject: string; cnpj: string; notAfter: string } | null;

/** Sangria and suprimento above `pinAboveCents` need the manager's PIN (0: every one does). */
export type CashSettings = { pinAboveCents: Cents };

/**
 * How many days this checkout keeps its receipts' documents (the authorized XML, the bodies it
 * sent) after the sale; older settled ones are let go (the service keeps them five years: a
 * reprint fetches the XML again; the reports keep their daily totals). 90 by default, 7 to 1825.
 */
export type RetentionSettings = { days: number };

export type TerminalSettings = {
  /** This checkout as the service knows it: its own id (made on the first start) and its name. */
  terminal: { id: string; name: string };
  serviceUrl: string;
  /**
   * SHA-256 fingerprint (`AB:CD:…`, 32 bytes) of the service's certificate, pinned: with an
   * https:// service the terminal accepts that certificate and no other. Null: an https://
   * service must present a certificate the system trusts.
   */
  serviceFingerprint: string | null;
  /** The token is never sent back to the screen. */
  tokenSet: boolean;
  series: number;
  printer: PrinterSettings;
  company: CompanyProfile | null;
  certificate: CertificateView;
  contingency: ContingencySettings;
  scaleLabels: ScaleLabelSettings;
  cash: CashSettings;
  retention: RetentionSettings;
  pix: PixSettings;
};

/**
 * A change of `series` (or of the contingency's series, the service, the token or the terminal's
 * name) is first claimed at the service (PUT /api/v1/terminais/{id}): refused with `serie_em_uso`
 * when another checkout of the company holds the series, and nothing is saved.
 */
export type SettingsPatch = {
  terminalName?: string;
  serviceUrl?: string;
  /** null removes the pin. */
  serviceFingerprint?: string | null;
  token?: string;
  series?: number;
  printer?: PrinterSettings;
  company?: CompanyProfile & { cscToken?: string };
  contingency?: Partial<ContingencySettings>;
  scaleLabels?: ScaleLabelSettings;
  cash?: CashSettings;
  retention?: RetentionSettings;
  pix?: PixSettings;
};

// ---- Catalog import ----------------------------------------------------------------------------

export type CatalogImportRejection = {
  /** 1-based line of the CSV file (the header is line 1). */
  line: number;
  code: string | null;
  field: string;
  message: string;
};

export type CatalogImportReport = { imported: number; updated: number; rejected: CatalogImportRejection[] };

// ---- The IBPT table (Lei 12.741: approximate taxes) ---------------------------------------------

/** The CSV IBPT publishes (`TabelaIBPTax<UF><versão>.csv`, Windows-1252), as bytes: the UF is in its name. */
export type IbptImportInput = ManagerAuthorization & { fileName: string; csvBase64: string };

/** An imported IBPT table: validity as YYYY-MM-DD, its NCM lines counted. */
export type IbptTableView = {
  uf: string;
  versao: string;
  chave: string;
  fonte: string;
  from: string;
  until: string;
  ncmCount: number;
  fileName: string;
  importedAt: string;
};

export type IbptStatusView = {
  storeUf: string | null;
  /** The table of the store's UF the day's sales use (an expired one until a newer is imported); null: none. */
  current: IbptTableView | null;
  expired: boolean;
  /** What the manager should know, in words: no table of the store's UF, or it expired. */
  warning: string | null;
  tables: IbptTableView[];
  /** Active products whose NCM the current table lacks (every product without one): vTotTrib at the flat rate. The first ones by code. */
  fallbackProducts: { code: string; description: string; ncm: string }[];
  fallbackCount: number;
};

// ---- Offline contingency (tpEmis 9) ------------------------------------------------------------

export type ContingencySettings = {
  /** Consecutive failed exchanges (timeouts, refused connections, authority unavailable) that start it. */
  failureThreshold: number;
  /** Most receipts issued offline before the terminal stops selling. */
  maxReceipts: number;
  /** Most hours offline before the terminal stops selling. */
  maxHours: number;
  /** Series for contingency receipts: the normal one, or a separate series (docs/fiscal.md, "Open points"). */
  series: number | null;
};

export type ReconciliationTask = {
  id: string;
  receiptId: string;
  kind: 'cancelar_substituicao' | 'inutilizar' | 'transmitir';
  /** What is left to do, in Portuguese. */
  description: string;
  /** Stalled on a refusal by the service: a manager can send it on again (resumeContingencyTask). */
  canResume: boolean;
  createdAt: string;
};

export type ContingencyStatus = {
  active: boolean;
  since: string | null;
  /** xJust recorded with it. */
  reason: string | null;
  automatic: boolean;
  /** Contingency receipts not yet authorized. */
  pending: number;
  /** The earliest 24-hour transmission deadline among them. */
  nextDeadline: string | null;
  /** Every entry of `warnings` in one line; null when all is well. */
  warning: string | null;
  /**
   * Each warning on its own, in Portuguese, active or not: a limit reached (also in `blocked`),
   * the 24-hour transmission deadline near or past, why the terminal could not enter by itself.
   */
  warnings: string[];
  /** Selling is blocked (a limit was exceeded), with the reason. */
  blocked: string | null;
  openTasks: ReconciliationTask[];
};

// ---- Cash sessions (caixa) ---------------------------------------------------------------------
// The till is opened with the float the cashier counted; sangrias (withdrawals) and suprimentos
// (additions) are recorded with a reason, behind the manager's PIN above CashSettings.pinAboveCents;
// the closing takes the cashier's count per payment method, blind (the expected amounts are
// shown only after the count), and prints a report. No sale finishes without an open session.

export type CashMovementKind = 'sangria' | 'suprimento';

export type CashMovementView = { id: number; kind: CashMovementKind; amountCents: Cents; reason: string; at: string; authorizedBy: string | null };

export type CashCountLine = {
  tPag: string;
  /** "Dinheiro", "Cartão de Crédito", ... */
  description: string;
  expectedCents: Cents;
  countedCents: Cents;
  /** counted − expected: negative is money missing. */
  differenceCents: Cents;
};

export type CashClosingView = {
  closedAt: string;
  closedBy: string;
  /** Cash in the drawer: float + cash received − change − sangrias + suprimentos. */
  cash: {
    floatCents: Cents;
    /** Cash the sales received (before change). */
    receivedCents: Cents;
    changeCents: Cents;
    sangriasCents: Cents;
    suprimentosCents: Cents;
    expectedCents: Cents;
    countedCents: Cents;
    differenceCents: Cents;
  };
  /** Every method counted, cash first. */
  methods: CashCountLine[];
  /** Sum of the differences of every method. */
  differenceCents: Cents;
  /**
   * The session's sales. Counted: every finished sale whose receipt is not cancelled or voided
   * (awaiting authorization, issued in contingency, or waiting for a correction, the money was
   * received). Cancelled and voided sales are out of the expected amounts: their money went back.
   */
  sales: {
    count: number;
    totalCents: Cents;
    contingencyCount: number;
    /** Not authorized yet (awaiting the service, or refused and waiting for the operator). */
    unauthorizedCount: number;
    cancelledCount: number;
    cancelledCents: Cents;
  };
  /**
   * Dynamic PIX (tPag 17) by what the store's PSP confirmed for the session's sales — every PIX
   * received minus what was refunded — next to what the receipts say, and the difference in
   * words (absent in closings made before it was kept).
   */
  dynamicPix?: {
    confirmedCents: Cents;
    refundedCents: Cents;
    /** confirmed − refunded. */
    netCents: Cents;
    /** tPag 17 on the session's receipts that are not cancelled or voided. */
    receiptsCents: Cents;
    /** netCents − receiptsCents. */
    differenceCents: Cents;
    /** What the difference means, or that it matches. */
    words: string;
  };
  /** The report as printed (one string per printed line). */
  report: string[];
  /** The report came out of the thermal printer; `printError` says why not. */
  printed: boolean;
  printError: string | null;
};

export type CashSessionView = {
  id: string;
  /** 1, 2, 3… on this terminal. */
  number: number;
  state: 'open' | 'closed';
  openedAt: string;
  openedBy: string;
  floatCents: Cents;
  movements: CashMovementView[];
  /** What the closing asks the cashier to count: cash, and every method the session's sales used. */
  countMethods: { tPag: string; description: string }[];
  pinAboveCents: Cents;
  closing: CashClosingView | null;
};

export type OpenCashInput = { floatCents: Cents; operator: string };

/** managerId and pin are needed when amountCents is above CashSettings.pinAboveCents. */
export type CashMovementInput = { kind: CashMovementKind; amountCents: Cents; reason: string; managerId?: string; pin?: string };

export type CloseCashInput = { counts: { tPag: string; countedCents: Cents }[]; operator: string };

/** The closing report as a PDF (80 mm wide, the printed report's lines). */
export type CashReportPdf = { fileName: string; pdfBase64: string };

// ---- Reports and the accountant's export --------------------------------------------------------
// Figures read from each receipt's fiscal XML (the authorized nfeProc, or the signed XML of a
// contingency receipt), never from a separate counter: the same reader as the service's export
// summary (fiscal/nfce/sale-facts.ts). Days are Brasília days.

export type ReportPeriod = { de: string; ate: string };

export type ReportReceipt = { receiptId: string; serie: number; nNF: number; chave: string | null; totalCents: Cents; issuedAt: string };

/**
 * A cancelled NFC-e of the period: cancelled by a manager (event 110111, "cancelamento"), or by
 * substitution (110112, "substituicao"): the online attempt of a sale re-issued in offline
 * contingency, authorized after all. `substitute`: the contingency receipt that covers the sale
 * (`receiptId` is its id then).
 */
export type ReportCancellation = ReportReceipt & { kind: 'cancelamento' | 'substituicao'; substitute: { serie: number; nNF: number } | null };

export type SalesReport = ReportPeriod & {
  generatedAt: string;
  /** Fiscal documents of the period: authorized (online or in contingency) and contingency ones still awaiting the authority. */
  totals: { count: number; totalCents: Cents; changeCents: Cents };
  /** What the payments say (vPag), per method, change not deducted. */
  byPayment: { tPag: string; description: string; count: number; amountCents: Cents }[];
  /** The 24 hours of a Brasília day. */
  byHour: { hour: number; count: number; totalCents: Cents }[];
  /** By product code, largest total first; quantity as a decimal string. */
  byProduct: { code: string; description: string; unit: string; quantity: string; totalCents: Cents }[];
  /** Every cancelled NFC-e of the period, both kinds, by series and number: each one the accountant's file holds. */
  cancelled: ReportCancellation[];
  /** Issued in offline contingency (authorized since or not). */
  contingency: (ReportReceipt & { authorized: boolean })[];
  /** Finished sales without a fiscal document yet (awaiting authorization, or refused): not in the totals. */
  unauthorized: (ReportReceipt & { state: ReceiptState })[];
};

export type ReportCsv = { fileName: string; csv: string };

export type DocumentExportInput = ManagerAuthorization & ReportPeriod & { kind: 'nfce' | 'mdfe' };

export type DocumentExport = {
  fileName: string;
  bytes: number;
  /** Where the terminal saved it (its data folder): the screen downloads it from there (browser mode) or copies it where the manager chooses (desktop). */
  path: string;
  /** This terminal's contingency receipts of the period not yet transmitted: not in the file (export again later). */
  notTransmitted: number;
};

export type TerminalEvent =
  | { type: 'receipt'; receipt: ReceiptView }
  | { type: 'queue'; status: QueueStatus }
  | { type: 'return'; devolucao: ReturnView }
  | { type: 'printer'; status: PrinterStatusView }
  | { type: 'contingency'; status: ContingencyStatus }
  | { type: 'pix'; charge: PixChargeView };

export type TerminalErrorCode =
  | 'nao_encontrado'
  | 'estado_invalido'
  | 'produto_nao_encontrado'
  | 'etiqueta_invalida'
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
  | 'erro_servico'
  | 'configuracao_invalida'
  | 'certificado_invalido'
  | 'contingencia_limite'
  | 'impressora'
  | 'caixa_fechado'
  | 'serie_em_uso'
  /** The machine failed (full disk, read-only or forbidden folder, failing disk): the message says what to do. */
  | 'falha_sistema';

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
  /**
   * `code` is the product code or its GTIN, or a scale label (when enabled: the product, its
   * weighed quantity and its total come from the label; no quantity may be given); quantity
   * defaults to "1".
   */
  addItem(saleId: string, input: { code: string; quantity?: string }): Promise<SaleView>;
  removeItem(saleId: string, itemId: number): Promise<SaleView>;
  /**
   * The line's quantity changed ("1.5", up to 4 places): the line is removed and the same product,
   * at the price it was sold at, added again as a new line with that quantity.
   */
  changeItemQuantity(saleId: string, itemId: number, quantity: string): Promise<SaleView>;
  /** CPF (11 digits) or CNPJ (14); punctuation is ignored; null removes it. */
  setConsumer(saleId: string, document: string | null): Promise<SaleView>;
  addPayment(saleId: string, payment: PaymentInput): Promise<SaleView>;
  /** The static PIX BR Code for `amountCents` of an open sale (tPag 20; refused without a PIX key). */
  staticPix(saleId: string, amountCents: Cents): Promise<StaticPixView>;
  /**
   * A dynamic PIX charge (tPag 17) of `amountCents` of an open sale at the store's PSP (refused
   * without a PSP or a PIX key). It follows by itself (the `pix` event): once paid, the sale gets
   * its payment line and, paid in full, is finished — its receipt comes as a `receipt` event.
   */
  createPixCharge(saleId: string, amountCents: Cents): Promise<PixChargeView>;
  pixCharge(txid: string): Promise<PixChargeView>;
  /** Gives up on an unpaid charge (removed at the PSP; a PIX that came meanwhile goes to the manager). */
  cancelPixCharge(txid: string): Promise<PixChargeView>;
  /** The demo only (`simulated` charges): the simulated PSP pays the charge as the customer's bank would. */
  simulatePixPayment(txid: string): Promise<PixChargeView>;
  /** PIX the PSP received that no sale took, and their refunds: for the manager. */
  paidPixWithoutSale(): Promise<PaidPixWithoutSale[]>;
  /** Manager-authorized and audited: the charge's sale takes its PIX as payment (tPag 17) and, paid in full, is finished and its NFC-e issued — once. */
  finishSaleWithPix(txid: string, auth: ManagerAuthorization): Promise<PixChargeView>;
  /** Manager-authorized and audited: the PIX goes back to the payer (API Pix devolução), its state recorded. */
  refundPix(txid: string, auth: ManagerAuthorization): Promise<PixChargeView>;
  /** The store's PSP as the screen may see it (no secret). */
  pspSettings(): Promise<PspSettingsView>;
  /** Manager-authorized and audited: validated field by field, secrets sealed at rest. */
  savePspSettings(input: PspSettingsInput, auth: ManagerAuthorization): Promise<PspSettingsView>;
  /** Manager-authorized: asks the PSP for an OAuth2 token with `input` (the stored secrets where left empty); saves nothing. */
  testPspConnection(input: PspSettingsInput, auth: ManagerAuthorization): Promise<PspConnectionTest>;
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
  /** Manager-authorized: a rejected / refused receipt gets the correction and goes again, same number. */
  correctAndResubmit(receiptId: string, correction: CorrectionInput, auth: ReasonedAuthorization): Promise<ReceiptView>;
  /** A rejected / refused receipt whose sale is abandoned: void its number (inutilização). */
  voidReceipt(receiptId: string, input: VoidInput): Promise<ReceiptView>;
  /** Manager-authorized: another copy of a receipt (audited with the reason). */
  reprint(receiptId: string, auth: ReasonedAuthorization): Promise<ReprintResult>;
  /**
   * The cashier prints the copy the printer never produced (the automatic print failed: paper
   * out, printer off). Refused once that copy came out: another one is a reprint.
   */
  printReceipt(receiptId: string): Promise<ReprintResult>;

  /** A receipt past its cancellation window: issue the return (NF-e de devolução). */
  returnReceipt(receiptId: string, input: ReturnInput): Promise<ReturnView>;
  /** Returns, newest first; of one receipt when given. */
  listReturns(receiptId?: string): Promise<ReturnView[]>;

  /** The receipt's DANFE as the screen previews it. */
  receiptPreview(receiptId: string): Promise<ReceiptPreview>;
  printerStatus(): Promise<PrinterStatusView>;
  /** The last jobs the printer got, newest first (the virtual printer shows them on screen). */
  recentPrints(limit?: number): Promise<PrintedJob[]>;

  getSettings(): Promise<TerminalSettings>;
  updateSettings(patch: SettingsPatch, auth: ManagerAuthorization): Promise<TerminalSettings>;
  /** The company's A1 certificate (.pfx), kept encrypted at rest, for contingency signing. */
  importCertificate(input: ManagerAuthorization & { pfxBase64: string; password: string }): Promise<CertificateView>;
  /**
   * CSV with header: codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario (; or ,), and
   * optionally cst_ibs_cbs;cclasstrib (the product's IBS/CBS classification).
   */
  importCatalogCsv(csv: string, auth: ManagerAuthorization): Promise<CatalogImportReport>;
  /** The IBPT tables, the one sales use today, and the products estimated at the flat rate. */
  ibptStatus(): Promise<IbptStatusView>;
  /** Manager-authorized: imports an IBPT table (replacing the same UF and versão). */
  importIbptTable(input: IbptImportInput): Promise<IbptStatusView>;

  contingencyStatus(): Promise<ContingencyStatus>;
  enterContingency(input: ManagerAuthorization & { justification: string }): Promise<ContingencyStatus>;
  leaveContingency(auth: ManagerAuthorization): Promise<ContingencyStatus>;
  /** Manager-authorized: sends an open task (`canResume`) on again, with the same keys. */
  resumeContingencyTask(taskId: string, auth: ManagerAuthorization): Promise<ContingencyStatus>;

  /** The open cash session, or null when the till is closed. */
  cashSession(): Promise<CashSessionView | null>;
  openCashSession(input: OpenCashInput): Promise<CashSessionView>;
  addCashMovement(input: CashMovementInput): Promise<CashSessionView>;
  /** Closes the open session with the cashier's count, prints the report and keeps its PDF. */
  closeCashSession(input: CloseCashInput): Promise<CashSessionView>;
  /** The latest sessions, newest first (closed ones with their closing). */
  recentCashSessions(limit?: number): Promise<CashSessionView[]>;
  /** Prints a closed session's report again. */
  printCashReport(sessionId: string): Promise<CashSessionView>;
  cashReportPdf(sessionId: string): Promise<CashReportPdf>;

  salesReport(input: ManagerAuthorization & ReportPeriod): Promise<SalesReport>;
  salesReportCsv(input: ManagerAuthorization & ReportPeriod): Promise<ReportCsv>;
  /** Manager-authorized: the accountant's ZIP of the period, fetched from the service and saved by the terminal. */
  exportDocuments(input: DocumentExportInput): Promise<DocumentExport>;

  listManagers(): Promise<ManagerView[]>;
  queueStatus(): Promise<QueueStatus>;
  /** Receipt changes and queue status, as they happen. Returns the unsubscribe function. */
  subscribe(listener: (event: TerminalEvent) => void): () => void;
}
