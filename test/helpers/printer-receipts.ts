// What the transport tests share: a real signed NFC-e to print (its XML, its QR Code text and
// its ESC/POS for a printer profile) and the PrinterError a failed job rejects with.

import { expect } from 'vitest';
import { generateTestCertificate } from '../../fiscal/certificate.ts';
import { encodeEscPos, type PrinterProfileId } from '../../fiscal/danfe/escpos.ts';
import { danfeModel } from '../../fiscal/danfe/model.ts';
import { issueNfce } from '../../fiscal/nfce/build.ts';
import { demoEmitter, sampleNfceRequest } from '../../fiscal/samples.ts';
import { PrinterError } from '../../native/printer/transports.ts';

export type TestReceipt = { xml: string; qrCode: string; escpos: (profile: PrinterProfileId) => Uint8Array };

/** A signed NFC-e of the demo store, number `nNF`, with `items` items (RSA signing: call once per file). */
export function testReceipt(nNF: number, items: number): TestReceipt {
  const credentials = generateTestCertificate({ cnpj: '11222333000181', xNome: 'DANFE TESTE' }).certificate;
  const nfe = issueNfce(sampleNfceRequest({ nNF, items }), { emitter: demoEmitter(), dhEmi: '2026-03-10T14:03:05-03:00', tpEmis: 1, credentials });
  return { xml: nfe.xml, qrCode: nfe.qrCode, escpos: (profile) => encodeEscPos(danfeModel(nfe.xml), { profile, paperWidth: 80 }) };
}

/** The PrinterError `p` rejects with (fails the test when it resolves or rejects otherwise). */
export async function printerRejection(p: Promise<unknown>): Promise<PrinterError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PrinterError);
  return err as PrinterError;
}
