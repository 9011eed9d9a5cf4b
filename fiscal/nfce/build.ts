// The NFC-e (model 65, layout 4.00, PL_010) from the request of POST /api/v1/nfce: checked,
// written in schema order, signed, with its QR Code (docs/fiscal.md, from "Access key" to "Payments", and "Offline contingency").
//
// Every problem of the request is collected and thrown at once as a FieldError naming the field
// in API path style (`det[1].prod.NCM`); nothing is returned then. Money is bigint cents and
// decimal strings throughout, never floating point.
//
// Decisions (documented here because the specification leaves them open):
// - vProd of an item must equal qCom × vUnCom rounded half-up to the cent (and the same for
//   qTrib × vUnTrib): SEFAZ rejects 629 otherwise, so we refuse it before it gets there.
// - total.vProd must equal the sum of the items with indTot 1; total.vNF must equal
//   vProd − vDesc − vICMSDeson (deduzido) + vST + vFCPST (frete, seguro, outras, II and IPI do
//   not exist in our NFC-e); total.vDesc, when sent, must equal the items' vDesc.
// - Payments: their sum may exceed vNF only by the change (vTroco). Without vTroco the
//   difference is written as vTroco; with it, it must match.
// - vTotTrib (Lei 12.741/2012, "valor aproximado dos tributos"): an item's own
//   imposto.vTotTrib is kept. When the body's vTotTrib is given, what the items did not declare
//   is spread over the other items in proportion to their net value (largest remainder, to the
//   cent), so ICMSTot/vTotTrib always equals the sum of the items (rejection 685). When it is
//   absent, each undeclared item gets net value × an approximate rate: ctx.vTotTribRate, else
//   DEFAULT_VTOTTRIB_RATES by CRT. Those defaults are rough national averages, not the IBPT
//   table by NCM; a store that must print precise figures sends its own.
// - Tax reform (IBS/CBS, fiscal/ibscbs/): CRT 3 from 2026-01-01, and CRT 1/2/4 that opted in,
//   write det/imposto/IBSCBS on every item, det/vItem, total/IBSCBSTot and total/vNFTot. The
//   item's classification comes from the request or the company's default; the values are
//   computed with the rates in force on dhEmi's date (the company's overrides first) and, when
//   the request sends them, checked. A company that does not write the groups may send an
//   item's classification (a catalog fact), which is checked and left out; values are refused.
// - NT 2026.002: above R$ 10.000,00 (or the UF's limit) the consumer's CPF or CNPJ is required
//   (750), reported on `dest`; finNFe is always 1 (715).
// - Card data is NOT required by the builder: a card payment without `card` is written without
//   the group, so the (sandbox) authority can reject it with 391. `paymentRuleViolation` tells
//   the caller in advance.

import { buildAccessKey, generateNumericCode, isValidNumericCode } from '../access-key.ts';
import { qrBaseUrlOf, urlChaveOf } from '../br/nfce-urls.ts';
import { assertCfop, assertMunicipality, assertNcm } from '../br/catalogs.ts';
import { assertCnpj, assertCpf, assertGtinOrSemGtin } from '../br/documents.ts';
import type { Emitter } from '../company.ts';
import { checkEmitter } from '../emit-block.ts';
import { FieldError, IssueCollector } from '../errors.ts';
import {
  allocate,
  asObject,
  DEC,
  decimal,
  instant,
  integer,
  isAbsent,
  optTString,
  pattern,
  productCents,
  tString,
  type Dec,
} from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { NS_NFE } from '../protocol.ts';
import { nfceQrCodeOffline, nfceQrCodeOnline, type QrDest } from '../qrcode.ts';
import { digestValueOf, signXml, type SigningCredentials } from '../signature.ts';
import { ibsCbsTotals, ibsCbsTotXml, ibsCbsXml, vNFTotXml } from '../ibscbs/document.ts';
import { itemIbsCbs, type IbsCbsItem, type ReformRates } from '../ibscbs/item.ts';
import { RATE_NAMES, ratesAt } from '../ibscbs/rates.ts';
import { checkIbsCbsSettings, reformApplies } from '../ibscbs/settings.ts';
import {
  COFINS_VARIANTS,
  ICMS_VARIANTS,
  icmsTot,
  itemValue,
  PIS_VARIANTS,
  taxGroup,
  totalXml as writeTotal,
  writeTax,
  type TaxOut,
} from '../tax-groups.ts';
import { el, firstText, text } from '../xml.ts';
import { consumerIdentificationRequired, identificationRequiredMessage } from './consumer-identification.ts';
import type { NfceCard, NfceRequest } from './types.ts';

// The tax tables moved to fiscal/tax-groups.ts (shared with the NF-e de devolução); kept
// importable from here for the callers that know them by this module.
export { COFINS_VARIANTS, ICMS_VARIANTS, PIS_VARIANTS } from '../tax-groups.ts';

// =============================================================================================
// Constants of the layout and of the rules

/** Rejection 373: item 1's description in homologação. */
export const HOMOLOGACAO_XPROD = 'NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL';
/** Rejection 598: dest/xNome in homologação. */
export const HOMOLOGACAO_DEST_XNOME = 'NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL';

export const DEFAULT_VERPROC = 'Balcão 0.1.0';

