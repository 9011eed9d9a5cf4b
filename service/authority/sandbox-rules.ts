// The sandbox authority's stateless half: reading the facts it judges out of the signed XML, and
// the rules that need nothing but the document and the company (schema, signature, certificate,
// key, environment, homologation texts, QR Code, payments, MDF-e content rules). The rules that
// need the authority's memory (duplicates, voided numbers, open manifests, deadlines) live in
// sandbox.ts, inside the transaction that records the decision.
//
// The fact readers are string scanners for our own compact, unprefixed documents (what the
// fiscal builders write and what the schema check has already accepted), not general XML
// parsers: a DOM parse alone would cost more than the rest of an authorization (the signature
// check avoids one too: see the fast path of fiscal/signature.ts).

import { createHash, verify as rsaVerify, X509Certificate } from 'node:crypto';
import { buildAccessKey, parseAccessKey, type DocumentModel } from '../../fiscal/access-key.ts';
import { qrBaseUrlOf } from '../../fiscal/br/nfce-urls.ts';
import { ufOfCUF } from '../../fiscal/br/uf.ts';
import { cnpjOfCommonName, sameCertificate } from '../../fiscal/certificate.ts';
import { MDFE_REJECTIONS } from '../../fiscal/mdfe/build.ts';
import { cardGroupRequired, environmentOfTpAmb, paymentMethodInForce, technicalResponsibleRequired } from '../../fiscal/law/in-force.ts';
import { HOMOLOGACAO_DEST_XNOME, HOMOLOGACAO_XPROD, REJECTION_TEXTS } from '../../fiscal/nfce/build.ts';
import { validateRoute } from '../../fiscal/percurso.ts';
import { hashCsrt } from '../../fiscal/resp-tec.ts';
import { MDFE_QR_BASE_URL, qrDestFields } from '../../fiscal/qrcode.ts';
import { validateXml, type SchemaName } from '../../fiscal/schema.ts';
import { firstText } from '../../fiscal/xml.ts';
import type { AuthorityCompany } from './port.ts';
import { verifyXmlSignature } from '../../fiscal/signature.ts';
import { allTexts, has, idOf, section, sections } from './xml-scan.ts';
import { nfceRuleRejection, readReformFacts, reformAlert, reformRejection } from './sandbox-reform-rules.ts';
import type { VerdictMessage } from '../../fiscal/protocol.ts';

export type Rejection = { cStat: string; xMotivo: string };

const reject = (cStat: string, xMotivo: string): Rejection => ({ cStat, xMotivo });

// ---------------------------------------------------------------------------------------------
// Texts. NF-e/NFC-e: SEFAZ's table (docs/fiscal.md, "Rejections the sandbox applies"),
// always with the "Rejeição: " prefix the authorities put in xMotivo. MDF-e: docs/fiscal.md, "MDF-e",
// 11.6 and 11.7. The same number means different things in the two catalogues (204, 578, 698…),
// hence two tables.

