// Per-state NFC-e addresses (docs/fiscal.md, "QR Code"): the QR Code base URL (NfeConsultaQR, from
// sped-nfe storage/wsnfe_4.00_mod65.xml) and the "consulte pela chave de acesso" address written
// as-is into <urlChave> (sped-nfe storage/uri_consulta_nfce.json). A wrong address is rejection
// 395, so these are data, kept apart from the QR logic, and a company setting may override them
// (the notes mark both tables as configuration to check against the UF's own page).

import { FieldError } from '../errors.ts';
import { isUF, type UF } from './uf.ts';

export type NfceUrlPair = { producao: string; homologacao: string };

const same = (url: string): NfceUrlPair => ({ producao: url, homologacao: url });
const pair = (producao: string, homologacao: string): NfceUrlPair => ({ producao, homologacao });

/** QR Code base URL (the text before `?p=`), per UF and environment. */
export const NFCE_QR_URLS: Readonly<Record<UF, NfceUrlPair>> = Object.freeze({
  AC: pair('http://www.sefaznet.ac.gov.br/nfce/qrcode', 'http://www.hml.sefaznet.ac.gov.br/nfce/qrcode'),
  AL: same('http://nfce.sefaz.al.gov.br/QRCode/consultarNFCe.jsp'),
  AM: pair('https://sistemas.sefaz.am.gov.br/nfceweb/consultarNFCe.jsp', 'https://sistemas.sefaz.am.gov.br/nfceweb-hom/consultarNFCe.jsp'),
  AP: pair('https://www.sefaz.ap.gov.br/nfce/nfcep.php', 'https://www.sefaz.ap.gov.br/nfcehml/nfce.php'),
  BA: pair('http://nfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx', 'http://hnfe.sefaz.ba.gov.br/servicos/nfce/qrcode.aspx'),
  CE: pair('http://nfce.sefaz.ce.gov.br/pages/ShowNFCe.html', 'http://nfceh.sefaz.ce.gov.br/pages/ShowNFCe.html'),
  DF: pair('http://www.fazenda.df.gov.br/nfce/qrcode', 'http://dec.fazenda.df.gov.br/ConsultarNFCe.aspx'),
  ES: pair('http://app.sefaz.es.gov.br/ConsultaNFCe/qrcode.aspx', 'http://homologacao.sefaz.es.gov.br/ConsultaNFCe/qrcode.aspx'),
  GO: pair('https://nfeweb.sefaz.go.gov.br/nfeweb/sites/nfce/danfeNFCe', 'https://nfewebhomolog.sefaz.go.gov.br/nfeweb/sites/nfce/danfeNFCe'),
  MA: pair('http://www.nfce.sefaz.ma.gov.br/portal/consultarNFCe.jsp', 'http://www.hom.nfce.sefaz.ma.gov.br/portal/consultarNFCe.jsp'),
  MG: same('https://portalsped.fazenda.mg.gov.br/portalnfce/sistema/qrcode.xhtml'),
  MS: same('http://www.dfe.ms.gov.br/nfce/qrcode'),
  MT: pair('http://www.sefaz.mt.gov.br/nfce/consultanfce', 'http://homologacao.sefaz.mt.gov.br/nfce/consultanfce'),
  PA: pair(
    'https://appnfc.sefa.pa.gov.br/portal/view/consultas/nfce/nfceForm.seam',
    'https://appnfc.sefa.pa.gov.br/portal-homologacao/view/consultas/nfce/nfceForm.seam',
  ),
  PB: pair('http://www.sefaz.pb.gov.br/nfce', 'http://www.sefaz.pb.gov.br/nfcehom'),
  PE: pair('http://nfce.sefaz.pe.gov.br/nfce/consulta', 'http://nfcehomolog.sefaz.pe.gov.br/nfce/consulta'),
  PI: same('http://www.sefaz.pi.gov.br/nfce/qrcode'),
  PR: same('http://www.fazenda.pr.gov.br/nfce/qrcode'),
  RJ: pair('https://consultadfe.fazenda.rj.gov.br/consultaNFCe/QRCode', 'http://www4.fazenda.rj.gov.br/consultaNFCe/QRCode'),
  RN: pair('http://nfce.set.rn.gov.br/consultarNFCe.aspx', 'http://hom.nfce.set.rn.gov.br/consultarNFCe.aspx'),
  RO: same('http://www.nfce.sefin.ro.gov.br/consultanfce/consulta.jsp'),
  RR: pair('https://www.sefaz.rr.gov.br/servlet/qrcode', 'http://200.174.88.103:8080/nfce/servlet/qrcode'),
  RS: same('https://www.sefaz.rs.gov.br/NFCE/NFCE-COM.aspx'),
  SC: pair('https://sat.sef.sc.gov.br/nfce/consulta', 'https://hom.sat.sef.sc.gov.br/nfce/consulta'),
  SE: pair('http://www.nfce.se.gov.br/nfce/qrcode', 'http://www.hom.nfe.se.gov.br/nfce/qrcode'),
  SP: pair('https://www.nfce.fazenda.sp.gov.br/qrcode', 'https://www.homologacao.nfce.fazenda.sp.gov.br/qrcode'),
  TO: pair('http://www.sefaz.to.gov.br/nfce/qrcode', 'http://homologacao.sefaz.to.gov.br/nfce/qrcode'),
});

