// The DANFE NFC-e as plain data: one model, built from the NFC-e XML (an `NFe`, or an `nfeProc`
// carrying the authorization protocol), that every renderer draws (ESC/POS, PDF, screen preview).
// All strings are already in their printed pt-BR form ("1.234,56", "dd/mm/aaaa hh:mm:ss"); the
// renderers only lay them out. The model is JSON-serialisable so the terminal can hand it to the
// screen as is.
//
// Structure and wording follow docs/fiscal.md, "DANFE NFC-e" (Manual de Especificações Técnicas do
// DANFE NFC-e e QR Code). Where the notes mark the manual as UNCERTAIN we chose:
// - Division numbering and order: the v3-era scheme mirrored by the public implementations
//   (I header, II fixed text, III items, IV totals/payments, V taxes, Va contributor message,
//   VI fiscal message + identification + access-key query, VII consumer, VIII QR Code and
//   protocol). v6.0 may renumber; the content per division is the same.
// - Division II: ACBr's "DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor
//   Eletrônica" (the string the brief fixes). The old "Não permite aproveitamento de crédito de
//   ICMS" line is not printed: the later manuals dropped it.
// - Homologação banner: ACBr's single line "EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR
//   FISCAL" (plain hyphen; the notes also show an en dash in the manual's text), placed, like
//   the contingency message, in the "Área de Mensagem Fiscal" of division VI.
// - Taxes: "Tributos Totais Incidentes (Lei Federal 12.741/2012): R$ x", sped-da's wording with
//   its capital T (ACBr abbreviates to "12.741/12"); only the total, vTotTrib, is printed.
// - Dates: dhEmi, dhRecbto and the cancellation date are read as instants (their own offset)
//   and printed in the Brasília zone by default. Our builder writes them in the Brasília
//   offset, so for our documents this is exactly the written wall clock; a document written
//   with another offset (-04:00) is converted. `timeZone` lets a store in another zone print
//   its local time instead, which is what the manual's "hora local" may mean.
// - Contingency (tpEmis 9) without an authorization protocol: "EMITIDA EM CONTINGÊNCIA" and
//   "Pendente de autorização", no protocol lines, and two copies ("Via Consumidor", "Via
//   Estabelecimento"), as sped-da and ACBr do. Once the protocol exists the receipt prints as an
//   authorized one, with its protocol and one copy.
// - infCpl: ";" is taken as a line break, as ACBr and sped-da do.
// - Tax reform: no layout change is published for the DANFE NFC-e (NT 2026.010 covers the NF-e,
//   model 55, only); the IBS/CBS groups are not printed and the Lei 12.741 line stays. A cStat
//   120 "autorizado com alerta" prints as an authorization, without the alert.
// - Cancelled reprint: a "CANCELADA" banner right after division II with the date and protocol
//   of the 110111/110112 event (sped-da prints "CANCELADA" over the receipt); the manual has no
//   wording for it.

import { formatAccessKey, keyInAttributes } from '../access-key.ts';
import { BRASILIA_TZ, formatDateTimeBR as formatInstantBR } from '../../base/common/brasilia.ts';
import { paymentMethod, paymentMethodName } from '../../base/common/payment-methods.ts';
import { formatCnpj, formatCpf } from '../../base/common/tax-ids.ts';
import { FieldError } from '../errors.ts';
import { formatBRL, toCents } from '../money.ts';
import { nfeReader as reader } from '../nfe-reader.ts';
import { AUTHORIZED_CSTAT } from '../protocol.ts';

// =============================================================================================
// Model types

export type DanfeCopy = 'consumidor' | 'estabelecimento';

export const COPY_LABELS: Readonly<Record<DanfeCopy, string>> = Object.freeze({
  consumidor: 'Via Consumidor',
  estabelecimento: 'Via Estabelecimento',
});

export type DanfeAlign = 'left' | 'center';

/** A paragraph. `parts` are the pieces a narrow renderer keeps whole when it must wrap. */
export type DanfeText = {
  kind: 'text';
  text: string;
  align: DanfeAlign;
  bold?: boolean;
  /** Double size, for the one mark that must not be missed (CANCELADA). */
  large?: boolean;
  parts?: string[];
};