export const NFE = {
  autorizado: reject('100', 'Autorizado o uso da NF-e'),
  autorizadoForaDePrazo: reject('150', 'Autorizado o uso da NF-e, autorização fora de prazo'),
  inutilizado: reject('102', 'Inutilização de número homologado'),
  eventoRegistrado: reject('135', 'Evento registrado e vinculado a NF-e'),
  schema: reject('225', 'Rejeição: Falha no Schema XML da NFe'),
  schemaMensagem: reject('215', 'Rejeição: Falha no schema XML'),
  assinatura: reject('297', 'Rejeição: Assinatura difere do calculado'),
  certificado: reject('213', 'Rejeição: CNPJ-Base do Emitente difere do CNPJ-Base do Certificado Digital'),
  ufAutorizadora: reject('226', 'Rejeição: Código da UF do Emitente diverge da UF autorizadora'),
  chave: reject('502', 'Rejeição: Erro na Chave de Acesso - Campo Id não corresponde à concatenação dos campos correspondentes'),
  ambiente: reject('252', 'Rejeição: Ambiente informado diverge do Ambiente de recebimento'),
  xProdHomologacao: reject('373', `Rejeição: Descrição do primeiro item diferente de ${HOMOLOGACAO_XPROD}`),
  destHomologacao: reject('598', `Rejeição: NF-e emitida em ambiente de homologação com Razão Social do destinatário diferente de ${HOMOLOGACAO_DEST_XNOME}`),
  semQrCode: reject('394', 'Rejeição: Nota Fiscal sem a informação do QR-Code'),
  qrUrl: reject('395', 'Rejeição: Endereço do site da UF da Consulta via QR-Code diverge do previsto'),
  qrChave: reject('397', 'Rejeição: Parâmetro do QR-Code divergente da Nota Fiscal (chAcesso)'),
  qrVersao: reject('398', 'Rejeição: Parâmetro nVersao do QR-Code difere do previsto'),
  cscDesconhecido: reject('462', 'Rejeição: Código Identificador do CSC no QR-Code não cadastrado na SEFAZ'),
  qrHash: reject('464', 'Rejeição: Código de Hash no QR-Code difere do calculado'),
  qrAssinatura: reject('583', 'Rejeição: Valor da assinatura do qrCode difere do valor calculado'),
  // The texts of 391/392 are the payment module's, so the builder's warning and the verdict agree.
  cartaoAusente: reject('391', `Rejeição: ${REJECTION_TEXTS[391]}`),
  cartaoIncompleto: reject('392', `Rejeição: ${REJECTION_TEXTS[392]}`),
  // The official code of a tPag not in force is not known to us: 899 is the payment field's
  // (docs/fiscal.md, "Payments").
  meioPagamento: reject('899', 'Rejeição: Informado incorretamente o campo meio de pagamento'),
  // ZD01-10, in the UFs and from the dates of the law table (docs/fiscal.md, "Technical responsible").
  respTecAusente: reject('972', 'Rejeição: Obrigatória as informações do responsável técnico'),
  // hashCSRT not base64(SHA-1(CSRT + chave)) with the CSRT the authority holds for idCSRT (the
  // code is a secondary source's, UNVERIFIED: docs/fiscal.md, "Technical responsible").
  hashCsrtInvalido: reject('976', 'Rejeição: Hash do CSRT inválido'),
  duplicidade: reject('204', 'Rejeição: Duplicidade de NF-e'),
  jaCancelada: reject('218', 'Rejeição: NF-e já está cancelada na base de dados da SEFAZ'),
  duplicidadeNumero: reject('539', 'Rejeição: Duplicidade de NF-e, com diferença na Chave de Acesso'),
  numeroInutilizado: reject('206', 'Rejeição: NF-e já está inutilizada na Base de dados da SEFAZ'),
  emissaoPosterior: reject('703', 'Rejeição: Data-Hora de Emissão posterior ao horário de recebimento'),
  emissaoAtrasada: reject('704', 'Rejeição: NFC-e com Data-Hora de emissão atrasada'),
  naoConsta: reject('217', 'Rejeição: NF-e não consta na base de dados da SEFAZ'),
  // Events.
  eventoId: reject('572', 'Rejeição: Erro Atributo ID do evento não corresponde a concatenação dos campos ("ID" + tpEvento + chNFe + nSeqEvento)'),
  eventoExigeAutorizada: reject('580', 'Rejeição: O evento exige uma NF-e autorizada'),
  eventoDuplicado: reject('573', 'Rejeição: Duplicidade de Evento'),
  cancelamentoDeCancelada: reject('420', 'Rejeição: Cancelamento para NF-e já cancelada'),
  protocoloDiferente: reject('222', 'Rejeição: Protocolo de Autorização de Uso difere do cadastrado'),
  duplicidadeEvento: reject('631', 'Rejeição: Duplicidade de evento'),
  prazoCancelamento: reject('501', 'Rejeição: Prazo de cancelamento superior ao previsto na Legislação'),
  // 110112 (NT 2018.004, codes as listed in sped-nfe docs/CancelamentoSubs.md).
  substitutaInvalida: reject('910', 'Rejeição: Chave de Acesso NF-e Substituta inválida'),
  substitutaIncorreta: reject('911', 'Rejeição: Chave de Acesso NF-e Substituta incorreta'),
  substitutaInexistente: reject('912', 'Rejeição: NF-e Substituta inexistente'),
  substitutaCancelada: reject('913', 'Rejeição: NF-e Substituta Denegada ou Cancelada'),
  substituicaoTpEmis: reject('920', 'Rejeição: Tipo de Emissão inválido no Cancelamento por Substituição'),
  // Inutilização.
  faixaInvertida: reject('224', 'Rejeição: A faixa inicial é maior que a faixa final'),
  faixaUsada: reject('241', 'Rejeição: Um número da faixa já foi utilizado'),
  faixaJaInutilizada: reject('256', 'Rejeição: Uma NF-e da faixa já está inutilizada na Base de dados da SEFAZ'),
  mesmaFaixa: reject('563', 'Rejeição: Já existe pedido de Inutilização com a mesma faixa de inutilização'),
} as const satisfies Record<string, Rejection>;