/** The <urlChave> address (printed on the DANFE as "Consulte pela Chave de Acesso em"). */
export const NFCE_URL_CHAVE: Readonly<Record<UF, NfceUrlPair>> = Object.freeze({
  AC: same('www.sefaznet.ac.gov.br/nfce/consulta'),
  AL: same('www.sefaz.al.gov.br/nfce/consulta'),
  AM: same('www.sefaz.am.gov.br/nfce/consulta'),
  AP: same('www.sefaz.ap.gov.br/nfce/consulta'),
  BA: pair('http://www.sefaz.ba.gov.br/nfce/consulta', 'http://hinternet.sefaz.ba.gov.br/nfce/consulta'),
  CE: same('www.sefaz.ce.gov.br/nfce/consulta'),
  DF: same('www.fazenda.df.gov.br/nfce/consulta'),
  ES: same('www.sefaz.es.gov.br/nfce/consulta'),
  GO: pair('www.sefaz.go.gov.br/nfce/consulta', 'www.nfce.go.gov.br/post/ver/214413/consulta-nfc-e-homologacao'),
  MA: same('www.sefaz.ma.gov.br/nfce/consulta'),
  MG: pair('https://portalsped.fazenda.mg.gov.br/portalnfce', 'https://hportalsped.fazenda.mg.gov.br/portalnfce'),
  MS: same('http://www.dfe.ms.gov.br/nfce/consulta'),
  MT: pair('http://www.sefaz.mt.gov.br/nfce/consultanfce', 'http://homologacao.sefaz.mt.gov.br/nfce/consultanfce'),
  PA: same('www.sefa.pa.gov.br/nfce/consulta'),
  PB: pair('www.sefaz.pb.gov.br/nfce/consulta', 'www.sefaz.pb.gov.br/nfcehom'),
  PE: same('nfce.sefaz.pe.gov.br/nfce/consulta'),
  PI: same('www.sefaz.pi.gov.br/nfce/consulta'),
  PR: same('http://www.fazenda.pr.gov.br/nfce/consulta'),
  RJ: same('www.fazenda.rj.gov.br/nfce/consulta'),
  RN: same('www.set.rn.gov.br/nfce/consulta'),
  RO: same('www.sefin.ro.gov.br/nfce/consulta'),
  RR: same('www.sefaz.rr.gov.br/nfce/consulta'),
  RS: same('www.sefaz.rs.gov.br/nfce/consulta'),
  SC: pair('https://sat.sef.sc.gov.br/nfce/consulta', 'https://hom.sat.sef.sc.gov.br/nfce/consulta'),
  SE: pair('http://www.nfce.se.gov.br/nfce/consulta', 'http://www.hom.nfe.se.gov.br/nfce/consulta'),
  SP: pair('https://www.nfce.fazenda.sp.gov.br/NFCeConsultaPublica', 'https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica'),
  TO: pair('www.sefaz.to.gov.br/nfce/consulta', 'http://homologacao.sefaz.to.gov.br/nfce/consulta.jsf'),
});

function lookup(table: Readonly<Record<UF, NfceUrlPair>>, uf: string, tpAmb: number, field: string): string {
  if (!isUF(uf)) throw new FieldError(field, `UF inexistente: "${uf}"`);
  if (tpAmb !== 1 && tpAmb !== 2) throw new FieldError('tpAmb', 'deve ser 1 (produção) ou 2 (homologação)');
  return tpAmb === 1 ? table[uf].producao : table[uf].homologacao;
}

/** QR Code base URL of the UF for tpAmb 1 (produção) or 2 (homologação). */
export const qrBaseUrlOf = (uf: string, tpAmb: number, field = 'UF'): string => lookup(NFCE_QR_URLS, uf, tpAmb, field);

/** <urlChave> of the UF for tpAmb 1 (produção) or 2 (homologação). */
export const urlChaveOf = (uf: string, tpAmb: number, field = 'UF'): string => lookup(NFCE_URL_CHAVE, uf, tpAmb, field);