/** Label on the left, value on the right (totals, payments). */
export type DanfePair = { kind: 'pair'; label: string; value: string; bold?: boolean };

export type DanfeItem = {
  number: string;
  code: string;
  description: string;
  quantity: string;
  unit: string;
  unitValue: string;
  total: string;
  /** Item discount, already signed ("-1,00"). */
  discount?: string;
};

export type DanfeLine =
  | DanfeText
  | DanfePair
  | { kind: 'itemHeader'; item: DanfeItem }
  | { kind: 'item'; item: DanfeItem }
  /** The access key in its 11 groups of 4, for renderers to balance over lines. */
  | { kind: 'key'; groups: string[] }
  | { kind: 'qrcode'; payload: string }
  /** Where the copy label ("Via Consumidor"…) goes; renderers fill it per printed copy. */
  | { kind: 'copy' };

export type DanfeDivisionId =
  | 'cabecalho'
  | 'identificacaoDanfe'
  | 'cancelamento'
  | 'itens'
  | 'totais'
  | 'pagamentos'
  | 'tributos'
  | 'contribuinte'
  | 'mensagemFiscal'
  | 'chave'
  | 'consumidor'
  | 'qrcode';

export type DanfeDivision = { id: DanfeDivisionId; name: string; lines: DanfeLine[] };

export type DanfeModel = {
  key: string;
  /** The key as printed: 11 groups of 4. */
  keyFormatted: string;
  number: string;
  series: string;
  issuedAt: string;
  environment: 'producao' | 'homologacao';
  /** tpEmis 9 (offline contingency), authorized since or not. */
  contingency: boolean;
  /** Contingency without an authorization protocol yet. */
  pendingAuthorization: boolean;
  authorization?: { protocol: string; at: string };
  cancelled?: { protocol: string; at: string };
  /** Any payment in cash (tPag 01): the only case that opens the cash drawer. */
  isCash: boolean;
  total: string;
  /** infNFeSupl/qrCode, exactly as in the XML. */
  qrCode: string;
  urlChave: string;
  /** Copies to print, in order; empty when no copy label applies (one unlabelled receipt). */
  copies: DanfeCopy[];
  divisions: DanfeDivision[];
};

export type DanfeModelOptions = {
  /** Print only this copy, labelled. Default: both in pending contingency, else one unlabelled. */
  copy?: DanfeCopy;
  /** Reprint of a cancelled NFC-e: date (ISO 8601 with offset) and protocol of the event. */
  cancelled?: { at: string; nProt: string };
  /** IANA zone the dates are printed in; Brasília by default (see the header). */
  timeZone?: string;
};

// =============================================================================================
// Fixed texts (docs/fiscal.md, "DANFE NFC-e")

export const DANFE_TEXTS = Object.freeze({
  fixed: 'DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica',
  homologacao: 'EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL',
  contingencia: 'EMITIDA EM CONTINGÊNCIA',
  pendente: 'Pendente de autorização',
  naoIdentificado: 'CONSUMIDOR NÃO IDENTIFICADO',
  consulteChave: 'Consulte pela Chave de Acesso em',
  chave: 'CHAVE DE ACESSO',
  consultaQr: 'Consulta via leitor de QR Code',
  cancelada: 'CANCELADA',
});

const DIVISION_NAMES: Readonly<Record<DanfeDivisionId, string>> = {
  cabecalho: 'I - Informações do Cabeçalho',
  identificacaoDanfe: 'II - Informações Fixas do DANFE NFC-e',
  cancelamento: 'Marca de cancelamento (reimpressão)',
  itens: 'III - Informações de Detalhe da Venda',
  totais: 'IV - Informações de Total do DANFE NFC-e',
  pagamentos: 'IV - Formas de Pagamento',
  tributos: 'V - Informações dos Tributos no DANFE NFC-e',
  contribuinte: 'Va - Mensagem de Interesse do Contribuinte',
  mensagemFiscal: 'VI - Mensagem Fiscal e Identificação da NFC-e',
  chave: 'VI - Informações da Consulta via Chave de Acesso',
  consumidor: 'VII - Informações sobre o Consumidor',
  qrcode: 'VIII - Informações da Consulta via QR Code',
};

