// String scanners for the sandbox authority: our own compact, unprefixed documents (what the
// fiscal builders write and what the schema check has already accepted), not general XML. A DOM
// parse alone would cost more than the rest of an authorization (see sandbox-rules.ts).

/** Inner XML of the first `<name>`/`<name attr…>` element at or after `from`. */
export function section(xml: string, name: string, from = 0): { inner: string; end: number } | undefined {
  const open = new RegExp(`<${name}(?:\\s[^>]*)?>`, 'g');
  open.lastIndex = from;
  const m = open.exec(xml);
  if (!m) return undefined;
  const start = m.index + m[0].length;
  const close = xml.indexOf(`</${name}>`, start);
  if (close < 0) return undefined;
  return { inner: xml.slice(start, close), end: close + name.length + 3 };
}

/** Inner XML of every `<name>` element, in document order. */
export function sections(xml: string, name: string): string[] {
  const out: string[] = [];
  for (let s = section(xml, name); s; s = section(xml, name, s.end)) out.push(s.inner);
  return out;
}

export function allTexts(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);
}

export const has = (xml: string, name: string): boolean => new RegExp(`<${name}[\\s>/]`).test(xml);

export function idOf(xml: string, element: string): string | undefined {
  return new RegExp(`<${element}\\s[^>]*?\\bId="([^"]*)"`).exec(xml)?.[1];
}
