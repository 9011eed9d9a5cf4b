import { describe, expect, it } from 'vitest';
import type { NfceDocument } from '../api-client.ts';
import { documentOutcome } from '../outbox-rules.ts';
import { deadlineWarning, DEADLINE_WARNING_MS, transmissionDeadline, TRANSMISSION_DEADLINE_MS } from './transmit.ts';

describe('the 24-hour transmission deadline', () => {
  const created = '2026-11-22T13:00:00.000Z';
  const deadline = transmissionDeadline(created);

  it('is 24 hours after the receipt was issued', () => {
    expect(deadline - Date.parse(created)).toBe(TRANSMISSION_DEADLINE_MS);
  });

  it('warns only from two hours before, with the time left and the Brasília wall clock', () => {
    expect(deadlineWarning(deadline, 3, deadline - DEADLINE_WARNING_MS - 1)).toBeNull();
    expect(deadlineWarning(deadline, 3, deadline - 90 * 60_000)).toBe(
      'Transmita as 3 NFC-e emitidas em contingência: o prazo de 24 horas da mais antiga vence em 1 h 30 min (23/11/2026 10:00:00).',
    );
    expect(deadlineWarning(deadline, 1, deadline - 5 * 60_000)).toMatch(/^Transmita a NFC-e emitida em contingência: .* vence em 5 min/);
  });

  it('says it is over once it is, and nothing when nothing waits', () => {
    expect(deadlineWarning(deadline, 2, deadline + 1)).toMatch(/^O prazo de 24 horas para transmitir as 2 NFC-e .* venceu em 23\/11\/2026 10:00:00/);
    expect(deadlineWarning(deadline, 0, deadline + 1)).toBeNull();
  });
});

describe('the verdict on a contingency receipt', () => {
  const rejected = {
    id: 'd',
    chave: '3'.repeat(44),
    numero: 5,
    serie: 1,
    status: 'rejeitado',
    codigo_status: '464',
    motivo: 'Código de Hash no QR-Code difere do calculado',
  } as NfceDocument;

  it('rejected: waits for a person with the reason, and is not offered for correction (it was printed as it is)', () => {
    const online = documentOutcome(rejected);
    const offline = documentOutcome(rejected, true);
    expect(offline.entry).toBe('blocked');
    expect(offline.receipt).toMatchObject({ state: 'rejected', codigo_status: '464' });
    expect(offline.receipt.attention).toMatch(
      /^NFC-e emitida em contingência rejeitada pela SEFAZ \(464\): Código de Hash .* não pode ser alterada depois de impressa/,
    );
    expect(online.receipt.attention).toMatch(/Corrija e reenvie/);
  });

  it('authorized: the receipt takes the protocol; nothing else changes (the QR printed is the one the service reports)', () => {
    const doc = {
      ...rejected,
      status: 'autorizado',
      codigo_status: '100',
      motivo: 'Autorizado o uso da NF-e',
      protocolo: '135260000000001',
      qrcode: 'qr',
    } as NfceDocument;
    expect(documentOutcome(doc, true)).toMatchObject({
      entry: 'done',
      receipt: { state: 'authorized', protocolo: '135260000000001', qrcode: 'qr', attention: null },
    });
  });
});