// =============================================================================================
// pt-BR formatting

const groupThousands = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, '.');

/**
 * A decimal string of the layout in pt-BR, without floating point: trailing zeros dropped down
 * to `minDecimals` ("1.0000" → "1" with 0, "18.9000000000" → "18,90" with 2).
 */
export function formatDecimalBR(value: string, minDecimals: number, field: string): string {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(value);
  if (!m) throw new FieldError(field, `valor decimal inválido: "${value}"`);
  const int = m[2]!.replace(/^0+(?=[0-9])/, '');
  let frac = (m[3] ?? '').replace(/0+$/, '');
  if (frac.length < minDecimals) frac = frac.padEnd(minDecimals, '0');
  return `${m[1]}${groupThousands(int)}${frac ? `,${frac}` : ''}`;
}

const money = (value: string, field: string): string => formatBRL(toCents(value, field));

function formatCep(cep: string): string {
  return /^[0-9]{8}$/.test(cep) ? `${cep.slice(0, 5)}-${cep.slice(5)}` : cep;
}

function formatPhone(fone: string): string {
  if (/^[0-9]{10}$/.test(fone)) return `(${fone.slice(0, 2)}) ${fone.slice(2, 6)}-${fone.slice(6)}`;
  if (/^[0-9]{11}$/.test(fone)) return `(${fone.slice(0, 2)}) ${fone.slice(2, 7)}-${fone.slice(7)}`;
  return fone;
}

/** An ISO 8601 instant with offset, as "dd/mm/aaaa hh:mm:ss" in `timeZone`. */
export function formatDateTimeBR(value: string, field: string, timeZone: string = BRASILIA_TZ): string {
  // An offset-less time would be read in the process's zone: ambiguous on a fiscal receipt.
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$/.test(value)) {
    throw new FieldError(field, `data/hora inválida: "${value}" (esperado AAAA-MM-DDThh:mm:ss-03:00)`);
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new FieldError(field, `data/hora inválida: "${value}"`);
  return formatInstantBR(ms, timeZone);
}

// =============================================================================================
// Builder

const text = (value: string, align: DanfeAlign = 'left', extra: Partial<DanfeText> = {}): DanfeText => ({
  kind: 'text',
  text: value,
  align,
  ...extra,
});
const pair = (label: string, value: string, bold = false): DanfePair => ({ kind: 'pair', label, value, ...(bold ? { bold } : {}) });
const together = (align: DanfeAlign, ...parts: (string | undefined)[]): DanfeText => {
  const kept = parts.filter((p): p is string => !!p);
  return { kind: 'text', text: kept.join(' '), align, parts: kept };
};

function addressLines(textOf: Reader['textOf'], ender: string | undefined): string[] {
  if (!ender) return [];
  const street = [textOf(ender, 'xLgr'), textOf(ender, 'nro'), textOf(ender, 'xCpl'), textOf(ender, 'xBairro')].filter(Boolean).join(', ');
  const mun = textOf(ender, 'xMun');
  const uf = textOf(ender, 'UF');
  const cep = textOf(ender, 'CEP');
  const city = [mun && uf ? `${mun} - ${uf}` : (mun ?? uf), cep ? `CEP ${formatCep(cep)}` : undefined].filter(Boolean).join(', ');
  return [street, city].filter((s) => s.length > 0);
}

type Reader = ReturnType<typeof reader>;

/** Payment label: the official name (base/common/payment-methods.ts); for 99 the free description the XML carries. */
function paymentName(tPag: string, xPag: string | undefined): string {
  const name = paymentMethodName(tPag);
  return xPag && (tPag === '99' || !paymentMethod(tPag)) ? `${name} - ${xPag}` : name;
}

/**
 * The DANFE NFC-e model of an `NFe` or `nfeProc` document. Throws FieldError when the document
 * lacks what the DANFE must show (key, ide, emitter, totals, QR Code).
 *
 * The document is read in one order (the first problem found is the one reported), then the
 * divisions are laid out in the order of docs/fiscal.md, "Divisions and order".
 */
