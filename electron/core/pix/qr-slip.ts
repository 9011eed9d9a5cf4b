// The customer's PIX QR slip (docs/pix.md, "At the checkout"): when the manager turns on
// "Imprimir QR Code PIX para o cliente", a dynamic charge that becomes active prints a short
// slip on the receipt printer — the store's name, "Pague com PIX", the amount, the charge's QR
// Code (its BR Code) and until when it can be paid — for a customer who cannot reach the
// screen. Printed through the DANFE's ESC/POS path (fiscal/danfe/escpos.ts `encodeSlip`) and
// claimed on the charge's row before the bytes leave, so each charge prints it at most once,
// across restarts too.

import { formatDateTimeBR } from '../../../base/common/brasilia.ts';
import { encodeSlip, type SlipLine } from '../../../fiscal/danfe/escpos.ts';
import { formatBRL } from '../../../fiscal/money.ts';
import type { PixChargeView, PrinterSettings } from '../../api/terminal-api.ts';

/** What the slip says, top to bottom. */
export function qrSlipLines(input: { storeName: string; amountCents: number; brCode: string; expiresAt: string }): SlipLine[] {
  return [
    { kind: 'text', text: input.storeName, align: 'center', bold: true },
    { kind: 'text', text: 'Pague com PIX', align: 'center', large: true },
    { kind: 'text', text: `R$ ${formatBRL(BigInt(input.amountCents))}`, align: 'center', large: true },
    { kind: 'qrcode', payload: input.brCode },
    { kind: 'text', text: 'Abra o app do seu banco, escolha PIX e leia o QR Code.', align: 'center' },
    { kind: 'text', text: `Válido até ${formatDateTimeBR(Date.parse(input.expiresAt)).slice(0, 16)}`, align: 'center', bold: true },
    { kind: 'text', text: 'Não é documento fiscal', align: 'center' },
  ];
}

/** The slip's ESC/POS for the configured printer; null when the charge has no BR Code yet. */
export function qrSlipEscPos(charge: PixChargeView, storeName: string, printer: Pick<PrinterSettings, 'profile' | 'paperWidth'>): Uint8Array | null {
  if (!charge.brCode) return null;
  return encodeSlip(qrSlipLines({ storeName, amountCents: charge.amountCents, brCode: charge.brCode, expiresAt: charge.expiresAt }), printer);
}