export const MDFE = {
  autorizado: reject('100', 'Autorizado o uso do MDF-e'),
  eventoRegistrado: reject('135', 'Evento registrado e vinculado a MDF-e'),
  schema: reject('215', 'Rejeição: Falha no schema XML'),
  assinatura: reject('297', 'Rejeição: Assinatura difere do calculado'),
  certificado: reject('213', 'Rejeição: CNPJ-Base do Emitente difere do CNPJ-Base do Certificado Digital'),
  // The MDF-e tables have no wording of their own for a key that does not match its fields; the
  // NF-e's 502 is used.
  chave: reject('502', 'Rejeição: Erro na Chave de Acesso - Campo Id não corresponde à concatenação dos campos correspondentes'),
  ambiente: reject('252', 'Rejeição: Ambiente informado diverge do Ambiente de recebimento'),
  qrUrl: reject('479', 'Rejeição: Endereço do site da UF da Consulta via QR Code diverge do previsto'),
  semQrCode: reject('480', 'Rejeição: O QR Code do MDF-e deve ser informado'),
  qrChave: reject('481', 'Rejeição: Parâmetro chave de acesso do QR Code divergente do MDF-e'),
  qrSemSign: reject('482', 'Rejeição: Parâmetro sign não informado no QR Code para emissão em contingência'),
  qrSignIndevido: reject('488', 'Rejeição: Parâmetro sign não deve ser informado no QR Code para emissão Normal'),
  qrSign: reject('496', 'Rejeição: Assinatura do QR-Code difere do calculado'),
  // Content rules: the fiscal module's texts (fiscal/mdfe/build.ts MDFE_REJECTIONS), so that
  // `mdfeRuleViolation` (a caller's pre-check) and this authority say the same thing. 745 has no
  // official MDF-e wording (docs/fiscal.md, "MDF-e": NT 2021.002 created it, the public tables skip
  // it); the text there is ours, built from the vendors' description, and is not official.
  tpTranspSemProp: MDFE_REJECTIONS.tpTranspSemProp,
  propSemTpTransp: MDFE_REJECTIONS.propSemTpTransp,
  seguroIncompleto: MDFE_REJECTIONS.seguroIncompleto,
  seguroObrigatorio: MDFE_REJECTIONS.seguroObrigatorio,
  produtoPredominante: MDFE_REJECTIONS.produtoPredominante,
  tomadores: MDFE_REJECTIONS.tomadores,
  percurso: MDFE_REJECTIONS.percurso,
  naoEncerrado: reject('611', 'Rejeição: Existe MDF-e não encerrado para esta placa, tipo de emitente e UF descarregamento'),
  duplicidade: reject('204', 'Rejeição: Duplicidade de MDF-e'),
  naoConsta: reject('217', 'Rejeição: MDF-e não consta na base de dados da SEFAZ'),
  // Events.
  eventoId: reject('628', 'Rejeição: Atributo ID do evento não corresponde à concatenação dos campos ("ID" + tpEvento + chMDFe + nSeqEvento)'),
  // 218 is the NF-e's "já está cancelada"; the MDF-e tables we have do not list their own text.
  jaCancelado: reject('218', 'Rejeição: MDF-e já cancelado'),
  // 609 is the closing event's "already closed" (docs/fiscal.md, "MDF-e"); a cancellation of a closed
  // manifest gets it too: the manifest is no longer in the state the event requires.
  jaEncerrado: reject('609', 'Rejeição: MDF-e já encerrado'),
  protocoloDiferente: reject('222', 'Rejeição: Protocolo de Autorização de Uso difere do cadastrado'),
  duplicidadeEvento: reject('631', 'Rejeição: Duplicidade de evento'),
  prazoCancelamento: reject('220', 'Rejeição: MDF-e autorizado há mais de 24 horas'),
  municipioForaDaUf: reject('614', 'Rejeição: Código de Município diverge da UF de encerramento do MDF-e'),
  encerramentoAntesDaAutorizacao: reject('615', 'Rejeição: Data de encerramento anterior à data de autorização do MDF-e'),
} as const satisfies Record<string, Rejection>;

// ---------------------------------------------------------------------------------------------
// xMotivo hygiene

const XMOTIVO_MAX = 255;

/** xMotivo is a TString of 1..255 Latin-1 characters: details from libxml2 or from the
 * document are folded to that (other characters become "?"), and cut with "..." to fit. */
export function motivoWithDetail(base: string, detail: string | undefined): string {
  if (!detail) return base;
  const clean = detail
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ')
    .replace(/[^\x20-\xff]/g, '?')
    .trim();
  if (!clean) return base;
  const room = XMOTIVO_MAX - [...base].length - 3; // " [" + "]"
  if (room < 4) return base;
  const chars = [...clean];
  const text =
    chars.length <= room
      ? clean
      : chars
          .slice(0, room - 3)
          .join('')
          .trimEnd() + '...';
  return `${base} [${text}]`;
}

// ---------------------------------------------------------------------------------------------
// Facts of an NF-e / NFC-e

export type NfePaymentFacts = { tPag: string; card?: { tpIntegra?: string; CNPJ?: string; cAut?: string } };

export type NfeFacts = {
  /** infNFe/@Id as written ("NFe" + key when well formed). */
  id?: string;
  cUF?: string;
  cNF?: string;
  mod?: string;
  serie?: string;
  nNF?: string;
  /** As written in ide/dhEmi (with its offset). */
  dhEmi?: string;
  tpEmis?: string;
  cDV?: string;
  tpAmb?: string;
  /** emit/CNPJ (or emit/CPF). */
  emitCnpj?: string;
  /** xProd of item 1. */
  firstXProd?: string;
  dest?: { xNome?: string; idTag?: 'CNPJ' | 'CPF' | 'idEstrangeiro'; id?: string };
  vNF?: string;
  payments: NfePaymentFacts[];
  qrCode?: string;
  digestValue?: string;
};