export function danfeModel(xml: string, options: DanfeModelOptions = {}): DanfeModel {
  if (typeof xml !== 'string' || xml.length === 0) throw new FieldError('xml', 'XML da NFC-e obrigatório');
  const tz = options.timeZone ?? BRASILIA_TZ;
  const r = reader(xml);
  const doc = identification(xml, r, tz);
  const { key, inf } = doc;
  const prot = authorizationOf(xml.slice(doc.end), key, r, tz);
  const contingency = doc.tpEmis === '9';
  const pendingAuthorization = contingency && !prot.authorization;
  const supl = r.section(xml, 'infNFeSupl');
  const qrCode = r.required(supl, 'qrCode', 'infNFeSupl');
  const urlChave = r.required(supl, 'urlChave', 'infNFeSupl');

  const header = headerLines(inf, r);
  const items = itemLines(inf, r);
  const totals = totalLines(inf, r, items.count);
  const payments = paymentLines(inf, r);
  const taxes = taxLines(totals.tot, r);
  const infAdic = r.section(inf, 'infAdic');
  const contributor = contributorLines(infAdic, r);
  const fiscal = fiscalLines(doc, pendingAuthorization, infAdic, prot, r);
  const groups = formatAccessKey(key).split(' ');
  const keyDivision: DanfeLine[] = [
    text(DANFE_TEXTS.consulteChave, 'center', { bold: true }),
    text(urlChave, 'center'),
    text(DANFE_TEXTS.chave, 'center', { bold: true }),
    { kind: 'key', groups },
  ];
  const consumer = consumerLines(inf, r);
  const qr = qrLines(qrCode, prot.authorization);
  const cancelled = cancellationOf(options, tz);

  const division = (id: DanfeDivisionId, lines: DanfeLine[]): DanfeDivision[] => (lines.length ? [{ id, name: DIVISION_NAMES[id], lines }] : []);
  const divisions = [
    ...division('cabecalho', header),
    ...division('identificacaoDanfe', [text(DANFE_TEXTS.fixed, 'center', { bold: true })]),
    ...division('cancelamento', cancellationLines(cancelled)),
    ...division('itens', items.lines),
    ...division('totais', totals.lines),
    ...division('pagamentos', payments.lines),
    ...division('tributos', taxes),
    ...division('contribuinte', contributor),
    ...division('mensagemFiscal', fiscal),
    ...division('chave', keyDivision),
    ...division('consumidor', consumer),
    ...division('qrcode', qr),
  ];

  const copies: DanfeCopy[] = options.copy ? [options.copy] : pendingAuthorization ? ['consumidor', 'estabelecimento'] : [];

  return {
    key,
    keyFormatted: groups.join(' '),
    number: doc.number,
    series: doc.series,
    issuedAt: doc.issuedAt,
    environment: doc.tpAmb === '1' ? 'producao' : 'homologacao',
    contingency,
    pendingAuthorization,
    ...(prot.authorization ? { authorization: prot.authorization } : {}),
    ...(cancelled ? { cancelled } : {}),
    isCash: payments.isCash,
    total: totals.total,
    qrCode,
    urlChave,
    copies,
    divisions,
  };
}

/** What the document says of itself: key, ide, and where infNFe ends (the protocol follows it). */
type Identification = { key: string; inf: string; end: number; tpAmb: string; tpEmis: string; number: string; series: string; issuedAt: string };

function identification(xml: string, r: Reader, tz: string): Identification {
  const infNFe = r.at(xml, 'infNFe');
  if (!infNFe) throw new FieldError('xml', 'documento sem infNFe');
  const key = keyInAttributes(infNFe.attrs, 'NFe');
  if (!key) throw new FieldError('xml', 'documento sem infNFe/@Id (chave de acesso)');
  const inf = infNFe.body;
  const ide = r.section(inf, 'ide');
  const mod = r.required(ide, 'mod', 'ide');
  if (mod !== '65') throw new FieldError('xml', `o DANFE NFC-e é do modelo 65 (o documento é modelo ${mod})`);
  const tpAmb = r.required(ide, 'tpAmb', 'ide');
  const tpEmis = r.required(ide, 'tpEmis', 'ide');
  const nNF = r.required(ide, 'nNF', 'ide');
  const serie = r.required(ide, 'serie', 'ide');
  const issuedAt = formatDateTimeBR(r.required(ide, 'dhEmi', 'ide'), 'ide.dhEmi', tz);
  return { key, inf, end: infNFe.end, tpAmb, tpEmis, number: nNF.padStart(9, '0'), series: serie.padStart(3, '0'), issuedAt };
}

