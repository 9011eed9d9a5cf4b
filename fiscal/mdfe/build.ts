// MDF-e 3.00, road modal: request JSON (types.ts) → signed <MDFe> (mdfe_v3.00.xsd, with the
// rodo group of mdfeModalRodoviario_v3.00.xsd inside infModal).
//
// Two kinds of problem, kept apart on purpose:
// - input errors (wrong types, malformed or non-existent codes, check digits, a group the schema
//   requires once its parent is present): a FieldError naming every bad field, in API path style
//   (`rodo.veicTracao.condutor.CPF`, `infDoc.infMunDescarga[0].cMunDescarga`); no XML at all;
// - the tax authority's content rules (745, 699, 698, 725, 578, 663, then 611 and 204 which need
//   state): not input errors. A manifest without `seg` or `prodPred` still becomes a schema-valid,
//   signed document (the schema makes both optional), so that the (sandbox) authority can reject
//   it with the right cStat and the rejected XML can be kept. `mdfeRuleViolation` implements the
//   stateless ones, in the order of docs/api.md, "MDF-e".
//
// Decimal values: the specification carries vComp, vContrato, vCarga and qCarga as JSON numbers.
// They are converted without floating-point arithmetic from the number's shortest string form
// (see decimalOf), then handled as integers by money.ts.

import { ACCESS_KEY } from '../../base/common/access-key.ts';
import { buildAccessKey, checkDigit, generateNumericCode, isValidNumericCode, parseAccessKey } from '../access-key.ts';
import { assertCep, assertMunicipality, assertNcm } from '../br/catalogs.ts';
import { assertCnpj, assertCpf, assertGtinOrSemGtin } from '../br/documents.ts';
import { cUFOf, isUF } from '../br/uf.ts';
import { tpAmbOf, type Emitter } from '../company.ts';
import { FieldError, IssueCollector } from '../errors.ts';
import { environmentOfTpAmb, refuseCnpjsNotYetInForce } from '../law/in-force.ts';
import { infRespTecXml } from '../resp-tec.ts';
import { formatDecimal, parseDecimal } from '../money.ts';
import { validateRoute } from '../percurso.ts';
import { brasiliaDateTime, NS_MDFE, type DateInput } from '../protocol.ts';
import { mdfeQrCode } from '../qrcode.ts';
import { signXml, type SigningCredentials } from '../signature.ts';
import { el, text, type Child } from '../xml.ts';
import type { MdfeInsurance, MdfeRequest } from './types.ts';

export type MdfeBuildContext = {
  emitter: Emitter;
  /** Emission instant; written in the Brasília offset, and its AAMM goes into the key. */
  dhEmi: DateInput;
  /** 1 normal (default), 2 contingência. */
  tpEmis?: 1 | 2;
  /** cMDF (8 digits, NT 2019.001 rules); generated when absent. Keep it to re-issue the same key. */
  cMDF?: string;
  /** verProc, 1..20 characters. */
  verProc?: string;
};

export type MdfeIssueContext = MdfeBuildContext & { credentials: SigningCredentials };

export type BuiltMdfe = {
  key: string;
  cMDF: string;
  tpAmb: 1 | 2;
  tpEmis: 1 | 2;
  dhEmi: string;
  /** The unsigned <MDFe>, without infMDFeSupl (added with the QR code at issue time). */
  xml: string;
};

export type IssuedMdfe = {
  key: string;
  cMDF: string;
  /** The signed <MDFe>: infMDFe, infMDFeSupl/qrCodMDFe, Signature. */
  xml: string;
  qrCode: string;
};

export const DEFAULT_VER_PROC = 'Balcao 0.1.0';

// ---------------------------------------------------------------------------------------------
// Value checks. Each records an issue and returns undefined on bad input; a required value that
// comes back undefined has always recorded one, so a document built from them is only returned
// when the collector is empty.

// TString of the schemas: Latin-1 printable, no blanks at the edges, no control characters.
const TSTRING = /^[!-\u00ff](?:[ -\u00ff]*[!-\u00ff])?$/;
const PLACA = /^([A-Z]{2,3}[0-9]{4}|[A-Z]{3,4}[0-9]{3}|[A-Z0-9]{7})$/;
const TRNTRC = /^[0-9]{8}$/;

const absent = (v: unknown): v is undefined | null => v === undefined || v === null;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(c: IssueCollector, v: unknown, field: string, min: number, max: number, required: boolean): string | undefined {
  if (absent(v) || v === '') {
    if (required) c.add(field, 'obrigatório');
    return undefined;
  }
  if (typeof v !== 'string') {
    c.add(field, 'deve ser texto');
    return undefined;
  }
  const s = v.trim();
  const len = [...s].length;
  if (len < min || len > max) {
    c.add(field, min === max ? `deve ter ${min} caracteres` : `deve ter de ${min} a ${max} caracteres`);
    return undefined;
  }
  if (!TSTRING.test(s)) {
    c.add(field, 'contém caracteres não permitidos (quebras de linha, tabulações ou símbolos fora do Latin-1)');
    return undefined;
  }
  return s;
}

