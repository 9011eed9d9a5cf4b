// DAMDFE: the printed companion of an MDF-e (GET /api/v1/mdfe/{id}/damdfe), an A4 PDF drawn from
// the stored XML (the fiscal record, not the request): emitter, the access key as a Code-128 bar
// code and as text, the QR Code of infMDFeSupl, the authorization protocol, route (start,
// intermediate and end UFs), vehicle and drivers, loading and unloading municipalities with the
// linked CT-e/NF-e keys, totals, insurance, the homologation mark and the manifest's state.
// The page, its fonts and the codes are service/a4-pdf.ts's, shared with the NF-e's DANFE.

import { DOMParser } from '@xmldom/xmldom';
import { formatAccessKey } from '../../fiscal/access-key.ts';
import { municipality } from '../../fiscal/br/catalogs.ts';
import { formatCnpj, formatCpf } from '../../base/common/tax-ids.ts';
import { a4Document, BODY, child, dateTime, drawAccessKey, drawQr, elements, formatDecimal, M, path, textOf, W, Writer, type Pdf } from '../a4-pdf.ts';

// --- the model: what the page shows, read from the XML ------------------------------------------

export type DamdfeModel = {
  key: string;
  qrCode: string;
  homologacao: boolean;
  contingencia: boolean;
  numero: string;
  serie: string;
  dhEmi: string;
  ufIni: string;
  ufFim: string;
  percurso: string[];
  protocolo?: { nProt: string; dhRecbto: string };
  /** 'ENCERRADO' / 'CANCELADO' when the manifest is no longer in force. */
  marca?: string;
  emitente: { nome: string; fantasia?: string; cnpj: string; ie?: string; endereco: string; rntrc?: string };
  veiculo: { placa: string; uf?: string; tara: string; capKG?: string; renavam?: string; proprietario?: string };
  condutores: { nome: string; cpf: string }[];
  carregamento: { codigo: string; nome: string }[];
  descarregamento: { codigo: string; nome: string; uf?: string; documentos: { tipo: 'CT-e' | 'NF-e'; chave: string }[] }[];
  totais: { qCTe: string; qNFe: string; vCarga: string; unidade: string; qCarga: string };
  seguros: { responsavel: string; seguradora?: string; cnpjSeguradora?: string; apolice?: string; averbacoes: string[] }[];
  produto?: { tipo: string; descricao: string; ncm?: string };
  contratantes: string[];
  observacoes?: string;
};

const digits = (s: string | undefined) => s ?? '';
const formatDoc = (cnpj?: string, cpf?: string) => (cnpj ? `CNPJ ${formatCnpj(cnpj)}` : cpf ? `CPF ${formatCpf(cpf)}` : '');
const UNITS: Record<string, string> = { '01': 'KG', '02': 'TON' };
const CARGO: Record<string, string> = {
  '01': 'Granel sólido',
  '02': 'Granel líquido',
  '03': 'Frigorificada',
  '04': 'Conteinerizada',
  '05': 'Carga geral',
  '06': 'Neogranel',
  '07': 'Perigosa (granel sólido)',
  '08': 'Perigosa (granel líquido)',
  '09': 'Perigosa (frigorificada)',
  '10': 'Perigosa (conteinerizada)',
  '11': 'Perigosa (carga geral)',
  '12': 'Granel pressurizada',
};