type Protocol = { infProt?: string; cStat?: string; authorization?: { protocol: string; at: string } };

/**
 * The protocol after infNFe. Only an authorization (100; 150 "autorizado fora de prazo"; 120
 * "autorizado com alerta", NT 2026.002, whose alert is for the emitter, not the consumer) prints
 * as one.
 */
function authorizationOf(afterInfNFe: string, key: string, r: Reader, tz: string): Protocol {
  const infProt = r.section(afterInfNFe, 'infProt');
  const cStat = r.textOf(infProt, 'cStat');
  const authorization =
    infProt && cStat !== undefined && AUTHORIZED_CSTAT.has(cStat) && r.textOf(infProt, 'chNFe') === key
      ? { protocol: r.required(infProt, 'nProt', 'infProt'), at: formatDateTimeBR(r.required(infProt, 'dhRecbto', 'infProt'), 'infProt.dhRecbto', tz) }
      : undefined;
  return { infProt, cStat, authorization };
}

/** I - header: the emitter. */
function headerLines(inf: string, { section, textOf, required }: Reader): DanfeLine[] {
  const emit = section(inf, 'emit');
  const cnpj = textOf(emit, 'CNPJ');
  const cpf = cnpj ? undefined : textOf(emit, 'CPF');
  if (!cnpj && !cpf) throw new FieldError('xml', 'NFC-e sem emit/CNPJ');
  const ie = textOf(emit, 'IE');
  const im = textOf(emit, 'IM');
  const enderEmit = section(emit, 'enderEmit');
  const fone = textOf(enderEmit, 'fone');
  return [
    text(required(emit, 'xNome', 'emit'), 'center', { bold: true }),
    together('center', cnpj ? `CNPJ: ${formatCnpj(cnpj)}` : `CPF: ${formatCpf(cpf!)}`, ie ? `IE: ${ie}` : undefined, im ? `IM: ${im}` : undefined),
    ...addressLines(textOf, enderEmit).map((l) => text(l, 'center')),
    ...(fone ? [text(`Fone: ${formatPhone(fone)}`, 'center')] : []),
  ];
}

