// The NFC-e request body of POST /api/v1/nfce (docs/api.md, "NFC-e"), as the service and the terminal both
// send it. Monetary and quantity values are decimal strings.

import type { IbptTable } from '../ibpt/table.ts';
import type { Emitter } from '../company.ts';
import type { Static } from '@sinclair/typebox';
import type { NfceRequest as NfceRequestSchema } from '../../base/common/api/nfce.ts';

// The request's types are those of its one schema, base/common/api/nfce.ts NfceRequest: the
// service validates with it, documents it in OpenAPI, and the builder reads what it describes.
export type NfceRequest = Static<typeof NfceRequestSchema>;
export type NfceItem = NfceRequest['det'][number];
export type NfceProduct = NfceItem['prod'];
/** One variant group per tax, e.g. `{ ICMS40: { orig: '0', CST: '40' } }`. */
export type TaxGroup = NfceItem['imposto']['ICMS'];
export type NfcePayment = NfceRequest['pag'][number];
export type NfceCard = NonNullable<NfceRequest['card']>;

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
