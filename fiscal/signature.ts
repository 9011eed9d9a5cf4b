// The SEFAZ XMLDSig profile (docs/fiscal.md, "Signature"): enveloped signature, inclusive C14N 1.0,
// RSA-SHA1, SHA-1 digest, exactly one Reference to the signed element's Id, KeyInfo holding only
// the X509Certificate, and an unprefixed <Signature> (a `ds:` prefix is rejection 404).
// xml-crypto is the reference for both signing and verifying, configured to reproduce the
// sped-common signer byte for byte (test vector: DigestValue m9ZrQTKMxv7A1Blnf/nmNGVX+N8= of the
// real BA fixture). It is too slow for the hot paths (a DOM, deep clones and the `xpath` package),
// so each direction first tries a fast path over fiscal/c14n.ts, which declines whatever it cannot
// do exactly as the reference does.

import { createHash, createPrivateKey, sign as rsaSign, verify as rsaVerify, X509Certificate, type KeyObject } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { canonicalizeById, canonicalizeDocument, DSIG_NS } from './c14n.ts';
import { FieldError } from './errors.ts';

const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1';

/** The elements our documents sign; each carries the Id the Reference points to. */
const SIGNED_ELEMENTS = ['infNFe', 'infEvento', 'infInut', 'infMDFe'] as const;

export type SigningCredentials = { privateKeyPem: string; certificatePem: string };

const SIGNED_ELEMENT = new RegExp(`<(${SIGNED_ELEMENTS.join('|')})\\s[^>]*?\\bId="([^"]+)"`);

/** The (first) Id-bearing fiscal element: what the one Reference of the signature must point to. */
function findSignedElement(xml: string): { name: string; id: string } | undefined {
  const m = SIGNED_ELEMENT.exec(xml);
  return m ? { name: m[1]!, id: m[2]! } : undefined;
}

const NO_SIGNED_ELEMENT = `nenhum elemento assinável (${SIGNED_ELEMENTS.join(', ')}) com atributo Id`;

function signedElementOf(xml: string): { name: string; id: string } {
  const target = findSignedElement(xml);
  if (!target) throw new FieldError('xml', NO_SIGNED_ELEMENT);
  return target;
}

// Parsed keys and certificate bodies, by PEM: parsing a PEM key costs as much as an RSA signature.
const keyCache = new Map<string, KeyObject>();
const certBodyCache = new Map<string, string>();

function cached<V>(cache: Map<string, V>, pem: string, make: () => V): V {
  let v = cache.get(pem);
  if (v === undefined) {
    if (cache.size >= 64) cache.clear(); // a handful of companies per process; never unbounded
    v = make();
    cache.set(pem, v);
  }
  return v;
}

const certBody = (pem: string): string => cached(certBodyCache, pem, () => new X509Certificate(pem).raw.toString('base64'));

/** The SignedInfo of the profile, with self-closing empty elements (as xml-crypto writes it). */
function signedInfo(id: string, digest: string, close: (name: string, attrs: string) => string): string {
  return (
    `<SignedInfo>${close('CanonicalizationMethod', ` Algorithm="${C14N}"`)}${close('SignatureMethod', ` Algorithm="${RSA_SHA1}"`)}` +
    `<Reference URI="#${id}"><Transforms>${close('Transform', ` Algorithm="${ENVELOPED}"`)}${close('Transform', ` Algorithm="${C14N}"`)}</Transforms>` +
    `${close('DigestMethod', ` Algorithm="${SHA1}"`)}<DigestValue>${digest}</DigestValue></Reference></SignedInfo>`
  );
}

/** The canonical SignedInfo that is signed (and, on verification, the only one the fast path accepts). */
const canonicalSignedInfo = (id: string, digest: string): string =>
  signedInfo(id, digest, (n, a) => `<${n}${a}></${n}>`).replace('<SignedInfo>', `<SignedInfo xmlns="${DSIG_NS}">`);

/**
 * Signs the document's Id-bearing element and appends <Signature> as the last child of the root.
 * Sign the standalone document (e.g. <NFe xmlns=...>), never one already embedded in a batch or
 * SOAP envelope: inclusive C14N would pull the ancestors' namespace declarations into the digest.
 *
 * Our compact documents take the fast path (fiscal/c14n.ts); anything else goes through
 * xml-crypto. Both give the same bytes of signature (RSA PKCS#1 v1.5 is deterministic).
 */