const RATE_LABELS = { pIBSUF: 'do IBS da UF', pIBSMun: 'do IBS do município', pCBS: 'da CBS' } as const;
export const DEFAULT_NATOP = 'VENDA';

/**
 * Approximate tax burden (percent of the item's net value) used for vTotTrib when the request
 * gives none. Simples Nacional and MEI: 4.00, the nominal rate of the first bracket of Anexo I
 * (comércio). Regime normal (and Simples above the sub-limit, which pays ICMS outside the DAS):
 * 31.45, i.e. 13.45 federal + 18.00 ICMS, the usual IBPT figures for a national good.
 */
export const DEFAULT_VTOTTRIB_RATES: Readonly<Record<1 | 2 | 3 | 4, string>> = Object.freeze({
  1: '4.00',
  2: '31.45',
  3: '31.45',
  4: '4.00',
});

/** tPag codes after NT 2020.006 / NT 2023.004 (docs/fiscal.md, "Payments"). */
export const TPAG_CODES: readonly string[] = [
  '01', '02', '03', '04', '05', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '20', '21', '22', '90', '91', '99',
];

/** Payments for which the body's top-level `card` applies and whose missing card is rejection 391. */
export const CARD_TPAG: readonly string[] = ['03', '04'];

export const REJECTION_TEXTS = {
  391: 'Não informados os dados do cartão de crédito / débito nas Formas de Pagamento da Nota Fiscal',
  392: 'Não informados os dados da operação de pagamento por cartão de crédito / débito',
} as const;

// =============================================================================================
// Public API

export type ContingencyInput = { dhCont: Date | string; xJust: string };

export type BuildNfceContext = {
  emitter: Emitter;
  /** Issue instant: a Date or ISO 8601 with offset; written in the Brasília offset. */
  dhEmi: Date | string;
  /** 1 normal (online), 9 offline contingency. */
  tpEmis: 1 | 9;
  /** Required with tpEmis 9: entry into contingency (≤ dhEmi) and its justification (15–256). */
  contingency?: ContingencyInput;
  /** cNF of the key; generated (NT 2019.001 rules) when absent. Reuse it when re-issuing. */
  cNF?: string;
  verProc?: string;
  /** Municipality of the taxable event; the emitter's cMun by default. */
  cMunFG?: string;
  /** Percent used to estimate vTotTrib when the request has none (e.g. "12.50"); see the header. */
  vTotTribRate?: string;
};

export type IssueNfceContext = BuildNfceContext & {
  credentials: SigningCredentials;
  /** Overrides of the per-UF address tables (company settings). */
  qrBaseUrl?: string;
  urlChave?: string;
};

export type BuiltNfce = {
  key: string;
  /** Unsigned `<NFe xmlns="…"><infNFe …>…</infNFe></NFe>`, no XML declaration. */
  xml: string;
  cNF: string;
  cDV: string;
  /** As written in ide/dhEmi. */
  dhEmi: string;
  tpAmb: 1 | 2;
  tpEmis: 1 | 9;
  uf: string;
  vNF: string;
  vTotTrib: string;
  vTroco?: string;
  /** The consumer's identification, for the v3 offline QR. */
  dest?: QrDest;
};

export type IssuedNfce = {
  key: string;
  /** Signed `<NFe>` with infNFeSupl (qrCode, urlChave), Signature last. */
  xml: string;
  qrCode: string;
  urlChave: string;
  digestValue: string;
  dhEmi: string;
  tpAmb: 1 | 2;
  tpEmis: 1 | 9;
  vNF: string;
  vTotTrib: string;
};

export type PaymentRuleViolation = { cStat: 391 | 392; xMotivo: string };

type ItemOut = {
  prod: [string, string | undefined][];
  icms: TaxOut;
  pis?: TaxOut;
  cofins?: TaxOut;
  vTotTribOwn?: bigint;
  /** null: the item carries no IBSCBS. */
  ibsCbs: IbsCbsItem | null;
  vProd: bigint;
  vDesc: bigint;
  indTot: string;
};

type CardOut = { tpIntegra: string; CNPJ?: string; tBand?: string; cAut?: string; CNPJReceb?: string; idTermPag?: string };
type PagOut = { indPag?: string; tPag: string; xPag?: string; vPag: Dec; dPag?: string; card?: CardOut };

/** The card group that applies to a payment: its own, or the body's for a card tPag. */
function cardOf(input: NfceRequest, pag: { tPag?: unknown; card?: NfceCard }, i: number): { card?: NfceCard; path: string } {
  if (pag.card !== undefined && pag.card !== null) return { card: pag.card, path: `pag[${i}].card` };
  if (typeof pag.tPag === 'string' && CARD_TPAG.includes(pag.tPag) && input.card) return { card: input.card, path: 'card' };
  return { path: `pag[${i}].card` };
}

/**
 * Rules 391/392 of the payment group (docs/fiscal.md, "Payments"), for the (sandbox) authority and for
 * callers who want to warn before sending. The builder itself does not enforce them.
 */
