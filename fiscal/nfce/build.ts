// The NFC-e (model 65, layout 4.00, PL_010) from the request of POST /api/v1/nfce: checked,
// written in schema order, signed, with its QR Code (docs/fiscal.md, from "Access key" to "Payments", and "Offline contingency").
//
// Every problem of the request is collected and thrown at once as a FieldError naming the field
// in API path style (`det[1].prod.NCM`); nothing is returned then. Money is bigint cents and
// decimal strings throughout, never floating point.
//
// One module per group of infNFe, each checking its part into the one IssueCollector of the
// document and writing it once the whole document is sound: ide (./ide.ts), emit
// (../emit-block.ts), dest (./dest.ts), det (./det.ts), total with vTotTrib (./total.ts), pag
// (./pag.ts); the tax reform's decision for the document is ./reform.ts. Each states the
// decisions it makes where the specification leaves them open. Document-wide ones:
// - Tax reform (IBS/CBS, fiscal/ibscbs/): CRT 3 from 2026-01-01, and CRT 1/2/4 that opted in,
//   write det/imposto/IBSCBS on every item, det/vItem, total/IBSCBSTot and total/vNFTot. The
//   item's classification comes from the request or the company's default; the values are
//   computed with the rates in force on dhEmi's date (the company's overrides first) and, when
//   the request sends them, checked. A company that does not write the groups may send an
//   item's classification (a catalog fact), which is checked and left out; values are refused.
// - NT 2026.002: above R$ 10.000,00 (or the UF's limit) the consumer's CPF or CNPJ is required
//   (750), reported on `dest`; finNFe is always 1 (715).

import { buildAccessKey, keyInSignedXml } from '../access-key.ts';
import { qrBaseUrlOf, urlChaveOf } from '../br/nfce-urls.ts';
import { checkEmitter } from '../emit-block.ts';
import { FieldError, IssueCollector } from '../errors.ts';
import { environmentOfTpAmb, refuseCnpjsNotYetInForce } from '../law/in-force.ts';
import { infRespTecXml } from '../resp-tec.ts';
import { isAbsent, optTString, tString } from '../layout-fields.ts';
import { fromCents } from '../money.ts';
import { NS_NFE } from '../protocol.ts';
import { nfceQrCodeOffline, nfceQrCodeOnline, type QrDest } from '../qrcode.ts';
import { digestValueOf, signXml, type SigningCredentials } from '../signature.ts';
import { el, firstText, text } from '../xml.ts';
import { checkItems, detXml } from './det.ts';
import { checkDest, checkIdentificationLimit, destXml, qrDestOf } from './dest.ts';
import { checkIde, ideXml } from './ide.ts';
import { checkChange, checkPayments, pagXml } from './pag.ts';
import { ibptSourceText } from '../ibpt/table.ts';
import { documentReform } from './reform.ts';
import { checkTotals, itemTaxBurden, totalXml } from './total.ts';
import type { BuildNfceContext, NfceRequest } from './types.ts';

// The facts of the NFC-e's groups that its readers (the sandbox's rules, tests) know by this
// module; each lives with its group.
export { HOMOLOGACAO_XPROD } from './det.ts';
export { HOMOLOGACAO_DEST_XNOME } from './dest.ts';
export { paymentRuleViolation, REJECTION_TEXTS } from './pag.ts';

// =============================================================================================
// Public API

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

/** Checks the request and writes the unsigned NFC-e. Throws FieldError with every issue found. */
export function buildNfce(input: NfceRequest, ctx: BuildNfceContext): BuiltNfce {
  return build(input, ctx, new IssueCollector());
}

/**
 * Every group checked in schema order into `issues` (so the issues come in the document's
 * order), then, when there are none, the document written.
 */