export function signXml(xml: string, credentials: SigningCredentials): string {
  const { name, id } = signedElementOf(xml);
  const canonical = canonicalizeById(xml, id);
  const root = /^\s*<([A-Za-z_][\w.-]*)/.exec(xml)?.[1];
  const rootEnd = root ? xml.lastIndexOf(`</${root}>`) : -1;
  if (canonical === undefined || rootEnd < 0) return signWithXmlCrypto(xml, name, credentials);

  const digest = createHash('sha1').update(canonical, 'utf8').digest('base64');
  // SignedInfo is canonicalized in place: it inherits the xmldsig default namespace of Signature.
  const key = cached(keyCache, credentials.privateKeyPem, () => createPrivateKey(credentials.privateKeyPem));
  const value = rsaSign('RSA-SHA1', Buffer.from(canonicalSignedInfo(id, digest), 'utf8'), key).toString('base64');
  const signature =
    `<Signature xmlns="${DSIG_NS}">${signedInfo(id, digest, (n, a) => `<${n}${a}/>`)}` +
    `<SignatureValue>${value}</SignatureValue>` +
    `<KeyInfo><X509Data><X509Certificate>${certBody(credentials.certificatePem)}</X509Certificate></X509Data></KeyInfo></Signature>`;
  return xml.slice(0, rootEnd) + signature + xml.slice(rootEnd);
}

/** The reference signer (xml-crypto), for documents outside the fast path's subset. */
export function signWithXmlCrypto(xml: string, elementName: string, credentials: SigningCredentials): string {
  const sig = new SignedXml({
    privateKey: credentials.privateKeyPem,
    publicCert: credentials.certificatePem,
    canonicalizationAlgorithm: C14N,
    signatureAlgorithm: RSA_SHA1,
  });
  sig.addReference({
    xpath: `//*[local-name(.)='${elementName}']`,
    transforms: [ENVELOPED, C14N],
    digestAlgorithm: SHA1,
  });
  sig.computeSignature(xml);
  return sig.getSignedXml();
}

/** The base64 DigestValue of the (first) signature: the `digVal` of the protocol and of QR v2 offline. */
export function digestValueOf(signedXml: string): string {
  const m = /<DigestValue>([^<]+)<\/DigestValue>/.exec(signedXml);
  if (!m) throw new FieldError('xml', 'documento sem assinatura (DigestValue ausente)');
  return m[1]!;
}

export type VerificationResult =
  { valid: true; certificatePem: string; signedId: string; digestValue: string } | { valid: false; reason: string; certificatePem?: string };

export type VerifiedSignature = Extract<VerificationResult, { valid: true }>;

function pemOfBase64Der(b64: string): string {
  const body = b64
    .replace(/\s+/g, '')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}

/**
 * Verifies the document's signature against the certificate it carries. The caller decides
 * whether that certificate is acceptable (e.g. that it is the company's): the result returns it.
 * Guards against signature wrapping by requiring the one Reference to point at the one
 * Id-bearing fiscal element of the document. Never throws: a document it cannot read is invalid.
 *
 * Our documents take the fast path (fiscal/c14n.ts, well under a millisecond); whatever it cannot
 * vouch for goes to xml-crypto, which decides. The fast path never rejects, so it can only save
 * time, and the tests hold it to never accepting what the reference rejects.
 */
export function verifyXmlSignature(xml: string): VerificationResult {
  return fastVerifyXmlSignature(xml) ?? verifyWithXmlCrypto(xml);
}

// Public keys of embedded certificates, by their base64: building one costs ~0.2 ms (more than
// the rest of the fast path) and a company signs with the same certificate all day. null marks
// a certificate that does not parse, so that it is not parsed again.
const publicKeyCache = new Map<string, { pem: string; key: KeyObject } | null>();

function publicKeyOf(certificateBase64: string): { pem: string; key: KeyObject } | undefined {
  const b64 = certificateBase64.replace(/\s+/g, '');
  return (
    cached(publicKeyCache, b64, () => {
      const pem = pemOfBase64Der(b64);
      try {
        // The same gate as the reference path (X509Certificate), so both read the same certificates.
        return { pem, key: new X509Certificate(pem).publicKey };
      } catch {
        return null;
      }
    }) ?? undefined
  );
}

/**
 * The accept-only half of verifyXmlSignature: a valid result when the document is in the subset
 * of fiscal/c14n.ts and its signature is exactly the profile's and checks out, undefined in every
 * other case (never a rejection: the reference decides those).
 */
