// The sale facts of one NFC-e (items, payments, totals), read from its XML (the signed NFe, or
// the nfeProc with the authorization protocol): what the manager's reports
// (electron/core/reports.ts) and the accountant's export summary (service/nfce/export.ts) add
// up. Both read the same XML through this one function, so the totals they show are the
// document's own, never a separate counter. (readNfceSummary in build.ts reads the identity and
// QR Code of a document; this reads its sale.)
//
// Money in integer cents (bigint), quantities as the layout's decimal strings.

import { keyInAttributes } from '../access-key.ts';
import { FieldError } from '../errors.ts';
import { toCents } from '../money.ts';
import { nfeReader } from '../nfe-reader.ts';
import { AUTHORIZED_CSTAT } from '../protocol.ts';

export type NfceSaleItem = {
  nItem: number;
  cProd: string;
  xProd: string;
  uCom: string;
  /** qCom as written (decimal string with a dot). */
  qCom: string;
  /** vProd − vDesc of the item. */
  valueCents: bigint;
};

export type NfceSalePayment = { tPag: string; vPagCents: bigint };

export type NfceSaleFacts = {
  chave: string;
  serie: number;
  nNF: number;
  /** ide/dhEmi as written (with its offset). */
  dhEmi: string;
  tpEmis: number;
  tpAmb: '1' | '2';
  vNFCents: bigint;
  vTrocoCents: bigint;
  items: NfceSaleItem[];
  payments: NfceSalePayment[];
  /** The authorization protocol, when the XML is an nfeProc carrying one (cStat 100, 120 or 150). */
  authorization: { nProt: string; dhRecbto: string; cStat: string } | null;
};

/** The sale facts of an NFC-e XML; FieldError('xml', …) when it is not a readable NFC-e. */
export function nfceSaleFacts(xml: string): NfceSaleFacts {
  if (typeof xml !== 'string' || xml.length === 0) throw new FieldError('xml', 'XML da NFC-e obrigatório');
  const { at, section, sections, textOf, required } = nfeReader(xml);
  const infNFe = at(xml, 'infNFe');
  if (!infNFe) throw new FieldError('xml', 'documento sem infNFe');
  const chave = keyInAttributes(infNFe.attrs, 'NFe');
  if (!chave) throw new FieldError('xml', 'documento sem infNFe/@Id (chave de acesso)');
  const inf = infNFe.body;
  const ide = section(inf, 'ide');
  const mod = required(ide, 'mod', 'ide');
  if (mod !== '65') throw new FieldError('xml', `o documento é do modelo ${mod}, não uma NFC-e (65)`);
  const tpAmb = required(ide, 'tpAmb', 'ide');

  const items: NfceSaleItem[] = sections(inf, 'det').map((det, i) => {
    const prod = section(det.body, 'prod');
    const where = `det[${i}].prod`;
    const vDesc = textOf(prod, 'vDesc');
    return {
      nItem: Number(/\bnItem\s*=\s*["']([0-9]+)["']/.exec(det.attrs)?.[1] ?? i + 1),
      cProd: required(prod, 'cProd', where),
      xProd: required(prod, 'xProd', where),
      uCom: required(prod, 'uCom', where),
      qCom: required(prod, 'qCom', where),
      valueCents: toCents(required(prod, 'vProd', where), `${where}.vProd`) - (vDesc === undefined ? 0n : toCents(vDesc, `${where}.vDesc`)),
    };
  });
  if (items.length === 0) throw new FieldError('xml', 'NFC-e sem itens (det)');

  const pag = section(inf, 'pag');
  const payments: NfceSalePayment[] = sections(pag ?? '', 'detPag').map((d, i) => ({
    tPag: required(d.body, 'tPag', `pag.detPag[${i}]`),
    vPagCents: toCents(required(d.body, 'vPag', `pag.detPag[${i}]`), `pag.detPag[${i}].vPag`),
  }));
  const vTroco = textOf(pag, 'vTroco');
  const icmsTot = section(section(inf, 'total'), 'ICMSTot');

  const infProt = section(xml.slice(infNFe.end), 'infProt');
  const cStat = textOf(infProt, 'cStat');
  const authorization =
    infProt && cStat !== undefined && AUTHORIZED_CSTAT.has(cStat) && textOf(infProt, 'chNFe') === chave
      ? { nProt: required(infProt, 'nProt', 'infProt'), dhRecbto: required(infProt, 'dhRecbto', 'infProt'), cStat }
      : null;

  return {
    chave,
    serie: Number(required(ide, 'serie', 'ide')),
    nNF: Number(required(ide, 'nNF', 'ide')),
    dhEmi: required(ide, 'dhEmi', 'ide'),
    tpEmis: Number(required(ide, 'tpEmis', 'ide')),
    tpAmb: tpAmb === '1' ? '1' : '2',
    vNFCents: toCents(required(icmsTot, 'vNF', 'total.ICMSTot'), 'total.ICMSTot.vNF'),
    vTrocoCents: vTroco === undefined ? 0n : toCents(vTroco, 'pag.vTroco'),
    items,
    payments,
    authorization,
  };
}