export function paymentRuleViolation(input: NfceRequest): PaymentRuleViolation | undefined {
  if (!input || !Array.isArray(input.pag)) return undefined;
  for (const [i, pag] of input.pag.entries()) {
    if (!pag || typeof pag !== 'object') continue;
    const { card } = cardOf(input, pag, i);
    if (!card) {
      if (CARD_TPAG.includes(pag.tPag)) return { cStat: 391, xMotivo: REJECTION_TEXTS[391] };
      continue;
    }
    const tpIntegra = card.tpIntegra ?? '2';
    if (tpIntegra === '1' && (isAbsent(card.CNPJ) || isAbsent(card.cAut))) {
      return { cStat: 392, xMotivo: REJECTION_TEXTS[392] };
    }
  }
  return undefined;
}

/** Checks the request and writes the unsigned NFC-e. Throws FieldError with every issue found. */
export function buildNfce(input: NfceRequest, ctx: BuildNfceContext): BuiltNfce {
  return build(input, ctx, new IssueCollector());
}

function build(input: NfceRequest, ctx: BuildNfceContext, issues: IssueCollector): BuiltNfce {
  const cap = <T>(check: () => T): T | undefined => issues.capture(check);

  if (typeof input !== 'object' || input === null) throw new FieldError('body', 'corpo da NFC-e obrigatório');
  const emitter = ctx.emitter;
  if (!emitter) throw new FieldError('emit', 'dados do emitente não configurados');

  // -------------------------------------------------------------------------------------------
  // Emitter
  const emit = checkEmitter(emitter, issues);
  const { tpAmb, uf, cUF, crt } = emit;
  const emitCnpj = emit.cnpj;
  const homolog = tpAmb === 2;
  const address = emitter.address ?? ({} as Emitter['address']);

  // -------------------------------------------------------------------------------------------
  // ide
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
  const cMunFG = cap(() => assertMunicipality(ctx.cMunFG ?? address.cMun, uf, 'ide.cMunFG').code);
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

  // -------------------------------------------------------------------------------------------
  // Tax reform: whether this NFC-e carries the IBS/CBS groups, and with which rates
  const ibsCbsSettings = checkIbsCbsSettings(emitter.ibsCbs, 'emit.ibsCbs', issues);
  const reformDate = dhEmi?.text.slice(0, 10);
  let reform: ReformRates | undefined;
  let reformOk = ibsCbsSettings !== undefined && reformDate !== undefined;
  if (reformDate && ibsCbsSettings && reformApplies(crt, ibsCbsSettings, reformDate)) {
    const r = ratesAt(reformDate, ibsCbsSettings.rates);
    const missing = RATE_NAMES.filter((name) => r[name] === undefined);
    for (const name of missing) {
      issues.add(
        'emit.ibsCbs.rates',
        `alíquota ${RATE_LABELS[name]} vigente em ${reformDate} ainda não publicada: informe-a nas alíquotas do IBS/CBS por período da empresa`,
      );
    }
    if (missing.length === 0) reform = { date: reformDate, pIBSUF: r.pIBSUF!, pIBSMun: r.pIBSMun!, pCBS: r.pCBS!, inPrice: r.inPrice };
    else reformOk = false;
  }
  const reformAbsent =
    reformDate !== undefined && reformDate < '2026-01-01'
      ? `o IBS e a CBS começam em 2026-01-01; esta NFC-e é de ${reformDate}`
      : `emitente com CRT ${crt} não informa IBS/CBS: a opção está desativada nas configurações da empresa`;

  // -------------------------------------------------------------------------------------------
  // dest
  let destOut: { tag: 'CPF' | 'CNPJ' | 'idEstrangeiro'; doc: string; xNome?: string } | undefined;
  if (input.dest !== undefined && input.dest !== null) {
    const d = asObject(input.dest, 'dest', issues);
    if (d) {
      for (const k of ['IE', 'ie', 'indIEDest']) {
        if (k in d) issues.add(`dest.${k}`, 'NFC-e não admite IE do destinatário (rejeição 729); indIEDest é sempre 9');
      }
      const ids = (['cpf', 'cnpj', 'idEstrangeiro'] as const).filter((k) => d[k] !== undefined && d[k] !== null);
      if (ids.length !== 1) {
        issues.add('dest', ids.length ? 'informe apenas um entre cpf, cnpj e idEstrangeiro' : 'informe o cpf, o cnpj ou o idEstrangeiro do consumidor');
      } else {
        const id = ids[0]!;
        const doc = cap(() => {
          if (id === 'cpf') return assertCpf(d.cpf, 'dest.cpf');
          if (id === 'cnpj') {
            const v = assertCnpj(d.cnpj, 'dest.cnpj');
            if (!/^[0-9]{14}$/.test(v)) throw new FieldError('dest.cnpj', 'CNPJ alfanumérico ainda não é aceito pelo Balcão');
            return v;
          }
          if (typeof d.idEstrangeiro !== 'string' || !/^([!-\u00ff]{5,20})?$/.test(d.idEstrangeiro)) {
            throw new FieldError('dest.idEstrangeiro', 'documento do estrangeiro: de 5 a 20 caracteres sem espaços, ou vazio');
          }
          return d.idEstrangeiro;
        });
        const xNome = homolog ? HOMOLOGACAO_DEST_XNOME : cap(() => optTString(d.xNome, 'dest.xNome', 2, 60));
        if (doc !== undefined) destOut = { tag: id === 'cpf' ? 'CPF' : id === 'cnpj' ? 'CNPJ' : 'idEstrangeiro', doc, xNome };
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // det
  const items: ItemOut[] = [];
  let itemsOk = true;
  if (!Array.isArray(input.det) || input.det.length === 0) {
    issues.add('det', 'informe ao menos um item');
    itemsOk = false;
  } else if (input.det.length > 990) {
    issues.add('det', 'no máximo 990 itens');
    itemsOk = false;
  }
  const simples = crt === 1 || crt === 4;
  for (const [i, item] of (Array.isArray(input.det) ? input.det : []).entries()) {
    const base = `det[${i}]`;
    const before = issues.issues.length;
    const it = asObject(item, base, issues);
    const prod = it && asObject(it.prod, `${base}.prod`, issues);
    const imposto = it && asObject(it.imposto, `${base}.imposto`, issues);
    if (!prod || !imposto) {
      itemsOk = false;
      continue;
    }
    const p = `${base}.prod`;
    const xProd = homolog && i === 0 ? HOMOLOGACAO_XPROD : cap(() => tString(prod.xProd, `${p}.xProd`, 1, 120));
    const qCom = cap(() => decimal(prod.qCom, `${p}.qCom`, DEC.q));
    const vUnCom = cap(() => decimal(prod.vUnCom, `${p}.vUnCom`, DEC.vUn));
    const vProd = cap(() => decimal(prod.vProd, `${p}.vProd`, DEC.v));
    const qTrib = cap(() => decimal(prod.qTrib, `${p}.qTrib`, DEC.q));
    const vUnTrib = cap(() => decimal(prod.vUnTrib, `${p}.vUnTrib`, DEC.vUn));
    const vDesc = isAbsent(prod.vDesc) ? undefined : cap(() => decimal(prod.vDesc, `${p}.vDesc`, DEC.vOpc));
    if (qCom && vUnCom && vProd) {
      const expected = productCents(qCom.units, vUnCom.units);
      if (expected !== vProd.units) {
        issues.add(`${p}.vProd`, `deve ser qCom × vUnCom arredondado ao centavo: esperado ${fromCents(expected)} (rejeição 629)`);
      }
    }
    if (qTrib && vUnTrib && vProd) {
      const expected = productCents(qTrib.units, vUnTrib.units);
      if (expected !== vProd.units) {
        issues.add(`${p}.vUnTrib`, `qTrib × vUnTrib deve resultar em vProd (${vProd.text}); resultou ${fromCents(expected)}`);
      }
    }
    if (vDesc && vProd && vDesc.units > vProd.units) issues.add(`${p}.vDesc`, 'desconto maior que o valor do item');
    const cfop = cap(() => {
      const v = assertCfop(prod.CFOP, `${p}.CFOP`);
      // NFC-e is always an internal operation (idDest 1): only 5xxx output CFOPs apply.
      if (!v.startsWith('5')) throw new FieldError(`${p}.CFOP`, 'NFC-e só admite CFOP de saída interna (5xxx)');
      return v;
    });
    const indTot = cap(() => pattern(prod.indTot, `${p}.indTot`, /^[01]$/, 'indTot deve ser 0 ou 1'));
    const prodOut: [string, string | undefined][] = [
      ['cProd', cap(() => tString(prod.cProd, `${p}.cProd`, 1, 60))],
      ['cEAN', cap(() => assertGtinOrSemGtin(prod.cEAN, `${p}.cEAN`))],
      ['xProd', xProd],
      ['NCM', cap(() => assertNcm(prod.NCM, `${p}.NCM`))],
      ['CFOP', cfop],
      ['uCom', cap(() => tString(prod.uCom, `${p}.uCom`, 1, 6))],
      ['qCom', qCom?.text],
      ['vUnCom', vUnCom?.text],
      ['vProd', vProd?.text],
      ['cEANTrib', cap(() => assertGtinOrSemGtin(prod.cEANTrib, `${p}.cEANTrib`))],
      ['uTrib', cap(() => tString(prod.uTrib, `${p}.uTrib`, 1, 6))],
      ['qTrib', qTrib?.text],
      ['vUnTrib', vUnTrib?.text],
      ['vDesc', vDesc?.text],
      ['indTot', indTot],
    ];
    const known = new Set([...prodOut.map(([n]) => n)]);
    for (const k of Object.keys(prod)) if (!known.has(k)) issues.add(`${p}.${k}`, 'campo não suportado no item da NFC-e');

    const t = `${base}.imposto`;
    const icms = taxGroup(imposto.ICMS, ICMS_VARIANTS, `${t}.ICMS`, issues);
    // The regime check needs only the variant's name, so it is reported even when its fields are wrong.
    const icmsVariant = typeof imposto.ICMS === 'object' && imposto.ICMS ? Object.keys(imposto.ICMS) : [];
    if (icmsVariant.length === 1 && icmsVariant[0]! in ICMS_VARIANTS && crt !== undefined) {
      const isSn = icmsVariant[0]!.startsWith('ICMSSN');
      if (simples && !isSn) issues.add(`${t}.ICMS`, `emitente do Simples Nacional (CRT ${crt}) informa CSOSN, grupo ICMSSNxxx (rejeição 590)`);
      if (!simples && isSn) issues.add(`${t}.ICMS`, `emitente com CRT ${crt} informa CST, não CSOSN (rejeição 591)`);
    }
    const pis = isAbsent(imposto.PIS) ? undefined : taxGroup(imposto.PIS, PIS_VARIANTS, `${t}.PIS`, issues);
    const cofins = isAbsent(imposto.COFINS) ? undefined : taxGroup(imposto.COFINS, COFINS_VARIANTS, `${t}.COFINS`, issues);
    for (const k of Object.keys(imposto)) {
      if (!['ICMS', 'PIS', 'COFINS', 'vTotTrib', 'IBSCBS'].includes(k)) {
        issues.add(`${t}.${k}`, k === 'IPI' || k === 'II' ? `NFC-e não admite o grupo ${k} (rejeição ${k === 'IPI' ? 742 : 743})` : 'grupo não suportado na NFC-e');
      }
    }
    const vTotTribOwn = isAbsent(imposto.vTotTrib) ? undefined : cap(() => decimal(imposto.vTotTrib, `${t}.vTotTrib`, DEC.v).units);
    const net = vProd && (!vDesc || vDesc.units <= vProd.units) ? vProd.units - (vDesc?.units ?? 0n) : undefined;
    const ibsCbs =
      net !== undefined && reformOk
        ? itemIbsCbs(imposto.IBSCBS, `${t}.IBSCBS`, net, reform, ibsCbsSettings!.defaultClassification, issues, reformAbsent)
        : undefined;

    if (issues.issues.length !== before || !icms || !vProd || !indTot || ibsCbs === undefined) {
      itemsOk = false;
      continue;
    }
    items.push({
      prod: prodOut,
      icms,
      pis,
      cofins,
      vTotTribOwn,
      ibsCbs,
      vProd: vProd.units,
      vDesc: vDesc?.units ?? 0n,
      indTot,
    });
  }

  // -------------------------------------------------------------------------------------------
  // Totals (only meaningful when every item is sound: otherwise they would only echo its issues)
  const sum = (pick: (it: ItemOut) => bigint): bigint => items.reduce((a, it) => a + pick(it), 0n);
  const tot = icmsTot(items);
  const vNF = tot.vNF;

  const total = asObject(input.total, 'total', issues);
  const totalVProd = total && cap(() => decimal(total.vProd, 'total.vProd', DEC.v));
  const totalVNF = total && cap(() => decimal(total.vNF, 'total.vNF', DEC.v));
  const totalVDesc = total && !isAbsent(total.vDesc) ? cap(() => decimal(total.vDesc, 'total.vDesc', DEC.v)) : undefined;
  if (itemsOk) {
    if (vNF < 0n) issues.add('total.vNF', 'valor total negativo: descontos maiores que os produtos');
    if (totalVProd && totalVProd.units !== tot.vProd) {
      issues.add('total.vProd', `difere da soma dos itens: esperado ${fromCents(tot.vProd)} (rejeição 564)`);
    }
    if (totalVDesc && totalVDesc.units !== tot.vDesc) {
      issues.add('total.vDesc', `difere da soma dos descontos dos itens: esperado ${fromCents(tot.vDesc)}`);
    }
    if (totalVNF && totalVNF.units !== vNF) {
      issues.add('total.vNF', `difere do total calculado: esperado ${fromCents(vNF)} (rejeição 610)`);
    }
    const identified = destOut?.tag === 'CPF' || destOut?.tag === 'CNPJ';
    if (uf && !identified && consumerIdentificationRequired(uf, vNF)) issues.add('dest', identificationRequiredMessage(uf));
  }

  // vTotTrib (see the header for the rule)
  let itemTotTrib: bigint[] = [];
  const givenTotTrib = isAbsent(input.vTotTrib) ? undefined : cap(() => decimal(input.vTotTrib, 'vTotTrib', DEC.v).units);
  if (itemsOk) {
    const net = items.map((it) => it.vProd - it.vDesc);
    const missing = items.flatMap((it, i) => (it.vTotTribOwn === undefined ? [i] : []));
    const own = sum((it) => it.vTotTribOwn ?? 0n);
    itemTotTrib = items.map((it) => it.vTotTribOwn ?? 0n);
    if (givenTotTrib !== undefined) {
      const rest = givenTotTrib - own;
      if (rest < 0n || (missing.length === 0 && rest !== 0n)) {
        issues.add('vTotTrib', `difere da soma dos valores aproximados dos itens (${fromCents(own)}) (rejeição 685)`);
      } else {
        const shares = allocate(rest, missing.map((i) => (net[i]! > 0n ? net[i]! : 0n)));
        missing.forEach((i, k) => (itemTotTrib[i] = shares[k]!));
      }
    } else {
      const rate = cap(() => {
        const r = ctx.vTotTribRate ?? (crt ? DEFAULT_VTOTTRIB_RATES[crt] : '0');
        return decimal(r, 'vTotTribRate', { scale: 4, intDigits: 3, minScale: 2, max: 1_000_000n }).units;
      });
      if (rate !== undefined) {
        for (const i of missing) {
          const n = net[i]! > 0n ? net[i]! : 0n;
          itemTotTrib[i] = (n * rate + 500_000n) / 1_000_000n; // percent at scale 4 → half-up cents
        }
      }
    }
  }
  const vTotTrib = itemTotTrib.reduce((a, b) => a + b, 0n);

  // -------------------------------------------------------------------------------------------
  // pag
  const pags: PagOut[] = [];
  if (!Array.isArray(input.pag) || input.pag.length === 0) issues.add('pag', 'informe ao menos uma forma de pagamento');
  else if (input.pag.length > 100) issues.add('pag', 'no máximo 100 formas de pagamento');
  for (const [i, raw] of (Array.isArray(input.pag) ? input.pag : []).entries()) {
    const base = `pag[${i}]`;
    const pag = asObject(raw, base, issues);
    if (!pag) continue;
    const tPag = cap(() => {
      const v = pattern(pag.tPag, `${base}.tPag`, /^[0-9]{2}$/, 'tPag deve ter 2 dígitos');
      if (!TPAG_CODES.includes(v)) throw new FieldError(`${base}.tPag`, `meio de pagamento ${v} inexistente`);
      return v;
    });
    const vPag = cap(() => decimal(pag.vPag, `${base}.vPag`, DEC.v));
    const xPag = cap(() => (tPag === '99' ? tString(pag.xPag, `${base}.xPag`, 2, 60) : optTString(pag.xPag, `${base}.xPag`, 2, 60)));
    const indPag = cap(() => (isAbsent(pag.indPag) ? undefined : pattern(pag.indPag, `${base}.indPag`, /^[01]$/, 'indPag deve ser 0 (à vista) ou 1 (a prazo)')));
    const dPag = cap(() => (isAbsent(pag.dPag) ? undefined : pattern(pag.dPag, `${base}.dPag`, /^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/, 'data deve ser AAAA-MM-DD')));
    const { card, path } = cardOf(input, { tPag: pag.tPag, card: pag.card as NfceCard | undefined }, i);
    let cardOut: CardOut | undefined;
    if (card !== undefined) {
      const c = asObject(card, path, issues);
      if (c) {
        cardOut = {
          tpIntegra: cap(() => pattern(c.tpIntegra ?? '2', `${path}.tpIntegra`, /^[12]$/, 'tpIntegra deve ser 1 (integrado) ou 2 (não integrado)')) ?? '2',
          CNPJ: cap(() => (isAbsent(c.CNPJ) ? undefined : assertCnpj(c.CNPJ, `${path}.CNPJ`))),
          tBand: cap(() => (isAbsent(c.tBand) ? undefined : pattern(c.tBand, `${path}.tBand`, /^[0-9]{2}$/, 'bandeira deve ter 2 dígitos'))),
          cAut: cap(() => optTString(c.cAut, `${path}.cAut`, 1, 128)),
          CNPJReceb: cap(() => (isAbsent(c.CNPJReceb) ? undefined : assertCnpj(c.CNPJReceb, `${path}.CNPJReceb`))),
          idTermPag: cap(() => optTString(c.idTermPag, `${path}.idTermPag`, 1, 40)),
        };
        for (const cnpjField of ['CNPJ', 'CNPJReceb'] as const) {
          const v = cardOut[cnpjField];
          if (v && !/^[0-9]{14}$/.test(v)) issues.add(`${path}.${cnpjField}`, 'CNPJ alfanumérico ainda não é aceito pelo Balcão');
        }
      }
    }
    if (tPag && vPag) pags.push({ indPag, tPag, xPag, vPag, dPag, card: cardOut });
  }
  let vTroco: bigint | undefined;
  const givenTroco = isAbsent(input.vTroco) ? undefined : cap(() => decimal(input.vTroco, 'vTroco', DEC.v).units);
  if (itemsOk && Array.isArray(input.pag) && pags.length === input.pag.length) {
    const paid = pags.reduce((a, p) => a + p.vPag.units, 0n);
    if (paid < vNF) {
      issues.add('pag', `soma dos pagamentos (${fromCents(paid)}) menor que o total da nota (${fromCents(vNF)})`);
    } else if (givenTroco !== undefined) {
      if (givenTroco !== paid - vNF) issues.add('vTroco', `troco deve ser pagamentos − total = ${fromCents(paid - vNF)} (rejeição 869)`);
      else vTroco = givenTroco;
    } else if (paid > vNF) {
      vTroco = paid - vNF;
    }
  }

  const infCpl = cap(() => optTString(input.infCpl, 'infCpl', 1, 5000));
  const infAdFisco = cap(() => optTString(input.infAdFisco, 'infAdFisco', 1, 2000));

  issues.throwIfAny();

  // -------------------------------------------------------------------------------------------
  // Writing (every value below has been checked: the `!` only tell the compiler so)
  const written = dhEmi!.text;
  const key = buildAccessKey({
    cUF: cUF!,
    yearMonth: written.slice(2, 4) + written.slice(5, 7),
    cnpj: emitCnpj!,
    model: '65',
    serie: serie!,
    number: nNF!,
    tpEmis,
    code: cNF!,
  });
  const cDV = key.slice(43);

  const ideXml = el(
    'ide',
    undefined,
    text('cUF', cUF!),
    text('cNF', cNF!),
    text('natOp', natOp!),
    text('mod', '65'),
    text('serie', serie!),
    text('nNF', nNF!),
    text('dhEmi', written),
    text('tpNF', '1'),
    text('idDest', '1'),
    text('cMunFG', cMunFG!),
    text('tpImp', '4'),
    text('tpEmis', tpEmis),
    text('cDV', cDV),
    text('tpAmb', tpAmb!),
    text('finNFe', '1'),
    text('indFinal', '1'),
    text('indPres', indPres!),
    // Delivery (indPres 4) is a non-face-to-face sale, for which indIntermed is mandatory; ours
    // are sold on the store's own channel, hence 0 (no intermediary).
    indPres === '4' && text('indIntermed', '0'),
    text('procEmi', '0'),
    text('verProc', verProc!),
    contingency && text('dhCont', contingency.dhCont),
    contingency && text('xJust', contingency.xJust),
  );

  const emitXml = emit.xml!;

  const destXml =
    destOut &&
    el('dest', undefined, text(destOut.tag, destOut.doc), text('xNome', destOut.xNome), text('indIEDest', '9'));

  // The reform groups go on every item, with vItem, or on none.
  const withReform = items.some((it) => it.ibsCbs !== null);
  const detXml = items.map((it, i) =>
    el(
      'det',
      { nItem: i + 1 },
      el('prod', undefined, it.prod.map(([n, v]) => text(n, v))),
      el(
        'imposto',
        undefined,
        text('vTotTrib', fromCents(itemTotTrib[i]!)),
        el('ICMS', undefined, writeTax(it.icms)),
        it.pis && el('PIS', undefined, writeTax(it.pis)),
        it.cofins && el('COFINS', undefined, writeTax(it.cofins)),
        it.ibsCbs && ibsCbsXml(it.ibsCbs),
      ),
      withReform && text('vItem', fromCents(itemValue(it))),
    ),
  );

  const money = (v: bigint) => fromCents(v);
  const vNFTot = items.reduce((a, it) => a + (it.indTot === '1' ? itemValue(it) : 0n), 0n);
  const totalXml = writeTotal(tot, vTotTrib, withReform ? [ibsCbsTotXml(ibsCbsTotals(items.map((it) => it.ibsCbs))), vNFTotXml(vNFTot)] : []);

  const pagXml = el(
    'pag',
    undefined,
    pags.map((p) =>
      el(
        'detPag',
        undefined,
        text('indPag', p.indPag),
        text('tPag', p.tPag),
        text('xPag', p.xPag),
        text('vPag', p.vPag.text),
        text('dPag', p.dPag),
        p.card &&
          el(
            'card',
            undefined,
            text('tpIntegra', p.card.tpIntegra),
            text('CNPJ', p.card.CNPJ),
            text('tBand', p.card.tBand),
            text('cAut', p.card.cAut),
            text('CNPJReceb', p.card.CNPJReceb),
            text('idTermPag', p.card.idTermPag),
          ),
      ),
    ),
    vTroco !== undefined && text('vTroco', money(vTroco)),
  );

  const infAdicXml =
    (infCpl !== undefined || infAdFisco !== undefined) &&
    el('infAdic', undefined, text('infAdFisco', infAdFisco), text('infCpl', infCpl));

  const infNFe = el(
    'infNFe',
    { Id: `NFe${key}`, versao: '4.00' },
    ideXml,
    emitXml,
    destXml,
    detXml,
    totalXml,
    el('transp', undefined, text('modFrete', '9')),
    pagXml,
    infAdicXml,
  );

  return {
    key,
    xml: el('NFe', { xmlns: NS_NFE }, infNFe),
    cNF: cNF!,
    cDV,
    dhEmi: written,
    tpAmb: tpAmb!,
    tpEmis,
    uf: uf!,
    vNF: money(vNF),
    vTotTrib: money(vTotTrib),
    vTroco: vTroco === undefined ? undefined : money(vTroco),
    dest:
      destOut &&
      (destOut.tag === 'CPF' ? { cpf: destOut.doc } : destOut.tag === 'CNPJ' ? { cnpj: destOut.doc } : { idEstrangeiro: destOut.doc }),
  };
}

const SUPL = (qrCode: string, urlChave: string): string =>
  el('infNFeSupl', undefined, text('qrCode', qrCode), text('urlChave', urlChave));

/** Places infNFeSupl right after </infNFe> (before a Signature, if there is one). */
function withSupl(xml: string, supl: string): string {
  const at = xml.indexOf('</infNFe>');
  if (at < 0) throw new Error('NFe sem </infNFe>');
  const end = at + '</infNFe>'.length;
  return xml.slice(0, end) + supl + xml.slice(end);
}

/**
 * Builds, signs and completes the NFC-e with its QR Code. The signing order depends on the mode:
 * - online (v2 and v3): infNFeSupl first, then the signature (its Reference covers infNFe only,
 *   and <Signature> lands last, after infNFeSupl);
 * - offline v2: sign first (the QR carries the DigestValue), then insert infNFeSupl before
 *   <Signature>, which the digest does not cover;
 * - offline v3: the QR needs only the RSA signature of its own fields, so it is built first.
 */
export function issueNfce(input: NfceRequest, ctx: IssueNfceContext): IssuedNfce {
  const issues = new IssueCollector();
  const urlChaveOverride = checkIssueContext(ctx, issues);
  return complete(build(input, ctx, issues), ctx, urlChaveOverride);
}

/**
 * Signs and completes an NFC-e already built by buildNfce (what issueNfce does after building).
 * For callers that must hold the unsigned document first; the context must be the one it was
 * built with.
 */
export function signBuiltNfce(built: BuiltNfce, ctx: IssueNfceContext): IssuedNfce {
  const issues = new IssueCollector();
  const urlChaveOverride = checkIssueContext(ctx, issues);
  issues.throwIfAny();
  return complete(built, ctx, urlChaveOverride);
}

/** The signing context's own checks (QR version, CSC, certificate); the urlChave override. */
function checkIssueContext(ctx: IssueNfceContext, issues: IssueCollector): string | undefined {
  const version = ctx.emitter?.qrCodeVersion;
  if (version !== 2 && version !== 3) issues.add('qrCodeVersion', 'versão do QR Code deve ser 2 ou 3');
  if (version === 2 && (!ctx.emitter.csc || isAbsent(ctx.emitter.csc.token) || isAbsent(ctx.emitter.csc.id))) {
    issues.add('csc', 'CSC não configurado para a empresa: obrigatório para o QR Code versão 2');
  }
  if (!ctx.credentials || isAbsent(ctx.credentials.privateKeyPem) || isAbsent(ctx.credentials.certificatePem)) {
    issues.add('certificado', 'certificado digital (chave privada e certificado) obrigatório para assinar');
  }
  return ctx.urlChave === undefined ? undefined : issues.capture(() => tString(ctx.urlChave, 'urlChave', 21, 85));
}

function complete(built: BuiltNfce, ctx: IssueNfceContext, urlChaveOverride: string | undefined): IssuedNfce {
  const version = ctx.emitter.qrCodeVersion;
  const { key, tpAmb, tpEmis } = built;
  const urlChave = urlChaveOverride ?? urlChaveOf(built.uf, tpAmb);
  const qrCommon = { key, tpAmb, version: version!, baseUrl: ctx.qrBaseUrl ?? qrBaseUrlOf(built.uf, tpAmb) };

  let signed: string;
  let qrCode: string;
  if (tpEmis === 1) {
    qrCode = nfceQrCodeOnline({ ...qrCommon, csc: ctx.emitter.csc });
    signed = signXml(withSupl(built.xml, SUPL(qrCode, urlChave)), ctx.credentials);
  } else if (version === 2) {
    const pre = signXml(built.xml, ctx.credentials);
    qrCode = nfceQrCodeOffline({
      ...qrCommon,
      dhEmi: built.dhEmi,
      vNF: built.vNF,
      digestValue: digestValueOf(pre),
      csc: ctx.emitter.csc,
    });
    signed = withSupl(pre, SUPL(qrCode, urlChave));
  } else {
    qrCode = nfceQrCodeOffline({
      ...qrCommon,
      dhEmi: built.dhEmi,
      vNF: built.vNF,
      dest: built.dest,
      privateKeyPem: ctx.credentials.privateKeyPem,
    });
    signed = signXml(withSupl(built.xml, SUPL(qrCode, urlChave)), ctx.credentials);
  }
  return {
    key,
    xml: signed,
    qrCode,
    urlChave,
    digestValue: digestValueOf(signed),
    dhEmi: built.dhEmi,
    tpAmb,
    tpEmis,
    vNF: built.vNF,
    vTotTrib: built.vTotTrib,
  };
}

export type NfceSummary = {
  key: string;
  nNF: number;
  serie: number;
  dhEmi: string;
  vNF: string;
  tpEmis: number;
  tpAmb: number;
  qrCode: string;
  urlChave: string;
  digestValue: string;
  /** The emitter's CNPJ (or CPF). */
  cnpj: string;
};

function section(xml: string, name: string): string {
  const start = xml.search(new RegExp(`<${name}[\\s>]`));
  const end = xml.indexOf(`</${name}>`, start);
  return start < 0 || end < 0 ? '' : xml.slice(start, end);
}

/**
 * Reads what the service and the printer need from a signed NFC-e (or an nfeProc holding one).
 * A light string reader for our own compact documents, not a general XML parser.
 */
export function readNfceSummary(signedXml: string): NfceSummary {
  if (typeof signedXml !== 'string') throw new FieldError('xml', 'XML da NFC-e obrigatório');
  const id = /<infNFe\s[^>]*?\bId="NFe([0-9]{44})"/.exec(signedXml);
  if (!id) throw new FieldError('xml', 'documento sem infNFe/@Id');
  const ide = section(signedXml, 'ide');
  const emit = section(signedXml, 'emit');
  const supl = section(signedXml, 'infNFeSupl');
  const need = (scope: string, name: string, where: string): string => {
    const v = firstText(scope, name);
    if (v === undefined) throw new FieldError('xml', `NFC-e sem ${where}/${name}`);
    return v;
  };
  return {
    key: id[1]!,
    nNF: Number(need(ide, 'nNF', 'ide')),
    serie: Number(need(ide, 'serie', 'ide')),
    dhEmi: need(ide, 'dhEmi', 'ide'),
    vNF: need(section(signedXml, 'ICMSTot'), 'vNF', 'ICMSTot'),
    tpEmis: Number(need(ide, 'tpEmis', 'ide')),
    tpAmb: Number(need(ide, 'tpAmb', 'ide')),
    qrCode: need(supl, 'qrCode', 'infNFeSupl'),
    urlChave: need(supl, 'urlChave', 'infNFeSupl'),
    digestValue: need(section(signedXml, 'Signature'), 'DigestValue', 'Signature'),
    cnpj: firstText(emit, 'CNPJ') ?? need(emit, 'CPF', 'emit'),
  };
}