function code(c: IssueCollector, v: unknown, field: string, allowed: readonly string[], required: boolean): string | undefined {
  if (absent(v) || v === '') {
    if (required) c.add(field, 'obrigatório');
    return undefined;
  }
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !allowed.includes(s)) {
    c.add(field, `código inválido; valores aceitos: ${allowed.join(', ')}`);
    return undefined;
  }
  return s;
}

function matching(c: IssueCollector, v: unknown, field: string, re: RegExp, message: string, required: boolean): string | undefined {
  if (absent(v) || v === '') {
    if (required) c.add(field, 'obrigatório');
    return undefined;
  }
  const s = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
  if (typeof s !== 'string' || !re.test(s)) {
    c.add(field, message);
    return undefined;
  }
  return s;
}

function integer(c: IssueCollector, v: unknown, field: string, min: number, max: number): number | undefined {
  if (absent(v)) {
    c.add(field, 'obrigatório');
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    c.add(field, `deve ser um inteiro de ${min} a ${max}`);
    return undefined;
  }
  return v;
}

function uf(c: IssueCollector, v: unknown, field: string, required: boolean): string | undefined {
  if (absent(v) || v === '') {
    if (required) c.add(field, 'obrigatório');
    return undefined;
  }
  if (!isUF(v)) {
    c.add(field, `UF inexistente: "${String(v)}" (use a sigla em maiúsculas, ex.: SP)`);
    return undefined;
  }
  return v;
}

function group(c: IssueCollector, v: unknown, field: string, required: boolean): Record<string, unknown> | undefined {
  if (absent(v)) {
    if (required) c.add(field, 'obrigatório');
    return undefined;
  }
  if (!isObject(v)) {
    c.add(field, 'deve ser um objeto');
    return undefined;
  }
  return v;
}

function list(c: IssueCollector, v: unknown, field: string, min: number, max: number): unknown[] {
  if (absent(v)) {
    if (min > 0) c.add(field, 'obrigatório');
    return [];
  }
  if (!Array.isArray(v)) {
    c.add(field, 'deve ser uma lista');
    return [];
  }
  if (v.length < min || v.length > max) {
    c.add(field, min === 0 ? `no máximo ${max} itens` : `deve ter de ${min} a ${max} itens`);
    return [];
  }
  return v;
}

/** A group that the specification shows as one object and the schema allows to repeat. */
function oneOrMany(c: IssueCollector, v: unknown, field: string, min: number, max: number): { item: unknown; path: string }[] {
  if (Array.isArray(v)) return list(c, v, field, min, max).map((item, i) => ({ item, path: `${field}[${i}]` }));
  if (absent(v)) {
    if (min > 0) c.add(field, 'obrigatório');
    return [];
  }
  return [{ item: v, path: field }];
}

/** `<CNPJ>` or `<CPF>` of a party, check digits verified; exactly one of the two. */
function partyId(c: IssueCollector, g: Record<string, unknown>, path: string, required: boolean): string | undefined {
  const hasCnpj = !absent(g.CNPJ) && g.CNPJ !== '';
  const hasCpf = !absent(g.CPF) && g.CPF !== '';
  if (hasCnpj && hasCpf) {
    c.add(`${path}.CNPJ`, 'informe CNPJ ou CPF, não os dois');
    return undefined;
  }
  if (hasCnpj) {
    const v = c.capture(() => assertCnpj(g.CNPJ, `${path}.CNPJ`, c));
    return v === undefined ? undefined : text('CNPJ', v);
  }
  if (hasCpf) {
    const v = c.capture(() => assertCpf(g.CPF, `${path}.CPF`));
    return v === undefined ? undefined : text('CPF', v);
  }
  if (required) c.add(`${path}.CNPJ`, 'informe o CNPJ ou o CPF');
  return undefined;
}

function municipalityCode(c: IssueCollector, v: unknown, ufCode: string | undefined, field: string): string | undefined {
  return c.capture(() => assertMunicipality(v, ufCode, field).code);
}

/**
 * A JSON number (or a decimal string) → the schema's decimal string with exactly `scale` places,
 * at most `intDigits` integer digits, no floating-point arithmetic.
 *
 * Why this is exact: JSON.parse yields the double nearest to the literal the client wrote, and
 * Number → String (ECMAScript Number::toString) yields the shortest decimal that maps back to
 * that same double. Any decimal of at most 15 significant digits survives that round trip
 * unchanged (DBL_DIG = 15), so the string form *is* the value sent (up to trailing zeros or
 * exponent notation, which are expanded here). The schema types fit in 15 significant digits
 * (TDec_1302: 13 + 2, TDec_1104: 11 + 4): anything longer is refused by the digit limits below
 * before the guarantee could fail, and more decimals than `scale` is an error, never a rounding.
 * Number.prototype.toFixed is not used: it rounds through binary (1.005.toFixed(2) is "1.00").
 */
