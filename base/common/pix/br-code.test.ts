import { describe, expect, it } from 'vitest';
import { BrCodeError, crc16CcittFalse, dynamicBrCode, pixKeyProblem, staticBrCode } from './br-code.ts';

// The test's own reader of EMV TLV records (not the encoder's code): id → value, in order.
function records(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < text.length;) {
    const id = text.slice(i, i + 2);
    const len = Number(text.slice(i + 2, i + 4));
    out.push([id, text.slice(i + 4, i + 4 + len)]);
    i += 4 + len;
  }
  return out;
}

describe('BR Code', () => {
  it('computes CRC-16/CCITT-FALSE: the catalogue check value and the central bank’s example', () => {
    // "123456789" → 29B1 is the algorithm's published check value (CRC RevEng catalogue).
    expect(crc16CcittFalse('123456789')).toBe('29B1');
    expect(
      crc16CcittFalse('00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304'),
    ).toBe('1D3D');
  });

  it('writes the static example of the central bank’s Manual de Padrões para Iniciação do Pix, byte for byte', () => {
    expect(staticBrCode({ key: '123e4567-e12b-12d1-a456-426655440000', merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' })).toBe(
      '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
    );
  });

  it('writes an amount and a reference as a second implementation does (Python, binascii.crc_hqx)', () => {
    // Reference computed outside this code base: fields written by hand in Python and the CRC by
    // binascii.crc_hqx(data, 0xFFFF), which is CRC-16/CCITT-FALSE (docs/pix.md, "BR Code").
    const code = staticBrCode({ key: 'loja@example.com', merchantName: 'Mercado São José', merchantCity: 'São Paulo', amountCents: 1234, txid: 'VENDA42' });
    expect(code).toBe('00020126380014br.gov.bcb.pix0116loja@example.com520400005303986540512.345802BR5916Mercado Sao Jose6009Sao Paulo62110507VENDA426304FCD2');
    const r = new Map(records(code));
    expect(r.get('54')).toBe('12.34');
    expect(r.get('59')).toBe('Mercado Sao Jose');
    expect(code.slice(-4)).toBe(crc16CcittFalse(code.slice(0, -4)));
  });

  it('cuts the name to 25 and the city to 15 characters, and refuses a bad key, amount or reference naming the field', () => {
    const code = staticBrCode({
      key: '+5511987654321',
      merchantName: 'Comércio de Alimentos Bom Preço Ltda',
      merchantCity: 'São José dos Campos',
      amountCents: 5,
    });
    const r = new Map(records(code));
    expect(r.get('59')).toBe('Comercio de Alimentos Bom');
    expect(r.get('60')).toBe('Sao Jose dos Ca');
    expect(r.get('54')).toBe('0.05');
    const bad = (f: () => unknown, field: string) => {
      try {
        f();
        throw new Error('no error');
      } catch (err) {
        expect(err).toBeInstanceOf(BrCodeError);
        expect((err as BrCodeError).field).toBe(field);
      }
    };
    const base = { key: '12345678909', merchantName: 'Loja', merchantCity: 'Cuiaba' };
    bad(() => staticBrCode({ ...base, key: 'não é chave' }), 'key');
    bad(() => staticBrCode({ ...base, amountCents: 0 }), 'amountCents');
    bad(() => staticBrCode({ ...base, amountCents: 12.5 }), 'amountCents');
    bad(() => staticBrCode({ ...base, txid: 'VENDA-1' }), 'txid');
    bad(() => staticBrCode({ ...base, merchantName: '  ' }), 'merchantName');
    expect(pixKeyProblem('12ABC34501DE35')).toBeNull(); // alphanumeric CNPJ
    expect(pixKeyProblem('123e4567-e12b-12d1-a456-426655440000')).toBeNull();
  });

  it('writes a dynamic BR Code: point of initiation 12, the location in 26-25, txid ***', () => {
    const code = dynamicBrCode({ location: 'https://pix.example.com/qr/v2/cobv/9d36b84f', merchantName: 'Loja', merchantCity: 'Cuiaba' });
    const r = new Map(records(code));
    expect(r.get('01')).toBe('12');
    expect(new Map(records(r.get('26')!))).toEqual(
      new Map([
        ['00', 'br.gov.bcb.pix'],
        ['25', 'pix.example.com/qr/v2/cobv/9d36b84f'],
      ]),
    );
    expect(new Map(records(r.get('62')!)).get('05')).toBe('***');
    expect(r.get('63')).toBe(crc16CcittFalse(code.slice(0, -4)));
  });
});
