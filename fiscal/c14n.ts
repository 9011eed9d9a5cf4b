// Inclusive C14N 1.0 (without comments) for the SEFAZ XMLDSig profile, in one pass over the text
// and with no DOM. It serves both directions of fiscal/signature.ts:
// - signing: the canonical form of the element the Reference points to (`canonicalizeById`);
// - verifying: that form, plus the canonical SignedInfo, SignatureValue and X509Certificate of the
//   document's one Signature (`canonicalizeDocument`).
// xml-crypto stays the reference for both. It deep-clones the DOM and locates nodes with the
// `xpath` package: ~7 ms to sign and 15–30 ms to verify a 10-item NFC-e, an order of magnitude
// above the budget of an authorization or of a sale at the terminal.
//
// It handles a strict subset of XML and returns undefined for anything else, and the caller then
// asks xml-crypto. So a gap here can only cost time: it must never produce a form that differs
// from the reference's, for otherwise the signer would write a signature the reference (and
// SEFAZ) disagree with, and the verifier would accept a document the reference rejects. The subset:
// - unprefixed names and only the default namespace (no `xsi:`, `ds:`, `xmlns:p`);
// - the five predefined entities and character references of XML characters; no comments, CDATA,
//   processing instructions or DOCTYPE (an XML declaration and a BOM before the root are fine);
// - the plain spelling of tags: `<a b="c">`, `<a/>`, `<a />`, `</a>`, with exactly one space
//   before each attribute and double quotes; no carriage return anywhere, no tab or line break
//   inside attribute values, no control characters or lone surrogates.
// The last rule is not about XML but about the reference's parser: the other spellings are
// well-formed and canonicalize the same, but xmldom 0.8 misreads some of them depending on where
// they sit (`</qCom\t>` in the tenth item of an NFC-e came back as `<qCom/>1.0000`), and neither
// path may diverge from it. Documents written by fiscal/xml.ts, by sped-nfe and by xml-crypto are
// all plain, pretty-printed or not.
//
// It also gives up on a document whose Id is carried by two elements (signature wrapping through a
// twin) or whose signed element holds a Signature (the enveloped transform would have work to do).

export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

/** The parts of the document's one Signature that a verifier needs, when it has the profile's shape. */
export type SignatureParts = {
  /** Canonical SignedInfo (it inherits the xmldsig default namespace of Signature). */
  signedInfo: string;
  /** The base64 text of SignatureValue and of X509Certificate, whitespace included. */
  signatureValue: string;
  certificate: string;
};

export type CanonicalDocument = {
  /** Canonical form of the element whose `Id` is the one asked for, and its name. */
  element: string;
  elementName: string;
  /** Unprefixed xmldsig Signature elements in the document. */
  signatures: number;
  /**
   * Set when the document has exactly one Signature and it has the profile's shape: the children
   * SignedInfo, SignatureValue and KeyInfo in that order, KeyInfo holding only X509Data holding
   * only X509Certificate, both values plain base64. Its SignedInfo content is not checked here.
   */
  signature?: SignatureParts;
};

/**
 * Canonical form of the element whose `Id` attribute is `id`, with the default namespace it
 * inherits declared on it, as the enveloped-signature + C14N transforms of the SEFAZ profile
 * produce it. Undefined when the document is outside the supported subset.
 */
export function canonicalizeById(xml: string, id: string): string | undefined {
  return canonicalizeDocument(xml, id)?.element;
}

// ---------------------------------------------------------------------------------------------

const NAME = /[A-Za-z_][A-Za-z0-9._-]*/y;
const ATTRIBUTE = / ([A-Za-z_][A-Za-z0-9._:-]*)="([^"<\t\n\r]*)"/y;
const TAG_END = /(?: ?(\/))?>/y;
const END_TAG = /<\/([A-Za-z_][A-Za-z0-9._-]*)>/y;
const DECLARATION = /<\?xml\s[^<>?]*\?>/y;
/** Characters XML forbids or that xmldom and C14N treat differently (carriage return). */
const OUTSIDE_SUBSET = /[\x00-\x08\x0B-\x1F\uFFFE\uFFFF]|\p{Cs}/u;
const BAD_REFERENCE = /&(?!(?:#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);)/;
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
const BLANK = /^\s*$/;
/** The attributes xml-crypto resolves a Reference URI against: a second holder of the Id is a twin. */
const ID_ATTRIBUTES = new Set(['Id', 'ID', 'id']);

/** The text a run of character data stands for, or undefined for a reference outside XML's Char. */
function decode(raw: string): string | undefined {
  if (!raw.includes('&')) return raw;
  if (BAD_REFERENCE.test(raw)) return undefined;
  let bad = false;
  const text = raw.replace(REFERENCE, (_m, hex: string | undefined, dec: string | undefined, named: string | undefined) => {
    if (named) return NAMED[named]!;
    const cp = hex ? parseInt(hex, 16) : Number(dec);
    if (!(cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff))) {
      bad = true;
      return '';
    }
    return String.fromCodePoint(cp);
  });
  return bad ? undefined : text;
}

/** C14N text escaping: only &, <, > and carriage return. */
const escapeText = (s: string): string =>
  s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));

