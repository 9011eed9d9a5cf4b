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
// How the pass is fast: it reads the text once, by character codes and indexOf, with no regular
// expression per token and no object per element, and it copies the canonical form through
// from the input. In the documents we write nearly every token is already canonical (an end
// tag always is; a start tag without attributes is unless it is the apex or self-closing; text
// is unless it holds `&` or `>`), so a capture is a few slices of the input, with only the
// tokens that differ (the apex, a self-closing tag, an attribute list, an escape) written out.

const DECLARATION = /<\?xml\s[^<>?]*\?>/y;
/** Characters XML forbids or that xmldom and C14N treat differently (carriage return). */
const OUTSIDE_SUBSET = /[\x00-\x08\x0B-\x1F\uFFFE\uFFFF]|\p{Cs}/u;
const BAD_REFERENCE = /&(?!(?:#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);)/;
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
const BLANK = /^\s*$/;
/** What an attribute value may not hold (besides its closing quote). */
const NOT_IN_ATTRIBUTE = /[<\t\n\r]/;
/** The attributes xml-crypto resolves a Reference URI against: a second holder of the Id is a twin. */
const ID_ATTRIBUTES = new Set(['Id', 'ID', 'id']);

const GT = 0x3e;
const SLASH = 0x2f;
const SPACE = 0x20;
const QUOTE = 0x22;
const EQUALS = 0x3d;

/** [A-Za-z_]: the first character of a name. */
const isNameStart = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
/** [A-Za-z0-9._-]: the other characters of an element name. */
const isNameChar = (c: number): boolean => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d;
/** [A-Za-z0-9._:-]: the other characters of an attribute name (a colon is then refused). */
const isAttributeNameChar = (c: number): boolean => isNameChar(c) || c === 0x3a;

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
const escapeText = (s: string): string => s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));