export function fastVerifyXmlSignature(xml: string): VerifiedSignature | undefined {
  const target = findSignedElement(xml);
  if (!target) return undefined;
  const { id } = target;
  // Exactly one attribute anywhere carries that value (no wrapping through a twin under another
  // attribute name or quoting; the canonicalizer also counts Id, ID and id holders).
  const quoted = `="${id}"`;
  const first = xml.indexOf(quoted);
  if (first < 0 || xml.indexOf(quoted, first + 1) >= 0 || xml.includes(`='${id}'`)) return undefined;

  const doc = canonicalizeDocument(xml, id);
  if (!doc?.signature || doc.signatures !== 1 || doc.elementName !== target.name) return undefined;
  const digestValue = createHash('sha1').update(doc.element, 'utf8').digest('base64');
  // The whole canonical SignedInfo is compared, so algorithms, transforms, the one Reference
  // and its URI are the profile's, and the DigestValue is the one just computed.
  const signed = canonicalSignedInfo(id, digestValue);
  if (doc.signature.signedInfo !== signed) return undefined;

  const key = publicKeyOf(doc.signature.certificate);
  if (!key) return undefined;
  let ok: boolean;
  try {
    ok = rsaVerify('RSA-SHA1', Buffer.from(signed, 'utf8'), key.key, Buffer.from(doc.signature.signatureValue.replace(/\s+/g, ''), 'base64'));
  } catch {
    ok = false;
  }
  return ok ? { valid: true, certificatePem: key.pem, signedId: id, digestValue } : undefined;
}

/** The reference verifier (xml-crypto over an xmldom DOM): slow, general, and the judge of everything. */
export function verifyWithXmlCrypto(xml: string): VerificationResult {
  let doc: Document;
  try {
    let parseError = '';
    doc = new DOMParser({
      errorHandler: { error: (m: string) => (parseError ||= m), fatalError: (m: string) => (parseError ||= m) },
    }).parseFromString(xml, 'text/xml') as unknown as Document;
    if (parseError) return { valid: false, reason: `XML malformado: ${parseError}` };
  } catch (err) {
    return { valid: false, reason: `XML malformado: ${(err as Error).message}` };
  }
  const signatures = doc.getElementsByTagNameNS(DSIG_NS, 'Signature');
  if (signatures.length !== 1) return { valid: false, reason: `esperada 1 assinatura, encontradas ${signatures.length}` };
  const signature = signatures[0]!;
  if (signature.prefix) return { valid: false, reason: 'assinatura com prefixo de namespace (rejeição 404)' };

  const certB64 = signature.getElementsByTagNameNS(DSIG_NS, 'X509Certificate')[0]?.textContent;
  if (!certB64) return { valid: false, reason: 'assinatura sem X509Certificate' };
  const certificatePem = pemOfBase64Der(certB64);
  try {
    new X509Certificate(certificatePem);
  } catch {
    return { valid: false, reason: 'X509Certificate ilegível' };
  }

  const target = findSignedElement(xml);
  if (!target) return { valid: false, reason: NO_SIGNED_ELEMENT, certificatePem };
  const references = signature.getElementsByTagNameNS(DSIG_NS, 'Reference');
  if (references.length !== 1) return { valid: false, reason: 'a assinatura deve ter exatamente 1 Reference', certificatePem };
  if (references[0]!.getAttribute('URI') !== `#${target.id}`) {
    return { valid: false, reason: `a assinatura não referencia ${target.name} Id="${target.id}"`, certificatePem };
  }

  const sig = new SignedXml({ publicCert: certificatePem });
  try {
    sig.loadSignature(signature as unknown as Node);
    if (!sig.checkSignature(xml)) return { valid: false, reason: 'assinatura difere do calculado (rejeição 297)', certificatePem };
  } catch (err) {
    return { valid: false, reason: `assinatura inválida: ${(err as Error).message}`, certificatePem };
  }
  // The digest of the Reference just validated, read from the DOM rather than by pattern (a
  // `<DigestValue >` or a DigestValue element inside the signed content would fool a pattern).
  // checkSignature compared it as bytes, so its base64 is normalized the same way.
  const digest = references[0]!.getElementsByTagNameNS(DSIG_NS, 'DigestValue')[0]?.textContent ?? '';
  return { valid: true, certificatePem, signedId: target.id, digestValue: Buffer.from(digest, 'base64').toString('base64') };
}

/** RSA-SHA1 (PKCS#1 v1.5) over the UTF-8 bytes of `data`, base64: QR v3 offline and MDF-e `sign`. */
export function signRsaSha1Base64(data: string, privateKeyPem: string): string {
  const key = cached(keyCache, privateKeyPem, () => createPrivateKey(privateKeyPem));
  return rsaSign('RSA-SHA1', Buffer.from(data, 'utf8'), key).toString('base64');
}