export function readNfeFacts(xml: string): NfeFacts {
  const ide = section(xml, 'ide')?.inner ?? '';
  const emit = section(xml, 'emit')?.inner ?? '';
  const destXml = section(xml, 'dest')?.inner;
  let dest: NfeFacts['dest'];
  if (destXml !== undefined) {
    const idTag = (['CNPJ', 'CPF', 'idEstrangeiro'] as const).find((t) => firstText(destXml, t) !== undefined);
    dest = { xNome: firstText(destXml, 'xNome'), idTag, id: idTag && firstText(destXml, idTag) };
  }
  const payments = sections(xml, 'detPag').map((p): NfePaymentFacts => {
    const card = section(p, 'card')?.inner;
    return {
      tPag: firstText(p, 'tPag') ?? '',
      card: card === undefined ? undefined : { tpIntegra: firstText(card, 'tpIntegra'), CNPJ: firstText(card, 'CNPJ'), cAut: firstText(card, 'cAut') },
    };
  });
  const supl = section(xml, 'infNFeSupl')?.inner;
  return {
    id: idOf(xml, 'infNFe'),
    cUF: firstText(ide, 'cUF'),
    cNF: firstText(ide, 'cNF'),
    mod: firstText(ide, 'mod'),
    serie: firstText(ide, 'serie'),
    nNF: firstText(ide, 'nNF'),
    dhEmi: firstText(ide, 'dhEmi'),
    tpEmis: firstText(ide, 'tpEmis'),
    cDV: firstText(ide, 'cDV'),
    tpAmb: firstText(ide, 'tpAmb'),
    emitCnpj: firstText(emit, 'CNPJ') ?? firstText(emit, 'CPF'),
    firstXProd: firstText(section(xml, 'det')?.inner ?? '', 'xProd'),
    dest,
    vNF: firstText(section(xml, 'ICMSTot')?.inner ?? '', 'vNF'),
    payments,
    qrCode: supl === undefined ? undefined : firstText(supl, 'qrCode'),
    digestValue: /<DigestValue>([^<]+)<\/DigestValue>/.exec(xml)?.[1],
  };
}

// ---------------------------------------------------------------------------------------------
// Facts of an MDF-e

export type MdfeInsuranceFacts = { xSeg?: string; insurerCnpj?: string; nApol?: string; endorsements: number };

export type MdfeFacts = {
  id?: string;
  cUF?: string;
  tpAmb?: string;
  tpEmit?: string;
  tpTransp?: string;
  mod?: string;
  serie?: string;
  nMDF?: string;
  cMDF?: string;
  cDV?: string;
  dhEmi?: string;
  tpEmis?: string;
  UFIni?: string;
  UFFim?: string;
  /** infPercurso/UFPer, in document (travel) order. */
  UFPer: string[];
  emitCnpj?: string;
  placa?: string;
  hasProp: boolean;
  insurance: MdfeInsuranceFacts[];
  hasProdPred: boolean;
  contractors: number;
  /** qrCodMDFe with `&amp;` already unescaped. */
  qrCode?: string;
};

export function readMdfeFacts(xml: string): MdfeFacts {
  const ide = section(xml, 'ide')?.inner ?? '';
  const emit = section(xml, 'emit')?.inner ?? '';
  const veic = section(xml, 'veicTracao')?.inner ?? '';
  const supl = section(xml, 'infMDFeSupl')?.inner;
  return {
    id: idOf(xml, 'infMDFe'),
    cUF: firstText(ide, 'cUF'),
    tpAmb: firstText(ide, 'tpAmb'),
    tpEmit: firstText(ide, 'tpEmit'),
    tpTransp: firstText(ide, 'tpTransp'),
    mod: firstText(ide, 'mod'),
    serie: firstText(ide, 'serie'),
    nMDF: firstText(ide, 'nMDF'),
    cMDF: firstText(ide, 'cMDF'),
    cDV: firstText(ide, 'cDV'),
    dhEmi: firstText(ide, 'dhEmi'),
    tpEmis: firstText(ide, 'tpEmis'),
    UFIni: firstText(ide, 'UFIni'),
    UFFim: firstText(ide, 'UFFim'),
    UFPer: allTexts(ide, 'UFPer'),
    emitCnpj: firstText(emit, 'CNPJ') ?? firstText(emit, 'CPF'),
    placa: firstText(veic, 'placa'),
    hasProp: has(veic, 'prop'),
    insurance: sections(xml, 'seg').map((seg) => {
      const infSeg = section(seg, 'infSeg')?.inner ?? '';
      return {
        xSeg: firstText(infSeg, 'xSeg'),
        insurerCnpj: firstText(infSeg, 'CNPJ'),
        nApol: firstText(seg, 'nApol'),
        endorsements: allTexts(seg, 'nAver').filter((n) => n.trim() !== '').length,
      };
    }),
    hasProdPred: has(xml, 'prodPred'),
    contractors: (xml.match(/<infContratante[\s>]/g) ?? []).length,
    qrCode: supl === undefined ? undefined : firstText(supl, 'qrCodMDFe'),
  };
}

// ---------------------------------------------------------------------------------------------
// Facts of events and of the inutilização

export type EventFacts = {
  id?: string;
  cOrgao?: string;
  tpAmb?: string;
  /** The author: CNPJ (or CPF). */
  author?: string;
  /** chNFe or chMDFe. */
  key?: string;
  tpEvento?: string;
  nSeqEvento?: string;
  nProt?: string;
  /** 110112 NF-e: the substitute NFC-e. */
  chNFeRef?: string;
  /** 110112 MDF-e (encerramento). */
  dtEnc?: string;
  cUF?: string;
  cMun?: string;
};

export function readEventFacts(xml: string): EventFacts {
  const inf = section(xml, 'infEvento')?.inner ?? '';
  const det = section(inf, 'detEvento')?.inner ?? '';
  // The event's own fields come before detEvento, whose content may name other documents
  // (110115 lists the NF-e it adds in chNFe, 110114 the driver's CPF).
  const head = inf.includes('<detEvento') ? inf.slice(0, inf.indexOf('<detEvento')) : inf;
  return {
    id: idOf(xml, 'infEvento'),
    cOrgao: firstText(head, 'cOrgao'),
    tpAmb: firstText(head, 'tpAmb'),
    author: firstText(head, 'CNPJ') ?? firstText(head, 'CPF'),
    key: firstText(head, 'chNFe') ?? firstText(head, 'chMDFe'),
    tpEvento: firstText(head, 'tpEvento'),
    nSeqEvento: firstText(head, 'nSeqEvento'),
    nProt: firstText(det, 'nProt'),
    chNFeRef: firstText(det, 'chNFeRef'),
    dtEnc: firstText(det, 'dtEnc'),
    cUF: firstText(det, 'cUF'),
    cMun: firstText(det, 'cMun'),
  };
}

