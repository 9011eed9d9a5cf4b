import { describe, expect, it } from 'vitest';
import { checkConsumerDocument, formatDocument } from './consumer-document.ts';

describe('consumer document', () => {
  it.each([
    ['529.982.247-25', 'cpf', '52998224725', '529.982.247-25'],
    ['52998224725', 'cpf', '52998224725', '529.982.247-25'],
    ['11.222.333/0001-81', 'cnpj', '11222333000181', '11.222.333/0001-81'],
    [' 11222333000181 ', 'cnpj', '11222333000181', '11.222.333/0001-81'],
    ['12.ABC.345/01DE-35', 'cnpj', '12ABC34501DE35', '12.ABC.345/01DE-35'],
    ['12ABC34501DE35', 'cnpj', '12ABC34501DE35', '12.ABC.345/01DE-35'],
  ])('%s is a valid %s', (text, kind, digits, formatted) => {
    expect(checkConsumerDocument(text)).toEqual({ ok: true, kind, digits, formatted });
  });

  it.each([
    ['529.982.247-24', 'CPF inválido'],
    ['111.111.111-11', 'CPF inválido'],
    ['11.222.333/0001-82', 'CNPJ inválido'],
    ['00000000000000', 'CNPJ inválido'],
    ['1234', 'informe 11 dígitos (CPF) ou 14 caracteres (CNPJ); foram 4'],
    ['', 'informe o documento'],
    ['12ABC34501DE36', 'CNPJ inválido (dígito verificador não confere)'],
    ['12.abc.345/01de-35', 'letras maiúsculas'],
    ['12ABC3450019', '14 caracteres (recebidos 12)'],
    ['12ABC34501DEA5', 'numéricos'],
    ['11.222.333/0001-8#', 'somente dígitos e letras maiúsculas'],
  ])('%j is refused: %s, naming the field', (text, message) => {
    const r = checkConsumerDocument(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toMatch(/^CPF\/CNPJ do consumidor: /);
      expect(r.message).toContain(message);
    }
  });

  it('formats stored documents', () => {
    expect(formatDocument('52998224725')).toBe('529.982.247-25');
    expect(formatDocument('11222333000181')).toBe('11.222.333/0001-81');
    expect(formatDocument('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
  });
});