export function decimalOf(value: unknown, scale: number, intDigits: number, field: string): string {
  let s: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FieldError(field, 'deve ser um número finito');
    if (value < 0) throw new FieldError(field, 'não pode ser negativo');
    s = expandExponent(String(value));
  } else if (typeof value === 'string') {
    s = value.trim();
  } else {
    throw new FieldError(field, 'deve ser um número (ex.: 1500.5)');
  }
  const units = parseDecimal(s, scale, field);
  if (units >= 10n ** BigInt(intDigits + scale)) {
    throw new FieldError(field, `valor acima do limite do leiaute (${intDigits} dígitos inteiros)`);
  }
  return formatDecimal(units, scale);
}

/** "1.5e+21" → "1500000000000000000000", "1e-7" → "0.0000001"; plain forms pass through. */
function expandExponent(s: string): string {
  const m = /^([0-9]+)(?:\.([0-9]+))?e([+-][0-9]+)$/.exec(s);
  if (!m) return s;
  const digits = m[1]! + (m[2] ?? '');
  const point = m[1]!.length + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

function decimal(c: IssueCollector, v: unknown, field: string, scale: number, intDigits: number): string | undefined {
  if (absent(v) || v === '') {
    c.add(field, 'obrigatório');
    return undefined;
  }
  return c.capture(() => decimalOf(v, scale, intDigits, field));
}

function cteKey(v: unknown, field: string): string {
  if (typeof v !== 'string' || !ACCESS_KEY.test(v)) {
    throw new FieldError(field, 'chave de acesso deve ter 44 posições');
  }
  if (v.slice(20, 22) !== '57') throw new FieldError(field, `a chave é de modelo ${v.slice(20, 22)}; esperado 57 (CT-e)`);
  if (checkDigit(v.slice(0, 43)) !== Number(v[43])) throw new FieldError(field, 'dígito verificador da chave de acesso inválido');
  return v;
}

function nfeKey(v: unknown, field: string): string {
  const parsed = parseAccessKey(v, field);
  if (parsed.model !== '55') throw new FieldError(field, `a chave é de modelo ${parsed.model}; esperado 55 (NF-e)`);
  return parsed.key;
}

// ---------------------------------------------------------------------------------------------
// Groups

function emitGroup(c: IssueCollector, e: Emitter): { xml: string; cUF?: string; cnpj?: string } {
  const p = 'emitente';
  const cnpj = c.capture(() => assertCnpj(e?.cnpj, `${p}.CNPJ`, c));
  const a = group(c, e?.address, `${p}.endereco`, true) ?? {};
  const ufCode = uf(c, a.UF, `${p}.endereco.UF`, true);
  const cUF = ufCode && cUFOf(ufCode);
  // IE is optional in the MDF-e; an "ISENTO" emitter simply has none to inform.
  const ie = e?.ie && e.ie !== 'ISENTO' ? matching(c, e.ie, `${p}.IE`, /^[0-9]{2,14}$/, 'IE deve ter de 2 a 14 dígitos', false) : undefined;
  const fone = typeof a.fone === 'string' ? a.fone.replace(/[^0-9]/g, '') : a.fone;
  const xml = el(
    'emit',
    undefined,
    text('CNPJ', cnpj),
    text('IE', ie),
    text('xNome', str(c, e?.xNome, `${p}.xNome`, 2, 60, true)),
    text('xFant', str(c, e?.xFant, `${p}.xFant`, 1, 60, false)),
    el(
      'enderEmit',
      undefined,
      text('xLgr', str(c, a.xLgr, `${p}.endereco.xLgr`, 2, 60, true)),
      text('nro', str(c, a.nro, `${p}.endereco.nro`, 1, 60, true)),
      text('xCpl', str(c, a.xCpl, `${p}.endereco.xCpl`, 1, 60, false)),
      text('xBairro', str(c, a.xBairro, `${p}.endereco.xBairro`, 2, 60, true)),
      text('cMun', municipalityCode(c, a.cMun, ufCode, `${p}.endereco.cMun`)),
      text('xMun', str(c, a.xMun, `${p}.endereco.xMun`, 2, 60, true)),
      text('CEP', absent(a.CEP) ? undefined : c.capture(() => assertCep(a.CEP, `${p}.endereco.CEP`))),
      text('UF', ufCode),
      text('fone', matching(c, fone, `${p}.endereco.fone`, /^[0-9]{7,12}$/, 'telefone deve ter de 7 a 12 dígitos', false)),
    ),
  );
  return { xml, cUF, cnpj };
}

function ownerGroup(c: IssueCollector, v: unknown): string | undefined {
  const p = 'rodo.veicTracao.prop';
  const g = group(c, v, p, false);
  if (!g) return undefined;
  const ie = absent(g.IE)
    ? ''
    : (matching(c, g.IE, `${p}.IE`, /^([0-9]{0,14}|ISENTO|PR[0-9]{4,8})$/, 'IE deve ter até 14 dígitos, ou ser ISENTO', false) ?? '');
  return el(
    'prop',
    undefined,
    partyId(c, g, p, true),
    text('RNTRC', matching(c, g.RNTRC, `${p}.RNTRC`, TRNTRC, 'RNTRC deve ter 8 dígitos', true)),
    text('xNome', str(c, g.xNome, `${p}.xNome`, 2, 60, true)),
    // IE and UF travel together in the schema; an owner without IE is written with an empty IE
    // (TIeDest admits it) so that the UF is still informed.
    `<IE>${ie}</IE>`,
    text('UF', uf(c, g.UF, `${p}.UF`, true)),
    text('tpProp', code(c, g.tpProp, `${p}.tpProp`, ['0', '1', '2'], true)),
  );
}

function tractionGroup(c: IssueCollector, v: unknown): string {
  const p = 'rodo.veicTracao';
  const g = group(c, v, p, true) ?? {};
  const placa = typeof g.placa === 'string' ? g.placa.toUpperCase().replace(/[-\s]/g, '') : g.placa;
  const drivers = oneOrMany(c, g.condutor, `${p}.condutor`, 1, 10).map(({ item, path }) => {
    const d = group(c, item, path, true) ?? {};
    return el(
      'condutor',
      undefined,
      text('xNome', str(c, d.xNome, `${path}.xNome`, 2, 60, true)),
      text(
        'CPF',
        c.capture(() => assertCpf(d.CPF, `${path}.CPF`)),
      ),
    );
  });
  const kg = /^(0|[1-9][0-9]{0,5})$/;
  return el(
    'veicTracao',
    undefined,
    text('cInt', str(c, g.cInt, `${p}.cInt`, 1, 10, false)),
    text('placa', matching(c, placa, `${p}.placa`, PLACA, 'placa inválida (ex.: ABC1D23 ou ABC1234)', true)),
    text('RENAVAM', matching(c, g.RENAVAM, `${p}.RENAVAM`, /^[0-9]{9,11}$/, 'RENAVAM deve ter de 9 a 11 dígitos', false)),
    text('tara', matching(c, g.tara, `${p}.tara`, kg, 'tara em kg: inteiro de até 6 dígitos', true)),
    text('capKG', matching(c, g.capKG, `${p}.capKG`, kg, 'capacidade em kg: inteiro de até 6 dígitos', false)),
    text('capM3', matching(c, g.capM3, `${p}.capM3`, /^(0|[1-9][0-9]{0,2})$/, 'capacidade em m³: inteiro de até 3 dígitos', false)),
    ownerGroup(c, g.prop),
    drivers,
    text('tpRod', code(c, g.tpRod ?? '06', `${p}.tpRod`, ['01', '02', '03', '04', '05', '06'], true)),
    text('tpCar', code(c, g.tpCar ?? '00', `${p}.tpCar`, ['00', '01', '02', '03', '04', '05'], true)),
    text('UF', uf(c, g.UF, `${p}.UF`, false)),
  );
}

function contractorGroup(c: IssueCollector, v: unknown, path: string): string {
  const g = group(c, v, path, true) ?? {};
  return el('infContratante', undefined, text('xNome', str(c, g.xNome, `${path}.xNome`, 2, 60, false)), partyId(c, g, path, true));
}

function paymentGroup(c: IssueCollector, v: unknown, path: string): string {
  const g = group(c, v, path, true) ?? {};
  const comps = list(c, g.Comp, `${path}.Comp`, 1, 1000).map((item, i) => {
    const cp = `${path}.Comp[${i}]`;
    const comp = group(c, item, cp, true) ?? {};
    return el(
      'Comp',
      undefined,
      text('tpComp', code(c, comp.tpComp, `${cp}.tpComp`, ['01', '02', '03', '04', '99'], true)),
      text('vComp', decimal(c, comp.vComp, `${cp}.vComp`, 2, 13)),
      text('xComp', str(c, comp.xComp, `${cp}.xComp`, 2, 60, false)),
    );
  });
  return el(
    'infPag',
    undefined,
    text('xNome', str(c, g.xNome, `${path}.xNome`, 2, 60, false)),
    partyId(c, g, path, true),
    comps,
    text('vContrato', decimal(c, g.vContrato, `${path}.vContrato`, 2, 13)),
    text('indPag', code(c, g.indPag, `${path}.indPag`, ['0', '1'], true)),
    bankGroup(c, g.infBanc, `${path}.infBanc`),
  );
}

function bankGroup(c: IssueCollector, v: unknown, path: string): string | undefined {
  const g = group(c, v, path, true);
  if (!g) return undefined;
  const has = (k: string) => !absent(g[k]) && g[k] !== '';
  const kinds = [has('PIX'), has('CNPJIPEF'), has('codBanco') || has('codAgencia')].filter(Boolean).length;
  if (kinds !== 1) {
    c.add(path, 'informe exatamente um: PIX, CNPJIPEF, ou codBanco e codAgencia');
    return undefined;
  }
  if (has('PIX')) return el('infBanc', undefined, text('PIX', str(c, g.PIX, `${path}.PIX`, 2, 60, true)));
  if (has('CNPJIPEF'))
    return el(
      'infBanc',
      undefined,
      text(
        'CNPJIPEF',
        c.capture(() => assertCnpj(g.CNPJIPEF, `${path}.CNPJIPEF`, c)),
      ),
    );
  return el(
    'infBanc',
    undefined,
    text('codBanco', str(c, g.codBanco, `${path}.codBanco`, 3, 5, true)),
    text('codAgencia', str(c, g.codAgencia, `${path}.codAgencia`, 1, 10, true)),
  );
}

function roadModal(c: IssueCollector, v: unknown): string {
  const g = group(c, v, 'rodo', true) ?? {};
  const rntrc = matching(c, g.RNTRC, 'rodo.RNTRC', TRNTRC, 'RNTRC deve ter 8 dígitos', false);
  const contractors = list(c, g.infContratante, 'rodo.infContratante', 0, 1000).map((item, i) => contractorGroup(c, item, `rodo.infContratante[${i}]`));
  const payments = list(c, g.infPag, 'rodo.infPag', 0, 1000).map((item, i) => paymentGroup(c, item, `rodo.infPag[${i}]`));
  const antt = rntrc || contractors.length || payments.length ? el('infANTT', undefined, text('RNTRC', rntrc), contractors, payments) : undefined;
  return el('rodo', undefined, antt, tractionGroup(c, g.veicTracao));
}

function insuranceGroups(c: IssueCollector, v: unknown, emitterCnpj: string | undefined): string[] {
  return oneOrMany(c, v, 'seg', 0, 1000).map(({ item, path }) => {
    const g = (group(c, item, path, true) ?? {}) as Partial<Record<keyof MdfeInsurance, unknown>>;
    const respSeg = code(c, g.respSeg, `${path}.respSeg`, ['1', '2'], true);
    // The emitter is the responsible party for respSeg 1: its CNPJ is known, so it is filled in.
    let responsible = partyId(c, g as Record<string, unknown>, path, false);
    if (!responsible && respSeg === '1' && emitterCnpj) responsible = text('CNPJ', emitterCnpj);
    const xSeg = str(c, g.xSeg, `${path}.xSeg`, 1, 30, false);
    const insurer = absent(g.seg_CNPJ) || g.seg_CNPJ === '' ? '' : c.capture(() => assertCnpj(g.seg_CNPJ, `${path}.seg_CNPJ`, c));
    const endorsements = Array.isArray(g.nAver)
      ? g.nAver.map((n, i) => text('nAver', str(c, n, `${path}.nAver[${i}]`, 1, 40, true)))
      : [text('nAver', str(c, g.nAver, `${path}.nAver`, 1, 40, false))];
    return el(
      'seg',
      undefined,
      el('infResp', undefined, text('respSeg', respSeg), responsible),
      // infSeg needs xSeg; a group without the insurer's name is incomplete (rejection 699).
      xSeg ? el('infSeg', undefined, text('xSeg', xSeg), `<CNPJ>${insurer ?? ''}</CNPJ>`) : undefined,
      text('nApol', str(c, g.nApol, `${path}.nApol`, 1, 20, false)),
      endorsements,
    );
  });
}

function productGroup(c: IssueCollector, v: unknown): string | undefined {
  const p = 'prodPred';
  const g = group(c, v, p, false);
  if (!g) return undefined;
  const ncm = absent(g.NCM) || g.NCM === '' ? undefined : /^[0-9]{2}$/.test(String(g.NCM)) ? String(g.NCM) : c.capture(() => assertNcm(g.NCM, `${p}.NCM`));
  const lot = group(c, g.infLotacao, `${p}.infLotacao`, false);
  const tpCargas = ['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12'];
  return el(
    'prodPred',
    undefined,
    text('tpCarga', code(c, g.tpCarga, `${p}.tpCarga`, tpCargas, true)),
    text('xProd', str(c, g.xProd, `${p}.xProd`, 1, 120, true)),
    text('cEAN', absent(g.cEAN) || g.cEAN === '' ? undefined : c.capture(() => assertGtinOrSemGtin(g.cEAN, `${p}.cEAN`))),
    text('NCM', ncm),
    lot &&
      el(
        'infLotacao',
        undefined,
        el(
          'infLocalCarrega',
          undefined,
          text(
            'CEP',
            c.capture(() => assertCep(lot.cepCarrega, `${p}.infLotacao.cepCarrega`)),
          ),
        ),
        el(
          'infLocalDescarrega',
          undefined,
          text(
            'CEP',
            c.capture(() => assertCep(lot.cepDescarrega, `${p}.infLotacao.cepDescarrega`)),
          ),
        ),
      ),
  );
}

// ---------------------------------------------------------------------------------------------
// Document

/**
 * Validates the request and writes the unsigned <MDFe> (without infMDFeSupl). Throws FieldError
 * listing every bad field; the tax authority's content rules are left to mdfeRuleViolation.
 */
export function buildMdfe(input: MdfeRequest, ctx: MdfeBuildContext): BuiltMdfe {
  if (!isObject(input)) throw new FieldError('body', 'o corpo deve ser um objeto JSON');
  const c = new IssueCollector();
  const body = input as unknown as Record<string, unknown>;
  const ide = checkIde(c, body, ctx);
  const emit = emitGroup(c, ctx.emitter);
  const rodo = roadModal(c, body.rodo);
  const docs = documentGroups(c, body.infDoc, ide.ufFim);
  const seg = insuranceGroups(c, body.seg, emit.cnpj);
  const prodPred = productGroup(c, body.prodPred);
  const tot = totalGroup(c, body.tot, docs.qCTe, docs.qNFe);
  const seals = list(c, body.lacres, 'lacres', 0, 1000).map((item, i) => {
    const g = group(c, item, `lacres[${i}]`, true) ?? {};
    return el('lacres', undefined, text('nLacre', str(c, g.nLacre, `lacres[${i}].nLacre`, 1, 60, true)));
  });
  const infAdic = additionalInfo(c, body.infAdic);
  refuseCnpjsNotYetInForce(c, ide.dhEmi, environmentOfTpAmb(ide.tpAmb));

  let cMDF = ctx.cMDF;
  if (cMDF !== undefined && ide.nMDF !== undefined && !isValidNumericCode(cMDF, ide.nMDF)) {
    c.add('cMDF', 'código numérico inválido: 8 dígitos, sem repetição ou sequência, diferente de nMDF (NT 2019.001)');
  }
  c.throwIfAny();

  cMDF ??= generateNumericCode(ide.nMDF!);
  const dhEmi = ide.dhEmi!;
  const key = buildAccessKey({
    cUF: emit.cUF!,
    yearMonth: dhEmi.slice(2, 4) + dhEmi.slice(5, 7),
    cnpj: emit.cnpj!,
    model: '58',
    serie: ide.serie!,
    number: ide.nMDF!,
    tpEmis: ide.tpEmis,
    code: cMDF,
  });

  const children: Child[] = [
    ideXml(ide, key, cMDF, emit.cUF),
    emit.xml,
    el('infModal', { versaoModal: '3.00' }, rodo),
    el('infDoc', undefined, docs.xml),
    ...seg,
    prodPred,
    tot,
    ...seals,
    infAdic,
    ctx.emitter.respTec && infRespTecXml(ctx.emitter.respTec, key, 'mdfe'),
  ];
  const xml = el('MDFe', { xmlns: NS_MDFE }, el('infMDFe', { versao: '3.00', Id: `MDFe${key}` }, children));
  return { key, cMDF, tpAmb: ide.tpAmb, tpEmis: ide.tpEmis, dhEmi, xml };
}

/** ide as checked (undefined fields were reported), with its loading and route groups written. */
type CheckedIde = {
  tpEmis: 1 | 2;
  tpAmb: 1 | 2;
  dhEmi?: string;
  verProc?: string;
  nMDF?: number;
  serie?: number;
  modal?: string;
  tpEmit?: string;
  tpTransp?: string;
  ufIni?: string;
  ufFim?: string;
  loading: string[];
  route: string[];
  dhIniViagem?: string;
};

function checkIde(c: IssueCollector, body: Record<string, unknown>, ctx: MdfeBuildContext): CheckedIde {
  const ide = group(c, body.ide, 'ide', true) ?? {};
  const tpEmis = ctx.tpEmis ?? 1;
  if (tpEmis !== 1 && tpEmis !== 2) c.add('tpEmis', 'deve ser 1 (normal) ou 2 (contingência)');
  const tpAmb = tpAmbOf(ctx.emitter?.environment);
  const dhEmi = c.capture(() => brasiliaDateTime(ctx.dhEmi, 'dhEmi'));
  const verProc = str(c, ctx.verProc ?? DEFAULT_VER_PROC, 'verProc', 1, 20, true);

  const nMDF = integer(c, ide.nMDF, 'ide.nMDF', 1, 999_999_999);
  const serie = integer(c, ide.serie, 'ide.serie', 0, 999);
  const modal = code(c, ide.modal ?? '1', 'ide.modal', ['1'], true);
  const tpEmit = code(c, ide.tpEmit, 'ide.tpEmit', ['1', '2', '3'], true);
  const tpTransp = code(c, body.tpTransp, 'tpTransp', ['1', '2', '3'], false);
  const ufIni = uf(c, ide.UFIni, 'ide.UFIni', true);
  const ufFim = uf(c, ide.UFFim, 'ide.UFFim', true);

  const loading = list(c, ide.infMunCarrega, 'ide.infMunCarrega', 1, 50).map((item, i) => {
    const p = `ide.infMunCarrega[${i}]`;
    const g = group(c, item, p, true) ?? {};
    return el(
      'infMunCarrega',
      undefined,
      // Loading happens in the state the trip starts from (rejection 612 otherwise).
      text('cMunCarrega', municipalityCode(c, g.cMunCarrega, ufIni, `${p}.cMunCarrega`)),
      text('xMunCarrega', str(c, g.xMunCarrega, `${p}.xMunCarrega`, 2, 60, true)),
    );
  });
  const route = list(c, ide.infPercurso, 'ide.infPercurso', 0, 25).map((item, i) => {
    const p = `ide.infPercurso[${i}]`;
    const g = group(c, item, p, true) ?? {};
    return el('infPercurso', undefined, text('UFPer', uf(c, g.UFPer, `${p}.UFPer`, true)));
  });
  const dhIniViagem = absent(ide.dhIniViagem) ? undefined : c.capture(() => brasiliaDateTime(ide.dhIniViagem as DateInput, 'ide.dhIniViagem'));
  return { tpEmis, tpAmb, dhEmi, verProc, nMDF, serie, modal, tpEmit, tpTransp, ufIni, ufFim, loading, route, dhIniViagem };
}

function ideXml(ide: CheckedIde, key: string, cMDF: string, cUF: string | undefined): string {
  return el(
    'ide',
    undefined,
    text('cUF', cUF),
    text('tpAmb', ide.tpAmb),
    text('tpEmit', ide.tpEmit),
    text('tpTransp', ide.tpTransp),
    text('mod', '58'),
    text('serie', ide.serie),
    text('nMDF', ide.nMDF),
    text('cMDF', cMDF),
    text('cDV', key[43]),
    text('modal', ide.modal),
    text('dhEmi', ide.dhEmi),
    text('tpEmis', ide.tpEmis),
    text('procEmi', '0'),
    text('verProc', ide.verProc),
    text('UFIni', ide.ufIni),
    text('UFFim', ide.ufFim),
    ide.loading,
    ide.route,
    text('dhIniViagem', ide.dhIniViagem),
  );
}

/** infDoc: the unloading municipalities with their CT-e and NF-e, and how many of each. */
function documentGroups(c: IssueCollector, v: unknown, ufFim: string | undefined): { xml: string[]; qCTe: number; qNFe: number } {
  let qCTe = 0;
  let qNFe = 0;
  const infDoc = group(c, v, 'infDoc', true) ?? {};
  const xml = list(c, infDoc.infMunDescarga, 'infDoc.infMunDescarga', 1, 1000).map((item, i) => {
    const p = `infDoc.infMunDescarga[${i}]`;
    const g = group(c, item, p, true) ?? {};
    const ctes = list(c, g.infCTe, `${p}.infCTe`, 0, 20000).map((doc, j) => {
      const d = group(c, doc, `${p}.infCTe[${j}]`, true) ?? {};
      qCTe++;
      return el(
        'infCTe',
        undefined,
        text(
          'chCTe',
          c.capture(() => cteKey(d.chCTe, `${p}.infCTe[${j}].chCTe`)),
        ),
      );
    });
    const nfes = list(c, g.infNFe, `${p}.infNFe`, 0, 20000).map((doc, j) => {
      const d = group(c, doc, `${p}.infNFe[${j}]`, true) ?? {};
      qNFe++;
      return el(
        'infNFe',
        undefined,
        text(
          'chNFe',
          c.capture(() => nfeKey(d.chNFe, `${p}.infNFe[${j}].chNFe`)),
        ),
      );
    });
    return el(
      'infMunDescarga',
      undefined,
      // Unloading happens in the state the trip ends in.
      text('cMunDescarga', municipalityCode(c, g.cMunDescarga, ufFim, `${p}.cMunDescarga`)),
      text('xMunDescarga', str(c, g.xMunDescarga, `${p}.xMunDescarga`, 2, 60, true)),
      ctes,
      nfes,
    );
  });
  return { xml, qCTe, qNFe };
}

function totalGroup(c: IssueCollector, v: unknown, qCTe: number, qNFe: number): string {
  const t = group(c, v, 'tot', true) ?? {};
  const tot = el(
    'tot',
    undefined,
    qCTe ? text('qCTe', qCTe) : undefined,
    qNFe ? text('qNFe', qNFe) : undefined,
    text('vCarga', decimal(c, t.vCarga, 'tot.vCarga', 2, 13)),
    text('cUnid', code(c, t.cUnid, 'tot.cUnid', ['01', '02'], true)),
    text('qCarga', decimal(c, t.qCarga, 'tot.qCarga', 4, 11)),
  );
  if (qCTe > 999_999 || qNFe > 999_999) c.add('infDoc', 'no máximo 999999 documentos de cada tipo');
  return tot;
}

function additionalInfo(c: IssueCollector, v: unknown): string | undefined {
  const adic = group(c, v, 'infAdic', false);
  const infAdFisco = adic && str(c, adic.infAdFisco, 'infAdic.infAdFisco', 1, 2000, false);
  const infCpl = adic && str(c, adic.infCpl, 'infAdic.infCpl', 1, 5000, false);
  return infAdFisco || infCpl ? el('infAdic', undefined, text('infAdFisco', infAdFisco), text('infCpl', infCpl)) : undefined;
}

/**
 * Builds, adds infMDFeSupl/qrCodMDFe (with `sign` in contingency) and signs: the <MDFe> to send.
 * The Signature goes after infMDFeSupl, as the last child of <MDFe>; the Reference covers infMDFe.
 */
export function issueMdfe(input: MdfeRequest, ctx: MdfeIssueContext): IssuedMdfe {
  const built = buildMdfe(input, ctx);
  const qrCode = mdfeQrCode({
    key: built.key,
    tpAmb: built.tpAmb,
    tpEmis: built.tpEmis,
    privateKeyPem: ctx.credentials.privateKeyPem,
  });
  const supl = el('infMDFeSupl', undefined, text('qrCodMDFe', qrCode));
  const unsigned = built.xml.replace(/<\/MDFe>$/, `${supl}</MDFe>`);
  return { key: built.key, cMDF: built.cMDF, xml: signXml(unsigned, ctx.credentials), qrCode };
}

// ---------------------------------------------------------------------------------------------
// The tax authority's stateless content rules

export type RuleViolation = { cStat: string; xMotivo: string };

/**
 * Texts: MDF-e 3.00 rejection tables (docs/fiscal.md, "MDF-e"). 745 has no known official wording for
 * the MDF-e (NT 2021.002 created it; the public tables skip it): the texts below are ours, built
 * from the vendors' description "tpTransp informado sem o grupo prop", and are not official.
 */
export const MDFE_REJECTIONS = {
  tpTranspSemProp: { cStat: '745', xMotivo: 'Rejeição: Informado tpTransp sem o grupo do proprietário do veículo (prop)' },
  propSemTpTransp: { cStat: '745', xMotivo: 'Rejeição: Informado o grupo do proprietário do veículo (prop) sem tpTransp' },
  seguroIncompleto: { cStat: '699', xMotivo: 'Rejeição: Dados do seguro de carga incompletos para o modal rodoviário' },
  seguroObrigatorio: {
    cStat: '698',
    xMotivo: 'Rejeição: Seguro da carga é obrigatório para modal Prestador de Serviço de Transporte no modal rodoviário',
  },
  produtoPredominante: { cStat: '725', xMotivo: 'Rejeição: Grupo produto predominante deve ser informado para modal rodoviário' },
  tomadores: { cStat: '578', xMotivo: 'Rejeição: Informações dos tomadores é obrigatória para esta operação' },
  percurso: { cStat: '663', xMotivo: 'Rejeição: Percurso informado inválido' },
} as const satisfies Record<string, RuleViolation>;

const informed = (v: unknown): boolean => !absent(v) && v !== '' && !(Array.isArray(v) && v.filter((x) => !absent(x) && x !== '').length === 0);

/**
 * The first of the stateless rejection rules (docs/api.md, "MDF-e") that the request breaks, in
 * this order: 745, 699, 698, 725, 578, 663. 611 (open manifest for the plate) and 204 (number
 * already authorized) need the service's state and are checked there, after these.
 *
 * Meant for a request that buildMdfe accepted. The rules apply to the road modal, the only one
 * issued here, whatever tpEmit: the contract states them unconditionally (the real authority
 * restricts 698 to the transport provider, tpEmit 1).
 * - 745: tpTransp and veicTracao.prop go together (third-party freight) or not at all (own fleet).
 * - 699: an insurance group lacking the insurer (xSeg, seg_CNPJ), the policy (nApol) or the
 *   endorsement (nAver); respSeg itself is an input error, the schema requires it.
 * - 698: no insurance group.
 * - 725: no prodPred. 578: no rodo.infContratante.
 * - 663: infPercurso is not a chain of bordering states from UFIni to UFFim (percurso.ts).
 */
export function mdfeRuleViolation(input: MdfeRequest): RuleViolation | undefined {
  const hasTpTransp = informed(input.tpTransp);
  const hasProp = !absent(input.rodo?.veicTracao?.prop);
  if (hasTpTransp && !hasProp) return { ...MDFE_REJECTIONS.tpTranspSemProp };
  if (hasProp && !hasTpTransp) return { ...MDFE_REJECTIONS.propSemTpTransp };

  const insurance = absent(input.seg) ? [] : Array.isArray(input.seg) ? input.seg : [input.seg];
  const complete = (s: MdfeInsurance) => informed(s?.xSeg) && informed(s?.seg_CNPJ) && informed(s?.nApol) && informed(s?.nAver);
  if (insurance.length > 0 && !insurance.every(complete)) return { ...MDFE_REJECTIONS.seguroIncompleto };
  if (insurance.length === 0) return { ...MDFE_REJECTIONS.seguroObrigatorio };

  if (absent(input.prodPred)) return { ...MDFE_REJECTIONS.produtoPredominante };
  if (!input.rodo?.infContratante?.length) return { ...MDFE_REJECTIONS.tomadores };

  const route = (input.ide?.infPercurso ?? []).map((p) => p?.UFPer ?? '');
  if (!validateRoute(input.ide?.UFIni ?? '', input.ide?.UFFim ?? '', route).valid) return { ...MDFE_REJECTIONS.percurso };
  return undefined;
}