export type InutFacts = {
  id?: string;
  tpAmb?: string;
  cUF?: string;
  ano?: string;
  cnpj?: string;
  mod?: string;
  serie?: string;
  nNFIni?: string;
  nNFFin?: string;
};

export function readInutFacts(xml: string): InutFacts {
  const inf = section(xml, 'infInut')?.inner ?? '';
  return {
    id: idOf(xml, 'infInut'),
    tpAmb: firstText(inf, 'tpAmb'),
    cUF: firstText(inf, 'cUF'),
    ano: firstText(inf, 'ano'),
    cnpj: firstText(inf, 'CNPJ'),
    mod: firstText(inf, 'mod'),
    serie: firstText(inf, 'serie'),
    nNFIni: firstText(inf, 'nNFIni'),
    nNFFin: firstText(inf, 'nNFFin'),
  };
}

// ---------------------------------------------------------------------------------------------
// Shared checks: schema, signature, certificate

const tpAmbOfCompany = (company: AuthorityCompany): string => (company.environment === 'producao' ? '1' : '2');

export type Envelope = { ok: true; certificatePem: string } | { ok: false; rejection: Rejection };

/** Schema, then the signature: the first two things every SEFAZ service checks. */
export function checkEnvelope(xml: string, schema: SchemaName, texts: { schema: Rejection; assinatura: Rejection }): Envelope {
  const result = validateXml(xml, schema);
  if (!result.valid) {
    return { ok: false, rejection: { cStat: texts.schema.cStat, xMotivo: motivoWithDetail(texts.schema.xMotivo, result.errors[0]) } };
  }
  const signature = verifyXmlSignature(xml);
  if (!signature.valid) return { ok: false, rejection: texts.assinatura };
  return { ok: true, certificatePem: signature.certificatePem };
}

// Parsing a certificate costs ~0.2 ms; a company signs everything with the same one.
const certificateCnpjs = new Map<string, string | null>();

/** The holder's CNPJ from an ICP-Brasil subject (CN "NAME:CNPJ"), or null. */
export function cnpjOfCertificate(pem: string): string | null {
  const hit = certificateCnpjs.get(pem);
  if (hit !== undefined) return hit;
  let cnpj: string | null = null;
  try {
    const cn = new X509Certificate(pem).subject.split('\n').find((l) => l.startsWith('CN='));
    cnpj = cnpjOfCommonName(cn) ?? null;
  } catch {
    cnpj = null;
  }
  if (certificateCnpjs.size >= 256) certificateCnpjs.clear();
  certificateCnpjs.set(pem, cnpj);
  return cnpj;
}

/**
 * Rejection 213: the document's CNPJ must be the company's, and its signing certificate must
 * belong to the same CNPJ base (first 8 characters). A certificate whose subject carries no CNPJ
 * is accepted only if it is the company's own.
 */
export function certificateMismatch(company: AuthorityCompany, documentCnpj: string | undefined, certificatePem: string): boolean {
  if (!documentCnpj || documentCnpj !== company.cnpj) return true;
  const holder = cnpjOfCertificate(certificatePem);
  if (holder) return holder.slice(0, 8) !== documentCnpj.slice(0, 8);
  try {
    return !sameCertificate(certificatePem, company.credentials.certificatePem);
  } catch {
    return true;
  }
}

/** The 44-character key an Id carries ("NFe…", "MDFe…"), if it is well formed with a right DV. */
function keyOfId(id: string | undefined, prefix: 'NFe' | 'MDFe'): string | undefined {
  if (!id?.startsWith(prefix)) return undefined;
  try {
    return parseAccessKey(id.slice(prefix.length)).key;
  } catch {
    return undefined;
  }
}

/** AAMM of a dhEmi as written (`2026-11-22T…` → `2611`). */
const yearMonthOf = (dhEmi: string | undefined): string => (dhEmi ? dhEmi.slice(2, 4) + dhEmi.slice(5, 7) : '');

const pad = (v: string | undefined, width: number): string => (v ?? '').padStart(width, '0');

// ---------------------------------------------------------------------------------------------
// NF-e / NFC-e: the stateless verdict

export type NfeDocument = {
  key: string;
  facts: NfeFacts;
  certificatePem: string;
  /** Authorized with this alert (cStat 120, NT 2026.002): see sandbox-reform-rules.ts. */
  alert?: VerdictMessage;
};

export type NfeCheck = { ok: true; document: NfeDocument } | { ok: false; rejection: Rejection };

/**
 * Everything SEFAZ checks on an NF-e before looking at its database, in its order: schema (225),
 * signature (297), certificate/emitter (213), authorizing UF (226), key (502), environment (252),
 * homologation texts (373, 598), QR Code of the NFC-e (394, 395, 397, 398, 462, 464, 583),
 * payments (899, 391, 392), NT 2026.002 (715, 750) and the tax reform's IBS/CBS rules (1115, 1020–1024,
 * 1026/1036/1037, 1041/1052/1069/1150, 1118/1119, 1085/1091: sandbox-reform-rules.ts).
 */