/** Reads the DAMDFE's content from an mdfeProc (authorized) or a signed MDFe. */
export function damdfeModel(xml: string, marca?: string): DamdfeModel {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const root = doc.documentElement as unknown as Element;
  const mdfe = root.localName === 'MDFe' ? root : child(root, 'MDFe');
  const inf = child(mdfe, 'infMDFe');
  if (!inf) throw new Error('XML sem infMDFe');
  const ide = child(inf, 'ide');
  const emit = child(inf, 'emit');
  const ender = child(emit, 'enderEmit');
  const rodo = path(inf, 'infModal', 'rodo');
  const veic = child(rodo, 'veicTracao');
  const prop = child(veic, 'prop');
  const tot = child(inf, 'tot');
  const infProt = path(root, 'protMDFe', 'infProt');
  const nProt = textOf(infProt, 'nProt');
  const prod = child(inf, 'prodPred');
  const adic = child(inf, 'infAdic');
  const observacoes = [textOf(adic, 'infAdFisco'), textOf(adic, 'infCpl')].filter(Boolean).join(' ');

  const address = [
    [textOf(ender, 'xLgr'), textOf(ender, 'nro')].filter(Boolean).join(', '),
    textOf(ender, 'xCpl'),
    textOf(ender, 'xBairro'),
    `${textOf(ender, 'xMun') ?? ''} - ${textOf(ender, 'UF') ?? ''}`,
    textOf(ender, 'CEP') && `CEP ${textOf(ender, 'CEP')!.replace(/^(\d{5})(\d{3})$/, '$1-$2')}`,
  ]
    .filter(Boolean)
    .join(' - ');

  return {
    key: (inf.getAttribute('Id') ?? '').replace(/^MDFe/, ''),
    qrCode: textOf(path(mdfe, 'infMDFeSupl'), 'qrCodMDFe') ?? '',
    homologacao: textOf(ide, 'tpAmb') === '2',
    contingencia: textOf(ide, 'tpEmis') === '2',
    numero: digits(textOf(ide, 'nMDF')),
    serie: digits(textOf(ide, 'serie')),
    dhEmi: dateTime(textOf(ide, 'dhEmi')),
    ufIni: textOf(ide, 'UFIni') ?? '',
    ufFim: textOf(ide, 'UFFim') ?? '',
    percurso: elements(ide, 'infPercurso').map((p) => textOf(p, 'UFPer') ?? ''),
    ...(nProt && { protocolo: { nProt, dhRecbto: dateTime(textOf(infProt, 'dhRecbto')) } }),
    ...(marca && { marca }),
    emitente: {
      nome: textOf(emit, 'xNome') ?? '',
      ...(textOf(emit, 'xFant') && { fantasia: textOf(emit, 'xFant') }),
      cnpj: formatDoc(textOf(emit, 'CNPJ'), textOf(emit, 'CPF')),
      ...(textOf(emit, 'IE') && { ie: textOf(emit, 'IE') }),
      endereco: address,
      ...(textOf(path(rodo, 'infANTT'), 'RNTRC') && { rntrc: textOf(path(rodo, 'infANTT'), 'RNTRC') }),
    },
    veiculo: {
      placa: textOf(veic, 'placa') ?? '',
      ...(textOf(veic, 'UF') && { uf: textOf(veic, 'UF') }),
      tara: textOf(veic, 'tara') ?? '',
      ...(textOf(veic, 'capKG') && { capKG: textOf(veic, 'capKG') }),
      ...(textOf(veic, 'RENAVAM') && { renavam: textOf(veic, 'RENAVAM') }),
      ...(prop && {
        proprietario: `${textOf(prop, 'xNome') ?? ''} - ${formatDoc(textOf(prop, 'CNPJ'), textOf(prop, 'CPF'))} - RNTRC ${textOf(prop, 'RNTRC') ?? ''}`,
      }),
    },
    condutores: elements(veic, 'condutor').map((c) => ({ nome: textOf(c, 'xNome') ?? '', cpf: formatCpf(textOf(c, 'CPF') ?? '') })),
    carregamento: elements(ide, 'infMunCarrega').map((m) => ({ codigo: textOf(m, 'cMunCarrega') ?? '', nome: textOf(m, 'xMunCarrega') ?? '' })),
    descarregamento: elements(child(inf, 'infDoc'), 'infMunDescarga').map((m) => {
      const codigo = textOf(m, 'cMunDescarga') ?? '';
      const uf = municipality(codigo)?.uf;
      return {
        codigo,
        nome: textOf(m, 'xMunDescarga') ?? '',
        ...(uf && { uf }),
        documentos: [
          ...elements(m, 'infCTe').map((d) => ({ tipo: 'CT-e' as const, chave: textOf(d, 'chCTe') ?? '' })),
          ...elements(m, 'infNFe').map((d) => ({ tipo: 'NF-e' as const, chave: textOf(d, 'chNFe') ?? '' })),
        ],
      };
    }),
    totais: {
      qCTe: textOf(tot, 'qCTe') ?? '0',
      qNFe: textOf(tot, 'qNFe') ?? '0',
      vCarga: formatDecimal(textOf(tot, 'vCarga') ?? '0', 2),
      unidade: UNITS[textOf(tot, 'cUnid') ?? ''] ?? textOf(tot, 'cUnid') ?? '',
      qCarga: formatDecimal(textOf(tot, 'qCarga') ?? '0'),
    },
    seguros: elements(inf, 'seg').map((s) => {
      const resp = child(s, 'infResp');
      const respSeg = textOf(resp, 'respSeg');
      const who = respSeg === '1' ? 'Emitente' : respSeg === '2' ? 'Contratante' : (respSeg ?? '');
      const doc = formatDoc(textOf(resp, 'CNPJ'), textOf(resp, 'CPF'));
      const infSeg = child(s, 'infSeg');
      return {
        responsavel: doc ? `${who} (${doc})` : who,
        ...(textOf(infSeg, 'xSeg') && { seguradora: textOf(infSeg, 'xSeg') }),
        ...(textOf(infSeg, 'CNPJ') && { cnpjSeguradora: formatCnpj(textOf(infSeg, 'CNPJ')!) }),
        ...(textOf(s, 'nApol') && { apolice: textOf(s, 'nApol') }),
        averbacoes: elements(s, 'nAver').map((a) => a.textContent ?? ''),
      };
    }),
    ...(prod && {
      produto: {
        tipo: CARGO[textOf(prod, 'tpCarga') ?? ''] ?? textOf(prod, 'tpCarga') ?? '',
        descricao: textOf(prod, 'xProd') ?? '',
        ...(textOf(prod, 'NCM') && { ncm: textOf(prod, 'NCM') }),
      },
    }),
    contratantes: elements(path(rodo, 'infANTT'), 'infContratante').map((c) =>
      [textOf(c, 'xNome'), formatDoc(textOf(c, 'CNPJ'), textOf(c, 'CPF'))].filter(Boolean).join(' - '),
    ),
    ...(observacoes && { observacoes }),
  };
}

