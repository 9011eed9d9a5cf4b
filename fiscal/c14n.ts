// Inclusive C14N 1.0 of one element of a compact, prefix-free document — the only kind we sign
// (every fiscal document is written by fiscal/xml.ts or arrives in that form). xml-crypto's
// general canonicalizer deep-clones the DOM and runs XPath for each signature (~7 ms for a
// 10-item NFC-e); this one walks the string once. It returns undefined for anything outside the
// subset it handles (comments, CDATA, processing instructions, DOCTYPE, prefixed names, an element
// that already holds a Signature), and the caller then falls back to xml-crypto, which remains
// the reference: the tests require byte-identical signatures from both paths.

import { unescapeXml } from './xml.ts';

const TOKEN = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|(<)/g;
const ATTR = /([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** C14N text escaping: only &, <, > and carriage return. */
const c14nText = (s: string): string =>
  s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));

/** C14N attribute escaping: &, <, " and the whitespace characters tab, newline, carriage return. */
const c14nAttr = (s: string): string =>
  s.replace(/[&<"\t\n\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '"' ? '&quot;' : c === '\t' ? '&#x9;' : c === '\n' ? '&#xA;' : '&#xD;',
  );

type Attr = { name: string; value: string };

function parseAttrs(raw: string): Attr[] | undefined {
  const attrs: Attr[] = [];
  ATTR.lastIndex = 0;
  for (let m = ATTR.exec(raw); m; m = ATTR.exec(raw)) {
    const name = m[1]!;
    if (name.includes(':')) return undefined; // prefixed attribute or namespace: not our subset
    attrs.push({ name, value: unescapeXml(m[2] ?? m[3] ?? '') });
  }
  return attrs;
}

/**
 * Canonical form of the element whose `Id` attribute is `id`, with the default namespace it
 * inherits declared on it, as the enveloped-signature + C14N transforms of the SEFAZ profile
 * produce it. Undefined when the document is outside the supported subset.
 */
export function canonicalizeById(xml: string, id: string): string | undefined {
  const nsStack: string[] = [''];
  let depth = 0; // depth inside the target; 0 = not inside
  let out = '';
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(xml); m; m = TOKEN.exec(xml)) {
    if (m[6] !== undefined) return undefined; // `<` that is not a plain tag: comment, CDATA, PI, DOCTYPE
    const text = m[5];
    if (text !== undefined) {
      if (depth > 0) out += c14nText(unescapeXml(text));
      continue;
    }
    const closing = m[1] === '/';
    const name = m[2]!;
    if (closing) {
      nsStack.pop();
      if (depth > 0) {
        out += `</${name}>`;
        if (--depth === 0) return out;
      }
      continue;
    }
    const attrs = parseAttrs(m[3] ?? '');
    if (!attrs) return undefined;
    const inherited = nsStack[nsStack.length - 1]!;
    const declared = attrs.find((a) => a.name === 'xmlns');
    const ns = declared ? declared.value : inherited;
    const selfClosing = m[4] === '/';
    const starts = depth === 0 && attrs.some((a) => a.name === 'Id' && a.value === id);
    if (depth > 0 || starts) {
      if (name === 'Signature') return undefined; // enveloped signature inside the target: not our case
      const plain = attrs.filter((a) => a.name !== 'xmlns').sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      // The subtree's top element declares its in-scope default namespace; below it, only a
      // change of default namespace is a declaration (C14N drops redundant ones).
      const emitNs = starts ? ns !== '' : ns !== inherited;
      out += `<${name}${emitNs ? ` xmlns="${c14nAttr(ns)}"` : ''}${plain.map((a) => ` ${a.name}="${c14nAttr(a.value)}"`).join('')}>`;
      if (selfClosing) {
        out += `</${name}>`;
        if (starts) return out;
      } else {
        depth++;
      }
    }
    if (!selfClosing) nsStack.push(ns);
  }
  return undefined;
}
