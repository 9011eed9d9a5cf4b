// DANFE of an NF-e (model 55): the printed companion of the NF-e de devolução
// (GET /api/v1/nfe/{id}/danfe), an A4 portrait PDF drawn from the stored XML (the fiscal record,
// not the request), in the layout of the MOC (Manual de Orientação do Contribuinte, Anexo II):
// the receipt stub (canhoto), the emitter and the DANFE's identification (entrada/saída, number,
// series, sheet), the access key as a Code-128 bar code and as text, the nature of the operation
// and the authorization protocol, the emitter's registrations, the addressee, the tax
// calculation, the carrier, the products, and the additional information (with the referenced
// NFC-e). A homologação document is marked "SEM VALOR FISCAL"; one not yet authorized says so.
//
// The page, the fonts and the bar code are service/a4-pdf.ts's, shared with the DAMDFE.

import { DOMParser } from '@xmldom/xmldom';
import { formatAccessKey } from '../../fiscal/access-key.ts';
import { formatCnpj, formatCpf } from '../../base/common/tax-ids.ts';
import { a4Document, child, dateTime, drawAccessKey, elements, formatDecimal, M, PAGE, path, SMALL, textOf, W, type Pdf } from '../a4-pdf.ts';

export type DanfeItem = {
  codigo: string;
  descricao: string;
  ncm: string;
  cst: string;
  cfop: string;
  unidade: string;
  quantidade: string;
  valorUnitario: string;
  valorTotal: string;
  bcIcms: string;
  valorIcms: string;
  aliquotaIcms: string;
};

export type DanfeModel = {
  key: string;
  homologacao: boolean;
  /** 0 entrada, 1 saída. */
  tpNF: string;
  numero: string;
  serie: string;
  natOp: string;
  dhEmi: string;
  protocolo?: { nProt: string; dhRecbto: string };
  emitente: { nome: string; documento: string; ie: string; endereco: string; municipio: string; fone?: string };
  destinatario: { nome: string; documento: string; ie: string; endereco: string; bairro: string; cep: string; municipio: string; uf: string; fone: string };
  totais: Record<'vBC' | 'vICMS' | 'vBCST' | 'vST' | 'vProd' | 'vFrete' | 'vSeg' | 'vDesc' | 'vOutro' | 'vIPI' | 'vNF' | 'vTotTrib', string>;
  modFrete: string;
  itens: DanfeItem[];
  referencias: string[];
  informacoes: string;
  fisco: string;
};

const FREIGHT: Record<string, string> = {
  '0': '0 - Por conta do emitente',
  '1': '1 - Por conta do destinatário',
  '2': '2 - Por conta de terceiros',
  '3': '3 - Próprio, por conta do remetente',
  '4': '4 - Próprio, por conta do destinatário',
  '9': '9 - Sem ocorrência de transporte',
};

const money = (v: string | undefined) => formatDecimal(v ?? '0', 2);
const documentOf = (cnpj?: string, cpf?: string) => (cnpj ? formatCnpj(cnpj) : cpf ? formatCpf(cpf) : '');
const cep = (v: string | undefined) => (v ?? '').replace(/^(\d{5})(\d{3})$/, '$1-$2');

