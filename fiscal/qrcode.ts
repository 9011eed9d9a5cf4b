// QR Code texts of the NFC-e (versions 2 and 3, docs/fiscal.md, "QR Code") and of the MDF-e
// (section 11.2). Pure string building: the caller places the text in infNFeSupl/infMDFeSupl,
// and xml.ts escapes it once (the MDF-e `&` becomes `&amp;` there, never here).

import { createHash } from 'node:crypto';
import { ACCESS_KEY } from '../base/common/access-key.ts';
import { CNPJ_FORMAT } from '../base/common/tax-ids.ts';
import { ufOfCUF } from './br/uf.ts';
import { qrBaseUrlOf, urlChaveOf } from './br/nfce-urls.ts';
import type { QrCodeVersion } from './company.ts';
import { FieldError } from './errors.ts';
import { normalizeDecimal } from './money.ts';
import { signRsaSha1Base64 } from './signature.ts';
import { parseAccessKey } from './access-key.ts';
import { brasiliaDateTime } from './protocol.ts';

export { qrBaseUrlOf, urlChaveOf } from './br/nfce-urls.ts';

export type Csc = { id: string; token: string };

/** The consumer as the v3 offline QR identifies it (tp_idDest 1 CNPJ, 2 CPF, 3 foreigner). */
export type QrDest = { cpf?: string; cnpj?: string; idEstrangeiro?: string };

type Common = {
  key: string;
  tpAmb: 1 | 2;
  version: QrCodeVersion;
  /** Overrides the per-UF table (a company setting, for a UF whose address changed). */
  baseUrl?: string;
};

export type NfceQrOnlineInput = Common & { csc?: Csc };

export type NfceQrOfflineInput = Common & {
  /** As written in ide/dhEmi (`AAAA-MM-DDThh:mm:ss-03:00`), or an instant (Brasília day taken). */
  dhEmi: string | Date;
  vNF: string;
  /** v2: base64 DigestValue of the signed NFC-e. */
  digestValue?: string;
  /** v2: CSC and its id. */
  csc?: Csc;
  /** v3: the consumer, if identified. */
  dest?: QrDest;
  /** v3: the emitter's e-CNPJ private key, which signs fields 1–7. */
  privateKeyPem?: string;
};

/**
 * The NFC-e key as the QR patterns demand it: 44 positions, model 65, and the tpEmis digit of the
 * mode (online 1|3|4, offline 9), so an inconsistent QR fails here rather than at the schema.
 * The check digit is the key builder's business and is deliberately not re-checked: the shared
 * fixtures (and their published QR vectors) carry a key whose DV is wrong.
 */
function nfceKey(key: unknown, offline: boolean): string {
  if (typeof key !== 'string' || !ACCESS_KEY.test(key)) {
    throw new FieldError('chave', 'chave de acesso deve ter 44 posições (dígitos; letras maiúsculas só no CNPJ)');
  }
  if (key.slice(20, 22) !== '65') throw new FieldError('chave', 'a chave não é de NFC-e (modelo 65)');
  const tpEmis = key[34]!;
  if (offline && tpEmis !== '9') throw new FieldError('chave', 'QR Code de contingência exige chave com tpEmis 9');
  if (!offline && !'134'.includes(tpEmis)) {
    throw new FieldError('chave', `QR Code online exige chave com tpEmis 1, 3 ou 4 (a chave tem ${tpEmis})`);
  }
  return key;
}

function tpAmbOk(tpAmb: unknown): 1 | 2 {
  if (tpAmb !== 1 && tpAmb !== 2) throw new FieldError('tpAmb', 'deve ser 1 (produção) ou 2 (homologação)');
  return tpAmb;
}

function baseUrl(key: string, tpAmb: 1 | 2, override?: string): string {
  if (override !== undefined) {
    if (!/^https?:\/\/\S+$/i.test(override)) throw new FieldError('baseUrl', 'URL do QR Code inválida');
    return override;
  }
  const uf = ufOfCUF(key.slice(0, 2));
  if (!uf) throw new FieldError('chave', `cUF ${key.slice(0, 2)} desconhecido na chave de acesso`);
  return qrBaseUrlOf(uf, tpAmb);
}

