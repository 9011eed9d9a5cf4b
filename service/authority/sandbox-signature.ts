// Signature verification for the sandbox authority, fast enough to run on every document.
//
// Why not only fiscal/signature.ts `verifyXmlSignature`: it is the reference (xml-crypto), but
// xml-crypto locates the reference and the namespaces with the `xpath` package, which costs
// 20–30 ms for a 10-item NFC-e on our machines, an order of magnitude above the whole budget of
// an authorization. This module checks the one profile SEFAZ admits (fiscal-notes 2.1: inclusive
// C14N 1.0, enveloped signature, RSA-SHA1, SHA-1, one Reference to the Id of infNFe / infEvento /
// infInut / infMDFe) in a single pass over the text, with no DOM:
// - it canonicalizes the signed element and SignedInfo itself, for a strict subset of XML
//   (unprefixed names, only the default namespace, the five entities and character references,
//   no comments, CDATA, processing instructions or DOCTYPE);
// - the canonical SignedInfo must be exactly the profile's (algorithms, one Reference to the
//   signed element's Id, both transforms) with the DigestValue recomputed here, and its RSA-SHA1
//   signature must verify with the embedded certificate.
// It can only ACCEPT. Anything outside the subset, any mismatch, anything unusual (two elements
// with that Id, a Signature inside the signed element, a certificate chain) returns undefined and
// the reference verifier decides, so a wrong answer here can only cost time, never let a forged
// document through: every character of the signed element reaches the digest, or the fast path
// gives up.
//
// The subset is also kept to the plain spelling of tags (`<a b="c">`, `<a/>`, `<a />`, `</a>`:
// one space between attributes, double quotes, no carriage returns in text, no tabs or line
// breaks inside attribute values). Other spellings are well-formed and canonicalize the same, but
// the reference verifier's parser (xmldom 0.8) misreads some of them depending on where they sit
// (`</qCom\t>` in the tenth item of an NFC-e came back as `<qCom/>1.0000`), and the sandbox must
// not accept a document the reference rejects. Documents signed by our builders, by sped-nfe and
// by xml-crypto are all plain.

import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { verifyXmlSignature, type VerificationResult } from '../../fiscal/signature.ts';

const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const ENVELOPED = `${DSIG_NS}enveloped-signature`;
const RSA_SHA1 = `${DSIG_NS}rsa-sha1`;
const SHA1 = `${DSIG_NS}sha1`;

/** The Id-bearing element a fiscal signature covers (the same rule as fiscal/signature.ts). */
const SIGNED_ELEMENT = /<(infNFe|infEvento|infInut|infMDFe)\s[^>]*?\bId="([^"]+)"/;

export type Verified = Extract<VerificationResult, { valid: true }>;

/** The fast path when it can vouch for the document, the reference verifier otherwise. */
export function verifySignature(xml: string): VerificationResult {
  const fast = fastVerify(xml);
  if (fast) return fast;
  try {
    return verifyXmlSignature(xml);
  } catch (err) {
    // It reads the DigestValue with a pattern that a blank inside the tag defeats, and throws.
    return { valid: false, reason: `assinatura ilegível: ${(err as Error).message}` };
  }
}

/** A valid result, or undefined when the fast path cannot decide (never a rejection). */
export function fastVerify(xml: string): Verified | undefined {
  const target = SIGNED_ELEMENT.exec(xml);
  if (!target) return undefined;
  const id = target[2]!;
  // Exactly one element carries that identifier (no signature wrapping through a twin).
  if (xml.split(`="${id}"`).length !== 2 || xml.includes(`='${id}'`)) return undefined;
  const signatureValue = single(xml, /<SignatureValue(?:\s[^>]*)?>([^<]*)<\/SignatureValue>/g);
  const certificate = single(xml, /<X509Certificate>([^<]*)<\/X509Certificate>/g);
  if (signatureValue === undefined || certificate === undefined) return undefined;

  const canon = canonicalize(xml, target.index);
  if (!canon?.element || !canon.signedInfo || canon.signatures !== 1) return undefined;

  const digestValue = createHash('sha1').update(canon.element, 'utf8').digest('base64');
  const expectedSignedInfo =
    `<SignedInfo xmlns="${DSIG_NS}">` +
    `<CanonicalizationMethod Algorithm="${C14N}"></CanonicalizationMethod>` +
    `<SignatureMethod Algorithm="${RSA_SHA1}"></SignatureMethod>` +
    `<Reference URI="#${escapeAttr(id)}"><Transforms>` +
    `<Transform Algorithm="${ENVELOPED}"></Transform><Transform Algorithm="${C14N}"></Transform>` +
    `</Transforms><DigestMethod Algorithm="${SHA1}"></DigestMethod><DigestValue>${digestValue}</DigestValue></Reference>` +
    `</SignedInfo>`;
  if (canon.signedInfo !== expectedSignedInfo) return undefined;

  const key = publicKeyOf(certificate);
  if (!key) return undefined;
  let ok = false;
  try {
    ok = verify('RSA-SHA1', Buffer.from(expectedSignedInfo, 'utf8'), key.key, Buffer.from(signatureValue.replace(/\s+/g, ''), 'base64'));
  } catch {
    ok = false;
  }
  return ok ? { valid: true, certificatePem: key.pem, signedId: id, digestValue } : undefined;
}