/** Reads the DANFE's content from an nfeProc (authorized) or a signed NFe of model 55. */
export function danfeNfeModel(xml: string): DanfeModel {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const root = doc.documentElement as unknown as Element;
  const nfe = root.localName === 'NFe' ? root : child(root, 'NFe');
  const inf = child(nfe, 'infNFe');
  if (!inf) throw new Error('XML sem infNFe');
  const ide = child(inf, 'ide');
  const emit = child(inf, 'emit');
  const ender = child(emit, 'enderEmit');
  const dest = child(inf, 'dest');
  const enderDest = child(dest, 'enderDest');
  const tot = path(inf, 'total', 'ICMSTot');
  const infProt = path(root, 'protNFe', 'infProt');
  const nProt = textOf(infProt, 'nProt');
  const adic = child(inf, 'infAdic');
  return {
    key: (inf.getAttribute('Id') ?? '').replace(/^NFe/, ''),
    homologacao: textOf(ide, 'tpAmb') === '2',
    tpNF: textOf(ide, 'tpNF') ?? '',
    numero: (textOf(ide, 'nNF') ?? '').padStart(9, '0').replace(/^(\d{3})(\d{3})(\d{3})$/, '$1.$2.$3'),
    serie: (textOf(ide, 'serie') ?? '').padStart(3, '0'),
    natOp: textOf(ide, 'natOp') ?? '',
    dhEmi: dateTime(textOf(ide, 'dhEmi')),
    ...(nProt && { protocolo: { nProt, dhRecbto: dateTime(textOf(infProt, 'dhRecbto')) } }),
    emitente: {
      nome: textOf(emit, 'xNome') ?? '',
      documento: documentOf(textOf(emit, 'CNPJ'), textOf(emit, 'CPF')),
      ie: textOf(emit, 'IE') ?? '',
      endereco: [[textOf(ender, 'xLgr'), textOf(ender, 'nro')].filter(Boolean).join(', '), textOf(ender, 'xCpl'), textOf(ender, 'xBairro')]
        .filter(Boolean)
        .join(' - '),
      municipio: `${textOf(ender, 'xMun') ?? ''} - ${textOf(ender, 'UF') ?? ''}${textOf(ender, 'CEP') ? ` - CEP ${cep(textOf(ender, 'CEP'))}` : ''}`,
      ...(textOf(ender, 'fone') && { fone: textOf(ender, 'fone') }),
    },
    destinatario: {
      nome: textOf(dest, 'xNome') ?? '',
      documento: documentOf(textOf(dest, 'CNPJ'), textOf(dest, 'CPF')) || (textOf(dest, 'idEstrangeiro') ?? ''),
      ie: textOf(dest, 'IE') ?? '',
      endereco: [[textOf(enderDest, 'xLgr'), textOf(enderDest, 'nro')].filter(Boolean).join(', '), textOf(enderDest, 'xCpl')].filter(Boolean).join(' - '),
      bairro: textOf(enderDest, 'xBairro') ?? '',
      cep: cep(textOf(enderDest, 'CEP')),
      municipio: textOf(enderDest, 'xMun') ?? '',
      uf: textOf(enderDest, 'UF') ?? '',
      fone: textOf(enderDest, 'fone') ?? '',
    },
    totais: Object.fromEntries(
      (['vBC', 'vICMS', 'vBCST', 'vST', 'vProd', 'vFrete', 'vSeg', 'vDesc', 'vOutro', 'vIPI', 'vNF', 'vTotTrib'] as const).map((f) => [
        f,
        money(textOf(tot, f)),
      ]),
    ) as DanfeModel['totais'],
    modFrete: FREIGHT[textOf(child(inf, 'transp'), 'modFrete') ?? ''] ?? textOf(child(inf, 'transp'), 'modFrete') ?? '',
    itens: elements(inf, 'det').map(itemOf),
    referencias: elements(ide, 'NFref').flatMap((r) => elements(r, 'refNFe').map((k) => k.textContent ?? '')),
    informacoes: textOf(adic, 'infCpl') ?? '',
    fisco: textOf(adic, 'infAdFisco') ?? '',
  };
}

function itemOf(det: Element): DanfeItem {
  const prod = child(det, 'prod');
  // The ICMS group is one variant element (ICMS00, ICMSSN102, ...): its CST or CSOSN, with the origin.
  const icms = child(child(det, 'imposto'), 'ICMS');
  let group: Element | undefined;
  for (let n = icms?.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) group = group ?? (n as Element);
  const orig = textOf(group, 'orig') ?? '';
  return {
    codigo: textOf(prod, 'cProd') ?? '',
    descricao: textOf(prod, 'xProd') ?? '',
    ncm: textOf(prod, 'NCM') ?? '',
    cst: orig + (textOf(group, 'CST') ?? textOf(group, 'CSOSN') ?? ''),
    cfop: textOf(prod, 'CFOP') ?? '',
    unidade: textOf(prod, 'uCom') ?? '',
    quantidade: formatDecimal(textOf(prod, 'qCom') ?? '0', 4),
    valorUnitario: formatDecimal(textOf(prod, 'vUnCom') ?? '0', 2),
    valorTotal: money(textOf(prod, 'vProd')),
    bcIcms: money(textOf(group, 'vBC')),
    valorIcms: money(textOf(group, 'vICMS')),
    aliquotaIcms: formatDecimal(textOf(group, 'pICMS') ?? '0', 2),
  };
}

// --- the page -------------------------------------------------------------------------------------

const ROW = 22; // a boxed field: label above, value below
const LABEL = 5.5;
const VALUE = 7.5;