/** The <urlChave> of the UF encoded in the key. */
export function urlChaveOfKey(key: string, tpAmb: 1 | 2): string {
  const uf = ufOfCUF(String(key).slice(0, 2));
  if (!uf) throw new FieldError('chave', 'cUF desconhecido na chave de acesso');
  return urlChaveOf(uf, tpAmb);
}

/** cIdToken: the CSC id without leading zeros (`000001` → `1`), pattern `0|[1-9][0-9]{0,5}`. */
function cIdToken(csc: Csc | undefined): { id: string; token: string } {
  if (!csc || typeof csc.token !== 'string' || csc.token.trim() === '') {
    throw new FieldError('csc', 'CSC (código de segurança do contribuinte) não configurado: obrigatório para o QR Code versão 2');
  }
  if (typeof csc.id !== 'string' || !/^[0-9]{1,6}$/.test(csc.id)) {
    throw new FieldError('csc.id', 'identificador do CSC deve ter de 1 a 6 dígitos');
  }
  return { id: csc.id.replace(/^0+(?=[0-9])/, ''), token: csc.token };
}

/** cHashQRCode: SHA-1 of the parameters up to cIdToken with the CSC appended, UPPERCASE hex. */
function hashQr(params: string, token: string): string {
  return createHash('sha1')
    .update(params + token, 'utf8')
    .digest('hex')
    .toUpperCase();
}

/** Two-digit day of dhEmi, as the XML carries it. */
function dayOf(dhEmi: string | Date): string {
  if (dhEmi instanceof Date) {
    return brasiliaDateTime(dhEmi, 'dhEmi').slice(8, 10);
  }
  // The QR must repeat the day written in ide/dhEmi, so a string is read, not converted.
  const m = typeof dhEmi === 'string' ? /^[0-9]{4}-[0-9]{2}-([0-9]{2})T/.exec(dhEmi) : null;
  if (!m || m[1] === '00' || Number(m[1]) > 31) throw new FieldError('dhEmi', 'data de emissão deve estar no formato AAAA-MM-DDThh:mm:ss±hh:mm');
  return m[1]!;
}

/** digVal: the DigestValue's base64 text hex-encoded (ASCII bytes), lowercase, 56 characters. */
export function digValHex(digestValue: unknown): string {
  if (typeof digestValue !== 'string' || !/^[A-Za-z0-9+/]{27}=$/.test(digestValue)) {
    throw new FieldError('digestValue', 'DigestValue SHA-1 em base64 (28 caracteres) obrigatório para o QR Code v2 em contingência');
  }
  return Buffer.from(digestValue, 'ascii').toString('hex');
}

/** QR Code of an NFC-e issued online (tpEmis 1): v2 `chave|2|tpAmb|cIdToken|hash`, v3 `chave|3|tpAmb`. */
export function nfceQrCodeOnline(input: NfceQrOnlineInput): string {
  const key = nfceKey(input.key, false);
  const tpAmb = tpAmbOk(input.tpAmb);
  const url = baseUrl(key, tpAmb, input.baseUrl);
  if (input.version === 3) return `${url}?p=${key}|3|${tpAmb}`;
  if (input.version !== 2) throw new FieldError('version', 'versão do QR Code deve ser 2 ou 3');
  const { id, token } = cIdToken(input.csc);
  const params = `${key}|2|${tpAmb}|${id}`;
  return `${url}?p=${params}|${hashQr(params, token)}`;
}

