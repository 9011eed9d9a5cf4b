// The customer's PIX QR slip (qr-slip.ts) as the printer reads it: the store, "Pague com PIX",
// the amount, the QR Code carrying the charge's BR Code (native GS ( k, or a raster a QR reader
// decodes), and until when it can be paid, in Brasília time.
import { describe, expect, it } from 'vitest';
import { dynamicBrCode } from '../../../base/common/pix/br-code.ts';
import { decodeEscPos, imageToRgba, readQr } from '../../../test/escpos-decoder.ts';
import type { PixChargeView } from '../../api/terminal-api.ts';
import { qrSlipEscPos } from './qr-slip.ts';

const brCode = dynamicBrCode({
  location: 'pix.banco.example/qr/v2/0123456789abcdef0123456789abcdef',
  merchantName: 'MERCADO DO BAIRRO',
  merchantCity: 'SAO PAULO',
});
const charge: PixChargeView = {
  txid: '0123456789abcdef0123456789abcdef01',
  saleId: '01234567-89ab-cdef-0123-456789abcdef',
  amountCents: 1890,
  state: 'active',
  brCode,
  expiresAt: '2026-11-27T23:35:00.000Z',
  e2eid: null,
  paidCents: null,
  paidAt: null,
  refundState: null,
  lastError: null,
  simulated: false,
  qrSlipPrinted: false,
  secondPayments: [],
};

describe('PIX QR slip', () => {
  it('prints the store, "Pague com PIX", the amount, the QR Code of the BR Code and the time it is valid until', () => {
    const t = decodeEscPos(qrSlipEscPos(charge, 'Mercado do Bairro', { profile: 'epson-tm-t20', paperWidth: 80 })!);
    const text = t.lines.map((l) => l.text.trim());
    expect(text).toEqual(expect.arrayContaining(['Mercado do Bairro', 'Pague com PIX', 'R$ 18,90', 'Válido até 27/11/2026 20:35']));
    expect(t.lines.find((l) => l.text.trim() === 'R$ 18,90')).toMatchObject({ large: true });
    expect(t.qrCodes).toHaveLength(1);
    expect(t.qrCodes[0]).toMatchObject({ payload: brCode, model: 2, ecc: 'M', printed: true });
    expect(t.commands.at(-1)).toMatchObject({ op: 'cut' });
  });

  it('on a printer without native QR (58 mm), the raster decodes to the BR Code; no BR Code yet, no slip', () => {
    const t = decodeEscPos(qrSlipEscPos(charge, 'Mercado do Bairro', { profile: 'generic-escpos', paperWidth: 58 })!);
    expect(t.qrCodes).toEqual([]);
    expect(t.images).toHaveLength(1);
    expect(readQr(imageToRgba(t.images[0]!))?.data).toBe(brCode);
    expect(t.lines.some((l) => l.text.includes('Valido ate 27/11/2026 20:35'))).toBe(true); // transliterated for this profile
    expect(qrSlipEscPos({ ...charge, brCode: null }, 'Mercado do Bairro', { profile: 'epson-tm-t20', paperWidth: 80 })).toBeNull();
  });
});