/** III - items, after their column header; `count` for the totals. */
function itemLines(inf: string, { section, sections, textOf, required }: Reader): { lines: DanfeLine[]; count: number } {
  const lines: DanfeLine[] = [
    {
      kind: 'itemHeader',
      item: { number: '#', code: 'Código', description: 'Descrição', quantity: 'Qtde', unit: 'Un', unitValue: 'Vl.Unit.', total: 'Vl.Total' },
    },
  ];
  const dets = sections(inf, 'det');
  if (dets.length === 0) throw new FieldError('xml', 'NFC-e sem itens (det)');
  for (const [i, det] of dets.entries()) {
    const prod = section(det.body, 'prod');
    const where = `det[${i}].prod`;
    const nItem = /\bnItem\s*=\s*["']([0-9]+)["']/.exec(det.attrs)?.[1] ?? String(i + 1);
    const vDesc = textOf(prod, 'vDesc');
    const discount = vDesc !== undefined ? toCents(vDesc, `${where}.vDesc`) : 0n;
    lines.push({
      kind: 'item',
      item: {
        number: nItem.padStart(3, '0'),
        code: required(prod, 'cProd', where),
        description: required(prod, 'xProd', where),
        quantity: formatDecimalBR(required(prod, 'qCom', where), 0, `${where}.qCom`),
        unit: required(prod, 'uCom', where),
        unitValue: formatDecimalBR(required(prod, 'vUnCom', where), 2, `${where}.vUnCom`),
        total: money(required(prod, 'vProd', where), `${where}.vProd`),
        ...(discount > 0n ? { discount: formatBRL(-discount) } : {}),
      },
    });
  }
  return { lines, count: dets.length };
}

/** IV - totals; `tot` (ICMSTot) for the taxes, `total` (vNF, printed) for the model. */
function totalLines(inf: string, { section, textOf, required }: Reader, itemCount: number): { lines: DanfeLine[]; tot?: string; total: string } {
  const tot = section(inf, 'ICMSTot');
  const cents = (name: string): bigint => {
    const v = textOf(tot, name);
    return v === undefined ? 0n : toCents(v, `ICMSTot.${name}`);
  };
  const vNF = required(tot, 'vNF', 'ICMSTot');
  const vDesc = cents('vDesc');
  const vFrete = cents('vFrete');
  const acrescimo = cents('vOutro') + cents('vSeg');
  const total = money(vNF, 'ICMSTot.vNF');
  const lines: DanfeLine[] = [
    pair('Qtde. total de itens', String(itemCount)),
    pair('Valor total R$', money(required(tot, 'vProd', 'ICMSTot'), 'ICMSTot.vProd')),
    ...(vDesc > 0n ? [pair('Desconto R$', formatBRL(-vDesc))] : []),
    ...(vFrete > 0n ? [pair('Frete R$', formatBRL(vFrete))] : []),
    ...(acrescimo > 0n ? [pair('Acréscimo R$', formatBRL(acrescimo))] : []),
    pair('Valor a Pagar R$', total, true),
  ];
  return { lines, tot, total };
}

/** IV - payments and the change; `isCash` opens the drawer. */
function paymentLines(inf: string, { section, sections, textOf, required }: Reader): { lines: DanfeLine[]; isCash: boolean } {
  const pag = section(inf, 'pag');
  const detPags = pag === undefined ? [] : sections(pag, 'detPag');
  let isCash = false;
  const lines: DanfeLine[] = [pair('FORMA DE PAGAMENTO', 'VALOR PAGO R$', true)];
  for (const [i, d] of detPags.entries()) {
    const tPag = required(d.body, 'tPag', `pag.detPag[${i}]`);
    if (tPag === '01') isCash = true;
    const vPag = textOf(d.body, 'vPag');
    lines.push(pair(paymentName(tPag, textOf(d.body, 'xPag')), vPag === undefined ? '0,00' : money(vPag, `pag.detPag[${i}].vPag`)));
  }
  const vTroco = textOf(pag, 'vTroco');
  if (vTroco !== undefined) lines.push(pair('Troco R$', money(vTroco, 'pag.vTroco')));
  return { lines, isCash };
}

/** V - taxes: only the Lei 12.741 total. */
function taxLines(tot: string | undefined, { textOf }: Reader): DanfeLine[] {
  const vTotTrib = textOf(tot, 'vTotTrib');
  return vTotTrib === undefined
    ? []
    : [together('left', 'Tributos Totais Incidentes', '(Lei Federal 12.741/2012):', `R$ ${money(vTotTrib, 'ICMSTot.vTotTrib')}`)];
}

/** Va - the contributor's message, ";" taken as a line break. */
function contributorLines(infAdic: string | undefined, { textOf }: Reader): DanfeLine[] {
  const infCpl = textOf(infAdic, 'infCpl');
  return (infCpl ?? '')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => text(s));
}

/** VI - fiscal message area and the receipt's identification, with the copy placeholder. */
function fiscalLines(doc: Identification, pendingAuthorization: boolean, infAdic: string | undefined, prot: Protocol, { textOf }: Reader): DanfeLine[] {
  const infAdFisco = textOf(infAdic, 'infAdFisco');
  // The xMsg of a cStat 120 is the authority's alert to the emitter (NT 2026.002), not a message
  // for the consumer: it is not printed. Other authorities' messages are.
  const xMsg = prot.cStat === '120' ? undefined : textOf(prot.infProt, 'xMsg');
  return [
    ...(doc.tpAmb === '2'
      ? [text(DANFE_TEXTS.homologacao, 'center', { bold: true, parts: ['EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO -', 'SEM VALOR FISCAL'] })]
      : []),
    ...(pendingAuthorization ? [text(DANFE_TEXTS.contingencia, 'center', { bold: true }), text(DANFE_TEXTS.pendente, 'center', { bold: true })] : []),
    ...(infAdFisco ? [text(infAdFisco, 'center')] : []),
    ...(xMsg ? [text(xMsg, 'center')] : []),
    together('center', `NFC-e nº ${doc.number}`, `Série ${doc.series}`, doc.issuedAt),
    { kind: 'copy' },
  ];
}