/** C14N attribute escaping: &, <, " and the whitespace characters tab, newline, carriage return. */
const escapeAttr = (s: string): string =>
  s.replace(/[&<"\t\n\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '"' ? '&quot;' : c === '\t' ? '&#x9;' : c === '\n' ? '&#xA;' : '&#xD;',
  );

const byName = ([a]: [string, string], [b]: [string, string]): number => (a < b ? -1 : a > b ? 1 : 0);

// A top-level function, not a closure in the loop: under tsx (keepNames) every closure created
// costs a defineProperty, which once took half the time of the whole pass.
function startTag(name: string, renderNs: boolean, ns: string, sortedAttrs: [string, string][]): string {
  let tag = renderNs ? `<${name} xmlns="${escapeAttr(ns)}"` : `<${name}`;
  for (const [n, v] of sortedAttrs) tag += ` ${n}="${escapeAttr(v)}"`;
  return tag + '>';
}

/** What an open element is to the one Signature: the profile's elements, by name, or 'none'. */
type Role = 'none' | 'Signature' | 'SignedInfo' | 'SignatureValue' | 'KeyInfo' | 'X509Data' | 'X509Certificate';

type Frame = { name: string; ns: string; role: Role };

type Capture = { depth: number; out: string[] };

/** Progress through the one Signature's children; `bad` once it leaves the profile's shape. */
type SignatureState = { next: number; x509Data: boolean; certificate: boolean; bad: boolean; value: string; cert: string };

const SIGNATURE_CHILDREN: readonly Role[] = ['SignedInfo', 'SignatureValue', 'KeyInfo'];

/** The role of a DSIG-namespace child of an element playing `parent`, or 'none' (shape broken). */
function childRole(parent: Role, name: string, sig: SignatureState): Role {
  if (parent === 'Signature') {
    const expected = SIGNATURE_CHILDREN[sig.next];
    if (expected !== name) return 'none';
    sig.next++;
    return expected;
  }
  if (parent === 'KeyInfo' && name === 'X509Data' && !sig.x509Data) {
    sig.x509Data = true;
    return 'X509Data';
  }
  if (parent === 'X509Data' && name === 'X509Certificate' && !sig.certificate) {
    sig.certificate = true;
    return 'X509Certificate';
  }
  return 'none';
}

/**
 * One pass over the document: the canonical form of the element whose `Id` is `id`, and the parts
 * of its Signature. Undefined as soon as the document leaves the subset this implements, when no
 * element or more than one carries that Id, or when the element contains a Signature.
 */
export function canonicalizeDocument(xml: string, id: string): CanonicalDocument | undefined {
  if (OUTSIDE_SUBSET.test(xml)) return undefined;
  let i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  DECLARATION.lastIndex = i;
  if (DECLARATION.test(xml)) i = DECLARATION.lastIndex;
  else if (xml.startsWith('<?', i)) return undefined;

  const stack: Frame[] = [];
  let element: Capture | undefined;
  let elementOut: string | undefined;
  let elementName = '';
  let signedInfo: Capture | undefined;
  let signedInfoOut: string | undefined;
  let idHolders = 0;
  let signatures = 0;
  let sig: SignatureState | undefined;
  let rootClosed = false;

  // Shared by end tags and self-closing tags.
  const close = (frame: Frame): void => {
    const tag = `</${frame.name}>`;
    element?.out.push(tag);
    signedInfo?.out.push(tag);
    if (element && element.depth === stack.length) {
      elementOut = element.out.join('');
      element = undefined;
    }
    if (signedInfo && signedInfo.depth === stack.length) {
      signedInfoOut = signedInfo.out.join('');
      signedInfo = undefined;
    }
    if (frame.role === 'Signature' && sig && !(sig.next === SIGNATURE_CHILDREN.length && sig.x509Data && sig.certificate)) sig.bad = true;
    if (stack.length === 0) rootClosed = true;
  };

  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const textEnd = lt < 0 ? xml.length : lt;
    if (textEnd > i) {
      const raw = xml.slice(i, textEnd);
      if (stack.length === 0) {
        if (!BLANK.test(raw)) return undefined;
      } else {
        // Every reference is checked, inside the captures or not: the reference's parser must not
        // be able to fail on a part of the document this pass did not look at.
        const text = decode(raw);
        if (text === undefined) return undefined;
        if (element || signedInfo) {
          const escaped = escapeText(text);
          element?.out.push(escaped);
          signedInfo?.out.push(escaped);
        }
        const role = stack[stack.length - 1]!.role;
        if (sig && role !== 'none' && role !== 'SignedInfo') {
          if (role === 'SignatureValue') sig.value += raw;
          else if (role === 'X509Certificate') sig.cert += raw;
          else if (!BLANK.test(raw)) sig.bad = true;
        }
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
      close(frame);
      continue;
    }

    // Start tag.
    if (rootClosed) return undefined;
    NAME.lastIndex = i + 1;
    const nameMatch = NAME.exec(xml);
    if (!nameMatch) return undefined;
    const name = nameMatch[0];
    i = NAME.lastIndex;
    const parent = stack[stack.length - 1];
    const parentNs = parent ? parent.ns : '';
    let ns = parentNs;
    let isTarget = false;
    const attrs: [string, string][] = [];
    for (;;) {
      ATTRIBUTE.lastIndex = i;
      const a = ATTRIBUTE.exec(xml);
      if (!a) break;
      i = ATTRIBUTE.lastIndex;
      const attrName = a[1]!;
      if (attrName.includes(':')) return undefined; // prefixed names and namespace prefixes
      // No literal tab or line break gets here, so attribute-value normalization has nothing to
      // do: only the references are decoded (a &#9; stays a tab).
      const value = decode(a[2]!);
      if (value === undefined) return undefined;
      if (attrName === 'xmlns') {
        ns = value;
        continue;
      }
      if (attrs.some(([n]) => n === attrName)) return undefined;
      attrs.push([attrName, value]);
      if (value === id && ID_ATTRIBUTES.has(attrName)) {
        if (++idHolders > 1) return undefined;
        if (attrName === 'Id') isTarget = true;
      }
    }
    TAG_END.lastIndex = i;
    const end = TAG_END.exec(xml);
    if (!end) return undefined;
    i = TAG_END.lastIndex;
    const selfClosing = end[1] !== undefined;

    // A Signature inside the signed element would give the enveloped transform work to do (any
    // namespace: the transform only removes xmldsig's, but the case is not worth telling apart).
    if (name === 'Signature' && (element || isTarget)) return undefined;
    let role: Role = 'none';
    if (name === 'Signature' && ns === DSIG_NS) {
      if (++signatures === 1) {
        sig = { next: 0, x509Data: false, certificate: false, bad: false, value: '', cert: '' };
        role = 'Signature';
      } else if (sig) {
        sig.bad = true;
      }
    } else if (sig && parent && parent.role !== 'none' && parent.role !== 'SignedInfo') {
      // Inside the Signature, outside SignedInfo (compared whole by the verifier): only the
      // profile's elements, in the xmldsig namespace, with no attribute but an Id.
      role = ns === DSIG_NS && attrs.every(([n]) => n === 'Id') ? childRole(parent.role, name, sig) : 'none';
      if (role === 'none') sig.bad = true;
    }

    if (isTarget) {
      element = { depth: stack.length, out: [] };
      elementName = name;
    }
    const opensSignedInfo = role === 'SignedInfo';
    if (opensSignedInfo) signedInfo = { depth: stack.length, out: [] };
    if (element || signedInfo) {
      if (attrs.length > 1) attrs.sort(byName);
      // The apex renders its in-scope default namespace; a descendant only a change of it (C14N
      // drops redundant declarations).
      element?.out.push(startTag(name, isTarget ? ns !== '' : ns !== parentNs, ns, attrs));
      signedInfo?.out.push(startTag(name, opensSignedInfo ? ns !== '' : ns !== parentNs, ns, attrs));
    }
    const frame: Frame = { name, ns, role };
    if (selfClosing) close(frame);
    else stack.push(frame);
  }
  if (stack.length !== 0 || !rootClosed || elementOut === undefined) return undefined;

  const result: CanonicalDocument = { element: elementOut, elementName, signatures };
  if (signatures === 1 && sig && !sig.bad && signedInfoOut !== undefined && BASE64.test(sig.value) && BASE64.test(sig.cert)) {
    result.signature = { signedInfo: signedInfoOut, signatureValue: sig.value, certificate: sig.cert };
  }
  return result;
}