function build(input: NfceRequest, ctx: BuildNfceContext, issues: IssueCollector): BuiltNfce {
  if (typeof input !== 'object' || input === null) throw new FieldError('body', 'corpo da NFC-e obrigatório');
  const emitter = ctx.emitter;
  if (!emitter) throw new FieldError('emit', 'dados do emitente não configurados');

  const emit = checkEmitter(emitter, issues);
  const { tpAmb, uf, crt } = emit;
  const homolog = tpAmb === 2;
  const ide = checkIde(input, ctx, uf, issues);
  const reform = documentReform(emitter, crt, ide.dhEmi?.text, issues);
  const dest = checkDest(input, homolog, issues);
  const checked = checkItems(input, { crt, homolog, reform }, issues);
  const tot = checkTotals(input, checked, issues);
  if (checked.ok) checkIdentificationLimit(dest, uf, tot.vNF, issues);
  const date = ide.dhEmi?.text.slice(0, 10);
  const burden = itemTaxBurden(input, checked, crt, ctx.vTotTribRate, issues, ctx.ibpt && uf && date ? { tables: ctx.ibpt, uf, date } : undefined);
  const itemTotTrib = burden.cents;
  const vTotTrib = itemTotTrib.reduce((a, b) => a + b, 0n);
  const pags = checkPayments(input, ide.dhEmi?.text, issues);
  refuseCnpjsNotYetInForce(issues, ide.dhEmi?.text, environmentOfTpAmb(tpAmb));
  const vTroco = checkChange(input, pags, tot.vNF, checked.ok, issues);
  // The receipt names the IBPT table its estimate came from, as the law's practice does.
  const source = burden.ibpt && ibptSourceText(burden.ibpt.table);
  const infCpl = issues.capture(() =>
    optTString(source ? [input.infCpl, source].filter((t) => typeof t === 'string' && t !== '').join(';') : input.infCpl, 'infCpl', 1, 5000),
  );
  const infAdFisco = issues.capture(() => optTString(input.infAdFisco, 'infAdFisco', 1, 2000));

  issues.throwIfAny();

  // Writing (every value below has been checked: the `!` only tell the compiler so)
  const written = ide.dhEmi!.text;
  const key = buildAccessKey({
    cUF: emit.cUF!,
    yearMonth: written.slice(2, 4) + written.slice(5, 7),
    cnpj: emit.cnpj!,
    model: '65',
    serie: ide.serie!,
    number: ide.nNF!,
    tpEmis: ide.tpEmis,
    code: ide.cNF!,
  });
  const { items } = checked;
  // The reform groups go on every item, with vItem, or on none.
  const withReform = items.some((it) => it.ibsCbs !== null);
  const infNFe = el(
    'infNFe',
    { Id: `NFe${key}`, versao: '4.00' },
    ideXml(ide, key, emit.cUF!, tpAmb!),
    emit.xml!,
    destXml(dest),
    detXml(items, itemTotTrib, withReform),
    totalXml(tot, vTotTrib, items, withReform),
    el('transp', undefined, text('modFrete', '9')),
    pagXml(pags, vTroco),
    (infCpl !== undefined || infAdFisco !== undefined) && el('infAdic', undefined, text('infAdFisco', infAdFisco), text('infCpl', infCpl)),
    emitter.respTec && infRespTecXml(emitter.respTec, key, 'nfe'),
  );

  return {
    key,
    xml: el('NFe', { xmlns: NS_NFE }, infNFe),
    cNF: ide.cNF!,
    cDV: key.slice(43),
    dhEmi: written,
    tpAmb: tpAmb!,
    tpEmis: ide.tpEmis,
    uf: uf!,
    vNF: fromCents(tot.vNF),
    vTotTrib: fromCents(vTotTrib),
    vTroco: vTroco === undefined ? undefined : fromCents(vTroco),
    dest: qrDestOf(dest),
  };
}

const SUPL = (qrCode: string, urlChave: string): string => el('infNFeSupl', undefined, text('qrCode', qrCode), text('urlChave', urlChave));

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
  const key = keyInSignedXml(signedXml, 'NFe');
  if (!key) throw new FieldError('xml', 'documento sem infNFe/@Id');
  const ide = section(signedXml, 'ide');
  const emit = section(signedXml, 'emit');
  const supl = section(signedXml, 'infNFeSupl');
  const need = (scope: string, name: string, where: string): string => {
    const v = firstText(scope, name);
    if (v === undefined) throw new FieldError('xml', `NFC-e sem ${where}/${name}`);
    return v;
  };
  return {
    key,
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
