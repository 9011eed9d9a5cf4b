// The ide group of the NFC-e (docs/fiscal.md, "NFC-e layout", "ide"): number, series, nature of
// the operation, presence, issue instant, emission type with its contingency fields, and the
// numeric code of the key. Checked from the request and the building context into the caller's
// IssueCollector, and written in schema order once the whole document is sound.

import { generateNumericCode, isValidNumericCode } from '../access-key.ts';
import { assertMunicipality } from '../br/catalogs.ts';
import { FieldError, type IssueCollector } from '../errors.ts';
import { asObject, instant, integer, tString } from '../layout-fields.ts';
import { el, text } from '../xml.ts';
import type { BuildNfceContext, NfceRequest } from './types.ts';

export const DEFAULT_VERPROC = 'Balcão 0.1.0';
export const DEFAULT_NATOP = 'VENDA';

/** ide as checked; a field is undefined when its check failed (and was reported). */
export type CheckedIde = {
  nNF?: number;
  serie?: number;
  natOp?: string;
  indPres?: string;
  dhEmi?: { text: string; ms: number };
  cMunFG?: string;
  verProc?: string;
  tpEmis: 1 | 9;
  contingency?: { dhCont: string; xJust: string };
  cNF?: string;
};

export function checkIde(input: NfceRequest, ctx: BuildNfceContext, uf: string | undefined, issues: IssueCollector): CheckedIde {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);
  const ide = asObject(input.ide, 'ide', issues) ?? {};
  const nNF = cap(() => integer(ide.nNF, 'ide.nNF', 1, 999_999_999));
  const serie = cap(() => integer(ide.serie, 'ide.serie', 0, 999));
  const natOp = cap(() => tString(ide.natOp ?? DEFAULT_NATOP, 'ide.natOp', 1, 60));
  const indPres = cap(() => {
    const v = ide.indPres ?? '1';
    if (v !== '1' && v !== '4') {
      throw new FieldError('ide.indPres', 'NFC-e só admite 1 (presencial) ou 4 (entrega em domicílio) (rejeição 717)');
    }
    return v;
  });
  const dhEmi = cap(() => instant(ctx.dhEmi, 'ide.dhEmi'));
  const cMunFG = cap(() => assertMunicipality(ctx.cMunFG ?? ctx.emitter.address?.cMun, uf, 'ide.cMunFG').code);
  const verProc = cap(() => tString(ctx.verProc ?? DEFAULT_VERPROC, 'ide.verProc', 1, 20));
  const tpEmis = ctx.tpEmis;
  if (tpEmis !== 1 && tpEmis !== 9) issues.add('ide.tpEmis', 'NFC-e admite tpEmis 1 (normal) ou 9 (contingência offline)');
  let contingency: { dhCont: string; xJust: string } | undefined;
  if (tpEmis === 9) {
    const c = ctx.contingency;
    const dhCont = cap(() => instant(c?.dhCont, 'ide.dhCont'));
    const xJust = cap(() => tString(c?.xJust, 'ide.xJust', 15, 256));
    if (dhCont && dhEmi && dhCont.ms > dhEmi.ms) issues.add('ide.dhCont', 'entrada em contingência deve ser anterior ou igual à emissão (dhEmi)');
    if (dhCont && xJust) contingency = { dhCont: dhCont.text, xJust };
  } else if (ctx.contingency) {
    issues.add('ide.dhCont', 'dhCont e xJust só são informados em contingência (tpEmis 9)');
  }
  const cNF = cap(() => {
    if (ctx.cNF === undefined) return nNF === undefined ? undefined : generateNumericCode(nNF);
    if (!/^[0-9]{8}$/.test(ctx.cNF) || (nNF !== undefined && !isValidNumericCode(ctx.cNF, nNF))) {
      throw new FieldError('ide.cNF', 'código numérico inválido: 8 dígitos, sem repetição ou sequência, diferente de nNF (rejeição 897)');
    }
    return ctx.cNF;
  });
  return { nNF, serie, natOp, indPres, dhEmi, cMunFG, verProc, tpEmis, contingency, cNF };
}

/** `<ide>` of a checked document: every field is set (the `!` only tell the compiler so). */
export function ideXml(ide: CheckedIde, key: string, cUF: string, tpAmb: 1 | 2): string {
  return el(
    'ide',
    undefined,
    text('cUF', cUF),
    text('cNF', ide.cNF!),
    text('natOp', ide.natOp!),
    text('mod', '65'),
    text('serie', ide.serie!),
    text('nNF', ide.nNF!),
    text('dhEmi', ide.dhEmi!.text),
    text('tpNF', '1'),
    text('idDest', '1'),
    text('cMunFG', ide.cMunFG!),
    text('tpImp', '4'),
    text('tpEmis', ide.tpEmis),
    text('cDV', key.slice(43)),
    text('tpAmb', tpAmb),
    text('finNFe', '1'),
    text('indFinal', '1'),
    text('indPres', ide.indPres!),
    // Delivery (indPres 4) is a non-face-to-face sale, for which indIntermed is mandatory; ours
    // are sold on the store's own channel, hence 0 (no intermediary).
    ide.indPres === '4' && text('indIntermed', '0'),
    text('procEmi', '0'),
    text('verProc', ide.verProc!),
    ide.contingency && text('dhCont', ide.contingency.dhCont),
    ide.contingency && text('xJust', ide.contingency.xJust),
  );
}