export function checkNfe(company: AuthorityCompany, xml: string, cUF: string): NfeCheck {
  const envelope = checkEnvelope(xml, 'nfe', NFE);
  if (!envelope.ok) return envelope;
  const facts = readNfeFacts(xml);
  const fail = (rejection: Rejection): NfeCheck => ({ ok: false, rejection });

  if (certificateMismatch(company, facts.emitCnpj, envelope.certificatePem)) return fail(NFE.certificado);
  if (facts.cUF !== cUF) return fail(NFE.ufAutorizadora);

  const key = keyOfId(facts.id, 'NFe');
  if (!key || !keyMatchesNfe(key, facts)) return fail(NFE.chave);
  if (facts.tpAmb !== tpAmbOfCompany(company)) return fail(NFE.ambiente);

  if (facts.tpAmb === '2') {
    if (facts.mod === '65' && facts.firstXProd !== HOMOLOGACAO_XPROD) return fail(NFE.xProdHomologacao);
    if (facts.dest && facts.dest.xNome !== HOMOLOGACAO_DEST_XNOME) return fail(NFE.destHomologacao);
  }
  if (facts.mod === '65') {
    const qr = nfceQrRejection(company, key, facts, envelope.certificatePem);
    if (qr) return fail(qr);
  }
  const day = (facts.dhEmi ?? '').slice(0, 10);
  if (technicalResponsibleMissing(xml, facts.cUF, facts.tpAmb, day)) return fail(NFE.respTecAusente);
  if (csrtHashWrong(xml, key, company)) return fail(NFE.hashCsrtInvalido);
  const payment = paymentRejection(facts.payments, day);
  if (payment) return fail(payment);
  const reform = readReformFacts(xml);
  const rule = nfceRuleRejection(reform) ?? reformRejection(reform);
  if (rule) return fail(rule);
  const alert = reformAlert(reform);
  return { ok: true, document: { key, facts, certificatePem: envelope.certificatePem, ...(alert && { alert }) } };
}

/** ZD01-10: an NF-e/NFC-e without infRespTec from an emitter whose UF requires it on that day. */
function technicalResponsibleMissing(xml: string, cUF: string | undefined, tpAmb: string | undefined, day: string): boolean {
  const uf = cUF === undefined ? undefined : ufOfCUF(cUF);
  const environment = environmentOfTpAmb(tpAmb);
  return uf !== undefined && environment !== undefined && !has(xml, 'infRespTec') && technicalResponsibleRequired(uf, day, environment);
}

/**
 * A hashCSRT the authority can check (it holds the technical responsible's CSRT) that is not
 * base64(SHA-1(CSRT + chave)), or names another idCSRT than the one registered.
 */
function csrtHashWrong(xml: string, key: string, company: AuthorityCompany): boolean {
  const group = section(xml, 'infRespTec')?.inner;
  const hash = group === undefined ? undefined : firstText(group, 'hashCSRT');
  if (hash === undefined || !company.csrt) return false;
  return Number(firstText(group!, 'idCSRT')) !== company.csrt.id || hash !== hashCsrt(company.csrt.token, key);
}

/**
 * Whether the key (already parsed, so its check digit is right) is the one the document's own
 * fields make: the layout and the digit are fiscal/access-key.ts's, not repeated here.
 */
function keyMatchesFields(
  key: string,
  f: { cUF?: string; dhEmi?: string; emitCnpj?: string; mod?: string; serie?: string; number?: string; tpEmis?: string; code?: string; cDV?: string },
): boolean {
  try {
    const built = buildAccessKey({
      cUF: f.cUF ?? '',
      yearMonth: yearMonthOf(f.dhEmi),
      cnpj: f.emitCnpj ?? '',
      model: (f.mod ?? '') as DocumentModel,
      serie: Number(f.serie),
      number: Number(f.number),
      tpEmis: Number(f.tpEmis),
      code: f.code ?? '',
    });
    return built === key && key.slice(43) === f.cDV;
  } catch {
    return false; // a field the key cannot be built from does not match it
  }
}

const keyMatchesNfe = (key: string, f: NfeFacts): boolean => keyMatchesFields(key, { ...f, number: f.nNF, code: f.cNF });

/**
 * Rules 899 (a code not in force on the document's day), 391 and 392 (docs/fiscal.md, "Payments"),
 * payment by payment in document order; `date` is dhEmi's day, the methods and their dates the law
 * table's.
 */
export function paymentRejection(payments: readonly NfePaymentFacts[], date: string): Rejection | undefined {
  for (const p of payments) {
    if (!paymentMethodInForce(p.tPag, date)) return NFE.meioPagamento;
    if (!p.card) {
      if (cardGroupRequired(p.tPag, date)) return NFE.cartaoAusente;
      continue;
    }
    if (p.card.tpIntegra === '1' && (!p.card.CNPJ || !p.card.cAut)) return NFE.cartaoIncompleto;
  }
  return undefined;
}

/**
 * The QR Code of an NFC-e, checked the way SEFAZ does it: from the document's own values, never
 * trusting the ones the QR repeats. So a QR whose digVal, day, vNF or tpAmb differs from the
 * document fails the hash (v2, 464) or the signature (v3 offline, 583), as it would there.
 */
