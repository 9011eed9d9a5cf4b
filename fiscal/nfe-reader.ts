// A tolerant reader for the NF-e XML (the NFe, or the nfeProc around it): ours is compact,
// others' may be pretty-printed, use a namespace prefix or wrap the QR in CDATA. Not a general
// parser: it relies on the layout's elements never nesting inside an element of the same name.
// Used by the DANFE model (danfe/model.ts) and the fiscal summary of a receipt (nfce/sale-facts.ts).

import { FieldError } from './errors.ts';
import { unescapeXml } from './xml.ts';

const openTags = new Map<string, RegExp>();

function openTag(name: string): RegExp {
  let re = openTags.get(name);
  if (!re) {
    re = new RegExp(`<([A-Za-z_][\\w.-]*:)?${name}(?=[\\s/>])([^>]*?)(/?)>`, 'g');
    openTags.set(name, re);
  }
  return re;
}

export type XmlElement = { attrs: string; body: string; end: number };

/** True for a character that may follow a tag name: blank, ">" or "/". */
const endsName = (c: number): boolean => c === 0x3e || c === 0x2f || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The next `<name …>…</name>` from `from`. Unprefixed documents (ours, and nearly every NF-e)
 * take an indexOf path: a regex scanning a 100-item document from every "<" costs
 * milliseconds per lookup. `prefixed` documents (`<nfe:ide>`) use the regex.
 */
function elementAt(xml: string, name: string, from: number, prefixed: boolean): XmlElement | undefined {
  let prefix = '';
  let start: number;
  let attrs: string;
  let selfClosing: boolean;
  if (!prefixed) {
    let i = xml.indexOf(`<${name}`, from);
    while (i >= 0 && !endsName(xml.charCodeAt(i + 1 + name.length))) i = xml.indexOf(`<${name}`, i + 1);
    if (i < 0) return undefined;
    const gt = xml.indexOf('>', i);
    if (gt < 0) throw new FieldError('xml', `elemento <${name}> sem fechamento`);
    selfClosing = xml.charCodeAt(gt - 1) === 0x2f;
    attrs = xml.slice(i + 1 + name.length, selfClosing ? gt - 1 : gt);
    start = gt + 1;
  } else {
    const re = openTag(name);
    re.lastIndex = from;
    const m = re.exec(xml);
    if (!m) return undefined;
    prefix = m[1] ?? '';
    attrs = m[2]!;
    selfClosing = m[3] === '/';
    start = m.index + m[0].length;
  }
  if (selfClosing) return { attrs, body: '', end: start };
  const close = `</${prefix}${name}>`;
  const stop = xml.indexOf(close, start);
  if (stop < 0) throw new FieldError('xml', `elemento <${name}> sem fechamento`);
  return { attrs, body: xml.slice(start, stop), end: stop + close.length };
}

/** Reading helpers bound to one document's prefix style: `required` throws FieldError('xml', …). */
export function nfeReader(xml: string) {
  const prefixed = /<[A-Za-z_][\w.-]*:(NFe|nfeProc|infNFe)[\s>]/.test(xml);
  const at = (scope: string, name: string, from = 0): XmlElement | undefined => elementAt(scope, name, from, prefixed);
  const section = (scope: string | undefined, name: string): string | undefined => (scope === undefined ? undefined : at(scope, name)?.body);
  const sections = (scope: string, name: string): XmlElement[] => {
    const out: XmlElement[] = [];
    for (let el = at(scope, name); el; el = at(scope, name, el.end)) out.push(el);
    return out;
  };
  const textOf = (scope: string | undefined, name: string): string | undefined => {
    const body = section(scope, name);
    if (body === undefined) return undefined;
    const cdata = /^\s*<!\[CDATA\[([\s\S]*?)\]\]>\s*$/.exec(body);
    return (cdata ? cdata[1]! : body.includes('&') ? unescapeXml(body) : body).trim();
  };
  const required = (scope: string | undefined, name: string, where: string): string => {
    const v = textOf(scope, name);
    if (v === undefined || v === '') throw new FieldError('xml', `NFC-e sem ${where}/${name}`);
    return v;
  };
  return { at, section, sections, textOf, required };
}