/** tp_idDest and cDest of the v3 offline QR; both empty when the consumer is not identified. */
export function qrDestFields(dest: QrDest | undefined): [string, string] {
  if (!dest) return ['', ''];
  const given = [dest.cnpj, dest.cpf, dest.idEstrangeiro].filter((v) => v !== undefined).length;
  if (given > 1) throw new FieldError('dest', 'informe apenas um entre cnpj, cpf e idEstrangeiro');
  if (dest.cnpj !== undefined) {
    if (!CNPJ_FORMAT.test(dest.cnpj)) throw new FieldError('dest.cnpj', 'CNPJ do destinatário deve ter 14 caracteres');
    // cDest is [0-9]{3,14} in the schema Balcão validates with: an alphanumeric CNPJ has no form
    // there, so its type is given and the document left to dest/CNPJ, as for a foreigner
    // (docs/fiscal.md, "QR Code").
    return ['1', /^[0-9]+$/.test(dest.cnpj) ? dest.cnpj : ''];
  }
  if (dest.cpf !== undefined) {
    if (!/^[0-9]{11}$/.test(dest.cpf)) throw new FieldError('dest.cpf', 'CPF do destinatário deve ter 11 dígitos');
    return ['2', dest.cpf];
  }
  // Foreigner: the type is given, the document is not (Manual v6.0 p.30).
  if (dest.idEstrangeiro !== undefined) return ['3', ''];
  return ['', ''];
}

/**
 * QR Code of an NFC-e issued in offline contingency (tpEmis 9).
 * v2: `chave|2|tpAmb|dia|vNF|digVal|cIdToken|hash` (needs the signed document's DigestValue).
 * v3: `chave|3|tpAmb|dia|vNF|tp_idDest|cDest|assinatura`, the signature being RSA-SHA1 of fields
 * 1–7 with their separators, so it can be built before the XML signature.
 */
export function nfceQrCodeOffline(input: NfceQrOfflineInput): string {
  const key = nfceKey(input.key, true);
  const tpAmb = tpAmbOk(input.tpAmb);
  const url = baseUrl(key, tpAmb, input.baseUrl);
  const dia = dayOf(input.dhEmi);
  const vNF = normalizeDecimal(input.vNF, 2, 'vNF');
  if (input.version === 2) {
    const { id, token } = cIdToken(input.csc);
    const params = `${key}|2|${tpAmb}|${dia}|${vNF}|${digValHex(input.digestValue)}|${id}`;
    return `${url}?p=${params}|${hashQr(params, token)}`;
  }
  if (input.version !== 3) throw new FieldError('version', 'versão do QR Code deve ser 2 ou 3');
  if (typeof input.privateKeyPem !== 'string' || !input.privateKeyPem.includes('PRIVATE KEY')) {
    throw new FieldError('privateKeyPem', 'chave privada do certificado obrigatória para o QR Code v3 em contingência');
  }
  const [tp, cDest] = qrDestFields(input.dest);
  const fields = `${key}|3|${tpAmb}|${dia}|${vNF}|${tp}|${cDest}`;
  return `${url}?p=${fields}|${signRsaSha1Base64(fields, input.privateKeyPem)}`;
}

/** The single national MDF-e consultation address, the same in both environments (MOC 9.2). */
export const MDFE_QR_BASE_URL = 'https://dfe-portal.svrs.rs.gov.br/mdfe/qrCode';

/**
 * qrCodMDFe: `…?chMDFe=<chave>&tpAmb=<1|2>`; in contingency (tpEmis 2) also `&sign=` with the
 * base64 RSA-SHA1 signature of the 44-character key (482 when missing, 488 when sent in normal).
 */
export function mdfeQrCode(input: { key: string; tpAmb: 1 | 2; tpEmis: number; privateKeyPem?: string }): string {
  const parsed = parseAccessKey(input.key, 'chMDFe');
  if (parsed.model !== '58') throw new FieldError('chMDFe', 'a chave não é de MDF-e (modelo 58)');
  const tpAmb = tpAmbOk(input.tpAmb);
  if (parsed.tpEmis !== input.tpEmis) {
    throw new FieldError('tpEmis', `tpEmis ${input.tpEmis} difere do informado na chave (${parsed.tpEmis})`);
  }
  const text = `${MDFE_QR_BASE_URL}?chMDFe=${parsed.key}&tpAmb=${tpAmb}`;
  if (input.tpEmis !== 2) return text;
  if (typeof input.privateKeyPem !== 'string' || !input.privateKeyPem.includes('PRIVATE KEY')) {
    throw new FieldError('privateKeyPem', 'chave privada do certificado obrigatória para o QR Code do MDF-e em contingência');
  }
  return `${text}&sign=${signRsaSha1Base64(parsed.key, input.privateKeyPem)}`;
}