/** A bordered field: its label in small capitals at the top, its value below. */
function box(doc: Pdf, x: number, y: number, w: number, h: number, label: string, value: string, align: 'left' | 'right' | 'center' = 'left'): void {
  doc.lineWidth(0.5).rect(x, y, w, h).stroke('#000');
  doc
    .font('R')
    .fontSize(LABEL)
    .fillColor('#000')
    .text(label.toUpperCase(), x + 2, y + 1.5, { width: w - 4, lineBreak: false });
  doc
    .font('B')
    .fontSize(VALUE)
    .text(value, x + 2, y + LABEL + 4, { width: w - 4, lineBreak: false, ellipsis: true, align });
}

/** A row of boxed fields; widths are fractions of the content width. */
function row(doc: Pdf, y: number, fields: [label: string, value: string, width: number, align?: 'left' | 'right' | 'center'][], h = ROW): number {
  let x = M;
  for (const [label, value, width, align] of fields) {
    box(doc, x, y, width * W, h, label, value, align);
    x += width * W;
  }
  return y + h;
}

function title(doc: Pdf, y: number, text: string): number {
  doc
    .font('B')
    .fontSize(6.5)
    .fillColor('#000')
    .text(text.toUpperCase(), M, y + 2, { lineBreak: false });
  return y + 10;
}

/** The DANFE as an A4 PDF (the products continue on further sheets when they do not fit). */
export function renderDanfeNfe(model: DanfeModel): Promise<Buffer> {
  const { doc, bytes } = a4Document({ Title: `DANFE NF-e ${model.numero} série ${model.serie}`, Subject: `Chave de acesso ${model.key}` }, true);
  let y = drawStub(doc, M, model);
  const header = drawHeader(doc, y + 8, model);
  y = drawAddressee(doc, header.next, model);
  y = drawTaxes(doc, y, model);
  y = title(doc, y, 'Transportador / volumes transportados');
  y = row(doc, y, [
    ['Frete por conta', model.modFrete, 0.4],
    ['Razão social', '', 0.6],
  ]);
  y = drawItems(doc, y, model);
  drawAdditional(doc, y, model);
  // FOLHA n/N on every sheet, now that N is known.
  const { start, count } = doc.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    const text = `FOLHA ${i - start + 1}/${count}`;
    doc.font('B').fontSize(7);
    if (i === start) doc.text(text, header.sheet.x, header.sheet.y, { width: header.sheet.width, align: 'center', lineBreak: false });
    else doc.text(text, M, M + 2, { width: W, align: 'right', lineBreak: false });
  }
  doc.end();
  return bytes;
}

/** The canhoto: the receipt the addressee signs, with the NF-e's number, above a cut line. */
function drawStub(doc: Pdf, y: number, model: DanfeModel): number {
  const h = 44;
  const right = 0.18 * W;
  const text =
    `RECEBEMOS DE ${model.emitente.nome} OS PRODUTOS E/OU SERVIÇOS CONSTANTES DA NOTA FISCAL ELETRÔNICA INDICADA AO LADO. ` +
    `EMISSÃO: ${model.dhEmi.slice(0, 10)}   DESTINATÁRIO: ${model.destinatario.nome}   VALOR TOTAL: R$ ${model.totais.vNF}`;
  doc
    .lineWidth(0.5)
    .rect(M, y, W - right, h / 2)
    .stroke('#000');
  doc
    .font('R')
    .fontSize(SMALL)
    .text(text, M + 2, y + 2, { width: W - right - 4, height: h / 2 - 3, ellipsis: true });
  box(doc, M, y + h / 2, 0.22 * W, h / 2, 'Data de recebimento', '');
  box(doc, M + 0.22 * W, y + h / 2, W - right - 0.22 * W, h / 2, 'Identificação e assinatura do recebedor', '');
  doc.rect(M + W - right, y, right, h).stroke('#000');
  doc
    .font('B')
    .fontSize(9)
    .text(`NF-e\nNº ${model.numero}\nSÉRIE ${model.serie}`, M + W - right, y + 7, { width: right, align: 'center' });
  const cut = y + h + 4;
  doc
    .save()
    .dash(3, { space: 2 })
    .moveTo(M, cut)
    .lineTo(M + W, cut)
    .stroke('#000')
    .restore();
  return cut;
}

/**
 * The emitter, the DANFE's identification, the key and protocol, the emitter's registrations;
 * where it ends, and where the sheet number goes (written once the number of sheets is known).
 */
