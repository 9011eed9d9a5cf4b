import { describe, expect, it } from 'vitest';
import { cardFromForm, emptyCard, paymentFrom } from './payment-methods.ts';

describe('payment lines from the form', () => {
  it('cash carries no card group', () => {
    expect(paymentFrom('01', 2000, { ...emptyCard(), cAut: 'ignored' })).toEqual({ payment: { tPag: '01', amountCents: 2000 } });
  });

  it('a card machine (tpIntegra 2) needs nothing else; what is given is cleaned and kept', () => {
    expect(paymentFrom('04', 3114, emptyCard())).toEqual({ payment: { tPag: '04', amountCents: 3114, card: { tpIntegra: '2' } } });
    expect(cardFromForm({ tpIntegra: '2', cnpj: '11.222.333/0001-81', tBand: '02', cAut: ' 123456 ' })).toEqual({
      card: { tpIntegra: '2', cnpj: '11222333000181', tBand: '02', cAut: '123456' },
    });
  });

  it('TEF (tpIntegra 1) requires the acquirer CNPJ and the authorization code, naming the field', () => {
    expect(cardFromForm({ tpIntegra: '1', cnpj: '', tBand: '', cAut: '1' })).toEqual({ error: expect.stringMatching(/^CNPJ da credenciadora: obrigatório/) });
    expect(cardFromForm({ tpIntegra: '1', cnpj: '11222333000181', tBand: '', cAut: '' })).toEqual({
      error: expect.stringMatching(/^Código de autorização: obrigatório/),
    });
    expect(cardFromForm({ tpIntegra: '1', cnpj: '11222333000182', tBand: '', cAut: 'A1' })).toEqual({
      error: expect.stringMatching(/^CNPJ da credenciadora: CNPJ inválido/),
    });
  });

  it('takes an acquirer with an alphanumeric CNPJ, and refuses lower-case letters or a wrong check digit, naming the field', () => {
    expect(cardFromForm({ tpIntegra: '1', cnpj: '12.ABC.345/01DE-35', tBand: '', cAut: 'A1' })).toEqual({
      card: { tpIntegra: '1', cnpj: '12ABC34501DE35', cAut: 'A1' },
    });
    expect(cardFromForm({ tpIntegra: '1', cnpj: '12.abc.345/01de-35', tBand: '', cAut: 'A1' })).toEqual({
      error: expect.stringMatching(/^CNPJ da credenciadora: CNPJ deve usar letras maiúsculas/),
    });
    expect(cardFromForm({ tpIntegra: '2', cnpj: '12ABC34501DE53', tBand: '', cAut: '' })).toEqual({
      error: 'CNPJ da credenciadora: CNPJ inválido (dígito verificador não confere)',
    });
  });

  it('PIX carries the card group too (rejection 391 in some states without it)', () => {
    expect(paymentFrom('17', 500, emptyCard())).toEqual({ payment: { tPag: '17', amountCents: 500, card: { tpIntegra: '2' } } });
  });
});