function single(xml: string, pattern: RegExp): string | undefined {
  const all = [...xml.matchAll(pattern)];
  return all.length === 1 ? all[0]![1] : undefined;
}

// Building a key from a certificate costs ~0.2 ms; a company signs with the same one all day.
const keys = new Map<string, { pem: string; key: KeyObject } | null>();

function publicKeyOf(base64: string): { pem: string; key: KeyObject } | undefined {
  const b64 = base64.replace(/\s+/g, '');
  let hit = keys.get(b64);
  if (hit === undefined) {
    // The same PEM layout as fiscal/signature.ts, so either verifier yields the same text.
    const pem = `-----BEGIN CERTIFICATE-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
    try {
      hit = { pem, key: createPublicKey(pem) };
    } catch {
      hit = null;
    }
    if (keys.size >= 256) keys.clear();
    keys.set(b64, hit);
  }
  return hit ?? undefined;
}

// ---------------------------------------------------------------------------------------------
// Inclusive C14N 1.0 (without comments) of two subtrees, for a strict subset of XML

type Canon = { element?: string; signedInfo?: string; signatures: number };

type Frame = { name: string; ns: string };

type Capture = { depth: number; out: string[] };

const NAME = /[A-Za-z_][A-Za-z0-9._-]*/y;
const ATTRIBUTE = / ([A-Za-z_][A-Za-z0-9._:-]*)="([^"<\t\n\r]*)"/y;
const TAG_END = /(?: ?(\/))?>/y;
const END_TAG = /<\/([A-Za-z_][A-Za-z0-9._-]*)>/y;
const BAD_REFERENCE = /&(?!(?:#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);)/;
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string): string | undefined {
  if (!raw.includes('&')) return raw;
  if (BAD_REFERENCE.test(raw)) return undefined;
  let bad = false;
  const text = raw.replace(REFERENCE, (_m, hex: string | undefined, dec: string | undefined, named: string | undefined) => {
    if (named) return NAMED[named]!;
    const cp = hex ? parseInt(hex, 16) : Number(dec);
    if (!(cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0x10ffff && cp !== 0xfffe && cp !== 0xffff))) {
      bad = true;
      return '';
    }
    return String.fromCodePoint(cp);
  });
  return bad ? undefined : text;
}

const escapeText = (s: string): string =>
  s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));

function escapeAttr(s: string): string {
  return s.replace(/[&<"\t\n\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '"' ? '&quot;' : c === '\t' ? '&#x9;' : c === '\n' ? '&#xA;' : '&#xD;',
  );
}

/**
 * One pass over the document: the canonical form of the element whose start tag is at
 * `targetStart`, and of the SignedInfo of the (counted) Signature elements. undefined as soon as
 * the document leaves the subset this implements.
 */
function canonicalize(xml: string, targetStart: number): Canon | undefined {
  let i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (xml.startsWith('<?xml', i)) {
    const end = xml.indexOf('?>', i);
    if (end < 0) return undefined;
    i = end + 2;
  }
  const stack: Frame[] = [];
  const result: Canon = { signatures: 0 };
  let element: Capture | undefined;
  let signedInfo: Capture | undefined;
  let rootClosed = false;

  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const textEnd = lt < 0 ? xml.length : lt;
    if (textEnd > i) {
      const raw = xml.slice(i, textEnd);
      if (stack.length === 0) {
        if (!/^\s*$/.test(raw)) return undefined;
      } else if (element || signedInfo) {
        if (raw.includes('\r')) return undefined;
        const text = decode(raw);
        if (text === undefined) return undefined;
        const escaped = escapeText(text);
        element?.out.push(escaped);
        signedInfo?.out.push(escaped);
      } else if (BAD_REFERENCE.test(raw)) {
        return undefined;
      }
    }
    if (lt < 0) break;
    i = lt;
    const next = xml.charCodeAt(i + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) return undefined;

    if (next === 0x2f /* / */) {
      END_TAG.lastIndex = i;
      const m = END_TAG.exec(xml);
      const frame = stack.pop();
      if (!m || !frame || frame.name !== m[1]) return undefined;
      i = END_TAG.lastIndex;
      const tag = `</${frame.name}>`;
      element?.out.push(tag);
      signedInfo?.out.push(tag);
      if (element && element.depth === stack.length) {
        result.element = element.out.join('');
        element = undefined;
      }
      if (signedInfo && signedInfo.depth === stack.length) {
        result.signedInfo = signedInfo.out.join('');
        signedInfo = undefined;
      }
      if (stack.length === 0) rootClosed = true;
      continue;
    }

    // Start tag.
    if (rootClosed) return undefined;
    const start = i;
    NAME.lastIndex = i + 1;
    const nameMatch = NAME.exec(xml);
    if (!nameMatch) return undefined;
    const name = nameMatch[0];
    i = NAME.lastIndex;
    const parentNs = stack.length ? stack[stack.length - 1]!.ns : '';
    let ns = parentNs;
    const attrs: [string, string][] = [];
    for (;;) {
      ATTRIBUTE.lastIndex = i;
      const a = ATTRIBUTE.exec(xml);
      if (!a) break;
      i = ATTRIBUTE.lastIndex;
      const attrName = a[1]!;
      // Prefixed names and namespace prefixes are outside the subset.
      if (attrName.includes(':')) return undefined;
      // No literal tab or line break gets here, so attribute-value normalization has nothing to
      // do: only the references are decoded (a &#9; stays a tab).
      const value = decode(a[2]!);
      if (value === undefined) return undefined;
      if (attrName === 'xmlns') ns = value;
      else {
        if (attrs.some(([n]) => n === attrName)) return undefined;
        attrs.push([attrName, value]);
      }
    }
    TAG_END.lastIndex = i;
    const close = TAG_END.exec(xml);
    if (!close) return undefined;
    i = TAG_END.lastIndex;
    const selfClosing = close[1] !== undefined;

    if (name === 'Signature' && ns === DSIG_NS) {
      result.signatures++;
      // A Signature inside the signed element would need the enveloped transform for real.
      if (element) return undefined;
    }
    const parent = stack[stack.length - 1];
    const opensElement = start === targetStart;
    const opensSignedInfo = name === 'SignedInfo' && ns === DSIG_NS && parent?.name === 'Signature' && parent.ns === DSIG_NS;
    if (opensElement) {
      if (element || result.element !== undefined) return undefined;
      element = { depth: stack.length, out: [] };
    }
    if (opensSignedInfo) {
      if (signedInfo || result.signedInfo !== undefined) return undefined;
      signedInfo = { depth: stack.length, out: [] };
    }
    if (element || signedInfo) {
      attrs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const tagFor = (apex: boolean): string => {
        // The apex renders its in-scope default namespace; a descendant only a change of it.
        const renderNs = apex ? ns !== '' : ns !== parentNs;
        let tag = `<${name}${renderNs ? ` xmlns="${escapeAttr(ns)}"` : ''}`;
        for (const [n, v] of attrs) tag += ` ${n}="${escapeAttr(v)}"`;
        return tag + '>';
      };
      element?.out.push(tagFor(opensElement));
      signedInfo?.out.push(tagFor(opensSignedInfo));
    }
    stack.push({ name, ns });
    if (selfClosing) {
      stack.pop();
      const tag = `</${name}>`;
      element?.out.push(tag);
      signedInfo?.out.push(tag);
      if (element && element.depth === stack.length) {
        result.element = element.out.join('');
        element = undefined;
      }
      if (signedInfo && signedInfo.depth === stack.length) {
        result.signedInfo = signedInfo.out.join('');
        signedInfo = undefined;
      }
      if (stack.length === 0) rootClosed = true;
    }
  }
  return stack.length === 0 && rootClosed ? result : undefined;
}