function drawHeader(doc: Pdf, y: number, model: DanfeModel): { next: number; sheet: { x: number; y: number; width: number } } {
  const h = 96;
  const left = 0.38 * W;
  const middle = 0.17 * W;
  const right = W - left - middle;
  doc
    .lineWidth(0.5)
    .rect(M, y, left, h)
    .rect(M + left, y, middle, h)
    .rect(M + left + middle, y, right, h)
    .stroke('#000');
  const e = model.emitente;
  doc
    .font('B')
    .fontSize(9)
    .text(e.nome, M + 4, y + 8, { width: left - 8, align: 'center' });
  doc
    .font('R')
    .fontSize(7)
    .text([e.endereco, e.municipio, e.fone && `Fone: ${e.fone}`].filter(Boolean).join('\n'), M + 4, doc.y + 4, { width: left - 8, align: 'center' });

  const mx = M + left;
  doc
    .font('B')
    .fontSize(12)
    .text('DANFE', mx, y + 4, { width: middle, align: 'center' });
  doc
    .font('R')
    .fontSize(6)
    .text('DOCUMENTO AUXILIAR DA NOTA FISCAL ELETRÔNICA', mx + 4, y + 19, { width: middle - 8, align: 'center' });
  doc
    .font('R')
    .fontSize(7)
    .text('0 - ENTRADA\n1 - SAÍDA', mx + 6, y + 42, { width: middle - 30 });
  doc
    .rect(mx + middle - 22, y + 43, 14, 14)
    .stroke('#000')
    .font('B')
    .fontSize(10)
    .text(model.tpNF, mx + middle - 22, y + 45, { width: 14, align: 'center' });
  doc
    .font('B')
    .fontSize(8)
    .text(`Nº ${model.numero}\nSÉRIE ${model.serie}`, mx, y + 64, { width: middle, align: 'center' });
  const sheet = { x: mx, y: y + h - 11, width: middle };

  const rx = M + left + middle;
  drawAccessKey(doc, model.key, rx, y + 4, right);
  doc
    .font('R')
    .fontSize(6.5)
    .text('Consulta de autenticidade no portal nacional da NF-e www.nfe.fazenda.gov.br/portal ou no site da SEFAZ autorizadora', rx + 4, y + 72, {
      width: right - 8,
      align: 'center',
    });

  let next = y + h;
  const protocolo = model.protocolo ? `${model.protocolo.nProt}  ${model.protocolo.dhRecbto}` : 'NF-e AINDA NÃO AUTORIZADA PELA SEFAZ';
  next = row(doc, next, [
    ['Natureza da operação', model.natOp, 0.55],
    ['Protocolo de autorização de uso', protocolo, 0.45, 'center'],
  ]);
  next = row(doc, next, [
    ['Inscrição estadual', e.ie, 0.34],
    ['Inscrição estadual do subst. tributário', '', 0.33],
    ['CNPJ', e.documento, 0.33],
  ]);
  if (model.homologacao) {
    doc
      .font('B')
      .fontSize(9)
      .fillColor('#b00000')
      .text('NF-e EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL', M, next + 3, { width: W, align: 'center' });
    doc.fillColor('#000');
    next += 14;
  }
  return { next, sheet };
}

function drawAddressee(doc: Pdf, y: number, model: DanfeModel): number {
  const d = model.destinatario;
  let next = title(doc, y, 'Destinatário / remetente');
  next = row(doc, next, [
    ['Nome / razão social', d.nome, 0.55],
    ['CNPJ / CPF', d.documento, 0.25],
    ['Data da emissão', model.dhEmi.slice(0, 10), 0.2, 'center'],
  ]);
  next = row(doc, next, [
    ['Endereço', d.endereco, 0.45],
    ['Bairro / distrito', d.bairro, 0.25],
    ['CEP', d.cep, 0.1],
    ['Data da entrada / saída', '', 0.2],
  ]);
  return row(doc, next, [
    ['Município', d.municipio, 0.35],
    ['Fone / fax', d.fone, 0.2],
    ['UF', d.uf, 0.05, 'center'],
    ['Inscrição estadual', d.ie, 0.2],
    ['Hora da entrada / saída', '', 0.2],
  ]);
}

