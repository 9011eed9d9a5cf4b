// Issuing a receipt at the terminal itself, in offline contingency (docs/fiscal.md, "Offline contingency"): the NFC-e
// built by the fiscal core with tpEmis 9, dhCont and xJust, signed with the company's A1
// certificate, with the offline QR Code of the company's version (v2: digVal + CSC hash; v3: the
// RSA signature of its own fields), and its DANFE in two copies, "Via Consumidor" and "Via
// Estabelecimento", marked "EMITIDA EM CONTINGÊNCIA" / "Pendente de autorização" (the DANFE
// model does that by itself for a tpEmis 9 document without a protocol).
//
// What is signed here is what the service later transmits unchanged (same key, same digest), so
// the XML is written in the same transaction as the sale, before anything is printed.

import type { Emitter } from '../../../fiscal/company.ts';
import type { DanfeCopy } from '../../../fiscal/danfe/model.ts';
import { FieldError } from '../../../fiscal/errors.ts';
import { issueNfce, type IssuedNfce } from '../../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../../fiscal/nfce/types.ts';
import type { SigningCredentials } from '../../../fiscal/signature.ts';
import { TerminalError } from '../errors.ts';

/** What the terminal needs to issue by itself: the emitter and its A1 certificate (in clear, in memory only). */
export type ContingencyCredentials = { emitter: Emitter; certificate: SigningCredentials };

/** The period's facts every receipt issued in it carries. */
export type ContingencyFacts = { dhCont: string; xJust: string };

/** The receipt as written at the terminal: what goes in the receipt row and in the outbox. */
export type OfflineReceipt = {
  chave: string;
  /** Signed NFe with infNFeSupl: the body `{ xml }` transmitted later, unchanged. */
  signedXml: string;
  qrcode: string;
  urlConsulta: string;
  digestValue: string;
  dhEmi: string;
};

/** The two copies of a contingency DANFE, in printing order (docs/fiscal.md, "Offline contingency"). */
export const CONTINGENCY_COPIES: readonly DanfeCopy[] = ['consumidor', 'estabelecimento'];

/**
 * Builds, signs and QR-codes the NFC-e of `request` in contingency. A company profile or
 * certificate the fiscal core refuses (no CSC for QR v2, a missing address field, ...) is a
 * `configuracao_invalida` naming the field: the manager fixes the settings, nothing is written.
 */
export function issueOffline(request: NfceRequest, credentials: ContingencyCredentials, facts: ContingencyFacts, dhEmi: Date): OfflineReceipt {
  let issued: IssuedNfce;
  try {
    issued = issueNfce(request, {
      emitter: credentials.emitter,
      credentials: credentials.certificate,
      dhEmi,
      tpEmis: 9,
      contingency: { dhCont: facts.dhCont, xJust: facts.xJust },
    });
  } catch (err) {
    if (err instanceof FieldError) {
      throw new TerminalError('configuracao_invalida', `Não foi possível emitir a NFC-e em contingência: ${err.message}`, { field: err.field });
    }
    throw err;
  }
  return {
    chave: issued.key,
    signedXml: issued.xml,
    qrcode: issued.qrCode,
    urlConsulta: issued.urlChave,
    digestValue: issued.digestValue,
    dhEmi: issued.dhEmi,
  };
}

/** The outbox body of a contingency receipt: contract 3's `{ "xml": "<NFe …signed…>" }`. */
export const offlinePayload = (signedXml: string): string => JSON.stringify({ xml: signedXml });
