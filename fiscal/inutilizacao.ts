// Inutilização (NFeInutilizacao4, leiauteInutNFe_v4.00): voids a range of NF-e/NFC-e numbers that
// were never authorized (docs/fiscal.md, "Offline contingency" and "Inutilização"). Never a number issued in contingency: that one
// is transmitted, or cancelled by substitution, not voided.
//
// infInut Id = "ID" + cUF(2) + AA(2) + CNPJ(14) + mod(2) + serie(3) + nNFIni(9) + nNFFin(9),
// 41 positions, the CNPJ's first 12 digits or upper-case letters (pattern ID[0-9]{4}[0-9A-Z]{12}[0-9]{25}). Field names in errors follow POST /api/v1/nfce/inutilizar
// (`serie`, `numero_inicial`, `numero_final`, `justificativa`).

import { assertCnpj } from './br/documents.ts';
import { cUFOf } from './br/uf.ts';
import { tpAmbOf, type Emitter } from './company.ts';
import { FieldError, IssueCollector } from './errors.ts';
import { justification } from './events.ts';
import { NS_NFE } from './protocol.ts';
import { signXml, type SigningCredentials } from './signature.ts';
import { el, text } from './xml.ts';

export type InutilizacaoParams = {
  emitter: Pick<Emitter, 'cnpj' | 'environment' | 'address'>;
  /** Year of the numbers: two digits (26) or the full year (2026). */
  ano: number | string;
  serie: number;
  nNFIni: number;
  nNFFin: number;
  xJust: string;
  model: '65' | '55';
};

function integerIn(value: unknown, min: number, max: number, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FieldError(field, `deve ser um inteiro de ${min} a ${max}`);
  }
  return value;
}

function twoDigitYear(value: unknown): string {
  const s = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  if (/^[0-9]{2}$/.test(s)) return s;
  if (/^20[0-9]{2}$/.test(s)) return s.slice(2);
  throw new FieldError('ano', 'ano deve ter 2 dígitos (26) ou 4 (2026)');
}

/** `ID` + the 41 digits identifying the range: the infInut Id the signature references. */
export function inutilizacaoId(p: { cUF: string; ano: string; cnpj: string; model: string; serie: number; nNFIni: number; nNFFin: number }): string {
  return 'ID' + p.cUF + p.ano + p.cnpj + p.model + String(p.serie).padStart(3, '0') + String(p.nNFIni).padStart(9, '0') + String(p.nNFFin).padStart(9, '0');
}

/** The signed `<inutNFe versao="4.00">` for the range nNFIni..nNFFin of one series. */
export function buildInutilizacao(p: InutilizacaoParams, credentials: SigningCredentials): string {
  const c = new IssueCollector();
  const cUF = c.capture(() => cUFOf(p.emitter.address?.UF, 'emitente.UF'));
  const cnpj = c.capture(() => assertCnpj(p.emitter.cnpj, 'emitente.CNPJ'));
  const ano = c.capture(() => twoDigitYear(p.ano));
  const model = c.capture(() => {
    if (p.model !== '55' && p.model !== '65') throw new FieldError('mod', 'modelo deve ser 55 ou 65');
    return p.model;
  });
  const serie = c.capture(() => integerIn(p.serie, 0, 999, 'serie'));
  const nNFIni = c.capture(() => integerIn(p.nNFIni, 1, 999_999_999, 'numero_inicial'));
  const nNFFin = c.capture(() => integerIn(p.nNFFin, 1, 999_999_999, 'numero_final'));
  if (nNFIni !== undefined && nNFFin !== undefined && nNFIni > nNFFin) {
    c.add('numero_final', 'o número final deve ser maior ou igual ao inicial');
  }
  const xJust = c.capture(() => justification(p.xJust));
  c.throwIfAny();

  const id = inutilizacaoId({ cUF: cUF!, ano: ano!, cnpj: cnpj!, model: model!, serie: serie!, nNFIni: nNFIni!, nNFFin: nNFFin! });
  const xml = el(
    'inutNFe',
    { xmlns: NS_NFE, versao: '4.00' },
    el(
      'infInut',
      { Id: id },
      text('tpAmb', tpAmbOf(p.emitter.environment)),
      text('xServ', 'INUTILIZAR'),
      text('cUF', cUF!),
      text('ano', ano!),
      text('CNPJ', cnpj!),
      text('mod', model!),
      text('serie', serie!),
      text('nNFIni', nNFIni!),
      text('nNFFin', nNFFin!),
      text('xJust', xJust!),
    ),
  );
  return signXml(xml, credentials);
}
