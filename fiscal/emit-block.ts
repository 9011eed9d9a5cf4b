// The emitter (`emit`) of an NF-e / NFC-e, checked and written once for every document model the
// company issues: the checks report each problem on its `emit.*` field into the caller's
// IssueCollector, so a builder still sees every problem of its document at once.

import { assertMunicipality } from './br/catalogs.ts';
import { assertCnpj } from './br/documents.ts';
import { cUFOf, isUF } from './br/uf.ts';
import { tpAmbOf, type Emitter } from './company.ts';
import { FieldError, type IssueCollector } from './errors.ts';
import { isAbsent, optTString, pattern, tString } from './layout-fields.ts';
import { el, text } from './xml.ts';

/** The emitter as checked; a field is undefined when its check failed (and was reported). */
export type CheckedEmitter = {
  tpAmb?: 1 | 2;
  uf?: string;
  /** IBGE code of the UF. */
  cUF?: string;
  cnpj?: string;
  crt?: 1 | 2 | 3 | 4;
  /** The emitter's municipality (the default cMunFG). */
  cMun?: string;
  /** `<emit>…</emit>`; undefined when any emitter field failed its check. */
  xml?: string;
};

export function checkEmitter(emitter: Emitter, issues: IssueCollector): CheckedEmitter {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const before = issues.issues.length;
  const tpAmb = cap(() => {
    if (emitter.environment !== 'producao' && emitter.environment !== 'homologacao') {
      throw new FieldError('emit.environment', 'ambiente deve ser "producao" ou "homologacao"');
    }
    return tpAmbOf(emitter.environment);
  });
  const address = emitter.address ?? ({} as Emitter['address']);
  const uf = cap(() => {
    cUFOf(address.UF, 'emit.enderEmit.UF');
    return address.UF;
  });
  const cUF = uf && isUF(uf) ? cUFOf(uf) : undefined;
  const cnpj = cap(() => assertCnpj(emitter.cnpj, 'emit.CNPJ', issues));
  const crt = cap(() => {
    if (![1, 2, 3, 4].includes(emitter.crt)) throw new FieldError('emit.CRT', 'CRT deve ser 1, 2, 3 ou 4');
    return emitter.crt;
  });
  const f = {
    xNome: cap(() => tString(emitter.xNome, 'emit.xNome', 2, 60)),
    xFant: cap(() => optTString(emitter.xFant, 'emit.xFant', 1, 60)),
    xLgr: cap(() => tString(address.xLgr, 'emit.enderEmit.xLgr', 2, 60)),
    nro: cap(() => tString(address.nro, 'emit.enderEmit.nro', 1, 60)),
    xCpl: cap(() => optTString(address.xCpl, 'emit.enderEmit.xCpl', 1, 60)),
    xBairro: cap(() => tString(address.xBairro, 'emit.enderEmit.xBairro', 2, 60)),
    cMun: cap(() => assertMunicipality(address.cMun, uf, 'emit.enderEmit.cMun').code),
    xMun: cap(() => tString(address.xMun, 'emit.enderEmit.xMun', 2, 60)),
    CEP: cap(() => pattern(address.CEP, 'emit.enderEmit.CEP', /^[0-9]{8}$/, 'CEP deve ter 8 dígitos, sem hífen')),
    fone: cap(() =>
      isAbsent(address.fone) ? undefined : pattern(address.fone, 'emit.enderEmit.fone', /^[0-9]{6,14}$/, 'telefone deve ter de 6 a 14 dígitos'),
    ),
    IE: cap(() => pattern(emitter.ie, 'emit.IE', /^([0-9]{2,14}|ISENTO)$/, 'IE deve ter de 2 a 14 dígitos, sem pontuação')),
    IM: cap(() => optTString(emitter.im, 'emit.IM', 1, 15)),
    CNAE: cap(() => (isAbsent(emitter.cnae) ? undefined : pattern(emitter.cnae, 'emit.CNAE', /^[0-9]{7}$/, 'CNAE deve ter 7 dígitos'))),
  };
  const checked: CheckedEmitter = { tpAmb, uf, cUF, cnpj, crt, cMun: f.cMun };
  if (issues.issues.length !== before) return checked;
  checked.xml = el(
    'emit',
    undefined,
    text('CNPJ', cnpj!),
    text('xNome', f.xNome!),
    text('xFant', f.xFant),
    el(
      'enderEmit',
      undefined,
      text('xLgr', f.xLgr!),
      text('nro', f.nro!),
      text('xCpl', f.xCpl),
      text('xBairro', f.xBairro!),
      text('cMun', f.cMun!),
      text('xMun', f.xMun!),
      text('UF', uf!),
      text('CEP', f.CEP!),
      text('cPais', '1058'),
      text('xPais', 'BRASIL'),
      text('fone', f.fone),
    ),
    text('IE', f.IE!),
    text('IM', f.IM),
    // CNAE belongs to the optional (IM, CNAE?) sequence: without IM the schema has no place for it.
    f.IM !== undefined && text('CNAE', f.CNAE),
    text('CRT', crt!),
  );
  return checked;
}