/** C14N attribute escaping: &, <, " and the whitespace characters tab, newline, carriage return. */
const escapeAttr = (s: string): string =>
  s.replace(/[&<"\t\n\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '"' ? '&quot;' : c === '\t' ? '&#x9;' : c === '\n' ? '&#xA;' : '&#xD;'));

const byName = ([a]: [string, string], [b]: [string, string]): number => (a < b ? -1 : a > b ? 1 : 0);

function startTag(name: string, renderNs: boolean, ns: string, sortedAttrs: [string, string][]): string {
  let tag = renderNs ? `<${name} xmlns="${escapeAttr(ns)}"` : `<${name}`;
  for (const [n, v] of sortedAttrs) tag += ` ${n}="${escapeAttr(v)}"`;
  return tag + '>';
}

/** What an open element is to the one Signature: the profile's elements, by name, or 'none'. */
type Role = 'none' | 'Signature' | 'SignedInfo' | 'SignatureValue' | 'KeyInfo' | 'X509Data' | 'X509Certificate';

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
 * The canonical form of one element being captured: `out` holds what is written so far, and
 * the input from `from` on is still canonical as it stands.
 */
class Capture {
  out = '';
  constructor(
    /** Depth of the captured element (the number of its open ancestors). */
    readonly depth: number,
    public from: number,
  ) {}

  /** The input token [start, end) is written as `canonical` instead. */
  replace(xml: string, start: number, end: number, canonical: string): void {
    this.out += xml.slice(this.from, start) + canonical;
    this.from = end;
  }

  /** The captured element ends at `end`: its canonical form. */
  finish(xml: string, end: number): string {
    return this.out + xml.slice(this.from, end);
  }
}

/**
 * The start tag just read: where its name ends, its attributes (xmlns apart), and where it ends.
 * One per pass, refilled at each tag: an object (and a name string) per tag was most of the
 * pass's garbage.
 */
type StartTag = { nameEnd: number; attrs: [string, string][] | undefined; xmlns: number; ns: string | undefined; end: number; selfClosing: boolean };

/** Whether the names of `len` characters at `a` and at `b` of `xml` are the same. */
function sameName(xml: string, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (xml.charCodeAt(a + k) !== xml.charCodeAt(b + k)) return false;
  return true;
}

/** The state of one pass over a document (see canonicalizeDocument). */
class Pass {
  // The open elements, as parallel stacks: where the name starts in the input and its length
  // (no string per element: few are ever needed as one), default namespace, role.
  readonly nameAt: number[] = [];
  readonly nameLen: number[] = [];
  readonly nss: string[] = [];
  readonly roles: Role[] = [];
  element: Capture | undefined;
  elementOut: string | undefined;
  elementName = '';
  signedInfo: Capture | undefined;
  signedInfoOut: string | undefined;
  idHolders = 0;
  signatures = 0;
  sig: SignatureState | undefined;
  rootClosed = false;
  private readonly tag: StartTag = { nameEnd: 0, attrs: undefined, xmlns: 0, ns: undefined, end: 0, selfClosing: false };
  /**
   * The first `&` at or after the text being read (-1: none), kept as the pass moves on: a
   * text without one (nearly all) is then neither copied nor searched.
   */
  private nextAmp: number;

  constructor(
    readonly xml: string,
    readonly id: string,
  ) {
    this.nextAmp = xml.indexOf('&');
  }

  /** Character data [start, end); false when it leaves the subset. */
  text(start: number, end: number): boolean {
    const xml = this.xml;
    const depth = this.nameAt.length;
    if (depth === 0) return BLANK.test(xml.slice(start, end));
    if (this.nextAmp >= 0 && this.nextAmp < start) this.nextAmp = xml.indexOf('&', start);
    const hasAmp = this.nextAmp >= 0 && this.nextAmp < end;
    // The search for a `>` stops at the end of the tag that follows the text, at the latest.
    const gt = xml.indexOf('>', start);
    const hasGt = gt >= 0 && gt < end;
    const sig = this.sig;
    const role = this.roles[depth - 1]!;
    const sigText = sig !== undefined && role !== 'none' && role !== 'SignedInfo';
    // Nothing to decode, to escape or to collect: the text is canonical as it stands.
    if (!hasAmp && !hasGt && !sigText) return true;
    const raw = xml.slice(start, end);
    // Every reference is checked, inside the captures or not: the reference's parser must not
    // be able to fail on a part of the document this pass did not look at.
    const text = hasAmp ? decode(raw) : raw;
    if (text === undefined) return false;
    if ((this.element || this.signedInfo) && (hasAmp || hasGt)) {
      const escaped = escapeText(text);
      if (escaped !== raw) this.replace(start, end, escaped);
    }
    if (sig && sigText) {
      if (role === 'SignatureValue') sig.value += raw;
      else if (role === 'X509Certificate') sig.cert += raw;
      else if (!BLANK.test(raw)) sig.bad = true;
    }
    return true;
  }

  /** Writes the token [start, end) as `canonical` in every open capture. */
  replace(start: number, end: number, canonical: string): void {
    this.element?.replace(this.xml, start, end, canonical);
    this.signedInfo?.replace(this.xml, start, end, canonical);
  }

  /** The end tag at `lt`; the index after it, or -1 when it does not close the open element. */
  endTag(lt: number): number {
    const at = this.nameAt.pop();
    if (at === undefined) return -1;
    const len = this.nameLen.pop()!;
    const end = lt + 2 + len;
    if (this.xml.charCodeAt(end) !== GT || !sameName(this.xml, at, lt + 2, len)) return -1;
    const role = this.roles.pop()!;
    this.nss.pop();
    this.close(role, end + 1);
    return end + 1;
  }

  /** An element has closed (its end tag, or a self-closing tag, ends at `end`). */
  close(role: Role, end: number): void {
    const depth = this.nameAt.length;
    if (this.element && this.element.depth === depth) {
      this.elementOut = this.element.finish(this.xml, end);
      this.element = undefined;
    }
    if (this.signedInfo && this.signedInfo.depth === depth) {
      this.signedInfoOut = this.signedInfo.finish(this.xml, end);
      this.signedInfo = undefined;
    }
    const sig = this.sig;
    if (role === 'Signature' && sig && !(sig.next === SIGNATURE_CHILDREN.length && sig.x509Data && sig.certificate)) sig.bad = true;
    if (depth === 0) this.rootClosed = true;
  }

  /** The start tag at `lt`; the index after it, or -1 when it leaves the subset. */
  startTag(lt: number): number {
    if (this.rootClosed || !this.readStartTag(lt)) return -1;
    const tag = this.tag;
    const attrs = tag.attrs;
    const depth = this.nameAt.length;
    const parentNs = depth ? this.nss[depth - 1]! : '';
    const ns = tag.ns ?? parentNs;
    let isTarget = false;
    if (attrs) {
      for (const [attrName, value] of attrs) {
        if (value === this.id && ID_ATTRIBUTES.has(attrName)) {
          if (++this.idHolders > 1) return -1;
          if (attrName === 'Id') isTarget = true;
        }
      }
    }

    // A Signature inside the signed element would give the enveloped transform work to do (any
    // namespace: the transform only removes xmldsig's, but the case is not worth telling apart).
    const nameLen = tag.nameEnd - lt - 1;
    const isSignature = nameLen === 9 && this.xml.startsWith('Signature', lt + 1);
    if (isSignature && (this.element || isTarget)) return -1;
    const role = this.roleOf(lt, isSignature, ns, attrs, depth);

    if (isTarget) {
      this.element = new Capture(depth, lt);
      this.elementName = this.xml.slice(lt + 1, tag.nameEnd);
    }
    const opensSignedInfo = role === 'SignedInfo';
    if (opensSignedInfo) this.signedInfo = new Capture(depth, lt);
    if (this.element || this.signedInfo) this.writeStartTag(lt, ns, parentNs, isTarget, opensSignedInfo);
    if (tag.selfClosing) {
      this.close(role, tag.end);
    } else {
      this.nameAt.push(lt + 1);
      this.nameLen.push(nameLen);
      this.nss.push(ns);
      this.roles.push(role);
    }
    return tag.end;
  }

  /** The role of the element at `lt`, in namespace `ns`, whose parent is at `depth` − 1. */
  private roleOf(lt: number, isSignature: boolean, ns: string, attrs: [string, string][] | undefined, depth: number): Role {
    const sig = this.sig;
    if (isSignature && ns === DSIG_NS) {
      if (++this.signatures === 1) {
        this.sig = { next: 0, x509Data: false, certificate: false, bad: false, value: '', cert: '' };
        return 'Signature';
      }
      if (sig) sig.bad = true;
      return 'none';
    }
    const parentRole = depth ? this.roles[depth - 1]! : undefined;
    if (sig && parentRole && parentRole !== 'none' && parentRole !== 'SignedInfo') {
      // Inside the Signature, outside SignedInfo (compared whole by the verifier): only the
      // profile's elements, in the xmldsig namespace, with no attribute but an Id.
      const name = this.xml.slice(lt + 1, this.tag.nameEnd);
      const role = ns === DSIG_NS && (!attrs || attrs.every(([n]) => n === 'Id')) ? childRole(parentRole, name, sig) : 'none';
      if (role === 'none') sig.bad = true;
      return role;
    }
    return 'none';
  }

  /**
   * The start tag at `lt` in the open captures: as it stands when already canonical, else
   * rewritten. The apex renders its in-scope default namespace; a descendant only a change of it
   * (C14N drops redundant declarations).
   */
  private writeStartTag(lt: number, ns: string, parentNs: string, isTarget: boolean, opensSignedInfo: boolean): void {
    const tag = this.tag;
    const attrs = tag.attrs ?? [];
    // Plain `<name>`, neither an apex nor a change of namespace: canonical as it stands.
    if (!tag.selfClosing && attrs.length === 0 && tag.xmlns === 0 && !isTarget && !opensSignedInfo) return;
    if (attrs.length > 1) attrs.sort(byName);
    const name = this.xml.slice(lt + 1, tag.nameEnd);
    const closing = tag.selfClosing ? `</${name}>` : '';
    if (this.element) {
      const canonical = startTag(name, isTarget ? ns !== '' : ns !== parentNs, ns, attrs) + closing;
      if (tag.selfClosing || canonical !== this.xml.slice(lt, tag.end)) this.element.replace(this.xml, lt, tag.end, canonical);
    }
    if (this.signedInfo) {
      const canonical = startTag(name, opensSignedInfo ? ns !== '' : ns !== parentNs, ns, attrs) + closing;
      if (tag.selfClosing || canonical !== this.xml.slice(lt, tag.end)) this.signedInfo.replace(this.xml, lt, tag.end, canonical);
    }
  }

  /**
   * Reads `<name( attr="value")*( ?/)?>` at `lt` into `this.tag`: exactly one space before each
   * attribute, double quotes, no prefixed attribute, no duplicate. False when it is not that.
   */
  private readStartTag(lt: number): boolean {
    const xml = this.xml;
    let i = lt + 1;
    if (!isNameStart(xml.charCodeAt(i))) return false;
    while (isNameChar(xml.charCodeAt(++i)));
    const tag = this.tag;
    tag.nameEnd = i;
    let attrs: [string, string][] | undefined;
    let xmlns = 0;
    let ns: string | undefined;
    for (;;) {
      // ` name="value"`; anything else ends the attributes, and must then end the tag.
      if (xml.charCodeAt(i) !== SPACE || !isNameStart(xml.charCodeAt(i + 1))) break;
      let j = i + 2;
      while (isAttributeNameChar(xml.charCodeAt(j))) j++;
      if (xml.charCodeAt(j) !== EQUALS || xml.charCodeAt(j + 1) !== QUOTE) break;
      const close = xml.indexOf('"', j + 2);
      if (close < 0) break;
      const raw = xml.slice(j + 2, close);
      if (NOT_IN_ATTRIBUTE.test(raw)) break;
      const attrName = xml.slice(i + 1, j);
      i = close + 1;
      if (attrName.includes(':')) return false; // prefixed names and namespace prefixes
      // No literal tab or line break gets here, so attribute-value normalization has nothing to
      // do: only the references are decoded (a &#9; stays a tab).
      const value = decode(raw);
      if (value === undefined) return false;
      if (attrName === 'xmlns') {
        xmlns++;
        ns = value;
        continue;
      }
      attrs ??= [];
      if (attrs.some(([n]) => n === attrName)) return false;
      attrs.push([attrName, value]);
    }
    tag.attrs = attrs;
    tag.xmlns = xmlns;
    tag.ns = ns;
    let c = xml.charCodeAt(i);
    if (c === SPACE) c = xml.charCodeAt(++i) === SLASH ? SLASH : -1;
    if (c === GT) {
      tag.end = i + 1;
      tag.selfClosing = false;
      return true;
    }
    if (c === SLASH && xml.charCodeAt(i + 1) === GT) {
      tag.end = i + 2;
      tag.selfClosing = true;
      return true;
    }
    return false;
  }
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

  const pass = new Pass(xml, id);
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const textEnd = lt < 0 ? xml.length : lt;
    if (textEnd > i && !pass.text(i, textEnd)) return undefined;
    if (lt < 0) break;
    const next = xml.charCodeAt(lt + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) return undefined;
    i = next === SLASH ? pass.endTag(lt) : pass.startTag(lt);
    if (i < 0) return undefined;
  }
  if (pass.nameAt.length !== 0 || !pass.rootClosed || pass.elementOut === undefined) return undefined;

  const { sig, signatures } = pass;
  const result: CanonicalDocument = { element: pass.elementOut, elementName: pass.elementName, signatures };
  if (signatures === 1 && sig && !sig.bad && pass.signedInfoOut !== undefined && BASE64.test(sig.value) && BASE64.test(sig.cert)) {
    result.signature = { signedInfo: pass.signedInfoOut, signatureValue: sig.value, certificate: sig.cert };
  }
  return result;
}