export function nfceQrRejection(company: AuthorityCompany, key: string, f: NfeFacts, certificatePem: string): Rejection | undefined {
  const qr = f.qrCode;
  if (!qr) return NFE.semQrCode;
  const at = qr.indexOf('?p=');
  if (at < 0) return NFE.qrUrl;
  const uf = ufOfCUF(key.slice(0, 2));
  if (!uf || qr.slice(0, at) !== qrBaseUrlOf(uf, Number(f.tpAmb))) return NFE.qrUrl;
  const params = qr.slice(at + 3).split('|');
  if (params[0] !== key) return NFE.qrChave;
  const version = params[1];
  const offline = f.tpEmis === '9';
  const dia = (f.dhEmi ?? '').slice(8, 10);

  if (version === '2') {
    // online: chave|2|tpAmb|cIdToken|hash; offline: chave|2|tpAmb|dia|vNF|digVal|cIdToken|hash
    if (params.length !== (offline ? 8 : 5)) return NFE.qrHash;
    const idToken = params[params.length - 2]!;
    const hash = params[params.length - 1]!;
    if (!company.csc || !/^[0-9]{1,6}$/.test(company.csc.id) || Number(idToken) !== Number(company.csc.id)) {
      return NFE.cscDesconhecido;
    }
    const digVal = f.digestValue ? Buffer.from(f.digestValue, 'ascii').toString('hex') : '';
    const expected = offline ? `${key}|2|${f.tpAmb}|${dia}|${f.vNF}|${digVal}|${idToken}` : `${key}|2|${f.tpAmb}|${idToken}`;
    const given = params.slice(0, -1).join('|');
    // The hash is over the text as the QR carries it (an emitter writing digVal in upper case
    // hashes that), but the values must be the document's: hex case aside, both must agree.
    if (given.toLowerCase() !== expected.toLowerCase()) return NFE.qrHash;
    const computed = createHash('sha1')
      .update(given + company.csc.token, 'utf8')
      .digest('hex');
    if (computed.toUpperCase() !== hash.toUpperCase()) return NFE.qrHash;
    return undefined;
  }
  if (version === '3') {
    if (!offline) return params.length === 3 ? undefined : NFE.qrVersao;
    // chave|3|tpAmb|dia|vNF|tp_idDest|cDest|assinatura, the signature over fields 1–7.
    if (params.length !== 8) return NFE.qrAssinatura;
    // What the QR carries for the document's consumer is the builder's rule (an alphanumeric CNPJ
    // gives its type without the number): the same function says it here.
    const d = f.dest;
    const [tp, cDest] = qrDestFields(d?.idTag ? { [QR_DEST_FIELD[d.idTag]]: d.id ?? '' } : undefined);
    const expected = `${key}|3|${f.tpAmb}|${dia}|${f.vNF}|${tp}|${cDest}`;
    if (params.slice(0, 7).join('|') !== expected) return NFE.qrAssinatura;
    let ok = false;
    try {
      ok = rsaVerify('RSA-SHA1', Buffer.from(expected, 'utf8'), certificatePem, Buffer.from(params[7]!, 'base64'));
    } catch {
      ok = false;
    }
    return ok ? undefined : NFE.qrAssinatura;
  }
  return NFE.qrVersao;
}

const QR_DEST_FIELD = { CNPJ: 'cnpj', CPF: 'cpf', idEstrangeiro: 'idEstrangeiro' } as const;

// ---------------------------------------------------------------------------------------------
// MDF-e: the stateless verdict

export type MdfeDocument = { key: string; facts: MdfeFacts; certificatePem: string };

export type MdfeCheck = { ok: true; document: MdfeDocument } | { ok: false; rejection: Rejection };

/**
 * Schema (215), signature (297), certificate/emitter (213), key (502), environment (252), QR Code
 * (479–496), then the content rules of docs/api.md, "MDF-e" in its order: 745, 699, 698, 725,
 * 578, 663. (611 and 204 need the authority's memory: sandbox.ts.)
 */
export function checkMdfe(company: AuthorityCompany, xml: string): MdfeCheck {
  const envelope = checkEnvelope(xml, 'mdfe', MDFE);
  if (!envelope.ok) return envelope;
  const facts = readMdfeFacts(xml);
  const fail = (rejection: Rejection): MdfeCheck => ({ ok: false, rejection });

  if (certificateMismatch(company, facts.emitCnpj, envelope.certificatePem)) return fail(MDFE.certificado);
  const key = keyOfId(facts.id, 'MDFe');
  if (!key || !keyMatchesMdfe(key, facts)) return fail(MDFE.chave);
  if (facts.tpAmb !== tpAmbOfCompany(company)) return fail(MDFE.ambiente);
  const qr = mdfeQrRejection(key, facts, envelope.certificatePem);
  if (qr) return fail(qr);
  const content = mdfeContentRejection(facts);
  if (content) return fail(content);
  return { ok: true, document: { key, facts, certificatePem: envelope.certificatePem } };
}

const keyMatchesMdfe = (key: string, f: MdfeFacts): boolean => keyMatchesFields(key, { ...f, number: f.nMDF, code: f.cMDF });