/** VII - the consumer, or CONSUMIDOR NÃO IDENTIFICADO. */
function consumerLines(inf: string, { section, textOf }: Reader): DanfeLine[] {
  const dest = section(inf, 'dest');
  const lines: DanfeLine[] = [];
  const destCpf = textOf(dest, 'CPF');
  const destCnpj = textOf(dest, 'CNPJ');
  const destForeign = textOf(dest, 'idEstrangeiro');
  if (destCpf) lines.push(text(`CONSUMIDOR - CPF ${formatCpf(destCpf)}`, 'center', { bold: true }));
  else if (destCnpj) lines.push(text(`CONSUMIDOR - CNPJ ${formatCnpj(destCnpj)}`, 'center', { bold: true }));
  else if (destForeign !== undefined) lines.push(text(`CONSUMIDOR - Id. Estrangeiro ${destForeign}`.trim(), 'center', { bold: true }));
  else lines.push(text(DANFE_TEXTS.naoIdentificado, 'center', { bold: true }));
  if (dest) {
    const xNome = textOf(dest, 'xNome');
    if (xNome) lines.push(text(xNome, 'center'));
    lines.push(...addressLines(textOf, section(dest, 'enderDest')).map((l) => text(l, 'center')));
  }
  return lines;
}

/** VIII - the QR Code and, when authorized, the protocol. */
function qrLines(qrCode: string, authorization: Protocol['authorization']): DanfeLine[] {
  const lines: DanfeLine[] = [text(DANFE_TEXTS.consultaQr, 'center', { bold: true }), { kind: 'qrcode', payload: qrCode }];
  if (authorization) {
    lines.push(together('center', 'Protocolo de Autorização:', authorization.protocol), together('center', 'Data de Autorização:', authorization.at));
  }
  return lines;
}

/** The cancellation event of a cancelled reprint, as printed. */
function cancellationOf(options: DanfeModelOptions, tz: string): { protocol: string; at: string } | undefined {
  const cancelled = options.cancelled
    ? {
        protocol: options.cancelled.nProt,
        at: formatDateTimeBR(options.cancelled.at, 'cancelled.at', tz),
      }
    : undefined;
  if (cancelled && !/^[0-9]{15,17}$/.test(cancelled.protocol)) {
    throw new FieldError('cancelled.nProt', 'protocolo do cancelamento deve ter 15 ou 17 dígitos');
  }
  return cancelled;
}

function cancellationLines(cancelled: { protocol: string; at: string } | undefined): DanfeLine[] {
  return cancelled
    ? [
        text(DANFE_TEXTS.cancelada, 'center', { bold: true, large: true }),
        text(`Cancelamento em ${cancelled.at}`, 'center'),
        text(`Protocolo de Cancelamento: ${cancelled.protocol}`, 'center'),
      ]
    : [];
}

/** Every printable string of the model in order, copy placeholders left out (tests, search). */
export function danfeTexts(model: DanfeModel): string[] {
  const out: string[] = [];
  for (const d of model.divisions) {
    for (const l of d.lines) {
      if (l.kind === 'text') out.push(l.text);
      else if (l.kind === 'pair') out.push(`${l.label} ${l.value}`);
      else if (l.kind === 'key') out.push(l.groups.join(' '));
      else if (l.kind === 'item' || l.kind === 'itemHeader') {
        const it = l.item;
        out.push(`${it.number} ${it.code} ${it.description}`, `${it.quantity} ${it.unit} x ${it.unitValue} ${it.total}`);
        if (it.discount) out.push(`Desconto ${it.discount}`);
      }
    }
  }
  return out;
}