function drawTaxes(doc: Pdf, y: number, model: DanfeModel): number {
  const t = model.totais;
  let next = title(doc, y, 'Cálculo do imposto');
  next = row(doc, next, [
    ['Base de cálculo do ICMS', t.vBC, 0.2, 'right'],
    ['Valor do ICMS', t.vICMS, 0.2, 'right'],
    ['Base de cálculo do ICMS ST', t.vBCST, 0.2, 'right'],
    ['Valor do ICMS substituição', t.vST, 0.2, 'right'],
    ['Valor total dos produtos', t.vProd, 0.2, 'right'],
  ]);
  return row(doc, next, [
    ['Valor do frete', t.vFrete, 0.14, 'right'],
    ['Valor do seguro', t.vSeg, 0.14, 'right'],
    ['Desconto', t.vDesc, 0.14, 'right'],
    ['Outras despesas', t.vOutro, 0.14, 'right'],
    ['Valor total do IPI', t.vIPI, 0.14, 'right'],
    ['Valor aprox. dos tributos', t.vTotTrib, 0.15, 'right'],
    ['Valor total da nota', t.vNF, 0.15, 'right'],
  ]);
}

const COLUMNS: [label: string, width: number, field: keyof DanfeItem, align: 'left' | 'right' | 'center'][] = [
  ['Código', 0.08, 'codigo', 'left'],
  ['Descrição do produto / serviço', 0.26, 'descricao', 'left'],
  ['NCM/SH', 0.07, 'ncm', 'center'],
  ['CST/CSOSN', 0.06, 'cst', 'center'],
  ['CFOP', 0.05, 'cfop', 'center'],
  ['Un', 0.04, 'unidade', 'center'],
  ['Quant.', 0.08, 'quantidade', 'right'],
  ['Valor unit.', 0.08, 'valorUnitario', 'right'],
  ['Valor total', 0.08, 'valorTotal', 'right'],
  ['BC ICMS', 0.07, 'bcIcms', 'right'],
  ['Valor ICMS', 0.07, 'valorIcms', 'right'],
  ['Alíq. ICMS', 0.06, 'aliquotaIcms', 'right'],
];
const ITEM_ROW = 11;
/** Room kept under the products on the sheet that ends them: the additional information. */
const ADDITIONAL = 90;

function drawColumns(doc: Pdf, y: number): number {
  let x = M;
  doc.save().rect(M, y, W, ITEM_ROW).fillColor('#e6e6e6').fill().restore();
  for (const [label, width] of COLUMNS) {
    doc
      .lineWidth(0.5)
      .rect(x, y, width * W, ITEM_ROW)
      .stroke('#000');
    doc
      .font('B')
      .fontSize(5.5)
      .fillColor('#000')
      .text(label.toUpperCase(), x + 1.5, y + 3, { width: width * W - 3, lineBreak: false, ellipsis: true, align: 'center' });
    x += width * W;
  }
  return y + ITEM_ROW;
}

function drawItems(doc: Pdf, y: number, model: DanfeModel): number {
  let next = drawColumns(doc, title(doc, y, 'Dados do produto / serviço'));
  for (const item of model.itens) {
    if (next + ITEM_ROW > PAGE.height - M) {
      doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
      next = drawColumns(doc, title(doc, M, `Dados do produto / serviço (continuação) - NF-e ${model.numero} série ${model.serie}`));
    }
    let x = M;
    for (const [, width, field, align] of COLUMNS) {
      doc
        .lineWidth(0.3)
        .rect(x, next, width * W, ITEM_ROW)
        .stroke('#888');
      doc
        .font('R')
        .fontSize(6.5)
        .fillColor('#000')
        .text(item[field], x + 1.5, next + 2.5, { width: width * W - 3, lineBreak: false, ellipsis: true, align });
      x += width * W;
    }
    next += ITEM_ROW;
  }
  return next;
}

function drawAdditional(doc: Pdf, y: number, model: DanfeModel): void {
  let top = y;
  if (top + ADDITIONAL + 10 > PAGE.height - M) {
    doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
    top = M;
  }
  top = title(doc, top, 'Dados adicionais');
  const left = 0.65 * W;
  const text = [model.informacoes, ...model.referencias.map((k) => `Documento referenciado: NFC-e ${formatAccessKey(k)}`)].filter(Boolean).join('\n');
  box(doc, M, top, left, ADDITIONAL, 'Informações complementares', '');
  doc
    .font('R')
    .fontSize(7)
    .text(text, M + 2, top + LABEL + 4, { width: left - 4, height: ADDITIONAL - LABEL - 6, ellipsis: true });
  box(doc, M + left, top, W - left, ADDITIONAL, 'Reservado ao fisco', '');
  if (model.fisco) {
    doc
      .font('R')
      .fontSize(7)
      .text(model.fisco, M + left + 2, top + LABEL + 4, { width: W - left - 4, height: ADDITIONAL - LABEL - 6, ellipsis: true });
  }
}