/** qrCodMDFe: `<national URL>?chMDFe=<key>&tpAmb=<n>`, plus `&sign=` in contingency (tpEmis 2). */
export function mdfeQrRejection(key: string, f: MdfeFacts, certificatePem: string): Rejection | undefined {
  const qr = f.qrCode;
  if (!qr) return MDFE.semQrCode;
  const at = qr.indexOf('?');
  // The MOC examples write …/mdfe/QRCode, the libraries …/mdfe/qrCode: the path is compared
  // without regard to case.
  if (at < 0 || qr.slice(0, at).toLowerCase() !== MDFE_QR_BASE_URL.toLowerCase()) return MDFE.qrUrl;
  const params = new Map<string, string>();
  for (const pair of qr.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq > 0) params.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  // No official code is known for a tpAmb parameter that differs from the document: it is
  // reported with the key parameter's 481, the QR no longer identifying this MDF-e.
  if (params.get('chMDFe') !== key || params.get('tpAmb') !== f.tpAmb) return MDFE.qrChave;
  const sign = params.get('sign');
  if (f.tpEmis === '2') {
    if (!sign) return MDFE.qrSemSign;
    let ok = false;
    try {
      ok = rsaVerify('RSA-SHA1', Buffer.from(key, 'utf8'), certificatePem, Buffer.from(sign, 'base64'));
    } catch {
      ok = false;
    }
    if (!ok) return MDFE.qrSign;
  } else if (sign !== undefined) {
    return MDFE.qrSignIndevido;
  }
  return undefined;
}

/**
 * The stateless content rules, first broken one wins (docs/api.md, "MDF-e"), read from the
 * document exactly as fiscal/mdfe/build.ts `mdfeRuleViolation` reads them from the request:
 * - 745: tpTransp and veicTracao/prop go together (third-party vehicle) or not at all;
 * - 699: an insurance group without the insurer (infSeg: xSeg and CNPJ), the policy (nApol) or
 *   an endorsement (nAver);
 * - 698: no insurance group; 725: no prodPred; 578: no infContratante;
 * - 663: infPercurso is not a chain of bordering states from UFIni to UFFim.
 */
export function mdfeContentRejection(f: MdfeFacts): Rejection | undefined {
  const tpTransp = !!f.tpTransp;
  if (tpTransp && !f.hasProp) return MDFE.tpTranspSemProp;
  if (f.hasProp && !tpTransp) return MDFE.propSemTpTransp;
  if (f.insurance.length > 0 && !f.insurance.every((s) => !!s.xSeg && !!s.insurerCnpj && !!s.nApol && s.endorsements > 0)) {
    return MDFE.seguroIncompleto;
  }
  if (f.insurance.length === 0) return MDFE.seguroObrigatorio;
  if (!f.hasProdPred) return MDFE.produtoPredominante;
  if (f.contractors === 0) return MDFE.tomadores;
  if (!validateRoute(f.UFIni ?? '', f.UFFim ?? '', f.UFPer).valid) return MDFE.percurso;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Events and inutilização: the stateless part

export type EventCheck = { ok: true; facts: EventFacts; key: string } | { ok: false; rejection: Rejection };

/**
 * Schema (NF-e: eventoCancNFe for 110111 / eventoCancSubst for 110112; MDF-e: eventoMDFe with
 * its detEvento), signature, author (213), environment (252) and the Id (572 / 628).
 */
export function checkEvent(company: AuthorityCompany, xml: string, family: 'nfe' | 'mdfe'): EventCheck {
  const texts = family === 'nfe' ? { ...NFE, schema: NFE.schemaMensagem } : MDFE;
  const tpEvento = firstText(xml, 'tpEvento');
  const schema: SchemaName = family === 'mdfe' ? 'eventoMDFe' : tpEvento === '110112' ? 'eventoCancSubst' : 'eventoCancNFe';
  const envelope = checkEnvelope(xml, schema, texts);
  if (!envelope.ok) return envelope;
  const facts = readEventFacts(xml);
  if (certificateMismatch(company, facts.author, envelope.certificatePem)) return { ok: false, rejection: texts.certificado };
  if (facts.tpAmb !== tpAmbOfCompany(company)) return { ok: false, rejection: texts.ambiente };
  const expectedId = `ID${facts.tpEvento}${facts.key}${pad(facts.nSeqEvento, 2)}`;
  if (!facts.key || facts.id !== expectedId) return { ok: false, rejection: texts.eventoId };
  return { ok: true, facts, key: facts.key };
}

export type InutCheck = { ok: true; facts: InutFacts; serie: number; first: number; last: number } | { ok: false; rejection: Rejection };

/** Schema (215), signature (297), author (213), environment (252), UF (226), range order (224). */
export function checkInut(company: AuthorityCompany, xml: string, cUF: string): InutCheck {
  const envelope = checkEnvelope(xml, 'inutNFe', { schema: NFE.schemaMensagem, assinatura: NFE.assinatura });
  if (!envelope.ok) return envelope;
  const facts = readInutFacts(xml);
  if (certificateMismatch(company, facts.cnpj, envelope.certificatePem)) return { ok: false, rejection: NFE.certificado };
  if (facts.tpAmb !== tpAmbOfCompany(company)) return { ok: false, rejection: NFE.ambiente };
  if (facts.cUF !== cUF) return { ok: false, rejection: NFE.ufAutorizadora };
  const first = Number(facts.nNFIni);
  const last = Number(facts.nNFFin);
  if (first > last) return { ok: false, rejection: NFE.faixaInvertida };
  return { ok: true, facts, serie: Number(facts.serie), first, last };
}