// --- the page -----------------------------------------------------------------------------------

/** The DAMDFE as an A4 PDF (continued on further pages when the document lists are long). */
export function renderDamdfe(model: DamdfeModel): Promise<Buffer> {
  const { doc, bytes } = a4Document({ Title: `DAMDFE ${model.numero} série ${model.serie}`, Subject: `Chave de acesso ${model.key}` });
  const w = new Writer(doc);
  for (const draw of [drawTitle, drawEmitter, drawKey, drawManifest, drawVehicle, drawStops, drawTotals, drawInsuranceAndNotes]) draw(doc, w, model);
  doc.end();
  return bytes;
}

/** The title, the homologação warning, the ENCERRADO / CANCELADO mark. */
function drawTitle(doc: Pdf, w: Writer, model: DamdfeModel): void {
  doc.font('B').fontSize(11).text('DAMDFE - Documento Auxiliar de Manifesto Eletrônico de Documentos Fiscais', M, w.y, { width: W, align: 'center' });
  w.y += 16;
  if (model.homologacao) {
    doc.font('B').fontSize(9).fillColor('#b00000');
    doc.text('SEM VALOR FISCAL - EMITIDO EM AMBIENTE DE HOMOLOGAÇÃO', M, w.y, { width: W, align: 'center' });
    doc.fillColor('#000');
    w.y += 13;
  }
  if (model.marca) {
    doc.font('B').fontSize(12).fillColor('#b00000').text(`MDF-e ${model.marca}`, M, w.y, { width: W, align: 'center' });
    doc.fillColor('#000');
    w.y += 16;
  }
}

/** The emitter (left) and the QR Code (right). */
function drawEmitter(doc: Pdf, w: Writer, model: DamdfeModel): void {
  const qrSide = 96; // ≈ 34 mm
  const quiet = 10;
  const top = w.y;
  const leftW = W - qrSide - 2 * quiet;
  const e = model.emitente;
  doc
    .font('B')
    .fontSize(10)
    .text(e.nome, M + 3, w.y, { width: leftW - 6 });
  w.y = doc.y + 1;
  const emitLines = [e.fantasia, [e.cnpj, e.ie && `IE ${e.ie}`].filter(Boolean).join('   '), e.endereco, e.rntrc && `RNTRC ${e.rntrc}`].filter(
    (l): l is string => !!l,
  );
  for (const line of emitLines) {
    doc
      .font('R')
      .fontSize(BODY)
      .text(line, M + 3, w.y, { width: leftW - 6 });
    w.y = doc.y + 1;
  }
  drawQr(doc, model.qrCode, M + W - qrSide - quiet, top + quiet, qrSide);
  w.y = Math.max(w.y + 4, top + qrSide + 2 * quiet);
}

