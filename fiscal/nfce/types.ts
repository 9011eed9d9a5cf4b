// The NFC-e request body of POST /api/v1/nfce (docs/api.md, "NFC-e"), as the service and the terminal both
// send it. Monetary and quantity values are decimal strings.

import type { IbptTable } from '../ibpt/table.ts';
import type { Emitter } from '../company.ts';
import type { IbsCbsInput } from '../ibscbs/item.ts';

export type NfceProduct = {
  cProd: string;
  cEAN: string; // GTIN or "SEM GTIN"
  xProd: string;
  NCM: string;
  CFOP: string;
  uCom: string;
  qCom: string;
  vUnCom: string;
  vProd: string;
  cEANTrib: string;
  uTrib: string;
  qTrib: string;
  vUnTrib: string;
  indTot: string; // "1": the item's value counts towards vProd of the total
  vDesc?: string;
};

/** One variant group per tax, e.g. `{ ICMS40: { orig: '0', CST: '40' } }`. */
export type TaxGroup = Record<string, Record<string, string>>;

export type NfceItem = {
  prod: NfceProduct;
  imposto: {
    ICMS: TaxGroup;
    PIS?: TaxGroup;
    COFINS?: TaxGroup;
    vTotTrib?: string;
    /**
     * Tax reform: the item's IBS/CBS classification (CST, cClassTrib); the values are computed
     * by the builder and, when sent, checked against it (fiscal/ibscbs/item.ts). Absent: the
     * company's default classification.
     */
    IBSCBS?: IbsCbsInput;
  };
};

export type NfcePayment = {
  tPag: string; // "01" dinheiro, "03" crédito, "04" débito, "17" PIX dinâmico, ...
  vPag: string;
  indPag?: string;
  xPag?: string;
  /** Payment date, AAAA-MM-DD (NT 2023.004). */
  dPag?: string;
  /** Card group for this payment; falls back to the body's top-level `card`. */
  card?: NfceCard;
};

export type NfceCard = {
  tpIntegra?: string; // "1" integrated (needs CNPJ and cAut), "2" not integrated (default)
  CNPJ?: string; // acquirer / payment institution
  tBand?: string;
  cAut?: string;
  /** NT 2023.004: CNPJ of the payment's beneficiary and the payment terminal id. */
  CNPJReceb?: string;
  idTermPag?: string;
};

export type NfceRequest = {
  ide: { serie: number; nNF: number; natOp?: string; indPres?: string };
  det: NfceItem[];
  total: { vProd: string; vNF: string; vDesc?: string };
  pag: NfcePayment[];
  /** Change given back (troco). */
  vTroco?: string;
  card?: NfceCard;
  /** Consumer: one of cpf, cnpj or idEstrangeiro (foreigner's document; may be empty). */
  dest?: { cpf?: string; cnpj?: string; idEstrangeiro?: string; xNome?: string };
  vTotTrib?: string;
  infCpl?: string;
  /** Information of interest to the tax authority (infAdic/infAdFisco). */
  infAdFisco?: string;
  referencia_externa?: string;
};

export type ContingencyInput = { dhCont: Date | string; xJust: string };

/** What the builder needs besides the request: the emitter and the issuing circumstances. */
export type BuildNfceContext = {
  emitter: Emitter;
  /** Issue instant: a Date or ISO 8601 with offset; written in the Brasília offset. */
  dhEmi: Date | string;
  /** 1 normal (online), 9 offline contingency. */
  tpEmis: 1 | 9;
  /** Required with tpEmis 9: entry into contingency (≤ dhEmi) and its justification (15–256). */
  contingency?: ContingencyInput;
  /** cNF of the key; generated (NT 2019.001 rules) when absent. Reuse it when re-issuing. */
  cNF?: string;
  verProc?: string;
  /** Municipality of the taxable event; the emitter's cMun by default. */
  cMunFG?: string;
  /** Percent used to estimate vTotTrib when the request has none (e.g. "12.50"); see fiscal/nfce/total.ts. */
  vTotTribRate?: string;
  /** The store's IBPT tables (fiscal/ibpt/table.ts): vTotTrib by NCM; vTotTribRate only for an NCM they lack. */
  ibpt?: readonly IbptTable[];
};
