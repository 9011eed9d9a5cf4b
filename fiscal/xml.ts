// A small XML writer for the fiscal documents. The layouts fix the element order, so documents are
// written as nested calls in schema order and compact (no whitespace between tags: SEFAZ rejects
// edits between tags with 599). Text is escaped exactly once, here; accents stay UTF-8.

/** Escapes text and attribute values: `&`, `<`, `>`, `"` and `'` (the five XML entities). */
export function escapeXml(value: string): string {
  // Most values have nothing to escape: testing first spares the replace and its callback.
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(ESCAPED, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

const NEEDS_ESCAPE = /[&<>"']/;
const ESCAPED = /[&<>"']/g;

/** Inverse of escapeXml for the entities we emit (and the numeric forms a reader may meet). */
export function unescapeXml(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|apos|#39|#x([0-9a-fA-F]+)|#([0-9]+));/g, (m, name, hex, dec) => {
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    if (dec) return String.fromCodePoint(parseInt(dec, 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" }[name as string] ?? m;
  });
}

/** A child: an already-written element, or nothing (optional element absent). */
export type Child = string | undefined | null | false;

export type Attrs = Record<string, string | number | undefined>;

/**
 * Writes `<name attrs>children</name>`. Children are raw XML produced by `el`/`text`; absent
 * (undefined/null/false) children are skipped, so optional elements read naturally:
 * `el('infAdic', undefined, infCpl && text('infCpl', infCpl))`.
 */
export function el(name: string, attrs: Attrs | undefined, ...children: (Child | Child[])[]): string {
  let out = `<${name}`;
  if (attrs) {
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v !== undefined) out += ` ${k}="${escapeXml(String(v))}"`;
    }
  }
  out += '>';
  // Plain loops: `children.flat()` allocated an array per element, once the largest cost of
  // writing a document.
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    if (Array.isArray(c)) {
      for (let j = 0; j < c.length; j++) if (c[j]) out += c[j];
    } else if (c) {
      out += c;
    }
  }
  return `${out}</${name}>`;
}

/** A leaf element with escaped text; undefined → absent (returns undefined). */
export function text(name: string, value: string | number | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** Reads the text of the first `<name>` element in a compact document written by `el` (or any
 * unprefixed XML). Meant for our own documents and protocol answers, not arbitrary XML. */
export function firstText(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1]!) : undefined;
}