/** The access key: its Code-128 bar code and its text. */
function drawKey(doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.y += drawAccessKey(doc, model.key, M, w.y, W);
}

function drawManifest(_doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.heading('Manifesto');
  w.cells([
    ['Modelo', '58', 0.08],
    ['Série', model.serie, 0.08],
    ['Número', model.numero, 0.14],
    ['Emissão', model.dhEmi, 0.2],
    ['UF início', model.ufIni, 0.1],
    ['UF fim', model.ufFim, 0.1],
    ['Modal', 'Rodoviário', 0.3],
  ]);
  w.cells([
    ['Protocolo de autorização', model.protocolo ? `${model.protocolo.nProt}  ${model.protocolo.dhRecbto}` : 'Pendente de autorização', 0.5],
    ['Forma de emissão', model.contingencia ? 'Contingência' : 'Normal', 0.2],
    ['Percurso', [model.ufIni, ...model.percurso, model.ufFim].join(' > '), 0.3],
  ]);
}

function drawVehicle(_doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.heading('Veículo e condutores');
  const v = model.veiculo;
  w.cells([
    ['Placa', v.placa, 0.15],
    ['UF', v.uf ?? '', 0.07],
    ['RNTRC', model.emitente.rntrc ?? '', 0.15],
    ['Tara (kg)', v.tara, 0.13],
    ['Capacidade (kg)', v.capKG ?? '', 0.15],
    ['RENAVAM', v.renavam ?? '', 0.35],
  ]);
  if (v.proprietario) w.para(`Proprietário: ${v.proprietario}`);
  for (const c of model.condutores) w.para(`Condutor: ${c.nome} - CPF ${c.cpf}`);
}

/** Loading, unloading and the documents each unloading place receives. */
function drawStops(_doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.heading('Carregamento');
  for (const m of model.carregamento) w.para(`${m.codigo} - ${m.nome}`);

  w.heading('Descarregamento e documentos vinculados');
  for (const m of model.descarregamento) {
    w.para(`${m.codigo} - ${m.nome}${m.uf ? ` - ${m.uf}` : ''}`, 'B');
    for (const d of m.documentos) w.para(`${d.tipo}  ${formatAccessKey(d.chave)}`, 'M', 7.5, 10);
  }
}

function drawTotals(_doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.heading('Totais');
  w.cells([
    ['Qtd. CT-e', model.totais.qCTe, 0.15],
    ['Qtd. NF-e', model.totais.qNFe, 0.15],
    ['Valor total da carga', `R$ ${model.totais.vCarga}`, 0.3],
    ['Peso bruto total', `${model.totais.qCarga} ${model.totais.unidade}`, 0.4],
  ]);
  if (model.produto) {
    w.para(`Produto predominante: ${model.produto.descricao} (${model.produto.tipo}${model.produto.ncm ? `, NCM ${model.produto.ncm}` : ''})`);
  }
}

function drawInsuranceAndNotes(_doc: Pdf, w: Writer, model: DamdfeModel): void {
  w.heading('Seguro da carga');
  if (!model.seguros.length) w.para('Não informado');
  for (const s of model.seguros) {
    w.para(
      [
        `Responsável: ${s.responsavel}`,
        s.seguradora && `Seguradora: ${s.seguradora}${s.cnpjSeguradora ? ` (CNPJ ${s.cnpjSeguradora})` : ''}`,
        s.apolice && `Apólice: ${s.apolice}`,
        s.averbacoes.length ? `Averbação: ${s.averbacoes.join(', ')}` : undefined,
      ]
        .filter(Boolean)
        .join('   '),
    );
  }

  if (model.contratantes.length) {
    w.heading('Contratantes');
    for (const c of model.contratantes) w.para(c);
  }
  if (model.observacoes) {
    w.heading('Observações');
    w.para(model.observacoes);
  }
}
